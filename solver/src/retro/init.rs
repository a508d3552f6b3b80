//! The initial pass: `B(p)`, the best value among p's captures, and the
//! counter of p's quiet moves, for every board of a partition.
//!
//! A capture's child lies in a lower level, read from the levels decoded in
//! memory ([`LowerLevels`]), looked up as the boards are generated, a batch
//! at a time so that the lookups' cache misses overlap.

use std::sync::atomic::Ordering::Relaxed;

use awari_dbformat::cache::prefetch;
use awari_dbformat::resident;
use awari_dbformat::{Gain, Index, MoveList, Rules, Score};
use indicatif::ProgressBar;

use super::state::{State, SUMMARY_WORDS};
use crate::cells::{Cell, Layout};
use crate::lower::LowerLevels;

/// The initial pass over `state`'s boards of level `seeds`: each board's
/// cell gets `B` (or [`Layout::NO_EXIT`]) and its count of quiet moves, and
/// each run of words its summary.
pub(super) fn init<L: Layout, const P: usize>(
    rules: Rules,
    seeds: u32,
    index: &Index,
    lower: &LowerLevels,
    state: &State<L>,
    progress: &ProgressBar,
) {
    progress.set_message("captures");
    let first = state.start;
    // A board without a move: the opponent takes every seed, `B = -n`, and
    // the board is lost at stage n. Under cross-wari the seeds go to no one
    // and it is worth 0: no exit, no quiet move, so it is never decided and
    // ends as 0, and (its `B` not being 0) is not taken for one a capture
    // reaches.
    let no_move = if rules.set().end_leaves_seeds_to_no_one() {
        L::NO_EXIT
    } else {
        rules.value_without_moves(seeds).get()
    };
    rayon::iter::ParallelIterator::for_each(state.chunks(), |(start, boards, words)| {
        // The chunk's cells, made here and packed into its words at the end.
        let mut cells = vec![
            Cell {
                value: 0,
                nibble: 0
            };
            boards
        ];
        // Capture values waiting for their lower-level byte: (board in chunk,
        // what the capture adds, the child's value byte). See
        // `super::batch::ParentBatch` for why in batches.
        let mut pending: Vec<(u32, Gain, &i8)> = Vec::with_capacity(2 * INIT_BATCH);
        let mut captures = MoveList::new();
        for (k, board) in index
            .boards_from(seeds, first + start)
            .take(boards)
            .enumerate()
        {
            let quiet = rules.quiet_moves_and_captures_sized::<P>(&board, &mut captures);
            let best = if quiet == 0 && captures.is_empty() {
                no_move
            } else {
                L::NO_EXIT
            };
            for m in captures.iter() {
                let slot = lower.slot_sized::<P>(&m.child);
                prefetch(slot);
                pending.push((k as u32, m.gain(), slot));
            }
            cells[k] = Cell {
                value: best,
                nibble: quiet,
            };
            if pending.len() >= INIT_BATCH {
                resolve_captures(&mut pending, &mut cells);
            }
        }
        resolve_captures(&mut pending, &mut cells);
        store_cells(state, start, words, &cells);
        progress.inc(boards as u64);
    });
    // The lower levels are not read again while the level is solved: with
    // their pages given back, the solve starts with room for its own.
    if resident::ceiling().is_some() {
        resident::release_file_pages();
    }
}

/// Capturing moves collected before their child values are read (see `init`).
const INIT_BATCH: usize = 32;

/// Folds each pending capture's value into `B` of its board.
fn resolve_captures(pending: &mut Vec<(u32, Gain, &i8)>, cells: &mut [Cell]) {
    for &(k, gain, slot) in pending.iter() {
        let value = gain.value(Score::new(*slot)).get();
        let best = &mut cells[k as usize].value;
        *best = (*best).max(value);
    }
    pending.clear();
}

/// Packs the cells of the task at local board `start` into its `words`, and
/// makes their summaries.
fn store_cells<L: Layout>(
    state: &State<L>,
    start: u64,
    words: &[std::sync::atomic::AtomicU64],
    cells: &[Cell],
) {
    let per_summary = SUMMARY_WORDS * L::PER_WORD as usize;
    for (summary, cells) in state
        .summaries_from(start)
        .iter()
        .zip(cells.chunks(per_summary))
    {
        let bits = cells.iter().fold(0u64, |bits, cell| {
            bits | 1 << cell.value.unsigned_abs().min(63)
        });
        summary.store(bits, Relaxed);
    }
    for (word, cells) in words.iter().zip(cells.chunks(L::PER_WORD as usize)) {
        word.store(L::pack(cells), Relaxed);
    }
}
