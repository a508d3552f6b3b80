//! The one error type of the probe crate.

use std::path::PathBuf;

/// What can go wrong when answering a question from a database.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A level file could not be read or is not sound, or the board is malformed.
    #[error(transparent)]
    Db(#[from] awari_dbformat::Error),
    /// The level a question needs is not in the directory.
    #[error("level {seeds} ({rules}) is not in {}: build it with `awari-solve --db {} --rules {} --pits {} --max-seeds {seeds}`", dir.display(), dir.display(), rules.set(), rules.pits())]
    MissingLevel {
        /// The seed count of the missing level.
        seeds: u32,
        /// The rules asked for.
        rules: awari_dbformat::Rules,
        /// The database directory.
        dir: PathBuf,
    },
    /// A bound level (`--repetition any`) a question needs is not in the
    /// directory: `file` is missing. Bounds are never searched above the
    /// levels built.
    #[error("level {seeds} ({rules}) under --repetition any is not in {}: {} is missing; build it with `awari-solve --db {} --rules {} --pits {} --max-seeds {seeds} --repetition any` (bounds are read from the levels only, never searched above them)", dir.display(), file.display(), dir.display(), rules.set(), rules.pits())]
    MissingBoundLevel {
        /// The seed count of the missing level.
        seeds: u32,
        /// The rules asked for.
        rules: awari_dbformat::Rules,
        /// The database directory.
        dir: PathBuf,
        /// The missing file.
        file: PathBuf,
    },
    /// The directory holds no level for the board's size, or several rule sets.
    #[error("{}: {reason}", dir.display())]
    Database {
        /// The database directory.
        dir: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A board of another size than the database's.
    #[error("the board has {board} pits per side but the database has {database}")]
    WrongSize {
        /// Pits per side of the board.
        board: u8,
        /// Pits per side of the database.
        database: u8,
    },
    /// A request the probe cannot take: an unknown option or rule, a move
    /// that is not legal, a line of the engine protocol it cannot read.
    #[error("{0}")]
    Input(String),
}
