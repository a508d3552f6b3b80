//! The proof search: every proven board tells its parents, and a parent
//! whose counter of proofs still needed reaches zero is proven in turn (see
//! the module docs, "How the proofs are found").

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::memory::resident;
use awari_dbformat::{Board, Index, Rules};
use rayon::prelude::*;

use super::levels::Edge;
use super::{Level, CHUNK};

/// Progress state of a board whose proof is found: not yet told its parents.
pub(super) const PROVEN: u8 = 254;
/// Progress state of a proven board whose parents have been told, or of a board
/// that needs no proof (value 0).
pub(super) const DONE: u8 = 255;
/// The largest counter (a board has at most 8 quiet moves).
pub(super) const MAX_NEED: u8 = 8;

/// Sets every board's progress state to DONE, before the first pass sets
/// those of the boards that wait for a proof.
pub(super) fn reset(progress: &mut [u8]) {
    progress.par_chunks_mut(CHUNK).for_each(|c| {
        resident::hold();
        c.fill(DONE)
    });
}

/// The progress state of a board after the first pass: DONE for value 0, PROVEN
/// when its proof is at hand, else the number of proofs it waits for.
pub(super) fn initial_progress(stored: i8, moves: &[Edge]) -> u8 {
    let quiet = moves.iter().filter(|m| m.is_quiet()).count() as u8;
    match stored {
        0 => DONE,
        v if v > 0 => {
            let capture_keeps = moves.iter().any(|m| !m.is_quiet() && m.value() >= v);
            if capture_keeps {
                PROVEN
            } else {
                1 // one quiet child of value -v, once proven
            }
        }
        _ if quiet == 0 => PROVEN,
        _ => quiet.min(MAX_NEED),
    }
}

/// Tells the parents of every board the first pass proved, and theirs in
/// turn, until no board is proven anew (see the module docs). Ticks about
/// half of the level's boards.
pub(super) fn prove(level: &Level, progress: &[AtomicU8], tick: &(dyn Fn(u64) + Sync)) {
    let prover = Prover {
        rules: level.rules,
        index: level.index,
        values: level.values,
        progress,
    };
    progress
        .par_chunks(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut todo = Vec::new();
            let mut parents = Vec::new();
            // The boards walk along with their states, so no board is unranked:
            // the ones proven later come with the board that told them.
            let boards = level.index.boards_from(level.seeds, (c * CHUNK) as u64);
            resident::hold();
            for (k, (state, board)) in chunk.iter().zip(boards).enumerate() {
                // Claim each board proven by the first pass (the walks only ever
                // prove pending boards, so no one else does).
                if state
                    .compare_exchange(PROVEN, DONE, Relaxed, Relaxed)
                    .is_ok()
                {
                    todo.push(((c * CHUNK + k) as u64, board));
                }
                // Work through what is claimed before the list grows long: a few
                // boards at a time, so that their parents' bytes can be asked for
                // together (see `Prover::tell_parents`).
                while todo.len() >= TOLD_TOGETHER {
                    prover.tell_parents(&mut todo, &mut parents);
                }
            }
            while !todo.is_empty() {
                prover.tell_parents(&mut todo, &mut parents);
            }
            tick(chunk.len() as u64 - chunk.len() as u64 / 2);
        });
}

/// The boards left unproven, in index order.
pub(super) fn unproven_boards(progress: &[AtomicU8]) -> Vec<u64> {
    progress
        .par_chunks(CHUNK)
        .enumerate()
        .flat_map_iter(|(c, chunk)| {
            resident::hold();
            let unproven = chunk.iter().enumerate();
            let unproven = unproven.filter(|(_, s)| s.load(Relaxed) != DONE);
            unproven.map(move |(k, _)| (c * CHUNK + k) as u64)
        })
        .collect()
}

/// The shared pieces of the progress walk.
struct Prover<'a> {
    rules: Rules,
    index: &'a Index,
    values: &'a [i8],
    progress: &'a [AtomicU8],
}

/// A parent told of a proven child: `(its index, the parent, the pit of the move,
/// the child, the child's value)`.
type Told = (u64, Board, usize, Board, i8);

/// Proven boards whose parents are told together.
const TOLD_TOGETHER: usize = 8;

impl Prover<'_> {
    /// Takes up to [`TOLD_TOGETHER`] proven boards (index, board) from `todo` and
    /// tells their parents; pushes the parents it proves onto `todo`. The parents lie anywhere
    /// in the level, so they are first collected and their bytes prefetched, then
    /// told (`parents` is scratch space).
    fn tell_parents(&self, todo: &mut Vec<(u64, Board)>, parents: &mut Vec<Told>) {
        let (rules, index, values) = (self.rules, self.index, self.values);
        resident::hold();
        parents.clear();
        for _ in 0..TOLD_TOGETHER {
            let Some((i, child)) = todo.pop() else { break };
            let child_value = values[i as usize];
            let first = parents.len();
            rules.for_each_unmove(&child, |parent, pit| {
                // A parent with a full opponent row is not stored.
                if let Some(q) = index.rank(&parent) {
                    if parents[first..].iter().any(|t| t.0 == q && t.2 == pit) {
                        return; // proposed twice: count the move once
                    }
                    prefetch(&values[q as usize]);
                    prefetch(&self.progress[q as usize]);
                    parents.push((q, parent, pit, child, child_value));
                }
            });
        }
        for &(q, parent, pit, child, child_value) in parents.iter() {
            let v = values[q as usize];
            let state = &self.progress[q as usize];
            let waiting = state.load(Relaxed);
            if waiting == 0 || waiting > MAX_NEED {
                continue; // proven, or needing no proof
            }
            // A win waits for a child worth exactly -v; a loss for every child.
            if v > 0 && child_value != -v {
                continue;
            }
            // Confirm the edge forward: the un-move generator proposes, it does not decide.
            if rules.quiet_child(&parent, pit) != Some(child) {
                continue;
            }
            let before = state.fetch_update(Relaxed, Relaxed, |s| {
                (1..=MAX_NEED).contains(&s).then(|| s - 1)
            });
            if before == Ok(1) {
                // The count reached zero here, and only this thread saw it: the
                // board is proven, and its parents are told in turn.
                state.store(DONE, Relaxed);
                todo.push((q, parent));
            }
        }
    }
}
