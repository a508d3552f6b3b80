//! `awari-probe board`: the board with a given index.

use std::process::ExitCode;

use awari_dbformat::{Index, RuleSet, Rules};

use super::CmdResult;

/// Print the board with a given index in the level of a given seed count.
///
/// Example: awari-probe board --seeds 16 --index 588953
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The level: the number of seeds on the board.
    #[arg(long)]
    seeds: u32,
    /// The index within the level, from 0.
    #[arg(long)]
    index: u64,
    /// Pits per side (2 to 8).
    #[arg(long, default_value_t = 6)]
    pits: u8,
    /// Print one JSON object: seeds, index, boards, pits.
    #[arg(long)]
    json: bool,
}

/// Prints the board; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    Rules::new(RuleSet::Awari, args.pits)?;
    let index = Index::for_pits(args.pits);
    let board = index.unrank(args.seeds, args.index)?;
    super::index::print_position(&board, args.index, index.level_size(args.seeds), args.json);
    Ok(ExitCode::SUCCESS)
}
