//! The bounds a finite strategy forces, found from nothing by sweeps over
//! the level (see the module docs), and compared with the stored ones.

use std::sync::atomic::{AtomicI8, AtomicU64, Ordering::Relaxed};

use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::{one_ply_bounds, Board, Bound, Bounds, Score};
use rayon::prelude::*;

use super::report::differs;
use super::{chunks, BoundMismatch, Check, Level, Progress};

/// What the sweeps find.
pub(super) struct Forced {
    /// Bounds whose proven value differs from the stored one.
    pub(super) unforced: u64,
    /// Sweeps made.
    pub(super) sweeps: u32,
    /// The first such bounds, in index order.
    pub(super) mismatches: Vec<BoundMismatch>,
}

/// The proven bounds of every board of the level, one byte each.
struct Proven {
    lower: HugeArray,
    upper: HugeArray,
}

impl Proven {
    /// `-n` and `+n` for each of `boards` boards.
    fn trivial(boards: u64, n: i8) -> Proven {
        let mut lower = HugeArray::zeroed(boards as usize);
        let mut upper = HugeArray::zeroed(boards as usize);
        lower.fill(n.wrapping_neg() as u8);
        upper.fill(n as u8);
        Proven { lower, upper }
    }

    fn lower(&self) -> &[AtomicI8] {
        self.lower.as_atomic_i8()
    }

    fn upper(&self) -> &[AtomicI8] {
        self.upper.as_atomic_i8()
    }

    /// The proven bounds of board `i`.
    fn at(&self, i: usize) -> Bounds {
        Bounds {
            lower: Score::new(self.lower()[i].load(Relaxed)),
            upper: Score::new(self.upper()[i].load(Relaxed)),
        }
    }
}

/// Proves the bounds of every board of `level` from nothing and compares
/// them with the stored ones; `solution` says that the stored bounds are in
/// range and satisfy the recurrence on the whole level (then settled boards
/// are skipped and the sweeps stop once every board is settled). Keeps the
/// first `limit` mismatches in index order.
pub(super) fn check(
    level: &Level,
    solution: bool,
    limit: usize,
    progress: &dyn Progress,
) -> Forced {
    let boards = level.index.level_size(level.seeds);
    let proven = Proven::trivial(boards, level.n());
    let parts = chunks(boards);
    let mut sweeps = 0;
    loop {
        sweeps += 1;
        progress.sweep(sweeps);
        let changed = AtomicU64::new(0);
        let open = AtomicU64::new(0);
        parts.par_iter().for_each(|&(start, count)| {
            let (c, o) = sweep_chunk(level, &proven, solution, start, count);
            changed.fetch_add(c, Relaxed);
            open.fetch_add(o, Relaxed);
            progress.boards(count as u64);
        });
        // Nothing changed: the least and greatest solutions are reached
        // (every board's update read values that no longer change). Every
        // board settled: nothing can change again.
        if changed.into_inner() == 0 || (solution && open.into_inner() == 0) {
            break;
        }
    }
    compare(level, &proven, sweeps, limit)
}

/// One sweep over boards `start..start + count`, in index order, in
/// place. Returns the boards whose proven bounds changed and those still
/// short of their stored bounds (counted when `solution`).
fn sweep_chunk(
    level: &Level,
    proven: &Proven,
    solution: bool,
    start: u64,
    count: usize,
) -> (u64, u64) {
    let (lower, upper) = (proven.lower(), proven.upper());
    let settled = |i: usize| {
        solution
            && lower[i].load(Relaxed) == level.lower[i]
            && upper[i].load(Relaxed) == level.upper[i]
    };
    let (mut changed, mut open) = (0, 0);
    let boards = level.index.boards_from(level.seeds, start).take(count);
    for (i, board) in (start as usize..).zip(boards) {
        if settled(i) {
            continue;
        }
        let found = by_one_ply(level, proven, &board);
        let (l, u) = (lower[i].load(Relaxed), upper[i].load(Relaxed));
        // Only ever raised (lower) or lowered (upper): each value reached
        // is justified by values proven before it.
        let (l2, u2) = (l.max(found.lower.get()), u.min(found.upper.get()));
        if (l2, u2) != (l, u) {
            lower[i].store(l2, Relaxed);
            upper[i].store(u2, Relaxed);
            changed += 1;
        }
        if !settled(i) {
            open += 1;
        }
    }
    (changed, open)
}

/// The bounds `board`'s moves give it from the proven bounds of its quiet
/// children and the lower levels' bounds for its captures, or the game's
/// end.
fn by_one_ply(level: &Level, proven: &Proven, board: &Board) -> Bounds {
    let bounds = one_ply_bounds(level.rules, board, |child| {
        Ok::<_, std::convert::Infallible>(if child.seeds() == level.seeds {
            proven.at(level.rank(child))
        } else {
            level.below.bounds(child)
        })
    });
    match bounds {
        Ok(b) => b,
    }
}

/// Compares the proven bounds with the stored ones, board by board.
fn compare(level: &Level, proven: &Proven, sweeps: u32, limit: usize) -> Forced {
    let unforced = AtomicU64::new(0);
    let mut mismatches: Vec<BoundMismatch> = chunks(level.index.level_size(level.seeds))
        .into_par_iter()
        .flat_map_iter(|(start, count)| {
            let mut found = Vec::new();
            for i in start as usize..start as usize + count {
                let p = proven.at(i);
                let pairs = [
                    (Bound::Lower, level.lower[i], p.lower.get()),
                    (Bound::Upper, level.upper[i], p.upper.get()),
                ];
                for (bound, stored, proven) in pairs {
                    if stored == proven {
                        continue;
                    }
                    unforced.fetch_add(1, Relaxed);
                    if found.len() < limit {
                        let board = level.index.unrank(level.seeds, i as u64).expect("in level");
                        let reason = format!(
                            "{} by a finite strategy",
                            differs(bound.name(), stored, proven, "proven")
                        );
                        found.push(level.mismatch(
                            &board,
                            i as u64,
                            Check::Forced,
                            bound.name(),
                            (stored, proven),
                            reason,
                        ));
                    }
                }
            }
            found
        })
        .collect();
    mismatches.sort_by_key(|m| m.index);
    mismatches.truncate(limit);
    Forced {
        unforced: unforced.into_inner(),
        sweeps,
        mismatches,
    }
}
