//! `awari-probe`: perfect-play answers, database inspection and verification.
//!
//! Each subcommand lives in its own module under `cmd/`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// Perfect-play answers from Awari databases, and tools to inspect and verify them.
///
/// Boards are written as 2P numbers in pit order, the mover's pits first, e.g.
/// "1 1 1 1 1 2 / 4 2 3 0 0 0" (quote them in the shell).
#[derive(Parser)]
#[command(name = "awari-probe", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Count(cmd::count::Args),
    Index(cmd::index::Args),
    Board(cmd::board::Args),
    Info(cmd::info::Args),
    Export(cmd::export::Args),
    Import(cmd::import::Args),
    Score(cmd::score::Args),
    Batch(cmd::batch::Args),
    Verify(cmd::verify::Args),
    Uci(cmd::uci::Args),
    #[cfg(feature = "serve")]
    Serve(cmd::serve::Args),
}

fn main() -> ExitCode {
    awari_dbformat::cli::quiet_on_closed_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Count(args) => cmd::count::run(args),
        Command::Index(args) => cmd::index::run(args),
        Command::Board(args) => cmd::board::run(args),
        Command::Info(args) => cmd::info::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Score(args) => cmd::score::run(args),
        Command::Batch(args) => cmd::batch::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Uci(args) => cmd::uci::run(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => cmd::serve::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("awari-probe: error: {err}");
            ExitCode::from(2)
        }
    }
}
