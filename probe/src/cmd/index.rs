//! `awari-probe index`: the index of a board within its level.

use std::process::ExitCode;

use awari_dbformat::{Board, Index};

use super::CmdResult;

/// Print a board's seed count, its index in its level and the level's size.
///
/// Example: awari-probe index "1 1 1 1 1 2 / 4 2 3 0 0 0"
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The board: 2P numbers, the mover's pits first, e.g. "1 1 1 1 1 2 / 4 2 3 0 0 0".
    board: Board,
    /// Print one JSON object: seeds, index, boards, pits.
    #[arg(long)]
    json: bool,
}

/// Prints the index; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let index = Index::for_pits(args.board.per_side());
    let i = index.try_rank(&args.board)?;
    print_position(
        &args.board,
        i,
        index.level_size(args.board.seeds()),
        args.json,
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints a board with its index, for people or as JSON.
pub(crate) fn print_position(board: &Board, index: u64, boards: u64, json: bool) {
    if json {
        let out = serde_json::json!({
            "seeds": board.seeds(),
            "index": index,
            "boards": boards,
            "pits": board.pits(),
        });
        println!("{out}");
    } else {
        println!("{}", board.drawing());
        println!("board  {}", board.to_notation());
        println!("seeds  {}", board.seeds());
        println!("index  {index} of {boards}");
    }
}
