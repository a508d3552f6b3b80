//! How many boards of a level have each value: over the stored boards, and over
//! all boards of the seed count (Lincke's tables), where a board whose opponent
//! row is full is valued by one ply over its children.

use std::collections::BTreeMap;

use awari_dbformat::{Board, Index, Rules, Score};
use rayon::prelude::*;

use crate::lower::LowerLevels;

/// The number of boards with each value, by value.
pub type Counts = BTreeMap<i8, u64>;

/// Counts the values of the stored boards of a level.
pub fn count_stored(values: &[i8]) -> Counts {
    let histogram = values
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut h = [0u64; 256];
            for &v in chunk {
                h[v as u8 as usize] += 1;
            }
            h
        })
        .reduce(
            || [0u64; 256],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        );
    (0..256usize)
        .filter(|&b| histogram[b] > 0)
        .map(|b| (b as u8 as i8, histogram[b]))
        .collect()
}

/// The value of any board of level `seeds` by one ply: the best move, each child
/// read from `values` (this level) or from `lower`.
pub fn one_ply(rules: Rules, board: &Board, values: &[i8], lower: &LowerLevels) -> Score {
    let index = Index::for_pits(rules.pits());
    let moves = rules.legal_moves(board);
    if let Some(v) = rules.terminal_value(board) {
        return v;
    }
    moves
        .iter()
        .map(|m| {
            let child = if m.child.seeds() == board.seeds() {
                Score::new(values[index.rank(&m.child).expect("a child is stored") as usize])
            } else {
                lower.score(&m.child)
            };
            m.value(child)
        })
        .max()
        .expect("a board with seeds in the mover's row has a move")
}

/// Counts the values of all boards with `seeds` seeds: the stored ones (`stored`,
/// from [`count_stored`]) plus the unstored ones valued by [`one_ply`].
pub fn count_all(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &LowerLevels,
    stored: &Counts,
) -> Counts {
    let index = Index::for_pits(rules.pits());
    let mut all = stored.clone();
    // In slices of a million boards: the unstored boards of a large level would
    // take hundreds of MB held all at once (level 24: 35 million boards).
    let mut unstored = index.unstored_boards(seeds);
    let mut scores = Vec::new();
    loop {
        let slice: Vec<Board> = unstored.by_ref().take(1 << 20).collect();
        if slice.is_empty() {
            break;
        }
        slice
            .par_iter()
            .map(|b| one_ply(rules, b, values, lower).get())
            .collect_into_vec(&mut scores);
        for &v in &scores {
            *all.entry(v).or_default() += 1;
        }
    }
    all
}

/// Counts as a JSON object from value (as a string) to number of boards.
pub fn counts_json(counts: &Counts) -> serde_json::Value {
    serde_json::Value::Object(
        counts
            .iter()
            .map(|(v, n)| (v.to_string(), serde_json::Value::from(*n)))
            .collect(),
    )
}
