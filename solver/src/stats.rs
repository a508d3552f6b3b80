//! How many boards of a level have each value: over the stored boards, and over
//! all boards of the seed count (Lincke's tables), where a board whose opponent
//! row is full is valued by one ply over its children.

use std::collections::BTreeMap;

use awari_dbformat::cache::prefetch;
use awari_dbformat::{with_pits, Board, Gain, Index, MoveList, Rules, Score};
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
    let unstored = with_pits!(rules.pits(), P => count_unstored::<P>(rules, seeds, values, lower));
    let mut all = stored.clone();
    for (b, &n) in unstored.iter().enumerate() {
        if n > 0 {
            *all.entry(b as u8 as i8).or_default() += n;
        }
    }
    all
}

/// The histogram (by value, as a byte) of the unstored boards of level
/// `seeds`, valued as [`one_ply`] does, for boards of `P` pits per side.
fn count_unstored<const P: usize>(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &LowerLevels,
) -> [u64; 256] {
    let index = Index::for_pits(rules.pits());
    // A task per opponent row (level 24: 134,596 rows for 34.6 million
    // boards), each valuing its boards a group at a time; a histogram and
    // scratch lists per thread.
    index
        .unstored_rows(seeds)
        .par_bridge()
        .fold(
            || ([0u64; 256], Scratch::default()),
            |(mut h, mut scratch), row| {
                let mut boards = row.boards().peekable();
                while boards.peek().is_some() {
                    scratch.group.clear();
                    scratch.group.extend(boards.by_ref().take(GROUP));
                    for v in one_ply_group::<P>(rules, index, values, lower, &mut scratch) {
                        h[v as u8 as usize] += 1;
                    }
                }
                (h, scratch)
            },
        )
        .map(|(h, _)| h)
        .reduce(|| [0u64; 256], add_histograms)
}

/// Boards valued together by [`one_ply_group`].
const GROUP: usize = 32;

/// A thread's lists for [`one_ply_group`], reused from group to group.
#[derive(Default)]
struct Scratch<'a> {
    /// The boards of the group.
    group: Vec<Board>,
    /// Every move of the group's boards waiting for its child's value: the
    /// board (its place in the group), what the move gains, the child's value.
    waiting: Vec<(u8, Gain, &'a i8)>,
    /// The best value of each board of the group so far.
    best: Vec<Option<Score>>,
    captures: MoveList,
}

/// The [`one_ply`] values of the boards of `scratch.group`, of `P` pits per
/// side. Their children's values lie anywhere in this level and the lower
/// ones, so all are asked for (prefetched) before any is read. The quiet
/// moves are found without sowing and their children sown without looking
/// for captures (the group's boards have a full opponent row, and none of
/// those moves starves).
fn one_ply_group<'a, 's, const P: usize>(
    rules: Rules,
    index: &Index,
    values: &'a [i8],
    lower: &'a LowerLevels,
    scratch: &'s mut Scratch<'a>,
) -> impl Iterator<Item = i8> + use<'a, 's, P> {
    let Scratch {
        group,
        waiting,
        best,
        captures,
    } = scratch;
    waiting.clear();
    best.clear();
    for (b, board) in group.iter().enumerate() {
        best.push(rules.terminal_value(board));
        if best[b].is_some() {
            continue;
        }
        let mut quiet = rules.quiet_pits_and_captures_sized::<P>(board, captures);
        while quiet != 0 {
            let pit = quiet.trailing_zeros() as usize;
            quiet &= quiet - 1;
            let child = rules.known_quiet_child(board, pit);
            let i = index.rank_sized::<P>(&child).expect("a child is stored");
            let slot = &values[i as usize];
            prefetch(slot);
            waiting.push((b as u8, Gain::QUIET, slot));
        }
        for m in captures.iter() {
            let slot = lower.slot_sized::<P>(&m.child);
            prefetch(slot);
            waiting.push((b as u8, m.gain(), slot));
        }
    }
    for &(b, gain, slot) in waiting.iter() {
        let v = gain.value(Score::new(*slot));
        let b = usize::from(b);
        best[b] = Some(best[b].map_or(v, |old| old.max(v)));
    }
    best.iter().map(|v| {
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
