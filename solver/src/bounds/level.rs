//! Solving one level of bounds in memory: the initial pass over the
//! captures, then the stages from `n` down to `-n + 1`, each a seeding sweep
//! and generations of un-moves.

use std::sync::atomic::{AtomicI8, AtomicU8, Ordering};

use awari_dbformat::level::Values;
use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::{with_pits, Board, Bounds, Index, Levels, MoveList, Parents, Rules};
use indicatif::ProgressBar;
use rayon::prelude::*;

/// A bound not decided yet.
const UNDECIDED: i8 = i8::MIN;
/// `exit_lower` of a board without a capture: below every stage.
const NO_EXIT_LOWER: i8 = i8::MIN;
/// `exit_upper` of a board without a capture: at most every stage's `-k`.
const NO_EXIT_UPPER: i8 = i8::MIN;
/// Boards per task of the sweeps.
const CHUNK: usize = 1 << 14;
/// Frontier boards per task of a generation.
const FRONTIER_CHUNK: usize = 1 << 10;

/// The lower and upper bounds of the levels below the one being solved,
/// decoded, one byte per board each.
pub struct BoundLevels {
    /// The lower bounds, by seed count.
    pub lower: Levels,
    /// The upper bounds, by seed count.
    pub upper: Levels,
}

impl BoundLevels {
    /// No level held yet, for boards of `pits` pits per side.
    pub fn new(pits: u8) -> BoundLevels {
        BoundLevels {
            lower: Levels::new(pits),
            upper: Levels::new(pits),
        }
    }

    /// The bounds of a stored board of a held level.
    ///
    /// # Panics
    /// When the board's level is not held.
    pub fn bounds(&self, board: &Board) -> Bounds {
        let seeds = board.seeds();
        let i = Index::for_pits(board.per_side())
            .rank(board)
            .expect("a child is always stored");
        Bounds {
            lower: self.lower.slot_at(seeds, i).score(),
            upper: self.upper.slot_at(seeds, i).score(),
        }
    }

    /// The bytes held by both.
    pub fn bytes(&self) -> u64 {
        self.lower.bytes() + self.upper.bytes()
    }
}

/// A level of bounds, solved.
pub struct SolvedBounds {
    /// Each stored board's lower bound, in index order.
    pub lower: Values,
    /// Each stored board's upper bound, in index order.
    pub upper: Values,
    /// Stages run (`2n` for level n > 0).
    pub stages: u32,
    /// Generations of un-moves over all stages.
    pub generations: u64,
    /// The most boards in the two frontiers of one generation.
    pub largest_frontier: u64,
    /// Seconds of the initial pass.
    pub init_seconds: f64,
}

/// The state of each board while its level is solved (5 bytes a board).
struct State {
    /// The board's lower bound once decided (it joined `A_k` at stage k).
    lower: Vec<AtomicI8>,
    /// The board's upper bound once decided (it joined `B_-k` at stage k).
    upper: Vec<AtomicI8>,
    /// Quiet children not yet in `A` (with a lower bound decided).
    counter: Vec<AtomicU8>,
    /// The best lower bound its captures (or its end) give.
    exit_lower: Vec<i8>,
    /// The best upper bound its captures (or its end) give.
    exit_upper: Vec<i8>,
    /// Per run of [`CHUNK`] boards, the `exit_lower` and the `exit_upper`
    /// values found there: stage k seeds only boards whose `exit_lower` is
    /// k or whose `exit_upper` is -k, so it skips every other run.
    exits: Vec<(ValueSet, ValueSet)>,
}

/// A set of bound values (-64..=64), as bits.
#[derive(Clone, Copy, Default)]
struct ValueSet([u64; 3]);

impl ValueSet {
    fn insert(&mut self, v: i8) {
        let bit = (i32::from(v) + 64) as usize;
        if bit < 192 {
            self.0[bit / 64] |= 1 << (bit % 64);
        }
    }

    fn contains(&self, v: i8) -> bool {
        let bit = (i32::from(v) + 64) as usize;
        bit < 192 && self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

impl State {
    /// The lower bounds' cells as bytes, to prefetch.
    fn lower_bytes(&self) -> &[AtomicU8] {
        // SAFETY: AtomicI8 and AtomicU8 have the same size and alignment,
        // and the bytes are only handed to a prefetch.
        unsafe { std::slice::from_raw_parts(self.lower.as_ptr().cast(), self.lower.len()) }
    }
}

/// The bytes per board of the level being solved that the memory plan
/// counts: 5 of state, 2 for the two bounds found, and about 1.5 for the
/// frontiers (16 bytes a board; level 20 of awari: at most 8% of its boards
/// in one generation).
pub const STATE_BYTES_PER_BOARD: f64 = 8.5;

/// Solves level `seeds` of `rules` from the bounds of the levels below.
///
/// # Panics
/// When a level a capture reaches is not in `below`.
pub fn solve_bound_level(
    rules: Rules,
    seeds: u32,
    below: &BoundLevels,
    bar: &ProgressBar,
) -> SolvedBounds {
    let index = Index::for_pits(rules.pits());
    let boards = index.level_size(seeds);
    let started = std::time::Instant::now();
    let state = initial_pass(rules, seeds, below, bar);
    let init_seconds = started.elapsed().as_secs_f64();
    let parents = Parents::new(rules);
    let n = seeds as i8;
    let mut generations = 0;
    let mut stages = 0;
    let mut largest_frontier = 0;
    for k in (-n + 1..=n).rev() {
        bar.set_message(format!("stage {k:+}"));
        let (mut a, mut b) = seed(&state, index, seeds, k);
        stages += 1;
        while a.len() + b.len() > 0 {
            largest_frontier = largest_frontier.max(a.len() + b.len());
            (a, b) = with_pits!(rules.pits(), P => {
                generation::<P>(&state, &parents, k, &a, &b)
            });
            generations += 1;
        }
    }
    let finish = |cells: Vec<AtomicI8>, none: i8| {
        let mut values = Values::zeroed(boards);
        values
            .par_iter_mut()
            .zip(cells.par_iter())
            .for_each(|(v, c)| {
                let x = c.load(Ordering::Relaxed);
                *v = if x == UNDECIDED { none } else { x };
            });
        values
    };
    SolvedBounds {
        lower: finish(state.lower, -n),
        upper: finish(state.upper, n),
        stages,
        generations,
        largest_frontier: largest_frontier as u64,
        init_seconds,
    }
}

/// Visits every board once: its quiet moves counted, its captures' bounds
/// looked up below, its end (a board without a move) taken as both.
fn initial_pass(rules: Rules, seeds: u32, below: &BoundLevels, bar: &ProgressBar) -> State {
    let index = Index::for_pits(rules.pits());
    let boards = index.level_size(seeds) as usize;
    let mut counter = vec![0u8; boards];
    let mut exit_lower = vec![NO_EXIT_LOWER; boards];
    let mut exit_upper = vec![NO_EXIT_UPPER; boards];
    bar.set_length(boards as u64);
    bar.set_message("captures");
    counter
        .par_chunks_mut(CHUNK)
        .zip(exit_lower.par_chunks_mut(CHUNK))
        .zip(exit_upper.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(chunk, ((counter, lower), upper))| {
            let first = (chunk * CHUNK) as u64;
            let level = index.boards_from(seeds, first).take(counter.len());
            let mut captures = MoveList::new();
            for (i, board) in level.enumerate() {
                if let Some(end) = rules.terminal_value(&board) {
                    (lower[i], upper[i]) = (end.get(), end.get());
                    continue;
                }
                // Quiet moves are counted without sowing them.
                counter[i] = rules.quiet_moves_and_captures(&board, &mut captures);
                for m in captures.iter() {
                    let b = Bounds::of_move(m.captured, m.turn, below.bounds(&m.child));
                    lower[i] = lower[i].max(b.lower.get());
                    upper[i] = upper[i].max(b.upper.get());
                }
            }
            bar.inc(counter.len() as u64);
        });
    let exits = exit_lower
        .par_chunks(CHUNK)
        .zip(exit_upper.par_chunks(CHUNK))
        .map(|(lower, upper)| {
            let (mut lo, mut up) = (ValueSet::default(), ValueSet::default());
            lower.iter().for_each(|&v| lo.insert(v));
            upper.iter().for_each(|&v| up.insert(v));
            (lo, up)
        })
        .collect();
    let atomic = |fill: i8| (0..boards).map(|_| AtomicI8::new(fill)).collect();
    State {
        lower: atomic(UNDECIDED),
        upper: atomic(UNDECIDED),
        counter: counter.into_iter().map(AtomicU8::new).collect(),
        exit_lower,
        exit_upper,
        exits,
    }
}

/// The boards decided in one generation, by their pits ([`Board::packed`]),
/// so that their parents are found without unranking them; kept in the
/// pieces the tasks that found them made, never copied to join them.
#[derive(Default)]
struct Frontier {
    pieces: Vec<Vec<u128>>,
}

impl Frontier {
    fn from_pieces(pieces: Vec<Vec<u128>>) -> Frontier {
        Frontier {
            pieces: pieces.into_iter().filter(|p| !p.is_empty()).collect(),
        }
    }

    fn len(&self) -> usize {
        self.pieces.iter().map(Vec::len).sum()
    }

    /// The boards, a task's worth at a time.
    fn chunks(&self) -> impl ParallelIterator<Item = &[u128]> {
        self.pieces
            .par_iter()
            .flat_map(|piece| piece.par_chunks(FRONTIER_CHUNK))
    }
}

/// Stage k's seeding: every board whose captures give a lower bound of k
/// joins `A_k`; every board whose captures give an upper bound of at most
/// `-k` and whose quiet children are all in `A` joins `B_-k`. Returns the
/// two frontiers.
fn seed(state: &State, index: &Index, seeds: u32, k: i8) -> (Frontier, Frontier) {
    let joins_a =
        |i: usize| state.exit_lower[i] >= k && state.lower[i].load(Ordering::Relaxed) == UNDECIDED;
    let joins_b = |i: usize| {
        state.exit_upper[i] <= -k
            && state.counter[i].load(Ordering::Relaxed) == 0
            && state.upper[i].load(Ordering::Relaxed) == UNDECIDED
    };
    let (a, b): (Vec<Vec<u128>>, Vec<Vec<u128>>) = (0..state.lower.len())
        .into_par_iter()
        .step_by(CHUNK)
        .map(|first| {
            let end = (first + CHUNK).min(state.lower.len());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            // A board is seeded at the one stage its exits name (a larger
            // exit_lower was seeded before; an exit_upper below -k whose
            // counter falls to zero is decided in propagation there and
            // then): most runs seed nothing, and their boards are not read.
            let (lo, up) = &state.exits[first / CHUNK];
            if !(lo.contains(k) || up.contains(-k))
                || !(first..end).any(|i| joins_a(i) || joins_b(i))
            {
                return (a, b);
            }
            let boards = index.boards_from(seeds, first as u64);
            for (i, board) in (first..end).zip(boards) {
                // No other task touches these boards while seeding.
                if joins_a(i) {
                    state.lower[i].store(k, Ordering::Relaxed);
                    a.push(board.packed());
                }
                if joins_b(i) {
                    state.upper[i].store(-k, Ordering::Relaxed);
                    b.push(board.packed());
                }
            }
            (a, b)
        })
        .unzip();
    (Frontier::from_pieces(a), Frontier::from_pieces(b))
}

/// One generation of stage k: each board that joined `B_-k` makes its
/// parents' lower bound k (they move to it); each board that joined `A`
/// takes one off its parents' counters, and a parent whose counter falls to
/// zero with captures giving at most `-k` gets the upper bound `-k`.
/// Returns the boards decided, for the next generation.
///
/// A parent is anywhere in the level, so telling it is a cache miss: a task
/// first collects the parents of a chunk of the frontier, prefetching each
/// one's line, and only then tells them, so that the misses overlap.
fn generation<const P: usize>(
    state: &State,
    parents: &Parents,
    k: i8,
    joined_a: &Frontier,
    joined_b: &Frontier,
) -> (Frontier, Frontier) {
    let gather = |chunk: &[u128], cells: &[AtomicU8]| {
        let mut found = Vec::with_capacity(chunk.len() * 6);
        for &child in chunk {
            parents.for_each::<P>(child, |p, pits| {
                prefetch(&cells[p as usize]);
                found.push((p as usize, pits));
            });
        }
        found
    };
    let next_a = joined_b
        .chunks()
        .map(|chunk| {
            let mut next = Vec::new();
            for (p, pits) in gather(chunk, state.lower_bytes()) {
                // The compare-and-swap is the one place a lower bound is
                // decided, so each board joins A once whatever the threads.
                if state.lower[p]
                    .compare_exchange(UNDECIDED, k, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    next.push(pits);
                }
            }
            next
        })
        .collect();
    let next_b = joined_a
        .chunks()
        .map(|chunk| {
            let mut next = Vec::new();
            for (p, pits) in gather(chunk, &state.counter) {
                let left = state.counter[p].fetch_sub(1, Ordering::Relaxed) - 1;
                if left == 0
                    && state.exit_upper[p] <= -k
                    && state.upper[p]
                        .compare_exchange(UNDECIDED, -k, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    next.push(pits);
                }
            }
            next
        })
        .collect();
    (Frontier::from_pieces(next_a), Frontier::from_pieces(next_b))
}

/// Every level from 0 to `max_seeds` solved in memory: the lower and upper
/// bounds of each (index order). For tests; the build writes files.
pub fn solve_bounds_in_memory(rules: Rules, max_seeds: u32) -> Vec<(Values, Values)> {
    let mut below = BoundLevels::new(rules.pits());
    let bar = ProgressBar::hidden();
    let mut out = Vec::new();
    for n in 0..=max_seeds {
        let solved = solve_bound_level(rules, n, &below, &bar);
        let copy = |v: &Values| {
            let mut c = Values::zeroed(v.len() as u64);
            c.copy_from_slice(v);
            c
        };
        below
            .lower
            .insert(n, std::sync::Arc::new(copy(&solved.lower)));
        below
            .upper
            .insert(n, std::sync::Arc::new(copy(&solved.upper)));
        out.push((solved.lower, solved.upper));
    }
    out
}
