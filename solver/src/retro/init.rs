//! The initial pass: `B(p)`, the best value among p's captures, and the
//! counter of p's quiet moves, for every board of a partition.
//!
//! A capture's child lies in a lower level ([`Levels`]). [`init`]
//! looks it up as the boards are generated, a batch at a time so that the
//! lookups' cache misses overlap: right when the levels are in memory or in
//! the page cache. [`init_sorted`] collects a window of boards' lookups
//! first and reads them in the order of the children: right when the
//! levels are files larger than the page cache, whose reads at random would
//! each wait for the disk (about 18,000 a second here, against 1.4 GB a
//! second read in order). With them, the captures of the level's unstored
//! boards join the windows ([`super::unstored`]): the statistics need their
//! values, and a pass of their own would read the lower levels again.

use std::ops::Range;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI8, AtomicU64};

use awari_dbformat::cluster::Ranks;
use awari_dbformat::level::Slot;
use awari_dbformat::memory::resident;
use awari_dbformat::Levels;
use awari_dbformat::{Board, Gain, Index, MoveList, Rules, Score};
use indicatif::ProgressBar;
use rayon::prelude::*;

use super::owners;
use super::state::{State, SUMMARY_WORDS};
use super::unstored::{UnstoredCaptures, NO_CAPTURE};
use crate::cells::{Cell, Packing};
use crate::error::SolveError;

/// What a partition's initial pass reports after each window of boards:
/// the boards of the partition done so far (from its first). It may
/// checkpoint them; an error it returns stops the pass.
pub(super) type AfterWindow<'a> = dyn FnMut(u64) -> Result<(), SolveError> + 'a;

/// Boards of a window of [`init`] when the pass is checkpointed (a whole
/// number of chunks).
const INIT_WINDOW_CHUNKS: u64 = 2048;

/// One partition's initial pass: the level, the lower levels its captures
/// reach, and the partition's state, which the pass fills.
pub(super) struct Pass<'a, L: Packing> {
    pub rules: Rules,
    /// The level's seed count.
    pub seeds: u32,
    pub index: &'a Index,
    pub lower: &'a Levels,
    /// The partition's state.
    pub state: &'a State<L>,
    /// Advanced by one per board initialised.
    pub progress: &'a ProgressBar,
    /// Where the sorted windows also value the unstored boards' captures
    /// (see [`init_sorted`]).
    pub unstored: Option<&'a UnstoredCaptures>,
}

/// The initial pass over `pass.state`'s boards from local board `from` (0,
/// or where a stopped run left it: the end of a window) to the last: with
/// `sorted_lookups`, as [`init_sorted`] in its windows; else as [`init`],
/// in windows of [`INIT_WINDOW_CHUNKS`] chunks when `windows` (a level on
/// disk, checkpointed as it goes), in one otherwise. `after_window` is
/// called after each window. With several `ranks`, the lower levels are
/// shared out among them, and the sorted windows ask the ranks that hold
/// the children ([`super::owners`]).
///
/// # Errors
/// The first error `after_window` returns.
pub(super) fn initialise<L: Packing, const P: usize>(
    pass: &Pass<L>,
    ranks: &dyn Ranks,
    sorted_lookups: Option<usize>,
    windows: bool,
    from: u64,
    after_window: &mut AfterWindow,
) -> Result<(), SolveError> {
    if let Some(max) = sorted_lookups {
        return init_sorted::<L, P>(pass, ranks, max, from, after_window);
    }
    let size = pass.state.size;
    let window = if windows {
        INIT_WINDOW_CHUNKS * State::<L>::CHUNK
    } else {
        size
    };
    let mut at = from;
    while at < size {
        let end = (at + window).min(size);
        init::<L, P>(pass, at..end);
        after_window(end)?;
        at = end;
    }
    Ok(())
}

/// The initial pass over `pass.state`'s boards `boards` (local indices,
/// from the start of a chunk to the start of another or the end): each
/// board's cell gets `B` (or [`Packing::NO_EXIT`]) and its count of quiet
/// moves, and each run of words its summary.
fn init<L: Packing, const P: usize>(pass: &Pass<L>, boards: Range<u64>) {
    let Pass {
        rules,
        seeds,
        index,
        lower,
        state,
        progress,
        ..
    } = *pass;
    progress.set_message("captures");
    let first = state.start;
    let no_move = no_move::<L>(rules, seeds);
    let chunks = chunk_range::<L>(state, boards);
    let tasks = state.chunks().skip(chunks.start).take(chunks.len());
    rayon::iter::ParallelIterator::for_each(tasks, |(start, boards, words)| {
        // The chunk's cells, made here and packed into its words at the end.
        let mut cells = blank_cells(boards);
        // Capture values waiting for their lower-level byte: (board in chunk,
        // what the capture adds, the child's value byte). See
        // `super::batch::ParentBatch` for why in batches.
        let mut pending: Vec<(u32, Gain, Slot)> = Vec::with_capacity(2 * INIT_BATCH);
        let mut captures = MoveList::new();
        let mut batches = 0u32;
        for (k, board) in index
            .boards_from(seeds, first + start)
            .take(boards)
            .enumerate()
        {
            cells[k] = cell_before_captures::<L, P>(rules, no_move, &board, &mut captures);
            for m in captures.iter() {
                let slot = lower.slot_sized::<P>(&m.child);
                slot.prefetch();
                pending.push((k as u32, m.gain(), slot));
            }
            if pending.len() >= INIT_BATCH {
                resolve_captures(&mut pending, &mut cells);
                // The lower levels' pages this thread mapped, held under the
                // ceiling as they come: between two readings of the watch
                // (and while it gives them back, tens of ms over files of
                // gigabytes) the threads map more than it can see
                // (level 24 in `--memory 900M`: peak 936 MiB without).
                // Every few batches: each look costs a system call.
                batches += 1;
                if batches.is_multiple_of(HOLD_BATCHES) {
                    resident::hold();
                }
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

/// `boards` cells of value and nibble 0, to be filled.
fn blank_cells(boards: usize) -> Vec<Cell> {
    vec![
        Cell {
            value: 0,
            nibble: 0
        };
        boards
    ]
}

/// The cell of `board` before its captures' values are read: its count of
/// quiet moves, and `B` [`Packing::NO_EXIT`], or `no_move` for a board
/// without a move. Its captures are left in `captures`.
#[inline]
fn cell_before_captures<L: Packing, const P: usize>(
    rules: Rules,
    no_move: i8,
    board: &Board,
    captures: &mut MoveList,
) -> Cell {
    let quiet = rules.quiet_moves_and_captures_sized::<P>(board, captures);
    let best = if quiet == 0 && captures.is_empty() {
        no_move
    } else {
        L::NO_EXIT
    };
    Cell {
        value: best,
        nibble: quiet,
    }
}

/// The chunks ([`State::chunks`]) that hold local boards `boards`, which
/// start a chunk and end one (or the partition).
fn chunk_range<L: Packing>(state: &State<L>, boards: Range<u64>) -> Range<usize> {
    let chunk = State::<L>::CHUNK;
    debug_assert!(
        boards.start.is_multiple_of(chunk)
            && (boards.end.is_multiple_of(chunk) || boards.end == state.size)
    );
    (boards.start / chunk) as usize..boards.end.div_ceil(chunk) as usize
}

/// The `B` of a board without a move: the opponent takes every seed,
/// `B = -n`, and the board is lost at stage n. Under cross-wari the seeds go
/// to no one and it is worth 0: no exit, no quiet move, so it is never
/// decided and ends as 0, and (its `B` not being 0) is not taken for one a
/// capture reaches.
fn no_move<L: Packing>(rules: Rules, seeds: u32) -> i8 {
    if rules.set().end_leaves_seeds_to_no_one() {
        L::NO_EXIT
    } else {
        rules.value_without_moves(seeds).get()
    }
}

/// A capture waiting for its child's value in [`init_sorted`]: the child
/// ([`child_key`]), the capturing board
/// (its place among the window's stored boards, or its unstored ones) and
/// what the capture adds.
#[derive(Clone, Copy)]
pub(super) struct Lookup {
    child: u64,
    board: u32,
    gain: Gain,
    /// Whether `board` is one of the window's unstored boards.
    unstored: bool,
}

/// Where a [`Lookup`]'s child level starts in its key (indices stay below
/// 2^42: level 48 has 2^37.6 boards).
const LEVEL_SHIFT: u32 = 42;

/// The key of board `i` of level `seeds` in a [`Lookup`] (and in the asks
/// between ranks: [`super::owners`]).
#[inline]
pub(crate) fn child_key(seeds: u32, i: u64) -> u64 {
    u64::from(seeds) << LEVEL_SHIFT | i
}

/// The level and the index of a [`child_key`].
#[inline]
pub(crate) fn split_key(key: u64) -> (u32, u64) {
    ((key >> LEVEL_SHIFT) as u32, key & ((1 << LEVEL_SHIFT) - 1))
}

/// Lookups read by one task of [`init_sorted`]; their children's pages are
/// read ahead together.
const LOOKUP_RUN: usize = 1 << 16;

/// [`init`] with the captures' lookups sorted by child, in windows of the
/// partition's boards holding about `max_lookups` lookups (16 bytes each;
/// more by an eighth where the boards have twice the captures measured
/// before them; at least one chunk of boards a window, and no more boards
/// than a `u32` counts), from local board `from` (the
/// start of a chunk): each window's lookups are collected, sorted, read in
/// runs (each run's children's pages read ahead first), their best value
/// kept per board, and the window's cells stored; then `after_window` is
/// told the boards done. The cells and summaries are those of [`init`].
/// With `pass.unstored`, each window's lookups also hold those of its share
/// of the unstored boards ([`UnstoredCaptures::first_with`]), whose best
/// captures are written to their file. With several `ranks`, each window is
/// a round of asks among them ([`super::owners`]).
///
/// # Errors
/// The first error `after_window` returns, or an unstored boards' file
/// that cannot be written.
fn init_sorted<L: Packing, const P: usize>(
    pass: &Pass<L>,
    ranks: &dyn Ranks,
    max_lookups: usize,
    from: u64,
    after_window: &mut AfterWindow,
) -> Result<(), SolveError> {
    pass.progress.set_message("captures, sorted by child");
    let chunks: Vec<Chunk> = pass.state.chunks().collect();
    // Lookups per board, as measured so far (a guess at first).
    let mut per_board = 2.0f64;
    let mut at = chunk_range::<L>(pass.state, from..pass.state.size).start;
    let shared = ranks.size() > 1;
    // Under MPI with this rank's shares in memory, the children it holds
    // are read as the lookups are made, and only the others are asked of
    // their owners, unsorted: each owner reads its share at random, in
    // memory as fast as in order (level 21 under 2 ranks: the initial pass
    // 6.0 s against 7.6 s sorted, the files the same).
    let held_here = (shared && pass.lower.in_memory()).then(|| ranks.rank());
    while at < chunks.len() {
        if shared {
            // (A round of asks among the ranks: see `owners`.)
            owners::more_to_ask(ranks, true);
        }
        // 1. Each chunk's cells without their captures, and its lookups.
        let mut window =
            collect_window::<L, P>(pass, &chunks, at, max_lookups, held_here, &mut per_board);
        // 2. The lookups in the order of their children (where they are
        // read from files).
        if held_here.is_none() {
            window
                .lookups
                .par_sort_unstable_by_key(|l: &Lookup| l.child);
        }
        // 3. The best capture of each board, the children read in order
        // (or asked of the ranks that hold them).
        let unstored_boards = (window.unstored.end - window.unstored.start) as usize;
        let (best, best_unstored) = if shared {
            best_captures_asked(
                ranks,
                pass.lower,
                &window.lookups,
                window.boards,
                unstored_boards,
            )
        } else {
            best_captures(pass.lower, &window.lookups, window.boards, unstored_boards)
        };
        drop(window.lookups);
        // 4. The cells with their best capture, stored; the unstored
        // boards' best, written.
        store_window(pass, &chunks[at..window.end], window.cells, &best);
        if let Some(unstored) = pass.unstored {
            let values = best_unstored
                .into_iter()
                .map(AtomicI8::into_inner)
                .collect();
            unstored.write(window.unstored.start, values)?;
        }
        at = window.end;
        let (last_start, last_boards, _) = chunks[at - 1];
        after_window(last_start + last_boards as u64)?;
    }
    if resident::ceiling().is_some() {
        resident::release_file_pages();
    }
    Ok(())
}

/// A chunk of a partition ([`State::chunks`]): its first local board, its
/// boards and its words.
type Chunk<'a> = (u64, usize, &'a [AtomicU64]);

/// The chunks of a window of [`init_sorted`], made but not yet stored.
struct Window {
    /// The chunk after the window's last.
    end: usize,
    /// Each chunk's cells, without their captures' values.
    cells: Vec<Vec<Cell>>,
    /// The lookups of the window's captures.
    lookups: Vec<Lookup>,
    /// The lookups made, those valued at once among them: what the
    /// window's size is counted in, so that its boards (each with a cell
    /// and a best value held until the window is stored) are as many
    /// whether its children are held here or not.
    made: usize,
    /// The boards of the window.
    boards: usize,
    /// The unstored boards whose lookups the window holds (indices among
    /// the level's unstored boards; none without `Pass::unstored`).
    unstored: Range<u64>,
}

/// The window of `chunks` from chunk `at`: each chunk's cells without
/// their captures, and its lookups (but those of children held by rank
/// `held_here`, read at once: [`chunk_lookups`]), made in groups of chunks
/// until the window has made `max_lookups`. A group is sized for an eighth of them at
/// the rate measured so far, `per_board` (updated here), so that a stretch
/// of boards richer in captures than those before (their rate varies from
/// 0.5 to 1.1 a board along level 36) goes over by a fraction of an eighth.
/// (The lookups of each group join the window's as the group ends, so
/// that the chunks' own vectors, freed to the heap, are used again by the
/// next group's: copied at the end, all of them would be resident beside
/// the copy, twice the window's lookups.)
fn collect_window<L: Packing, const P: usize>(
    pass: &Pass<L>,
    chunks: &[Chunk],
    at: usize,
    max_lookups: usize,
    held_here: Option<usize>,
    per_board: &mut f64,
) -> Window {
    let window_start = chunks[at].0;
    // The first unstored board that goes with chunk `chunk` (or the end).
    let unstored_at = |chunk: usize| {
        let start = chunks.get(chunk).map_or(pass.state.size, |c| c.0);
        pass.unstored
            .map_or(0, |u| u.first_with(pass.state.start + start))
    };
    let mut window = Window {
        end: at,
        cells: Vec::new(),
        lookups: Vec::new(),
        made: 0,
        boards: 0,
        unstored: unstored_at(at)..unstored_at(at),
    };
    let mut end = at;
    while end < chunks.len()
        && window.made < max_lookups
        && (end == at || window.boards + chunks[end].1 <= u32::MAX as usize)
    {
        let want = (max_lookups - window.made).min(max_lookups.div_ceil(8));
        let group_start = end;
        let mut group_boards = chunks[end].1;
        end += 1;
        while end < chunks.len()
            && ((group_boards + chunks[end].1) as f64 * *per_board) as usize <= want
            && window.boards + group_boards + chunks[end].1 <= u32::MAX as usize
        {
            group_boards += chunks[end].1;
            end += 1;
        }
        let group: Vec<(Vec<Cell>, Vec<Lookup>, usize)> = chunks[group_start..end]
            .par_iter()
            .map(|&(start, boards, _)| {
                let offset = (start - window_start) as u32;
                chunk_lookups::<L, P>(pass, start, boards, offset, held_here)
            })
            .collect();
        for (cells, chunk_lookups, made) in group {
            window.lookups.extend_from_slice(&chunk_lookups);
            window.made += made;
            window.cells.push(cells);
        }
        if let Some(unstored) = pass.unstored {
            let boards = window.unstored.end..unstored_at(end);
            let offset = (boards.start - window.unstored.start) as u32;
            for lookups in unstored_lookups::<L, P>(pass, unstored, boards.clone(), offset) {
                window.lookups.extend_from_slice(&lookups);
                window.made += lookups.len();
            }
            window.unstored.end = boards.end;
        }
        window.boards += group_boards;
        *per_board = (window.made as f64 / window.boards as f64).max(0.01);
    }
    window.end = end;
    window
}

/// The best value the captures of each of the `boards` stored boards of a
/// window give, and of each of its `unstored` boards ([`NO_CAPTURE`] for
/// none), from its `lookups` (sorted by child), read in runs. (Atomic: the
/// boards of one run of children lie anywhere in the window.)
fn best_captures(
    lower: &Levels,
    lookups: &[Lookup],
    boards: usize,
    unstored: usize,
) -> (Vec<AtomicI8>, Vec<AtomicI8>) {
    let (best, best_unstored) = no_captures_yet(boards, unstored);
    lookups.par_chunks(LOOKUP_RUN).for_each(|run| {
        read_ahead(lower, run);
        for l in run {
            let (level, i) = split_key(l.child);
            let value = l.gain.value(lower.slot_at(level, i).score()).get();
            let best = if l.unstored { &best_unstored } else { &best };
            best[l.board as usize].fetch_max(value, Relaxed);
        }
        resident::hold();
    });
    (best, best_unstored)
}

/// [`best_captures`] with the lower levels shared out among the ranks:
/// the children's scores asked of the ranks that hold them, in one round
/// ([`owners::children_scores`]).
pub(super) fn best_captures_asked(
    ranks: &dyn Ranks,
    lower: &Levels,
    lookups: &[Lookup],
    boards: usize,
    unstored: usize,
) -> (Vec<AtomicI8>, Vec<AtomicI8>) {
    let scores = owners::children_scores(ranks, lower, lookups.iter().map(|l| l.child));
    let (best, best_unstored) = no_captures_yet(boards, unstored);
    lookups
        .par_iter()
        .zip(scores.par_iter())
        .for_each(|(l, &score)| {
            let value = l.gain.value(Score::new(score)).get();
            let best = if l.unstored { &best_unstored } else { &best };
            best[l.board as usize].fetch_max(value, Relaxed);
        });
    (best, best_unstored)
}

/// The best capture values of a window's `boards` stored and `unstored`
/// boards before any capture is read.
fn no_captures_yet(boards: usize, unstored: usize) -> (Vec<AtomicI8>, Vec<AtomicI8>) {
    (
        (0..boards).map(|_| AtomicI8::new(i8::MIN)).collect(),
        (0..unstored).map(|_| AtomicI8::new(NO_CAPTURE)).collect(),
    )
}

/// Stores the `cells` of each chunk of `window`, each with the `best` value
/// of its captures (indexed from the window's first board).
fn store_window<L: Packing>(
    pass: &Pass<L>,
    window: &[Chunk],
    cells: Vec<Vec<Cell>>,
    best: &[AtomicI8],
) {
    let window_start = window[0].0;
    window.par_iter().zip(cells.into_par_iter()).for_each(
        |(&(start, boards, words), mut cells)| {
            let offset = (start - window_start) as usize;
            for (cell, best) in cells.iter_mut().zip(&best[offset..offset + boards]) {
                cell.value = cell.value.max(best.load(Relaxed));
            }
            store_cells(pass.state, start, words, &cells);
            pass.progress.inc(boards as u64);
        },
    );
}

/// The cells of the `boards` boards of the pass's level from local board
/// `start` without their captures' values (`B` is [`Packing::NO_EXIT`], or
/// the value of a board without moves), and the lookups of their captures,
/// the boards numbered from `offset` in their window, and how many were
/// made. With `held_here`, the captures whose children this rank holds in
/// memory are valued here ([`value_held`]): their boards' cells have them,
/// and only the others are returned.
fn chunk_lookups<L: Packing, const P: usize>(
    pass: &Pass<L>,
    start: u64,
    boards: usize,
    offset: u32,
    held_here: Option<usize>,
) -> (Vec<Cell>, Vec<Lookup>, usize) {
    let Pass {
        rules,
        seeds,
        index,
        state,
        ..
    } = *pass;
    let no_move = no_move::<L>(rules, seeds);
    let mut cells = blank_cells(boards);
    let mut lookups = Vec::new();
    let mut captures = MoveList::new();
    for (k, board) in index
        .boards_from(seeds, state.start + start)
        .take(boards)
        .enumerate()
    {
        cells[k] = cell_before_captures::<L, P>(rules, no_move, &board, &mut captures);
        push_lookups::<P>(index, &captures, offset + k as u32, false, &mut lookups);
    }
    let made = lookups.len();
    if let Some(me) = held_here {
        value_held(pass.lower, me, offset, &mut cells, &mut lookups);
    }
    (cells, lookups, made)
}

/// Values the `lookups` of stored boards whose children rank `me` holds (in
/// memory), raising their boards' `cells` (numbered from `offset` in the
/// window) to the best, and keeps the others in order. The children are
/// prefetched and read a batch at a time ([`resolve_captures`]), so that
/// their misses overlap, as in [`init`].
fn value_held(
    lower: &Levels,
    me: usize,
    offset: u32,
    cells: &mut [Cell],
    lookups: &mut Vec<Lookup>,
) {
    let mut pending: Vec<(u32, Gain, Slot)> = Vec::with_capacity(INIT_BATCH);
    lookups.retain(|l| {
        let (level, i) = split_key(l.child);
        if lower.owner(level, i) != me {
            return true;
        }
        let slot = lower.slot_at(level, i);
        slot.prefetch();
        pending.push((l.board - offset, l.gain, slot));
        if pending.len() >= INIT_BATCH {
            resolve_captures(&mut pending, cells);
        }
        false
    });
    resolve_captures(&mut pending, cells);
}

/// The lookups of the captures of boards `boards` of level `seeds`
/// (numbered from 0 in the window), sorted by child: a level read from its
/// file has its lower bounds raised to them ([`super::decode_share`]).
pub(super) fn sorted_capture_lookups<const P: usize>(
    rules: Rules,
    index: &Index,
    seeds: u32,
    boards: Range<u64>,
) -> Vec<Lookup> {
    let pieces: Vec<Range<u64>> = boards
        .clone()
        .step_by(CAPTURE_PIECE as usize)
        .map(|start| start..(start + CAPTURE_PIECE).min(boards.end))
        .collect();
    let per_piece: Vec<Vec<Lookup>> = pieces
        .into_par_iter()
        .map(|piece| {
            let mut lookups = Vec::new();
            let mut captures = MoveList::new();
            let count = (piece.end - piece.start) as usize;
            let at = (piece.start - boards.start) as u32;
            let all = index.boards_from(seeds, piece.start).take(count);
            for (k, board) in all.enumerate() {
                rules.quiet_moves_and_captures_sized::<P>(&board, &mut captures);
                push_lookups::<P>(index, &captures, at + k as u32, false, &mut lookups);
            }
            lookups
        })
        .collect();
    let mut lookups = per_piece.concat();
    lookups.par_sort_unstable_by_key(|l: &Lookup| l.child);
    lookups
}

/// Boards of a task of [`sorted_capture_lookups`].
const CAPTURE_PIECE: u64 = 1 << 16;

/// Appends to `lookups` those of `captures`, the captures of board `board`
/// of a window (one of its unstored boards when `unstored`).
fn push_lookups<const P: usize>(
    index: &Index,
    captures: &MoveList,
    board: u32,
    unstored: bool,
    lookups: &mut Vec<Lookup>,
) {
    for m in captures.iter() {
        let i = index
            .rank_sized::<P>(&m.child)
            .expect("a child is always stored");
        lookups.push(Lookup {
            child: child_key(m.child.seeds(), i),
            board,
            gain: m.gain(),
            unstored,
        });
    }
}

/// The lookups of the captures of the unstored `boards` (indices among the
/// level's unstored boards), numbered from `offset` among the window's
/// unstored boards: in pieces of whole rows, a task each. A board that ends
/// the game has none: its value is its own ([`crate::stats`] sets it), as
/// the statistics' one ply has it.
fn unstored_lookups<L: Packing, const P: usize>(
    pass: &Pass<L>,
    unstored: &UnstoredCaptures,
    boards: Range<u64>,
    offset: u32,
) -> Vec<Vec<Lookup>> {
    let Pass { rules, index, .. } = *pass;
    let first = boards.start;
    unstored
        .pieces(boards, UNSTORED_PIECE)
        .into_par_iter()
        .map(|piece| {
            let mut lookups = Vec::new();
            let mut captures = MoveList::new();
            let at = offset + (piece.start - first) as u32;
            let count = (piece.end - piece.start) as usize;
            for (k, board) in unstored.boards_from(piece.start).take(count).enumerate() {
                if rules.terminal_value(&board).is_some() {
                    continue;
                }
                rules.quiet_pits_and_captures_sized::<P>(&board, &mut captures);
                push_lookups::<P>(index, &captures, at + k as u32, true, &mut lookups);
            }
            lookups
        })
        .collect()
}

/// The unstored boards of a task of [`unstored_lookups`], at least (rows
/// are not cut but at the ends of a window's share).
const UNSTORED_PIECE: u64 = 1 << 14;

/// Reads in the pages of the children of `run` (sorted by child), level
/// by level, before they are read: the span a run reaches in a level in
/// large reads now, when its lookups are dense enough there (at least one
/// per [`DENSE_SPAN`] bytes), else only advised (read ahead meanwhile).
/// (Faulted in a page at a time, at random, the reads of a level beyond the
/// page cache would wait on the disk for each: about 40 MB/s here, against
/// 1.3 GB/s read in order.)
fn read_ahead(lower: &Levels, run: &[Lookup]) {
    let mut from = 0;
    while from < run.len() {
        let (level, lo) = split_key(run[from].child);
        let to = from + run[from..].partition_point(|l| split_key(l.child).0 == level);
        let hi = split_key(run[to - 1].child).1;
        if hi - lo < (to - from) as u64 * DENSE_SPAN {
            lower.populate(level, lo..hi + 1);
        } else {
            lower.will_need(level, lo..hi + 1);
        }
        from = to;
    }
}

/// The bytes of a lower level per lookup below which [`read_ahead`] reads
/// in the whole span of a run: a page read in order costs about what a
/// 40th of a page read at random does.
const DENSE_SPAN: u64 = 16 << 10;

/// Capturing moves collected before their child values are read (see `init`).
const INIT_BATCH: usize = 32;

/// Batches of [`init`] between two calls of [`resident::hold`]: at most
/// 256 lookups, and so as many pages mapped, unseen.
const HOLD_BATCHES: u32 = 8;

/// Folds each pending capture's value into `B` of its board.
fn resolve_captures(pending: &mut Vec<(u32, Gain, Slot)>, cells: &mut [Cell]) {
    for &(k, gain, slot) in pending.iter() {
        let value = gain.value(slot.score()).get();
        let best = &mut cells[k as usize].value;
        *best = (*best).max(value);
    }
    pending.clear();
}

/// Packs the cells of the task at local board `start` into its `words`, and
/// makes their summaries.
fn store_cells<L: Packing>(state: &State<L>, start: u64, words: &[AtomicU64], cells: &[Cell]) {
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
    if L::SPLIT {
        // B goes to the cold bytes; the words get the counters, and their
        // bit where B <= -k at every stage k: a board without a capture
        // (the others get it from the seeding of stage -B).
        let best: Vec<u8> = cells.iter().map(|cell| cell.value as u8).collect();
        state.cold().write(start, &best);
        let counters: Vec<Cell> = cells
            .iter()
            .map(|cell| Cell {
                value: if cell.value == L::NO_EXIT { -1 } else { 0 },
                nibble: cell.nibble,
            })
            .collect();
        for (word, cells) in words.iter().zip(counters.chunks(L::PER_WORD as usize)) {
            word.store(L::pack(cells), Relaxed);
        }
        return;
    }
    for (word, cells) in words.iter().zip(cells.chunks(L::PER_WORD as usize)) {
        word.store(L::pack(cells), Relaxed);
    }
}
