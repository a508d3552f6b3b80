//! The first pass over a level of bounds: every bound in range, the lower
//! one at most the upper one, and both equal to what the board's moves give
//! from the children's stored bounds.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use awari_dbformat::{one_ply_bounds, Board, Bound, Bounds};
use rayon::prelude::*;

use super::report::differs;
use super::{chunks, BoundMismatch, Check, Level, Progress};

/// What the first pass finds.
pub(super) struct FirstPass {
    /// Bounds outside `-n..=n`.
    pub(super) out_of_range: u64,
    /// Boards whose lower bound is above the upper one.
    pub(super) crossed: u64,
    /// Bounds that differ from what the board's moves give.
    pub(super) recurrence_errors: u64,
    /// The first mismatches found, in index order.
    pub(super) mismatches: Vec<BoundMismatch>,
}

impl FirstPass {
    /// Every failure the pass found.
    pub(super) fn errors(&self) -> u64 {
        self.out_of_range + self.crossed + self.recurrence_errors
    }
}

/// The counters of the first pass, shared by its threads.
#[derive(Default)]
struct Counts {
    out_of_range: AtomicU64,
    crossed: AtomicU64,
    recurrence: AtomicU64,
}

/// Checks every board of `level` (see the module docs); keeps the first
/// `limit` mismatches in index order. Ticks every board once.
pub(super) fn check(level: &Level, limit: usize, progress: &dyn Progress) -> FirstPass {
    let counts = Counts::default();
    let mut mismatches: Vec<BoundMismatch> = chunks(level.index.level_size(level.seeds))
        .into_par_iter()
        .flat_map_iter(|(start, count)| {
            let mut found = Vec::new();
            let boards = level.index.boards_from(level.seeds, start).take(count);
            for (i, board) in (start..).zip(boards) {
                check_board(level, &board, i, &counts, limit, &mut found);
            }
            progress.boards(count as u64);
            found
        })
        .collect();
    mismatches.sort_by_key(|m| m.index);
    mismatches.truncate(limit);
    FirstPass {
        out_of_range: counts.out_of_range.into_inner(),
        crossed: counts.crossed.into_inner(),
        recurrence_errors: counts.recurrence.into_inner(),
        mismatches,
    }
}

/// Checks board `board` of index `i`, counting into `counts` and pushing
/// onto `found` while it holds fewer than `limit`.
fn check_board(
    level: &Level,
    board: &Board,
    i: u64,
    counts: &Counts,
    limit: usize,
    found: &mut Vec<BoundMismatch>,
) {
    let at = i as usize;
    let stored = [level.lower[at], level.upper[at]];
    let mut push = |m: BoundMismatch| {
        if found.len() < limit {
            found.push(m);
        }
    };
    // Range.
    let n = level.n();
    let mut in_range = [true; 2];
    for (k, bound) in Bound::BOTH.into_iter().enumerate() {
        let v = stored[k];
        if !(-n..=n).contains(&v) {
            in_range[k] = false;
            counts.out_of_range.fetch_add(1, Relaxed);
            let reason = format!("{} bound {v:+} stored, outside -{n}..=+{n}", bound.name());
            let clamped = level.clamp(v).get();
            push(level.mismatch(board, i, Check::Range, bound.name(), (v, clamped), reason));
        }
    }
    // Order.
    let clamped = level.stored(at);
    if clamped.lower > clamped.upper {
        counts.crossed.fetch_add(1, Relaxed);
        let (l, u) = (clamped.lower.get(), clamped.upper.get());
        let reason = format!("lower bound {l:+} above upper bound {u:+}");
        push(level.mismatch(board, i, Check::Order, "both", (l, u), reason));
    }
    // Recurrence.
    let derived = derive(level, board);
    let ends = level.rules.terminal_value(board).is_some();
    for (k, bound) in Bound::BOTH.into_iter().enumerate() {
        let want = match bound {
            Bound::Lower => derived.lower.get(),
            Bound::Upper => derived.upper.get(),
        };
        if in_range[k] && stored[k] != want {
            counts.recurrence.fetch_add(1, Relaxed);
            let reason = if ends {
                format!(
                    "{} bound {:+} stored but the game ends here with {want:+}",
                    bound.name(),
                    stored[k]
                )
            } else {
                differs(bound.name(), stored[k], want, "from its moves")
            };
            let pair = (stored[k], want);
            push(level.mismatch(board, i, Check::Recurrence, bound.name(), pair, reason));
        }
    }
}

/// The bounds `board`'s moves give it from its children's stored bounds
/// (this level's for a quiet move, the lower levels' for a capture), or the
/// game's end.
pub(super) fn derive(level: &Level, board: &Board) -> Bounds {
    let bounds = one_ply_bounds(level.rules, board, |child| {
        Ok::<_, std::convert::Infallible>(if child.seeds() == level.seeds {
            level.stored(level.rank(child))
        } else {
            level.below.bounds(child)
        })
    });
    match bounds {
        Ok(b) => b,
    }
}
