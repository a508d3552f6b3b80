//! `awari-probe import` (issue 3): to be written.

use super::CmdResult;

/// To be written (issue 3).
#[derive(clap::Args)]
pub struct Args {}

/// To be written (issue 3).
pub fn run(_args: Args) -> CmdResult {
    Err("not written yet".into())
}
