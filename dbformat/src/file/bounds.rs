//! Stored lower bounds: a level file need not hold the score of a board whose
//! best move is a capture.
//!
//! A board's score is the best, over its legal moves, of the seeds the move
//! captures minus the score of the child (plus, when the turn stays). A
//! capture's child has fewer seeds, so it lies in a lower level. When a
//! capture reaches the board's score, a reader can find the score from the
//! lower levels, and the file may store any value at most the score instead:
//! the one its context makes cheapest to code. This is what the Syzygy chess
//! tablebases do with positions won by a capture.
//!
//! A file says which it holds ([`Stored`], header byte 92, format version 3):
//!
//! - [`Stored::Scores`]: every stored value is the board's score.
//! - [`Stored::LowerBounds`]: a stored value `s` gives the score as
//!   `max(s, best capture)`, where the best capture is [`best_capture`] of the
//!   board (nothing when it has no capturing move). A board whose score no
//!   capture reaches stores its score.
//!
//! [`resolve`] turns one board's stored value into its score,
//! [`resolve_level`] and [`resolve_level_in`] those of many boards;
//! [`BoundChooser`] is the writer's side.
//!
//! Why it is exact: a board's score is at least its best capture, so
//! `max(s, best capture)` is the score whenever `s` is the score, and
//! whenever `s` is at most the score and the best capture equals it.
//!
//! What it buys, on awari (6 pits): a capture reaches the score of about a
//! third of the boards, and the files are about a quarter smaller
//! (`docs/performance.md`). The price is a capture search on lookup: up to
//! one lower-level lookup per capturing move, recursively; and a level
//! decoded whole must be resolved, a pass over its boards' captures like the
//! solver's initial pass.

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;

use crate::game::board::Board;
use crate::game::moves::{Gain, MoveList};
use crate::game::rules::Rules;
use crate::game::score::Score;
use crate::index::Index;
use crate::memory::cache::prefetch;

use super::context::{symbol, usable_neighbours, Counts, Shape, PIT0_CLASSES};
use super::writer::spread_sample;
use super::LevelId;

/// What the values of a level file are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Stored {
    /// Every stored value is the board's score.
    #[default]
    Scores,
    /// Every stored value is at most the board's score, and the score is the
    /// larger of the stored value and the board's [`best_capture`]. Boards
    /// whose score no capture reaches store their score.
    LowerBounds,
    /// Under `--repetition any`: every stored value is the board's lower
    /// bound ([`crate::level::Bounds::lower`]), exact (format version 4).
    RepetitionLower,
    /// Under `--repetition any`: every stored value is the board's upper
    /// bound ([`crate::level::Bounds::upper`]), exact (format version 4).
    RepetitionUpper,
}

impl Stored {
    /// The header code: 0 scores, 1 lower bounds, 2 and 3 the lower and
    /// upper bounds of `--repetition any`.
    pub fn code(self) -> u8 {
        match self {
            Stored::Scores => 0,
            Stored::LowerBounds => 1,
            Stored::RepetitionLower => 2,
            Stored::RepetitionUpper => 3,
        }
    }

    /// True for the two kinds of `--repetition any` files, which hold bounds
    /// under every repetition rule rather than even-split scores; a reader
    /// of scores refuses them, and the other way round.
    pub fn is_repetition_bound(self) -> bool {
        matches!(self, Stored::RepetitionLower | Stored::RepetitionUpper)
    }

    /// The kind of a header code, `None` for an unknown one.
    pub fn from_code(code: u8) -> Option<Stored> {
        match code {
            0 => Some(Stored::Scores),
            1 => Some(Stored::LowerBounds),
            2 => Some(Stored::RepetitionLower),
            3 => Some(Stored::RepetitionUpper),
            _ => None,
        }
    }

    /// `scores` or `lower bounds`.
    pub fn name(self) -> &'static str {
        match self {
            Stored::Scores => "scores",
            Stored::LowerBounds => "lower bounds",
            Stored::RepetitionLower => "lower bounds under any repetition rule",
            Stored::RepetitionUpper => "upper bounds under any repetition rule",
        }
    }
}

impl fmt::Display for Stored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The best value for the mover of `board` among its legal capturing moves,
/// `None` when it has none. `child_score` gives the score of a capture's
/// child (a board of a lower level); `captures` is scratch space, reused.
///
/// # Errors
/// The first error of `child_score`.
pub fn best_capture<E>(
    rules: Rules,
    board: &Board,
    captures: &mut MoveList,
    mut child_score: impl FnMut(&Board) -> Result<Score, E>,
) -> Result<Option<Score>, E> {
    rules.quiet_moves_and_captures(board, captures);
    let mut best = None;
    for m in captures.iter() {
        let value = m.value(child_score(&m.child)?);
        best = best.max(Some(value));
    }
    Ok(best)
}

/// The score of a board from its stored value: `max(stored, best capture)`
/// for [`Stored::LowerBounds`], the stored value itself for [`Stored::Scores`]
/// (and for the bounds of `--repetition any`, which are stored exactly).
///
/// # Errors
/// The first error of `child_score`.
pub fn resolve<E>(
    stored: Stored,
    rules: Rules,
    board: &Board,
    value: Score,
    child_score: impl FnMut(&Board) -> Result<Score, E>,
) -> Result<Score, E> {
    match stored {
        Stored::Scores | Stored::RepetitionLower | Stored::RepetitionUpper => Ok(value),
        Stored::LowerBounds => {
            let mut captures = MoveList::new();
            let capture = best_capture(rules, board, &mut captures, child_score)?;
            Ok(value.max(capture.unwrap_or(value)))
        }
    }
}

/// Boards per task of [`resolve_level`].
const RESOLVE_CHUNK: usize = 1 << 16;

/// Turns the stored lower bounds of boards `first .. first + values.len()`
/// of `level` (index order) into scores, in place and in parallel;
/// `child_score` gives the score of any board of a lower level.
///
/// # Errors
/// The first error of `child_score` met (the values are then partly resolved).
pub fn resolve_level<E: Send>(
    level: LevelId,
    first: u64,
    values: &mut [i8],
    child_score: impl Fn(&Board) -> Result<Score, E> + Sync,
) -> Result<(), E> {
    let LevelId { rules, seeds } = level;
    let index = Index::for_pits(rules.pits());
    values
        .par_chunks_mut(RESOLVE_CHUNK)
        .enumerate()
        .try_for_each(|(c, chunk)| {
            let start = first + (c * RESOLVE_CHUNK) as u64;
            let mut captures = MoveList::new();
            let boards = index.boards_from(seeds, start);
            for (v, board) in chunk.iter_mut().zip(boards) {
                if let Some(best) = best_capture(rules, &board, &mut captures, &child_score)? {
                    *v = (*v).max(best.get());
                }
            }
            Ok(())
        })
}

/// Like [`resolve_level`], with the scores of the lower levels in memory:
/// `lower(s)` is the scores of level `s` in index order, for every level
/// below `seeds - 1` (all a capture can reach). Faster: the captures'
/// children are looked up in small batches, their bytes prefetched, as the
/// solver's initial pass does.
///
/// Only the children that `share` holds are read: `share[s]` is the range
/// of indices of level `s` read, and levels beyond the list are read whole
/// (so `&[]` reads all). A board's value is raised by the captures whose
/// children lie in the share, so passes over shares that together cover
/// the lower levels resolve the level as one pass does (the raising is a
/// maximum, in any order). What a pass reads at random is then only its
/// share: a level decoded under a resident ceiling keeps it in the room
/// ([`crate::level::scores::decode_scores_into`]).
///
/// # Panics
/// When `lower` panics, or gives a level of the wrong size.
pub fn resolve_level_in<'a>(
    level: LevelId,
    first: u64,
    values: &mut [i8],
    lower: impl Fn(u32) -> &'a [i8] + Sync,
    share: &[Range<u64>],
) {
    let LevelId { rules, seeds } = level;
    let read = |s: u32, i: u64| share.get(s as usize).is_none_or(|r| r.contains(&i));
    let index = Index::for_pits(rules.pits());
    values
        .par_chunks_mut(RESOLVE_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let start = first + (c * RESOLVE_CHUNK) as u64;
            // (board in chunk, what the capture adds, the child's score byte)
            let mut pending: Vec<(u32, Gain, &'a i8)> = Vec::with_capacity(2 * RESOLVE_BATCH);
            let mut captures = MoveList::new();
            let boards = index.boards_from(seeds, start).take(chunk.len());
            for (k, board) in boards.enumerate() {
                rules.quiet_moves_and_captures(&board, &mut captures);
                for m in captures.iter() {
                    let i = index.rank(&m.child).expect("a capture's child is stored");
                    if !read(m.child.seeds(), i) {
                        continue;
                    }
                    let level = lower(m.child.seeds());
                    let slot = &level[i as usize];
                    prefetch(slot);
                    pending.push((k as u32, m.gain(), slot));
                }
                if pending.len() >= RESOLVE_BATCH {
                    raise_to_captures(&mut pending, chunk);
                }
            }
            raise_to_captures(&mut pending, chunk);
        });
}

/// Captures collected before their children's scores are read (a child lies
/// anywhere in its level: reading it at once would wait out a cache miss).
const RESOLVE_BATCH: usize = 32;

/// Raises each pending board's value to its capture's value.
fn raise_to_captures(pending: &mut Vec<(u32, Gain, &i8)>, values: &mut [i8]) {
    for &(k, gain, slot) in pending.iter() {
        let value = &mut values[k as usize];
        *value = (*value).max(gain.value(Score::new(*slot)).get());
    }
    pending.clear();
}

/// Chooses the values a file of [`Stored::LowerBounds`] holds: a board whose
/// free bit is set (a capture reaches its score) gets the value at most its
/// score that is most frequent in its context; every other board keeps its
/// score.
///
/// The contexts are those of the context encodings ([`super::context`]),
/// within runs of `unit` boards (the writer's segments, which are coded
/// apart). Values are chosen run by run in index order, each from the values
/// already chosen before it, so the choice does not depend on how the level
/// is cut into pieces or on the number of threads.
pub struct BoundChooser {
    id: LevelId,
    shape: Option<Shape>,
    /// `best[ctx * alphabet + top]`: the most frequent symbol at most `top`
    /// in context `ctx` (the larger on ties), or `top` for contexts unseen.
    best: Vec<u8>,
    unit: usize,
}

/// The boards [`BoundChooser::learn`] learns from, at most. Only the most
/// frequent value per context is wanted, which a quarter of what trains the
/// probabilities finds about as well (files 0.02% larger, learning three
/// times as fast: `docs/performance.md`).
const LEARN_BOARDS: u64 = 16 << 20;

impl BoundChooser {
    /// Learns which value each context makes most frequent from the scores
    /// of up to 16 Mi boards spread over the level (`scores`, index order),
    /// in runs of `unit` boards (the writer's segments).
    ///
    /// # Panics
    /// When `unit` is 0.
    pub fn learn(id: LevelId, scores: &[i8], unit: u32) -> BoundChooser {
        let boards = 0..scores.len() as u64;
        let counts = BoundChooser::sample_counts(id, unit, scores.len() as u64, boards, scores);
        BoundChooser::from_counts(id, unit, counts.as_ref())
    }

    /// The symbol counts [`BoundChooser::learn`] learns from, over the runs
    /// of its sample (of a level of `boards` boards) that lie in boards
    /// `share` (whose scores are `scores`): a rank's part, for a level
    /// shared out among ranks (runs never straddle shares that start on
    /// multiples of `unit`). Counts add up: the sum over the shares is the
    /// whole level's. `None` when the board size has no contexts.
    ///
    /// # Panics
    /// When `unit` is 0.
    pub(crate) fn sample_counts(
        id: LevelId,
        unit: u32,
        boards: u64,
        share: Range<u64>,
        scores: &[i8],
    ) -> Option<Counts> {
        assert!(unit > 0, "runs of at least one board");
        let neighbours = usable_neighbours(id.rules.pits());
        if neighbours == 0 {
            return None;
        }
        let shape = Shape::new(id, neighbours, PIT0_CLASSES);
        let at = |board: u64| (board - share.start) as usize;
        let sample: Vec<(u64, &[i8])> = spread_sample(boards, unit, LEARN_BOARDS)
            .into_iter()
            .filter(|r| share.start <= r.start && r.end <= share.end)
            .map(|r| (r.start, &scores[at(r.start)..at(r.end)]))
            .collect();
        Some(shape.count(id, &sample[..]))
    }

    /// The chooser learnt from the symbol counts of its sample
    /// ([`BoundChooser::sample_counts`], `None` when the board size has no
    /// contexts), in runs of `unit` boards.
    pub(crate) fn from_counts(id: LevelId, unit: u32, counts: Option<&Counts>) -> BoundChooser {
        let unit = unit as usize;
        let Some((_, counts)) = counts else {
            return BoundChooser {
                id,
                shape: None,
                best: Vec::new(),
                unit,
            };
        };
        let neighbours = usable_neighbours(id.rules.pits());
        let shape = Shape::new(id, neighbours, PIT0_CLASSES);
        let alphabet = shape.alphabet;
        let mut best: Vec<u8> = (0..shape.contexts())
            .flat_map(|_| 0..alphabet as u8)
            .collect();
        for (&ctx, row) in counts {
            let mut most = 0usize;
            for top in 0..alphabet {
                if row[top] >= row[most] {
                    most = top;
                }
                best[ctx * alphabet + top] = most as u8;
            }
        }
        BoundChooser {
            id,
            shape: Some(shape),
            best,
            unit,
        }
    }

    /// The shape of the contexts the values are chosen in (`None` when the
    /// board size has no neighbours to make contexts of: every board then
    /// stores its score).
    pub(crate) fn shape(&self) -> Option<&Shape> {
        self.shape.as_ref()
    }

    /// The symbol stored for board `b`, of score `score`, in context `ctx`
    /// of [`BoundChooser::shape`] (the values chosen before it in its run
    /// make the context): the most frequent symbol at most its score's in
    /// that context when its free bit is set (bit `b % 64` of `free[b /
    /// 64]`), else its score's. What [`BoundChooser::choose`] stores, for an
    /// encoder that walks the contexts itself.
    ///
    /// # Panics
    /// When there is no shape, or `ctx` is not one of its contexts.
    #[inline(always)]
    pub(crate) fn stored_symbol(&self, b: usize, score: i8, ctx: usize, free: &[u64]) -> u8 {
        let alphabet = self.shape.as_ref().expect("a shape to choose in").alphabet;
        let s = symbol(score, self.id.seeds);
        if free[b / 64] >> (b % 64) & 1 == 1 {
            self.best[ctx * alphabet + usize::from(s)]
        } else {
            s
        }
    }

    /// The values to store for boards `start .. start + scores.len()`, whose
    /// scores are `scores`; `free` holds a bit per board of the whole level,
    /// bit `i % 64` of word `i / 64` for board `i`. Chosen in parallel.
    ///
    /// # Panics
    /// When `start` is not a multiple of the run length or `free` is too short.
    pub fn choose(&self, start: u64, scores: &[i8], free: &[u64]) -> Vec<i8> {
        self.choose_in(start, scores, free, 0)
    }

    /// [`BoundChooser::choose`] with `free` holding the bits of the boards
    /// from `free_first` on (a multiple of 64): a rank's share of a level.
    ///
    /// # Panics
    /// As [`BoundChooser::choose`], or when `start` is before `free_first`.
    pub fn choose_in(&self, start: u64, scores: &[i8], free: &[u64], free_first: u64) -> Vec<i8> {
        let start = start as usize;
        let free_first = free_first as usize;
        assert!(start.is_multiple_of(self.unit), "a piece starts a run");
        assert!(
            free_first.is_multiple_of(64) && free_first <= start,
            "the free bits from a word's first board, before the piece's"
        );
        assert!(
            free.len() * 64 >= start - free_first + scores.len(),
            "a free bit per board"
        );
        let Some(shape) = &self.shape else {
            return scores.to_vec();
        };
        let (id, seeds, alphabet) = (self.id, self.id.seeds, shape.alphabet);
        let mut stored = vec![0i8; scores.len()];
        stored
            .par_chunks_mut(self.unit)
            .zip(scores.par_chunks(self.unit))
            .enumerate()
            .for_each(|(u, (out, run))| {
                let first = start + u * self.unit;
                let mut sym = vec![alphabet as u8; run.len() + 1];
                // Each board sees the values chosen before it, as its decoder will.
                let chosen = shape.chain(id, first as u64, run.len(), &mut sym, &mut |i, ctx| {
                    Some(self.stored_symbol(first + i - free_first, run[i], ctx, free))
                });
                debug_assert!(chosen.is_ok(), "choosing never fails");
                for (o, &s) in out.iter_mut().zip(&sym[1..]) {
                    *o = (i32::from(s) - seeds as i32) as i8;
                }
            });
        stored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::rules::RuleSet;

    /// Scores in -s..=s for every board of the levels below `seeds - 1`, and
    /// values in -seeds..=seeds for level `seeds`, from a fixed generator.
    fn arbitrary_levels(index: &Index, seeds: u32) -> (Vec<Vec<i8>>, Vec<i8>) {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |s: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state % (2 * u64::from(s) + 1)) as i64 - i64::from(s)) as i8
        };
        let lower = (0..seeds - 1)
            .map(|s| (0..index.level_size(s)).map(|_| next(s)).collect())
            .collect();
        let values = (0..index.level_size(seeds)).map(|_| next(seeds)).collect();
        (lower, values)
    }

    #[test]
    fn passes_over_shares_resolve_a_level_as_one_pass_does() {
        for set in [RuleSet::Awari, RuleSet::Abapa] {
            let rules = Rules::new(set, 6).unwrap();
            let index = Index::for_pits(6);
            let seeds = 9;
            let (lower, values) = arbitrary_levels(index, seeds);
            let level = |s: u32| lower[s as usize].as_slice();
            let mut once = values.clone();
            resolve_level_in(LevelId::new(rules, seeds), 0, &mut once, level, &[]);
            assert_ne!(once, values, "some capture raises a value");
            // Shares cutting the levels at uneven places, each level in
            // pieces, and the last levels beyond the list (read whole).
            let cut = |s: usize, k: u64| {
                let n = lower[s].len() as u64;
                n * k / 3..n * (k + 1) / 3
            };
            let mut shares: Vec<Vec<Range<u64>>> = (0..3)
                .map(|k| (0..lower.len() - 2).map(|s| cut(s, k)).collect())
                .collect();
            let only_the_last_two = (0..lower.len())
                .map(|s| {
                    if s < lower.len() - 2 {
                        0..0
                    } else {
                        0..u64::MAX
                    }
                })
                .collect();
            shares.push(only_the_last_two);
            let mut in_passes = values.clone();
            for share in &shares {
                resolve_level_in(LevelId::new(rules, seeds), 0, &mut in_passes, level, share);
            }
            assert_eq!(in_passes, once, "{set:?}");
            // A share that misses a piece misses its raises.
            let mut missing = values.clone();
            for share in &shares[1..] {
                resolve_level_in(LevelId::new(rules, seeds), 0, &mut missing, level, share);
            }
            assert_ne!(missing, once, "{set:?}");
        }
    }
}
