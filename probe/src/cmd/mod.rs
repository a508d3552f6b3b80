//! One module per subcommand of `awari-probe`; each has `Args` (clap) and `run`.

pub(crate) mod batch;
pub(crate) mod board;
pub(crate) mod count;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod index;
pub(crate) mod info;
pub(crate) mod score;
#[cfg(feature = "serve")]
pub(crate) mod serve;
pub(crate) mod uci;
pub(crate) mod verify;

/// What a subcommand returns: an exit code, or an error to print (exit status 2).
pub(crate) type CmdResult = Result<std::process::ExitCode, Box<dyn std::error::Error>>;

/// The options that choose a database: its directory, rule set and board size.
#[derive(clap::Args)]
pub(crate) struct Database {
    /// The database directory.
    #[arg(long, default_value = "db")]
    pub db: std::path::PathBuf,
    /// The rule set [default: the only one present in the directory].
    #[arg(long)]
    pub rules: Option<awari_dbformat::RuleSet>,
    /// Pits per side.
    #[arg(long, default_value_t = 6)]
    pub pits: u8,
}

impl Database {
    /// Opens the database these options name.
    pub(crate) fn open(&self) -> Result<awari_probe::Tablebase, awari_probe::ProbeError> {
        awari_probe::Tablebase::open_for(&self.db, self.rules, self.pits)
    }
}

/// The options that name one level file: its seed count, directory, rules and size.
#[derive(clap::Args)]
pub(crate) struct LevelFile {
    /// The level: seeds on the board.
    #[arg(long)]
    pub seeds: u32,
    /// The database directory.
    #[arg(long, default_value = "db")]
    pub db: std::path::PathBuf,
    /// The rule set of the level.
    #[arg(long, default_value = "awari")]
    pub rules: awari_dbformat::RuleSet,
    /// Pits per side.
    #[arg(long, default_value_t = 6)]
    pub pits: u8,
}

impl LevelFile {
    /// The level these options name.
    pub(crate) fn id(&self) -> Result<awari_dbformat::file::LevelId, awari_dbformat::Error> {
        Ok(awari_dbformat::file::LevelId::new(
            awari_dbformat::Rules::new(self.rules, self.pits)?,
            self.seeds,
        ))
    }
}

/// A scratch directory for a test, `awari-probe-{name}-…` in the temporary
/// directory, removed when dropped.
#[cfg(test)]
pub(crate) fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("awari-probe-{name}-"))
        .tempdir()
        .unwrap()
}
