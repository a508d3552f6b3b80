//! One module per subcommand of `awari-probe`; each has `Args` (clap) and `run`.

pub mod batch;
pub mod board;
pub mod count;
pub mod export;
pub mod import;
pub mod index;
pub mod info;
pub mod score;
pub mod verify;

/// What a subcommand returns: an exit code, or an error to print (exit status 2).
pub type CmdResult = Result<std::process::ExitCode, Box<dyn std::error::Error>>;
