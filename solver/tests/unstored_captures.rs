//! The unstored boards' captures valued in the initial pass's sorted
//! windows (`SolveOptions::unstored_captures`) against one ply over the
//! lower levels, board by board, for every rule set: in windows of a few
//! lookups and of many, in one partition and in several, in memory and on
//! disk.

use std::path::Path;
use std::sync::Arc;

use awari_dbformat::{Board, Index, Levels, RuleSet, Rules};
use awari_solver::retro::{self, SolveOptions, NO_CAPTURE};

/// The best value `board`'s captures give, from the `lower` levels
/// ([`NO_CAPTURE`] without one, or when the board ends the game).
fn best_capture(rules: Rules, lower: &Levels, board: &Board) -> i8 {
    if rules.terminal_value(board).is_some() {
        return NO_CAPTURE;
    }
    let moves = rules.legal_moves(board);
    let captures = moves.iter().filter(|m| m.child.seeds() < board.seeds());
    captures
        .map(|m| m.gain().value(lower.score(&m.child)).get())
        .max()
        .unwrap_or(NO_CAPTURE)
}

/// The options of variant `k`: sorted windows of `max` lookups in
/// `partitions`, on disk in `scratch` when `disk`, the captures' file
/// there too.
fn variant(scratch: &Path, k: usize, max: usize, partitions: u64, disk: bool) -> SolveOptions {
    SolveOptions {
        sorted_lookups: Some(max),
        partitions,
        unstored_captures: Some(scratch.join(format!("unstored-{k}"))),
        level_dir: disk.then(|| scratch.join(format!("work-{k}"))),
        checkpoint_seconds: 0.0,
        ..SolveOptions::default()
    }
}

#[test]
fn the_initial_pass_values_the_unstored_boards_captures_as_one_ply_does() {
    let scratch = tempfile::tempdir().unwrap();
    let hidden = indicatif::ProgressBar::hidden();
    let index = Index::for_pits(6);
    let variants = [
        (1000, 1, false),
        (10_000_000, 1, false),
        (1000, 16, false),
        (1000, 3, true),
    ];
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let mut lower = Levels::new(6);
        for n in 0..=13 {
            let expected: Vec<i8> = index
                .unstored_boards(n)
                .map(|b| best_capture(rules, &lower, &b))
                .collect();
            let mut values = None;
            for (k, &(max, partitions, disk)) in variants.iter().enumerate() {
                let options = variant(scratch.path(), k, max, partitions, disk);
                let solved = retro::solve_level(rules, n, &lower, &hidden, &options).unwrap();
                let path = options.unstored_captures.as_ref().unwrap();
                let found = retro::read_unstored_captures(path)
                    .unwrap()
                    .expect("the pass names its file when whole");
                assert_eq!(found.len(), expected.len(), "{set}: level {n}, variant {k}");
                if let Some(i) = (0..found.len()).find(|&i| found[i] != expected[i]) {
                    let board = index.unstored_boards(n).nth(i).unwrap();
                    panic!(
                        "{set}: level {n}, variant {k}: unstored board {board} (#{i}) valued {} instead of {}",
                        found[i], expected[i]
                    );
                }
                std::fs::remove_file(path).unwrap();
                values.get_or_insert(solved.values);
            }
            lower.insert(n, Arc::new(values.unwrap()));
        }
    }
}
