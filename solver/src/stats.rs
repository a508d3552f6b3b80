//! How many boards of a level have each value: over the stored boards, and over
//! all boards of the seed count (Lincke's tables), where a board whose opponent
//! row is full is valued by one ply over its children.

use std::collections::BTreeMap;

use awari_dbformat::cache::prefetch;
use awari_dbformat::{Board, Index, Move, Rules, Score};
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
        .reduce(|| [0u64; 256], add_histograms);
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
/// from [`count_stored`]) plus the unstored ones valued as [`one_ply`] does.
pub fn count_all(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &LowerLevels,
    stored: &Counts,
) -> Counts {
    let index = Index::for_pits(rules.pits());
    let mut all = stored.clone();
    // A task per opponent row (level 24: 134,596 rows for 34.6 million
    // boards), each valuing its boards a group at a time; a histogram and
    // scratch lists per thread.
    let histogram = index
        .unstored_rows(seeds)
        .par_bridge()
        .fold(
            || ([0u64; 256], Vec::with_capacity(GROUP), Vec::new()),
            |(mut h, mut group, mut moves), row| {
                let mut boards = row.boards().peekable();
                while boards.peek().is_some() {
                    group.clear();
                    group.extend(boards.by_ref().take(GROUP));
                    for v in one_ply_group(rules, index, &group, values, lower, &mut moves) {
                        h[v as u8 as usize] += 1;
                    }
                }
                (h, group, moves)
            },
        )
        .map(|(h, _, _)| h)
        .reduce(|| [0u64; 256], add_histograms);
    for (b, &n) in histogram.iter().enumerate() {
        if n > 0 {
            *all.entry(b as u8 as i8).or_default() += n;
        }
    }
    all
}

/// Boards valued together by [`one_ply_group`].
const GROUP: usize = 32;

/// The [`one_ply`] values of a few boards. Their children's values lie anywhere
/// in this level and the lower ones, so all are asked for (prefetched) before
/// any is read; `moves` is scratch space.
fn one_ply_group<'a>(
    rules: Rules,
    index: &Index,
    boards: &[Board],
    values: &'a [i8],
    lower: &'a LowerLevels,
    moves: &mut Vec<(usize, Move, &'a i8)>,
) -> impl Iterator<Item = i8> + use<'a> {
    moves.clear();
    let mut best: Vec<Option<Score>> = Vec::with_capacity(boards.len());
    for (b, board) in boards.iter().enumerate() {
        best.push(rules.terminal_value(board));
        if best[b].is_some() {
            continue;
        }
        for m in rules.legal_moves(board).iter() {
            let slot = if m.child.seeds() == board.seeds() {
                &values[index.rank(&m.child).expect("a child is stored") as usize]
            } else {
                lower.slot(&m.child)
            };
            prefetch(slot);
            moves.push((b, *m, slot));
        }
    }
    for &(b, m, slot) in moves.iter() {
        let v = m.value(Score::new(*slot));
        best[b] = Some(best[b].map_or(v, |old| old.max(v)));
    }
    best.into_iter().map(|v| {
        v.expect("a board with seeds in the mover's row has a move")
            .get()
    })
}

fn add_histograms(mut a: [u64; 256], b: [u64; 256]) -> [u64; 256] {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
    a
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

#[cfg(test)]
mod tests {
    use super::*;
    use awari_dbformat::RuleSet;

    /// The batched count over all boards agrees with valuing every unstored
    /// board by [`one_ply`], one at a time, under every rule set.
    #[test]
    fn batched_count_matches_one_ply_board_by_board() {
        for set in RuleSet::ALL {
            let rules = Rules::new(set, 6).unwrap();
            let n = 10;
            let levels = crate::solve_in_memory(rules, n);
            let mut lower = LowerLevels::new(6);
            for (s, values) in levels.iter().enumerate().take(n as usize) {
                lower.insert(s as u32, values.clone());
            }
            let values = &levels[n as usize];
            let stored = count_stored(values);
            let mut expected = stored.clone();
            for board in Index::for_pits(6).unstored_boards(n) {
                *expected
                    .entry(one_ply(rules, &board, values, &lower).get())
                    .or_default() += 1;
            }
            assert_eq!(
                count_all(rules, n, values, &lower, &stored),
                expected,
                "{set:?}"
            );
        }
    }
}
