//! How many boards of a level have each value: over the stored boards, and over
//! all boards of the seed count (Lincke's tables), where a board whose opponent
//! row is full is valued by one ply over its children.

use awari_dbformat::level::scores::{passes, Share};
use std::collections::BTreeMap;

use awari_dbformat::memory::resident;
use awari_dbformat::{with_pits, Board, Gain, Index, MoveList, Rules};
use rayon::prelude::*;

use awari_dbformat::level::{capture_reaches, Slot, Values};
use awari_dbformat::Levels;

use crate::retro::UnstoredBoards;

/// The number of boards with each value, by value.
pub type Counts = BTreeMap<i8, u64>;

/// Counts the values of the stored boards of a level.
pub fn count_stored(values: &[i8]) -> Counts {
    counts_of_histogram(&histogram(values))
}

/// How many of `values` have each value, by the value's byte (`v as u8`).
pub fn histogram(values: &[i8]) -> [u64; 256] {
    values
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut h = [0u64; 256];
            for &v in chunk {
                h[v as u8 as usize] += 1;
            }
            h
        })
        .reduce(|| [0u64; 256], add_histograms)
}

/// The counts of a [`histogram`] (by value's byte, 256 of them).
pub fn counts_of_histogram(histogram: &[u64]) -> Counts {
    (0..256usize)
        .filter(|&b| histogram[b] > 0)
        .map(|b| (b as u8 as i8, histogram[b]))
        .collect()
}

/// Counts the values of all boards with `seeds` seeds: the stored ones (`stored`,
/// from [`count_stored`]) plus the unstored ones valued by one ply ([`Levels::one_ply`]).
///
/// The children of unstored boards lie anywhere in this level and the lower
/// ones. With `room` (bytes), the levels mapped from files are read a share
/// at a time, each share at most `room` bytes, in as many passes over the
/// unstored boards as that takes: this bounds what is resident. `None`
/// reads all at once, in one pass. (The build values the two parts apart,
/// at different times: [`Unstored`].)
pub fn count_all(
    rules: Rules,
    seeds: u32,
    values: &Values,
    lower: &Levels,
    stored: &Counts,
    room: Option<u64>,
) -> Counts {
    let mut unstored = Unstored::new(rules, seeds);
    if !unstored.value_in_one_pass(values, lower, room) {
        unstored.value_quiet_moves(values, room);
        unstored.value_captures(lower, room);
    }
    unstored.counts(stored)
}

/// The counts over all boards of a level: `stored`, and the `unstored`
/// boards, whose captures are valued, valued by their ends and quiet moves
/// over the level's `values` (read as [`Unstored::value_quiet_moves`] does,
/// within `room`).
///
/// # Panics
/// As [`Unstored::counts`].
pub fn count_quiet_moves(
    mut unstored: Unstored,
    values: &Values,
    stored: &Counts,
    room: Option<u64>,
) -> Counts {
    unstored.value_quiet_moves(values, room);
    unstored.counts(stored)
}

/// The unstored boards of a level (every opponent pit holds a seed), each
/// valued by one ply over its children in two parts: the quiet moves, whose
/// children lie in the level itself ([`Unstored::value_quiet_moves`]), and
/// the captures, whose children lie in the lower levels
/// ([`Unstored::value_captures`]), in either order.
///
/// Apart, each part needs only its own levels: the build values the quiet
/// moves while it writes the level, its values in memory, and the captures
/// once those values are gone, when the lower levels' files have the room
/// the level held (level 36 here: four passes over its 3.16 G unstored
/// boards, 1,152 s; beside its 14.26 GB of values, the room would have
/// taken about seventeen).
pub struct Unstored {
    rules: Rules,
    seeds: u32,
    /// The unstored boards, in their opponent rows.
    unstored: UnstoredBoards,
    /// The best value of every unstored board so far ([`NO_VALUE`] when
    /// none), the boards of each opponent row together, the rows in order.
    best: Vec<i8>,
}

impl Unstored {
    /// The unstored boards of level `seeds` under `rules`, none valued yet
    /// (a byte each: level 36, 3.16 G boards).
    pub fn new(rules: Rules, seeds: u32) -> Unstored {
        let mut unstored = Unstored::new_rows(rules, seeds);
        unstored.best = vec![NO_VALUE; unstored.boards()];
        unstored
    }

    /// The unstored boards of level `seeds` under `rules` with their
    /// captures valued: `captures` holds, for each in order, the best value
    /// its captures give (`i8::MIN` for none, and for a board that ends the
    /// game), as an initial pass valued them beside its own boards (the
    /// solver's `unstored` module). The rest is as [`Unstored::new`], and
    /// [`Unstored::value_quiet_moves`] completes them.
    ///
    /// # Panics
    /// When `captures` is not one value per unstored board.
    pub fn with_captures(rules: Rules, seeds: u32, captures: Vec<i8>) -> Unstored {
        let mut unstored = Unstored::new_rows(rules, seeds);
        let boards = unstored.boards();
        assert_eq!(captures.len(), boards, "one value per unstored board");
        unstored.best = captures;
        unstored
    }

    /// The number of unstored boards.
    fn boards(&self) -> usize {
        self.unstored.count() as usize
    }

    /// The unstored boards of level `seeds` under `rules`, without values.
    fn new_rows(rules: Rules, seeds: u32) -> Unstored {
        let index = Index::for_pits(rules.pits());
        Unstored {
            rules,
            seeds,
            unstored: UnstoredBoards::of(index, seeds),
            best: Vec::new(),
        }
    }

    /// Values the game's ends and the quiet moves, whose children lie in
    /// the level itself, `values`. When `values` are mapped from a file,
    /// in shares of at most `room` bytes (see [`count_all`]); at once
    /// when they are in memory.
    pub fn value_quiet_moves(&mut self, values: &Values, room: Option<u64>) {
        let no_lower = Levels::new(self.rules.pits());
        let shares = self.quiet_shares(values, room);
        let read = room.is_some() && values.is_from_file();
        self.value_in_passes(values, &no_lower, shares, read);
    }

    /// The passes [`Unstored::value_quiet_moves`] makes over `values`
    /// within `room`: each generates every unstored board's moves.
    pub fn quiet_passes(&self, values: &Values, room: Option<u64>) -> usize {
        self.quiet_shares(values, room).len()
    }

    /// The shares of `values` the quiet moves are valued in, a pass each:
    /// all at once unless they are mapped from a file larger than `room`.
    fn quiet_shares(&self, values: &Values, room: Option<u64>) -> Vec<Share> {
        let room = room.filter(|_| values.is_from_file());
        let mut sizes = vec![0; self.seeds as usize + 1];
        sizes[self.seeds as usize] = values.len() as u64;
        passes(&sizes, room)
    }

    /// Values the captures, whose children lie in the `lower` levels, in
    /// shares of at most `room` bytes (see [`count_all`]).
    ///
    /// # Panics
    /// When `lower` lacks a level that a capture reaches.
    pub fn value_captures(&mut self, lower: &Levels, room: Option<u64>) {
        let sizes = self.capture_sizes(lower);
        let no_level = Values::zeroed(0);
        self.value_in_passes(&no_level, lower, passes(&sizes, room), room.is_some());
    }

    /// Values every child, the ends, quiet moves and captures, in one pass
    /// over the boards, when the `lower` levels the captures reach and the
    /// level's `values` if mapped from a file fit `room` at once (with one
    /// generation of the boards' moves, not two, as the parts apart take);
    /// returns whether it did (nothing is valued otherwise).
    ///
    /// # Panics
    /// When `lower` lacks a level that a capture reaches.
    pub fn value_in_one_pass(
        &mut self,
        values: &Values,
        lower: &Levels,
        room: Option<u64>,
    ) -> bool {
        let mut sizes = self.capture_sizes(lower);
        if values.is_from_file() {
            sizes[self.seeds as usize] = values.len() as u64;
        }
        if passes(&sizes, room).len() > 1 {
            return false;
        }
        sizes[self.seeds as usize] = values.len() as u64;
        let share: Share = sizes.iter().map(|&n| 0..n).collect();
        self.value_in_passes(values, lower, vec![share], room.is_some());
        true
    }

    /// The boards of each level up to the unstored boards' own that their
    /// captures read: all of each level they reach, none of the others.
    ///
    /// # Panics
    /// When `lower` lacks a level that a capture reaches.
    fn capture_sizes(&self, lower: &Levels) -> Vec<u64> {
        (0..=self.seeds)
            .map(|s| {
                if !capture_reaches(self.seeds, s) {
                    return 0;
                }
                let held = lower.share(s).unwrap_or_else(|| {
                    panic!("level {s}, which captures from level {} reach", self.seeds)
                });
                held.end - held.start
            })
            .collect()
    }

    /// The counts over all boards: `stored`, from [`count_stored`], and
    /// the unstored boards.
    ///
    /// # Panics
    /// When a board has not been valued: both parts are needed.
    pub fn counts(self, stored: &Counts) -> Counts {
        let mut histogram = [0u64; 256];
        for v in self.best {
            assert_ne!(
                v, NO_VALUE,
                "a board with seeds in the mover's row has a move"
            );
            histogram[v as u8 as usize] += 1;
        }
        let mut all = stored.clone();
        for (b, &n) in histogram.iter().enumerate() {
            if n > 0 {
                *all.entry(b as u8 as i8).or_default() += n;
            }
        }
        all
    }

    /// Raises each unstored board's value to the best of its children in
    /// level `seeds` (`values`) and the `lower` levels, a pass over the
    /// boards for each of `shares` (the boards of each level it reads),
    /// each share first read in from its files when `read`.
    fn value_in_passes(&mut self, values: &Values, lower: &Levels, shares: Vec<Share>, read: bool) {
        let pits = self.rules.pits();
        with_pits!(pits, P => self.value_in_passes_sized::<P>(values, lower, shares, read));
    }

    /// [`Unstored::value_in_passes`] for boards of `P` pits per side.
    fn value_in_passes_sized<const P: usize>(
        &mut self,
        values: &Values,
        lower: &Levels,
        shares: Vec<Share>,
        read: bool,
    ) {
        let (rules, seeds) = (self.rules, self.seeds);
        let index = Index::for_pits(rules.pits());
        let rows = self.unstored.rows();
        let mut slices = Vec::with_capacity(rows.len());
        let mut rest = self.best.as_mut_slice();
        for row in rows {
            let (own, after) = rest.split_at_mut(row.len() as usize);
            slices.push(own);
            rest = after;
        }
        for share in shares {
            if read {
                read_in(seeds, values, lower, &share);
            }
            // A task per opponent row (level 24: 134,596 rows for 34.6 million
            // boards), each valuing its boards a group at a time, with scratch
            // lists per thread.
            rows.par_iter().zip(slices.par_iter_mut()).for_each_init(
                Scratch::default,
                |scratch, (row, best)| {
                    let mut boards = row.boards().peekable();
                    let mut at = 0;
                    while boards.peek().is_some() {
                        scratch.group.clear();
                        scratch.group.extend(boards.by_ref().take(GROUP));
                        let group = &mut best[at..at + scratch.group.len()];
                        one_ply_group::<P>(rules, index, values, lower, &share, scratch, group);
                        at += scratch.group.len();
                    }
                },
            );
            // The share read is not needed again: its pages go back (when the
            // resident set is held under a ceiling), so the next one has room.
            if read {
                resident::release_file_pages();
            }
        }
    }
}

/// No value yet: below every score.
const NO_VALUE: i8 = i8::MIN;

/// Reads in the pages of `share` of the levels mapped from files, in large
/// reads, before a pass reads them at random: faulted in a page at a time,
/// each would wait on the disk (level 24 beyond the page cache: 32.1 s of
/// counting, against 14.2 s read in first).
fn read_in(seeds: u32, values: &Values, lower: &Levels, share: &Share) {
    for (s, range) in share.iter().enumerate() {
        if range.is_empty() {
            continue;
        }
        if s as u32 == seeds {
            values.populate(range.clone());
        } else {
            lower.populate(s as u32, range.clone());
        }
    }
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
    waiting: Vec<(u8, Gain, Slot<'a>)>,
    captures: MoveList,
}

/// Raises `best[b]` to the one-ply value of board `b` of
/// `scratch.group`, of `P` pits per side, over the children whose values
/// `share` reads (a game's end is its own value, in every share). The
/// children's values lie anywhere in the levels read, so all are asked for
/// (prefetched) before any is read. The quiet moves are found without sowing
/// and their children sown without looking for captures (the group's boards
/// have a full opponent row, and none of those moves starves).
fn one_ply_group<'a, const P: usize>(
    rules: Rules,
    index: &Index,
    values: &'a [i8],
    lower: &'a Levels,
    share: &Share,
    scratch: &mut Scratch<'a>,
    best: &mut [i8],
) {
    let Scratch {
        group,
        waiting,
        captures,
    } = scratch;
    waiting.clear();
    let own = &share[group[0].seeds() as usize];
    for (b, board) in group.iter().enumerate() {
        if let Some(v) = rules.terminal_value(board) {
            best[b] = v.get();
            continue;
        }
        let mut quiet = rules.quiet_pits_and_captures_sized::<P>(board, captures);
        while quiet != 0 && !own.is_empty() {
            let pit = quiet.trailing_zeros() as usize;
            quiet &= quiet - 1;
            let child = rules.known_quiet_child(board, pit);
            let i = index.rank_sized::<P>(&child).expect("a child is stored");
            if own.contains(&i) {
                let slot = Slot::Byte(&values[i as usize]);
                slot.prefetch();
                waiting.push((b as u8, Gain::QUIET, slot));
            }
        }
        for m in captures.iter() {
            let range = &share[m.child.seeds() as usize];
            if range.is_empty() {
                continue;
            }
            let i = index.rank_sized::<P>(&m.child).expect("a child is stored");
            if range.contains(&i) {
                let slot = lower.slot_at(m.child.seeds(), i);
                slot.prefetch();
                waiting.push((b as u8, m.gain(), slot));
            }
        }
    }
    for &(b, gain, slot) in waiting.iter() {
        let v = gain.value(slot.score()).get();
        let b = usize::from(b);
        best[b] = best[b].max(v);
    }
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
    /// board by [`Levels::one_ply`], one at a time, under every rule set.
    #[test]
    fn batched_count_matches_one_ply_board_by_board() {
        for set in RuleSet::ALL {
            let rules = Rules::new(set, 6).unwrap();
            let n = 10;
            let levels = crate::solve_in_memory(rules, n);
            let mut lower = Levels::new(6);
            for (s, values) in levels.iter().enumerate().take(n as usize) {
                lower.insert(s as u32, values.clone());
            }
            let values = &levels[n as usize];
            let stored = count_stored(values);
            let mut expected = stored.clone();
            for board in Index::for_pits(6).unstored_boards(n) {
                *expected
                    .entry(lower.one_ply(rules, &board, values).get())
                    .or_default() += 1;
            }
            assert_eq!(
                count_all(rules, n, values, &lower, &stored, None),
                expected,
                "{set:?}"
            );
            // Read a share at a time, down to a few boards a pass (pieces
            // of one level in several passes, several levels in one): the
            // same counts.
            for room in [1 << 20, 20_000, 777] {
                assert_eq!(
                    count_all(rules, n, values, &lower, &stored, Some(room)),
                    expected,
                    "{set:?} in passes of {room} boards"
                );
            }
            // The two parts apart, the captures first, as a build whose
            // level is gone may: the same counts.
            let mut unstored = Unstored::new(rules, n);
            assert!(!unstored.value_in_one_pass(values, &lower, Some(20_000)));
            unstored.value_captures(&lower, Some(20_000));
            unstored.value_quiet_moves(values, None);
            assert_eq!(
                unstored.counts(&stored),
                expected,
                "{set:?}, captures first"
            );
            let mut unstored = Unstored::new(rules, n);
            assert!(unstored.value_in_one_pass(values, &lower, Some(1 << 30)));
            assert_eq!(unstored.counts(&stored), expected, "{set:?}, in one pass");
        }
    }
}
