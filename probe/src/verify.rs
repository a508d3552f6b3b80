//! Independent verification of a level: every value re-derived from its children
//! with forward moves only, and every non-zero value shown to be reachable in a
//! finite number of moves.
//!
//! ## Why two checks
//! The recurrence `v(p) = max over moves [captured - v(child)]` alone cannot tell
//! a draw by endless play from wrong values inside a cycle: two boards that move
//! into each other satisfy it with values `x` and `-x` for any `x`. So the second
//! check proves every non-zero value by a well-founded argument, computed here
//! from the stored values alone (no counters, no un-moves, nothing of the solver):
//!
//! - a board with `v = k > 0` is *proven* when one of its moves keeps the value
//!   and makes progress: a capture worth `k` (its child is on a lower level,
//!   verified before), or a quiet move to a child with value `-k` that is proven;
//! - a board with `v = -k < 0` is *proven* when every quiet child (all have values
//!   `>= k` by the recurrence) is proven; a board with no move is proven.
//!
//! One sweep in index order proves what is at hand; the rest is proven by a
//! worklist over the forward edges between unproven boards, turned around (each
//! child, once proven, tells the parents waiting for it). Because each proof only
//! uses proofs found earlier, the mover of a proven `k > 0` board can force a gain of
//! at least `k` in finitely many moves, and the opponent of a proven `-k` board
//! can force at least `k`; with the recurrence on every board (which makes the
//! defensive bounds hold, endless play counting 0), every value is exact.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use awari_dbformat::{Board, Index, Rules, Score};
use rayon::prelude::*;

/// One board whose stored value is wrong or cannot be justified.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// The level.
    pub seeds: u32,
    /// The board's index in its level.
    pub index: u64,
    /// The board, pit counts in pit order.
    pub board: Vec<u8>,
    /// The value stored in the file.
    pub stored: i8,
    /// The value its children give.
    pub derived: i8,
    /// What is wrong: "recurrence" or "no progress".
    pub reason: String,
}

/// The result of checking one level.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LevelCheck {
    /// The level.
    pub seeds: u32,
    /// Boards checked.
    pub boards: u64,
    /// Boards whose value differs from what their children give.
    pub recurrence_errors: u64,
    /// Non-zero boards whose value could not be proven reachable.
    pub unproven: u64,
    /// Sweeps of the progress check before the worklist (always 1 now).
    pub sweeps: u32,
    /// The first mismatching boards (at most the limit given).
    pub mismatches: Vec<Mismatch>,
}

impl LevelCheck {
    /// True when every board checked out.
    pub fn ok(&self) -> bool {
        self.recurrence_errors == 0 && self.unproven == 0
    }
}

/// The decoded values of levels, by seed count.
#[derive(Default, Clone)]
pub struct Levels {
    levels: Vec<Option<Arc<[i8]>>>,
}

impl Levels {
    /// Adds the values of level `seeds`.
    pub fn insert(&mut self, seeds: u32, values: Arc<[i8]>) {
        let s = seeds as usize;
        if self.levels.len() <= s {
            self.levels.resize(s + 1, None);
        }
        self.levels[s] = Some(values);
    }

    /// The values of level `seeds`, if present.
    pub fn get(&self, seeds: u32) -> Option<&Arc<[i8]>> {
        self.levels.get(seeds as usize).and_then(|l| l.as_ref())
    }

    /// Forgets level `seeds`.
    pub fn remove(&mut self, seeds: u32) {
        if let Some(l) = self.levels.get_mut(seeds as usize) {
            *l = None;
        }
    }

    fn score(&self, index: &Index, board: &Board) -> Score {
        let level = self
            .get(board.seeds())
            .expect("the levels a capture reaches are loaded");
        Score::new(level[index.rank(board).expect("children are stored") as usize])
    }
}

/// The value of `board` from its children: `values` for quiet moves (same level),
/// `lower` for captures; `-n` when the mover cannot move.
fn derive(rules: Rules, index: &Index, board: &Board, values: &[i8], lower: &Levels) -> Score {
    if let Some(v) = rules.terminal_value(board) {
        return v;
    }
    rules
        .legal_moves(board)
        .iter()
        .map(|m| {
            let child = if m.is_quiet() {
                Score::new(values[index.rank(&m.child).expect("children are stored") as usize])
            } else {
                lower.score(index, &m.child)
            };
            m.value(child)
        })
        .max()
        .expect("a mover with seeds has a move")
}

const CHUNK: usize = 1 << 14;

/// Checks every stored board of level `seeds` (`values`, index order) against its
/// children (`values` and `lower`, which must hold levels `0..=seeds-2`), and
/// proves every non-zero value reachable. Keeps at most `limit` mismatches.
/// `tick(n)` is called as boards are checked (for a progress bar).
pub fn check_level(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    let index = Index::for_pits(rules.pits());
    let n = seeds as i8;
    // 1. The recurrence, and the range of every value.
    let mut mismatches: Vec<Mismatch> = values
        .par_chunks(CHUNK)
        .enumerate()
        .flat_map_iter(|(c, chunk)| {
            let start = (c * CHUNK) as u64;
            let found: Vec<Mismatch> = index
                .boards_from(seeds, start)
                .zip(chunk)
                .enumerate()
                .filter_map(|(k, (board, &stored))| {
                    let derived = if (-n..=n).contains(&stored) {
                        derive(rules, index, &board, values, lower).get()
                    } else {
                        i8::MIN
                    };
                    (derived != stored).then(|| Mismatch {
                        seeds,
                        index: start + k as u64,
                        board: board.pits().to_vec(),
                        stored,
                        derived,
                        reason: if derived == i8::MIN {
                            format!("value {stored} is outside -{seeds}..={seeds}")
                        } else {
                            "recurrence".into()
                        },
                    })
                })
                .collect();
            tick(chunk.len() as u64);
            found
        })
        .collect();
    mismatches.sort_by_key(|m| m.index);
    let recurrence_errors = mismatches.len() as u64;

    // 2. Progress: prove every non-zero value by sweeps, see the module docs.
    let proven: Vec<AtomicU64> = (0..values.len().div_ceil(64))
        .map(|_| AtomicU64::new(0))
        .collect();
    let is_proven = |i: u64| proven[(i / 64) as usize].load(Relaxed) & (1 << (i % 64)) != 0;
    let pending: Vec<u64> = values
        .par_iter()
        .enumerate()
        .filter(|(_, &v)| v != 0)
        .map(|(i, _)| i as u64)
        .collect();
    // One sweep in index order proves every board whose proof is at hand (a
    // capture, a move into a proven board, no quiet move at all).
    let sweeps = 1;
    let step = |i: u64| -> bool {
        let board = index.unrank(seeds, i).expect("index within level");
        let v = values[i as usize];
        let moves = rules.legal_moves(&board);
        let child_index = |b: &Board| index.rank(b).expect("children are stored");
        if v > 0 {
            moves.iter().any(|m| {
                if m.is_quiet() {
                    let c = child_index(&m.child);
                    m.value(Score::new(values[c as usize])).get() == v && is_proven(c)
                } else {
                    m.value(lower.score(index, &m.child)).get() >= v
                }
            })
        } else {
            moves
                .iter()
                .filter(|m| m.is_quiet())
                .all(|m| is_proven(child_index(&m.child)))
        }
    };
    let prove = |i: u64| proven[(i / 64) as usize].fetch_or(1 << (i % 64), Relaxed);
    let pending: Vec<u64> = pending
        .par_chunks(CHUNK)
        .flat_map_iter(|chunk| {
            let mut left = Vec::new();
            for &i in chunk {
                if step(i) {
                    prove(i);
                } else {
                    left.push(i);
                }
            }
            left
        })
        .collect();
    // The rest by a worklist over the forward edges between unproven boards,
    // turned around: for each unproven board, the unproven children its proof
    // waits for, then each child tells its waiting parents once it is proven.
    let pending = prove_by_worklist(rules, seeds, values, &pending, &proven);
    let unproven = pending.len() as u64;
    for &i in pending.iter() {
        if mismatches.len() >= limit.max(1) * 2 {
            break;
        }
        if mismatches.iter().any(|m| m.index == i) {
            continue;
        }
        let board = index.unrank(seeds, i).expect("index within level");
        mismatches.push(Mismatch {
            seeds,
            index: i,
            board: board.pits().to_vec(),
            stored: values[i as usize],
            derived: derive(rules, index, &board, values, lower).get(),
            reason:
                "no progress: no sequence of moves reaches this value; endless play would give 0"
                    .into(),
        });
    }
    mismatches.sort_by_key(|m| m.index);
    mismatches.truncate(limit);
    LevelCheck {
        seeds,
        boards: values.len() as u64,
        recurrence_errors,
        unproven,
        sweeps,
        mismatches,
    }
}

/// Proves what can be proven among `pending` (sorted indices of unproven non-zero
/// boards) and returns the indices left unproven.
fn prove_by_worklist(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    pending: &[u64],
    proven: &[AtomicU64],
) -> Vec<u64> {
    let index = Index::for_pits(rules.pits());
    let is_proven = |i: u64| proven[(i / 64) as usize].load(Relaxed) & (1 << (i % 64)) != 0;
    let position = |i: u64| pending.binary_search(&i).ok();
    // For each pending board: how many proven children it still needs (1 for a
    // win, the unproven quiet children for a loss), and the edges child -> parent.
    let per_board: Vec<(u8, Vec<(u32, u32)>)> = pending
        .par_iter()
        .enumerate()
        .map(|(pos, &i)| {
            let board = index.unrank(seeds, i).expect("index within level");
            let v = values[i as usize];
            let mut edges = Vec::new();
            let mut need = 0u8;
            let mut done = false;
            for m in rules.legal_moves(&board).iter().filter(|m| m.is_quiet()) {
                let c = index.rank(&m.child).expect("children are stored");
                // A win waits for one child of value -v; a loss for every child.
                if v > 0 && values[c as usize] != -v {
                    continue;
                }
                if is_proven(c) {
                    done |= v > 0;
                    continue;
                }
                need += 1;
                if let Some(cpos) = position(c) {
                    edges.push((cpos as u32, pos as u32));
                }
            }
            let need = if done || need == 0 {
                0
            } else if v > 0 {
                1
            } else {
                need
            };
            (need, edges)
        })
        .collect();
    let mut need: Vec<u8> = per_board.iter().map(|(n, _)| *n).collect();
    let mut edges: Vec<(u32, u32)> = per_board.into_iter().flat_map(|(_, e)| e).collect();
    edges.par_sort_unstable();
    // CSR: the parents of child position c are edges[first[c]..first[c + 1]].
    let mut first = vec![0usize; pending.len() + 1];
    for &(c, _) in &edges {
        first[c as usize + 1] += 1;
    }
    for k in 0..pending.len() {
        first[k + 1] += first[k];
    }
    let mut queue: Vec<u32> = (0..pending.len() as u32)
        .filter(|&p| need[p as usize] == 0)
        .collect();
    while let Some(c) = queue.pop() {
        proven[(pending[c as usize] / 64) as usize]
            .fetch_or(1 << (pending[c as usize] % 64), Relaxed);
        for &(_, parent) in &edges[first[c as usize]..first[c as usize + 1]] {
            let n = &mut need[parent as usize];
            if *n > 0 {
                *n -= 1;
                if *n == 0 {
                    queue.push(parent);
                }
            }
        }
    }
    pending.iter().copied().filter(|&i| !is_proven(i)).collect()
}

/// The value of any board (stored or not) from the levels in `levels`, by one ply
/// over its children when it is not stored.
pub fn value_of(rules: Rules, board: &Board, levels: &Levels) -> Score {
    let index = Index::for_pits(rules.pits());
    if board.is_stored() {
        return levels.score(index, board);
    }
    let own = levels
        .get(board.seeds())
        .expect("the board's level is loaded");
    derive(rules, index, board, own, levels)
}
