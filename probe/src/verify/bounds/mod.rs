//! Independent verification of a level of bounds (`--repetition any`): both
//! bounds re-derived from their children with forward moves only, and every
//! bound short of the trivial `-n` / `+n` shown to be forced by a finite
//! strategy, without trusting the solver (its stages, un-moves or order).
//!
//! ## What is checked
//! For every stored board `b` of level `n`, with `L` and `U` the stored
//! lower and upper bounds (see [`awari_dbformat::Bounds`]):
//!
//! 1. **Range and order**: `-n <= L(b) <= U(b) <= +n`.
//! 2. **Recurrence**: `L(b)` is the best of `b`'s moves for the lower bound
//!    and `U(b)` the best for the upper one ([`Bounds::of_move`] over the
//!    child's stored bounds: on the same level for a quiet move, on a lower
//!    level for a capture); a board with no move has both equal to
//!    [`Rules::terminal_value`].
//! 3. **Forced**: the recurrence alone cannot tell a forced bound from one
//!    that only holds inside a cycle (a ring of boards that only move into
//!    each other satisfies it with any values that match round the ring).
//!    So the bounds are computed again from nothing: `proven_lower` starts
//!    at `-n` and `proven_upper` at `+n` on every board, and sweeps over the
//!    level in index order (in place, Gauss-Seidel) set
//!    `proven_lower(b)` to the best move for the lower bound with the
//!    children's `proven_upper` (and the lower levels' bounds for captures),
//!    and `proven_upper(b)` to the best move for the upper bound with their
//!    `proven_lower`, until a sweep changes nothing. `proven_lower` only
//!    rises and `proven_upper` only falls, and each value reached is
//!    justified by values proven before it (a move to a board whose needed
//!    bound is proven, a capture to a verified lower level, or the game's
//!    end), so a proven lower bound is one the mover forces in finitely many
//!    moves, and a proven upper bound one the opponent forces. The result is
//!    the least solution for the lower bound and the greatest for the upper
//!    one, which is what the stored bounds must be: every board must have
//!    `proven == stored` for both.
//!
//! When the recurrence holds on the whole level, the stored bounds are a
//! solution, so the proven ones never pass them (`proven_lower <= L`,
//! `proven_upper >= U`): a board whose proven bounds reached the stored ones
//! is settled and is not looked at again, and the sweeps stop as soon as
//! every board is settled. Otherwise the sweeps run until nothing changes.
//!
//! The lower levels' bounds are taken as stored: verified first when they
//! are in the range checked, else taken as correct.

mod forced;
mod recurrence;
mod report;

use std::sync::Arc;

use awari_dbformat::{Board, Bounds, Index, Levels, Rules, Score, Values};

pub use report::{BoundCheck, BoundMismatch, Check};

/// Boards a thread takes at a time.
const CHUNK: usize = 1 << 14;

/// The lower and upper bounds of the levels below the one being checked,
/// decoded, one byte per stored board each, by seed count.
#[derive(Clone)]
pub struct BoundLevels {
    lower: Levels,
    upper: Levels,
}

impl BoundLevels {
    /// No level held yet, for boards of `pits` pits per side.
    pub fn new(pits: u8) -> BoundLevels {
        BoundLevels {
            lower: Levels::new(pits),
            upper: Levels::new(pits),
        }
    }

    /// Adds (or replaces) both bounds of level `seeds`.
    ///
    /// # Panics
    /// When either does not hold exactly one value per stored board of the
    /// level.
    pub fn insert(&mut self, seeds: u32, lower: Arc<Values>, upper: Arc<Values>) {
        self.lower.insert(seeds, lower);
        self.upper.insert(seeds, upper);
    }

    /// True when both bounds of level `seeds` are held.
    pub fn has(&self, seeds: u32) -> bool {
        self.lower.has(seeds) && self.upper.has(seeds)
    }

    /// The lower bounds of the levels held.
    pub fn lower(&self) -> &Levels {
        &self.lower
    }

    /// The upper bounds of the levels held.
    pub fn upper(&self) -> &Levels {
        &self.upper
    }

    /// The bounds of a stored board of a held level.
    ///
    /// # Panics
    /// When the board's level is not held or the board is not stored.
    pub fn bounds(&self, board: &Board) -> Bounds {
        Bounds {
            lower: self.lower.score(board),
            upper: self.upper.score(board),
        }
    }

    /// The bounds of any board, stored or not: its own when stored, else by
    /// one ply over its children ([`awari_dbformat::one_ply_bounds`]).
    ///
    /// # Panics
    /// When the board's level, or a level its moves reach, is not held.
    pub fn bounds_of(&self, rules: Rules, board: &Board) -> Bounds {
        if board.is_stored() {
            return self.bounds(board);
        }
        let bounds = awari_dbformat::one_ply_bounds(rules, board, |child| {
            Ok::<_, std::convert::Infallible>(self.bounds(child))
        });
        match bounds {
            Ok(b) => b,
        }
    }

    /// The bytes held by both.
    pub fn bytes(&self) -> u64 {
        self.lower.bytes() + self.upper.bytes()
    }
}

/// What a level's check reports as it goes (for a progress bar); every
/// method does nothing unless overridden.
pub trait Progress: Sync {
    /// `n` more boards have been looked at (by the recurrence pass or a
    /// sweep).
    fn boards(&self, _n: u64) {}
    /// Sweep `k` (from 1) of the forced bounds starts.
    fn sweep(&self, _k: u32) {}
}

/// Reports nothing.
impl Progress for () {}

/// Checks both bounds of every stored board of level `seeds` (`lower` and
/// `upper`, index order) against their children and proves them forced
/// (see the module docs). `below` must hold the levels its captures reach
/// (`0..=seeds-2`). Keeps at most `limit` mismatching boards, the first in
/// index order.
///
/// Returns the counts; [`BoundCheck::ok`] says whether the level holds.
///
/// # Panics
/// When `lower` or `upper` does not have one value per stored board of the
/// level, or `below` lacks a level a capture reaches.
pub fn check_bound_level(
    rules: Rules,
    seeds: u32,
    lower: &[i8],
    upper: &[i8],
    below: &BoundLevels,
    limit: usize,
    progress: &dyn Progress,
) -> BoundCheck {
    let index = Index::for_pits(rules.pits());
    let boards = index.level_size(seeds);
    assert_eq!(lower.len() as u64, boards, "one lower bound per board");
    assert_eq!(upper.len() as u64, boards, "one upper bound per board");
    for s in awari_dbformat::levels_captures_reach(seeds) {
        assert!(below.has(s), "level {s}, which captures reach, is held");
    }
    let level = Level {
        rules,
        seeds,
        index,
        lower,
        upper,
        below,
    };
    let first = recurrence::check(&level, limit, progress);
    let forced = forced::check(&level, first.errors() == 0, limit, progress);
    let exact = lower.iter().zip(upper).filter(|(l, u)| l == u).count() as u64;
    let mut mismatches = first.mismatches;
    mismatches.extend(forced.mismatches);
    mismatches.sort_by(|a, b| (a.index, a.check, &a.bound).cmp(&(b.index, b.check, &b.bound)));
    mismatches.truncate(limit);
    BoundCheck {
        seeds,
        boards,
        out_of_range: first.out_of_range,
        crossed: first.crossed,
        recurrence_errors: first.recurrence_errors,
        unforced: forced.unforced,
        sweeps: forced.sweeps,
        exact,
        mismatches,
    }
}

/// The level being checked and what its check reads.
#[derive(Clone, Copy)]
struct Level<'a> {
    /// The rules of the level.
    rules: Rules,
    /// Its seed count.
    seeds: u32,
    /// The index of its board size.
    index: &'static Index,
    /// Its stored lower bounds, index order.
    lower: &'a [i8],
    /// Its stored upper bounds, index order.
    upper: &'a [i8],
    /// The levels below.
    below: &'a BoundLevels,
}

impl Level<'_> {
    /// `n`, as a value.
    fn n(&self) -> i8 {
        self.seeds as i8
    }

    /// A stored value brought into `-n..=n` (one outside is reported on its
    /// own; its parents are then checked against the nearest value).
    fn clamp(&self, v: i8) -> Score {
        Score::new(v.clamp(-self.n(), self.n()))
    }

    /// The stored bounds of board `i` of this level, clamped to the range.
    fn stored(&self, i: usize) -> Bounds {
        Bounds {
            lower: self.clamp(self.lower[i]),
            upper: self.clamp(self.upper[i]),
        }
    }

    /// The index of a quiet child (a stored board of this level).
    fn rank(&self, child: &Board) -> usize {
        self.index.rank(child).expect("children are stored") as usize
    }

    /// A mismatch of the board of index `i`: `bound` stored as `stored` but
    /// `derived` by the `check`, explained by `reason`.
    fn mismatch(
        &self,
        board: &Board,
        i: u64,
        check: Check,
        bound: &str,
        (stored, derived): (i8, i8),
        reason: String,
    ) -> BoundMismatch {
        BoundMismatch {
            seeds: self.seeds,
            index: i,
            board: board.pits().to_vec(),
            notation: board.to_notation(),
            check,
            bound: bound.to_string(),
            stored,
            derived,
            reason,
        }
    }
}

/// The chunks of a level of `boards` boards: `(first index, count)`.
fn chunks(boards: u64) -> Vec<(u64, usize)> {
    (0..boards)
        .step_by(CHUNK)
        .map(|start| (start, (boards - start).min(CHUNK as u64) as usize))
        .collect()
}

#[cfg(test)]
mod tests;
