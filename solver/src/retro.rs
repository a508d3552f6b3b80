//! The retrograde loop: solving one level from the finished levels below it.
//!
//! Values are found by thresholds, from the extremes inwards (Romein & Bal's
//! "counter" form of the window algorithm). For k = n, n-1, ..., 1 the sets
//! `W_k = {v >= k}` and `L_k = {v <= -k}` only grow as k falls:
//!
//! - `B(p)`, the best value among p's capturing moves (or `-n` when p has no move),
//!   comes from the lower levels and is computed once, in [`init`].
//! - p enters `W_k` when `B(p) >= k` or some quiet (non-capturing) child is in `L_k`.
//! - p enters `L_k` when `B(p) <= -k` and every quiet child is already in `W_k`.
//!   A per-board counter of quiet children not yet in W carries over from one k
//!   to the next, because W only grows.
//! - A board that enters W at stage k has value k, L at stage k has value -k;
//!   what is left after stage 1 is 0 (endless play, or an exact 0).
//!
//! Within a stage, decisions spread in generations: the boards decided in one
//! generation (the frontier) are visited once, and each of their same-level
//! parents (un-moves) is told. Each board is decided once and each quiet edge is
//! followed at most twice per level, so a level costs O(boards x moves).
//!
//! ## State: 1.5 bytes per board
//! - `values[i]`: one signed byte, `B(p)` (or [`NO_EXIT`]) until p is decided,
//!   then p's value.
//! - `nibbles`: four bits per board, two boards per byte: the counter `0..=8`
//!   while undecided, [`DONE`] once decided and visited, or one of two frontier
//!   marks ([`MARK_A`], [`MARK_B`]) while decided but not yet visited. Keeping the
//!   frontier in the nibble costs no memory; a small bitmap of dirty blocks
//!   (one bit per [`BLOCK`] boards) keeps the scan for marks short.
//! - "Free": whether p's value is `B(p)`, so that a capture reaches it and the
//!   level file may store a lower bound instead ([`awari_dbformat::file::bounds`]).
//!   It is known when p is decided (a board seeded from `B`, except one without
//!   moves; a loss whose `B` is exactly `-k`) and lost once the value byte is
//!   overwritten, so the decided codes keep it: each of `DONE` and the two
//!   marks has a free twin with bit 2 clear ([`FREE_BIT`]). The decided codes
//!   are 9..=15, the undecided ones 0..=8. A board left undecided (value 0)
//!   is free when its byte, `B`, is 0.
//!
//! ## Frontier lists
//! A board found by a mark must be unranked before its parents can be made,
//! and unranking costs more than all the rest of a visit. Boards decided during
//! propagation are found by un-moving a child, so their board is at hand: they
//! go onto a list of the next generation instead, their nibble set to
//! [`DONE`] or its free twin (a loss is marked by the swap that decides it,
//! then turned to `DONE` by an OR once listed): one `u64` each, the board
//! packed ([`BoardPacker`]) and the top bit set when it is lost (a board with
//! a pit too full to pack is marked). The lists of one generation may hold at
//! most one board in [`LIST_SHARE`] of the level (8 bytes each; fewer when the memory
//! budget asks, see [`solve_level_within`]), taken by tasks in
//! grants of [`LIST_GRANT`] entries whose unused rest goes back when the task
//! ends; past that, decisions fall back to marks (slower, and the values are
//! the same: see the tests with short lists).
//! Boards seeded from `B` are found by a sweep over the indices and
//! keep using marks; those are found in index order, so the next one is
//! reached by stepping the level's iterator when it is near ([`Walker`]).
//!
//! ## Threads
//! The initial pass and the stage seeding own disjoint index ranges and store
//! plainly. Propagation updates parents anywhere in the level, so a parent's
//! nibble is changed by compare-and-swap on its byte: the swap that moves a board
//! from "undecided" to "decided" is the single point where it is decided, so a
//! board is decided once whatever the number of threads. The values found do not
//! depend on the order of work: the output is identical for any thread count.

use std::sync::atomic::{AtomicI8, AtomicU16, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};

use awari_dbformat::cache::prefetch;
use awari_dbformat::huge::{Generations, HugeArray, Values};
use awari_dbformat::{Board, BoardPacker, Gain, Index, LevelIter, MoveList, Rules, Score};
use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::lower::LowerLevels;

/// `values[i]` of a board with no capturing move and at least one quiet move.
pub const NO_EXIT: i8 = i8::MIN;
/// Nibble of a board that is decided and whose parents have been told.
const DONE: u8 = 15;
/// Frontier mark of even generations. `MARK_A | (DONE ^ MARK_A) == DONE`: a
/// visit sets the one missing bit (see [`Cells::set_done`]).
const MARK_A: u8 = 14;
/// Frontier mark of odd generations.
const MARK_B: u8 = 13;
/// The bit that is clear in the free twins of the decided codes: `DONE`,
/// `MARK_A` and `MARK_B` of a board whose value a capture reaches are 11, 10
/// and 9. Every undecided code (0..=8) with this bit set is still below 13, so
/// `nibble | FREE_BIT == mark` finds a mark and only a mark, free or not.
const FREE_BIT: u8 = 4;

/// The decided code `code`, in its free twin when `free`.
#[inline]
fn with_free(code: u8, free: bool) -> u8 {
    if free {
        code & !FREE_BIT
    } else {
        code
    }
}
/// Boards per dirty bit. Small, so that a sparse frontier costs little to find:
/// a generation scans one bit per block and 32 bytes per dirty block.
pub const BLOCK: u64 = 64;
/// Boards per task of the sequential passes (even, so that tasks own whole bytes).
const CHUNK: usize = 1 << 16;

/// The share of a level's boards the frontier lists of one generation may hold
/// when memory allows (see [`default_list_entries`]): 0.25 bytes per board
/// for two generations. At level 22 of 6-pit awari, lists twice this long
/// solved no faster (44.1 s against 41.4 s), and none at all took 1.5 times
/// as long.
pub const LIST_SHARE: u64 = 64;
/// The bytes of one frontier list entry (a board and whether it is lost).
pub const LIST_ENTRY_BYTES: u64 = std::mem::size_of::<u64>() as u64;
/// The bit of a list entry that says its board is lost (a packed board leaves
/// it clear).
const LOST: u64 = BoardPacker::SPARE_BIT;
/// Frontier list entries a task takes from the shared allowance at a time.
const LIST_GRANT: usize = 1024;

/// The bytes of solver state per board of the level being built that cannot
/// be done without: value and nibble.
pub const FIXED_STATE_BYTES_PER_BOARD: f64 = 1.5;
/// The entries the frontier lists of one generation may hold by default in a
/// level of `boards` boards: one board in [`LIST_SHARE`].
pub fn default_list_entries(boards: u64) -> u64 {
    boards / LIST_SHARE
}

/// The bytes of solver state per board for a level of `boards` boards whose
/// lists may hold `list_entries` per generation: the fixed state plus the
/// lists of two generations (the one being visited and the next) at their
/// fullest.
pub fn state_bytes_per_board(boards: u64, list_entries: u64) -> f64 {
    FIXED_STATE_BYTES_PER_BOARD
        + (2 * list_entries * LIST_ENTRY_BYTES) as f64 / boards.max(1) as f64
}

/// The bytes per board of the recorded generations (a certificate), when asked for.
pub const GENERATION_BYTES_PER_BOARD: f64 = 2.0;

/// What happened at one threshold stage.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    /// The threshold k.
    pub k: u32,
    /// Boards found to have value +k.
    pub wins: u64,
    /// Boards found to have value -k.
    pub losses: u64,
    /// Generations of propagation at this stage (the longest chain of decisions).
    pub generations: u32,
    /// Seconds of seeding (finding the boards whose captures decide them).
    #[serde(default)]
    pub seeding_seconds: f64,
    /// Seconds of propagation.
    #[serde(default)]
    pub propagation_seconds: f64,
}

/// A solved level: one value per stored board, in index order, and how it went.
pub struct SolvedLevel {
    /// The values, one signed byte per board in index order.
    pub values: Values,
    /// One bit per board (bit `i % 64` of word `i / 64` of
    /// [`HugeArray::as_u64`]), set when a capture reaches the board's value:
    /// the level file may store a lower bound.
    pub free: HugeArray,
    /// One entry per stage with any decision, from k = n down.
    pub stages: Vec<Stage>,
    /// Seconds spent in the initial pass (captures and counters).
    pub init_seconds: f64,
    /// When asked for: the generation of its stage in which each board was
    /// decided (0 when seeded, and for value 0), the level's certificate.
    pub generations: Option<Generations>,
}

/// Solves the level of `seeds` seeds under `rules`.
///
/// `lower` must hold every level below `seeds - 1` (a capture takes at least two
/// seeds). `progress` is advanced by one per board initialised and one per board
/// decided; its length is not touched.
pub fn solve_level(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
) -> SolvedLevel {
    solve_level_with(rules, seeds, lower, progress, false)
}

/// Like [`solve_level`]; with `record_generations`, also records in which
/// generation each board was decided ([`SolvedLevel::generations`], 2 more
/// bytes per board while solving).
pub fn solve_level_with(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    record_generations: bool,
) -> SolvedLevel {
    let boards = Index::for_pits(rules.pits()).level_size(seeds);
    let lists = default_list_entries(boards);
    solve_level_within(rules, seeds, lower, progress, record_generations, lists)
}

/// Like [`solve_level_with`], with frontier lists of at most `list_entries`
/// boards per generation ([`LIST_ENTRY_BYTES`] each, two generations alive at
/// once), to fit a memory budget. Fewer entries cost time, not correctness:
/// the boards that do not fit are marked and unranked again, and the values
/// are the same for any number, 0 included.
pub fn solve_level_within(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    record_generations: bool,
    list_entries: u64,
) -> SolvedLevel {
    let index = Index::for_pits(rules.pits());
    let size = index.level_size(seeds);
    let mut state = State::new(size, list_entries, rules.pits());
    if record_generations {
        state.generations = Some(Generations::zeroed(size));
    }
    let started = std::time::Instant::now();
    init(rules, seeds, index, lower, &state, progress);
    let init_seconds = started.elapsed().as_secs_f64();

    let mut stages = Vec::new();
    for k in (1..=seeds as i8).rev() {
        progress.set_message(format!("stage {k}"));
        let stage = run_stage(rules, seeds, index, &state, k, progress);
        if stage.wins + stage.losses > 0 {
            stages.push(stage);
        }
    }
    progress.set_message("done");
    let generations = state.generations.take();
    let (values, free) = state.into_values(seeds);
    SolvedLevel {
        values,
        free,
        stages,
        init_seconds,
        generations,
    }
}

/// The per-board state of the level being solved, see the module docs.
struct State {
    values: HugeArray,
    nibbles: HugeArray,
    /// Dirty blocks of the current and the next generation.
    dirty: [Vec<AtomicU64>; 2],
    size: u64,
    /// When recorded: the generation in which each board was decided.
    generations: Option<Generations>,
    /// The most boards the frontier lists of one generation may hold.
    list_entries: u64,
    /// How the boards on the lists are packed.
    packer: BoardPacker,
}

impl State {
    fn new(size: u64, list_entries: u64, per_side: u8) -> State {
        let blocks = size.div_ceil(BLOCK);
        let words = blocks.div_ceil(64) as usize;
        State {
            values: HugeArray::zeroed(size as usize),
            // (8 bytes more: room for the free bits of a short last chunk,
            // which `into_values` writes over the chunk's own nibbles.)
            nibbles: HugeArray::zeroed(size.div_ceil(2) as usize + 8),
            dirty: [
                (0..words).map(|_| AtomicU64::new(0)).collect(),
                (0..words).map(|_| AtomicU64::new(0)).collect(),
            ],
            size,
            generations: None,
            list_entries,
            packer: BoardPacker::new(per_side),
        }
    }

    /// The value bytes and nibbles as plain slices, fetched once for a hot loop.
    #[inline]
    fn cells(&self) -> Cells<'_> {
        Cells {
            values: self.values(),
            nibbles: self.nibbles(),
        }
    }

    #[inline]
    fn mark_dirty(&self, which: usize, i: u64) {
        let block = i / BLOCK;
        self.dirty[which][(block / 64) as usize].fetch_or(1 << (block % 64), Relaxed);
    }

    /// True when some block of `which` is dirty.
    fn any_dirty(&self, which: usize) -> bool {
        self.dirty[which].par_iter().any(|w| w.load(Relaxed) != 0)
    }

    /// The per-board value bytes.
    #[inline]
    fn values(&self) -> &[AtomicI8] {
        self.values.as_atomic_i8()
    }

    /// Disjoint tasks over the level: `(chunk number, its values, its nibbles)`,
    /// `CHUNK` boards each (even, so a task owns whole nibble bytes).
    fn chunks(&self) -> impl IndexedParallelIterator<Item = (usize, (&[AtomicI8], &[AtomicU8]))> {
        self.values()
            .par_chunks(CHUNK)
            .zip(self.nibbles().par_chunks(CHUNK / 2))
            .enumerate()
    }

    /// The counter nibbles, two boards per byte.
    #[inline]
    fn nibbles(&self) -> &[AtomicU8] {
        self.nibbles.as_atomic_u8()
    }

    /// The final values and free bits of level `seeds`: decided boards keep
    /// theirs (all are visited, `DONE` or its free twin by now), the rest are
    /// 0, free when their captures give exactly 0.
    ///
    /// The free bits (one per board, bit `i % 64` of word `i / 64`) are made in
    /// the nibbles' memory, which then shrinks to them: a separate bitmap
    /// would lift the peak above the 1.5 bytes per board of the solve.
    fn into_values(self, seeds: u32) -> (Values, HugeArray) {
        let State {
            mut values,
            mut nibbles,
            size,
            ..
        } = self;
        // Each chunk's free bits over the start of its own nibbles (CHUNK / 8
        // bytes over CHUNK / 2, read before they are overwritten).
        values
            .par_chunks_mut(CHUNK)
            .zip(nibbles.par_chunks_mut(CHUNK / 2))
            .for_each(|(values, nibbles)| {
                let mut free = vec![0u64; values.len().div_ceil(64)];
                for (i, v) in values.iter_mut().enumerate() {
                    let nibble = (nibbles[i / 2] >> (4 * (i & 1))) & 0xF;
                    let is_free = if nibble > 8 {
                        nibble & FREE_BIT == 0
                    } else {
                        // Undecided: 0. (B = 0 = -n is the empty board, without moves.)
                        let free = *v == 0 && seeds > 0;
                        *v = 0;
                        free
                    };
                    free[i / 64] |= u64::from(is_free) << (i % 64);
                }
                debug_assert!(nibbles.len() >= 8 * free.len());
                for (bytes, word) in nibbles.chunks_exact_mut(8).zip(&free) {
                    bytes.copy_from_slice(&word.to_ne_bytes());
                }
            });
        // Then the chunks' bits side by side, in order: chunk c's go to
        // c * CHUNK / 8, below its nibbles, where chunks before it have been read.
        let chunks = size.div_ceil(CHUNK as u64) as usize;
        for c in 1..chunks {
            let boards = (size - (c * CHUNK) as u64).min(CHUNK as u64);
            let bytes = 8 * boards.div_ceil(64) as usize;
            let from = c * CHUNK / 2;
            nibbles.copy_within(from..from + bytes, c * CHUNK / 8);
        }
        nibbles.shrink(8 * size.div_ceil(64) as usize);
        (Values::from_array(values), nibbles)
    }
}

/// Borrowed views of [`State`]'s two arrays, so that hot loops index slices
/// instead of going through the arrays' accessors on every board.
#[derive(Clone, Copy)]
struct Cells<'a> {
    values: &'a [AtomicI8],
    nibbles: &'a [AtomicU8],
}

impl Cells<'_> {
    /// Marks board i, whose nibble is `mark` or its free twin, as visited: its
    /// nibble becomes [`DONE`] or its free twin. The one bit `mark` lacks is
    /// set by an atomic OR, which cannot disturb the other board of the byte.
    #[inline]
    fn set_done(&self, i: u64, mark: u8) {
        self.nibbles[(i / 2) as usize].fetch_or((DONE ^ mark) << (4 * (i & 1)), Relaxed);
    }

    /// Changes board i's nibble from `old` to `f(old)` atomically; returns the old
    /// nibble when `f` made a change. `f` sees the current nibble.
    #[inline]
    fn update_nibble(&self, i: u64, f: impl Fn(u8) -> Option<u8>) -> Option<u8> {
        let shift = 4 * (i & 1);
        self.nibbles[(i / 2) as usize]
            .fetch_update(Relaxed, Relaxed, |byte| {
                let old = (byte >> shift) & 0xF;
                f(old).map(|new| (byte & !(0xF << shift)) | (new << shift))
            })
            .ok()
            .map(|byte| (byte >> shift) & 0xF)
    }

    /// Board i's value byte.
    #[inline]
    fn value(&self, i: u64) -> &AtomicI8 {
        &self.values[i as usize]
    }
}

/// The initial pass: `B(p)` and the quiet-move counter of every board.
fn init(
    rules: Rules,
    seeds: u32,
    index: &Index,
    lower: &LowerLevels,
    state: &State,
    progress: &ProgressBar,
) {
    progress.set_message("captures");
    state.chunks().for_each(|(c, (values, nibbles))| {
        let start = (c * CHUNK) as u64;
        // Capture values waiting for their lower-level byte: (board in chunk,
        // what the capture adds, the child's value byte). See `ParentBatch`
        // for why in batches.
        let mut pending: Vec<(u32, Gain, &i8)> = Vec::with_capacity(2 * INIT_BATCH);
        let mut captures = MoveList::new();
        for (k, board) in index
            .boards_from(seeds, start)
            .take(values.len())
            .enumerate()
        {
            let quiet = rules.quiet_moves_and_captures(&board, &mut captures);
            let best = if quiet == 0 && captures.is_empty() {
                -(seeds as i8) // no move: the opponent takes every seed
            } else {
                NO_EXIT
            };
            for m in captures.iter() {
                let slot = lower.slot(&m.child);
                prefetch(slot);
                pending.push((k as u32, m.gain(), slot));
            }
            values[k].store(best, Relaxed);
            // Two boards share a byte; the even one comes first in the chunk.
            let byte = &nibbles[k / 2];
            byte.store(byte.load(Relaxed) | (quiet << (4 * (k & 1))), Relaxed);
            if pending.len() >= INIT_BATCH {
                resolve_captures(&mut pending, values);
            }
        }
        resolve_captures(&mut pending, values);
        progress.inc(values.len() as u64);
    });
}

/// Capturing moves collected before their child values are read (see `init`).
const INIT_BATCH: usize = 32;

/// Folds each pending capture's value into `B` of its board.
fn resolve_captures(pending: &mut Vec<(u32, Gain, &i8)>, values: &[AtomicI8]) {
    for &(k, gain, slot) in pending.iter() {
        let value = gain.value(Score::new(*slot)).get();
        let best = &values[k as usize];
        if value > best.load(Relaxed) {
            best.store(value, Relaxed);
        }
    }
    pending.clear();
}

/// One threshold stage: seed it from `B`, then propagate until nothing changes.
fn run_stage(
    rules: Rules,
    seeds: u32,
    index: &Index,
    state: &State,
    k: i8,
    progress: &ProgressBar,
) -> Stage {
    let wins = AtomicU64::new(0);
    let losses = AtomicU64::new(0);
    let started = std::time::Instant::now();
    // Seeding: boards whose own captures reach +k, or whose captures give at most
    // -k and whose quiet children are all in W already. (A board with B < -k and
    // a zero counter was decided at an earlier stage.)
    let mark = MARK_A;
    let (plus_k, minus_k) = (bytes_equal_to(k), bytes_equal_to(-k));
    state.chunks().for_each(|(c, (values, nibbles))| {
        let start = (c * CHUNK) as u64;
        // The chunk's values eight at a time (a chunk starts at a multiple of 8):
        // most groups of eight hold no value ±k, and one word test skips them.
        // (Only this task touches the chunk while seeding, so reading its bytes
        // as words races with nothing.)
        let words = &state.values.as_atomic_u64()[c * CHUNK / 8..];
        let whole_words = values.len() / 8;
        let (mut w, mut l) = (0, 0);
        // Four nibble bytes (eight boards) per word of values.
        for (word, bytes) in nibbles.chunks(4).enumerate() {
            if word < whole_words {
                let eight = words[word].load(Relaxed);
                if !plus_k(eight) && !minus_k(eight) {
                    continue;
                }
            }
            for (b4, byte) in bytes.iter().enumerate() {
                let j = 4 * word + b4;
                let mut b = byte.load(Relaxed);
                for half in 0..2 {
                    let pos = 2 * j + half;
                    if pos >= values.len() {
                        break;
                    }
                    let shift = 4 * half;
                    let nib = (b >> shift) & 0xF;
                    if nib > 8 {
                        continue; // decided
                    }
                    let best = values[pos].load(Relaxed);
                    let new_value = if best == k {
                        w += 1;
                        k
                    } else if best == -k && nib == 0 {
                        l += 1;
                        -k
                    } else {
                        continue;
                    };
                    // A capture reaches the value, unless the board has no
                    // move at all (B = -n; any capture gives more).
                    let free = new_value != -(seeds as i8);
                    values[pos].store(new_value, Relaxed);
                    b = (b & !(0xF << shift)) | (with_free(mark, free) << shift);
                    state.mark_dirty(0, start + pos as u64);
                }
                byte.store(b, Relaxed);
            }
        }
        wins.fetch_add(w, Relaxed);
        losses.fetch_add(l, Relaxed);
    });
    progress.inc(wins.load(Relaxed) + losses.load(Relaxed));

    let seeding_seconds = started.elapsed().as_secs_f64();

    // Propagation, generation by generation. The frontier of a generation is
    // its list (boards at hand) and its marks (boards to unrank).
    let mut generations = 0;
    let (mut current, mut next) = (0usize, 1usize);
    let (mut cur_mark, mut next_mark) = (MARK_A, MARK_B);
    // The lists the tasks of the last generation made, one per grant (kept
    // apart: joining them would copy every listed board once more).
    let mut frontier: Vec<Vec<u64>> = Vec::new();
    let packer = state.packer;
    let allowance = usize::try_from(state.list_entries).unwrap_or(usize::MAX);
    loop {
        if frontier.is_empty() && !state.any_dirty(current) {
            break;
        }
        generations += 1;
        let room = AtomicUsize::new(allowance);
        let next_of = |batch: ParentBatch| -> Vec<Vec<u64>> {
            if batch.wins + batch.losses > 0 {
                wins.fetch_add(batch.wins, Relaxed);
                losses.fetch_add(batch.losses, Relaxed);
                progress.inc(batch.wins + batch.losses);
            }
            // What is left of the task's grant goes back for the tasks still
            // to run (only as many tasks as threads hold a grant at once).
            room.fetch_add(batch.granted, Relaxed);
            let mut lists = batch.lists;
            // A list's spare room would be held until the next generation has
            // gone through it; most lists are short.
            lists.iter_mut().for_each(Vec::shrink_to_fit);
            lists
        };
        // The listed boards, a list (at most one grant) per task. Each list
        // is freed as soon as it has been visited, so that the next
        // generation's lists grow into the memory this one gives up rather
        // than beside all of it.
        let mut lists: Vec<Vec<u64>> = std::mem::take(&mut frontier)
            .into_par_iter()
            .flat_map_iter(|chunk| {
                let mut batch = ParentBatch::new(state, k, generations, next, next_mark, &room);
                for &entry in &chunk {
                    let board = packer.unpack(entry);
                    batch.tell_parents_of(rules, index, &board, entry & LOST != 0);
                }
                drop(chunk);
                batch.apply();
                next_of(batch)
            })
            .collect();
        // The marked boards, one task per word of the dirty map (64 blocks).
        lists.extend(
            state.dirty[current]
                .par_iter()
                .enumerate()
                .with_min_len(64)
                .map(|(word_index, word)| {
                    // Most words are clear in most generations: read before
                    // writing, and make no batch (an allocation) for nothing.
                    if word.load(Relaxed) == 0 {
                        return Vec::new();
                    }
                    let mut bits = word.swap(0, Relaxed);
                    let mut batch = ParentBatch::new(state, k, generations, next, next_mark, &room);
                    let cells = state.cells();
                    let mut walker = Walker::new(index, seeds);
                    while bits != 0 {
                        let block = word_index as u64 * 64 + u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        let start = block * BLOCK;
                        let end = (start + BLOCK).min(state.size);
                        // Marked boards of the block. Other threads may change the
                        // nibble bytes meanwhile, but never a nibble with this
                        // generation's mark (they touch undecided boards, and
                        // turn their own new marks of the next generation to
                        // DONE), so one load per byte is enough.
                        let marked = (start / 2..end.div_ceil(2)).flat_map(|b| {
                            let byte = cells.nibbles[b as usize].load(Relaxed);
                            [(2 * b, byte & 0xF), (2 * b + 1, byte >> 4)]
                        });
                        for (i, nibble) in marked {
                            if nibble | FREE_BIT != cur_mark || i >= end {
                                continue;
                            }
                            cells.set_done(i, cur_mark);
                            let lost = cells.value(i).load(Relaxed) < 0;
                            let board = walker.board(i);
                            batch.tell_parents_of(rules, index, &board, lost);
                        }
                    }
                    batch.apply();
                    next_of(batch)
                })
                .flatten_iter()
                .collect::<Vec<_>>(),
        );
        lists.retain(|list| !list.is_empty());
        frontier = lists;
        std::mem::swap(&mut current, &mut next);
        std::mem::swap(&mut cur_mark, &mut next_mark);
    }
    Stage {
        k: k as u32,
        wins: wins.into_inner(),
        losses: losses.into_inner(),
        generations,
        seeding_seconds,
        propagation_seconds: started.elapsed().as_secs_f64() - seeding_seconds,
    }
}

/// The boards of marked indices, found in increasing order within a task.
///
/// Unranking costs about as much as ten steps of the level's iterator (132 ns
/// and 13 ns at level 21, `bench_moves`), and marked boards often lie close
/// together (a block holds 64 boards), so the next marked board is reached by
/// stepping when it is near, else unranked.
struct Walker<'a> {
    index: &'a Index,
    seeds: u32,
    /// The iterator and the index of the board it yields next.
    at: Option<(u64, LevelIter)>,
}

impl<'a> Walker<'a> {
    /// Steps at most this far; farther boards are unranked.
    const MAX_STEPS: u64 = 10;

    fn new(index: &'a Index, seeds: u32) -> Walker<'a> {
        Walker {
            index,
            seeds,
            at: None,
        }
    }

    /// Board `i` of the level.
    #[inline]
    fn board(&mut self, i: u64) -> Board {
        if let Some((next, boards)) = &mut self.at {
            if (*next..*next + Self::MAX_STEPS).contains(&i) {
                let board = boards.nth((i - *next) as usize);
                *next = i + 1;
                return board.expect("index within the level");
            }
        }
        let mut boards = self.index.boards_from(self.seeds, i);
        let board = boards.next().expect("index within the level");
        self.at = Some((i + 1, boards));
        board
    }
}

/// A test of whether any of the eight bytes of a word equals `value`: the
/// classic zero-byte test on the word xor `value` in every byte (exact for
/// "any"; it may misplace which byte, which is not asked).
fn bytes_equal_to(value: i8) -> impl Fn(u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let pattern = u64::from(value as u8) * ONES;
    move |word| {
        let x = word ^ pattern;
        x.wrapping_sub(ONES) & !x & HIGH != 0
    }
}

/// Parent updates of one propagation task, applied in batches.
///
/// A parent lies anywhere in the level, so telling it is a cache miss; done one
/// at a time, right after ranking the parent, the task would wait out every miss.
/// Instead the parents of a few frontier boards are collected, their bytes are
/// prefetched as they are collected, and the updates are applied together, when
/// most of the bytes have arrived. Updates within a generation commute (counters
/// only fall, decided boards only join the next generation), so the order does
/// not matter.
struct ParentBatch<'a> {
    state: &'a State,
    cells: Cells<'a>,
    k: i8,
    /// The generation boards decided here belong to, and where it is recorded.
    generation: u16,
    recorded: Option<&'a [AtomicU16]>,
    /// The dirty map and the mark of the next generation.
    next: usize,
    next_mark: u8,
    /// `(parent index, parent, whether the child that told it is lost)`.
    parents: Vec<(u64, Board, bool)>,
    /// The boards this task decided and listed for the next generation, one
    /// list per grant (so that the next generation's tasks take at most
    /// [`LIST_GRANT`] boards each).
    lists: Vec<Vec<u64>>,
    packer: BoardPacker,
    /// List entries granted to this task and not used yet.
    granted: usize,
    /// The allowance of list entries left for the next generation.
    room: &'a AtomicUsize,
    wins: u64,
    losses: u64,
}

impl<'a> ParentBatch<'a> {
    /// Parents collected before the batch is applied: enough to cover the memory
    /// latency, few enough that the prefetched lines are still in the cache.
    const SIZE: usize = 48;

    fn new(
        state: &'a State,
        k: i8,
        generation: u32,
        next: usize,
        next_mark: u8,
        room: &'a AtomicUsize,
    ) -> ParentBatch<'a> {
        ParentBatch {
            state,
            cells: state.cells(),
            k,
            generation: generation.min(u32::from(u16::MAX)) as u16,
            recorded: state.generations.as_ref().map(Generations::as_atomic),
            next,
            next_mark,
            parents: Vec::with_capacity(Self::SIZE + 2 * awari_dbformat::MAX_PITS as usize * 8),
            lists: Vec::new(),
            packer: state.packer,
            granted: 0,
            room,
            wins: 0,
            losses: 0,
        }
    }

    /// Collects the stored parents of frontier board `child` (lost or not), and
    /// applies the batch when it is full.
    #[inline]
    fn tell_parents_of(&mut self, rules: Rules, index: &Index, child: &Board, lost: bool) {
        // A parent whose move sowed only its own row (its last seed landed
        // before pit P) has the opponent's row of `after` (the child seen from
        // the parent's side), so the larger part of its index is found once
        // per child (`Index::opponent_part`; `None`: a full opponent row, no
        // such parent is stored). (Told by the pit and the seeds it held, not
        // by comparing rows: cheaper, and it reads no board from memory.)
        let after = child.swapped();
        let per_side = usize::from(rules.pits());
        let mut shared: Option<Option<u64>> = None;
        rules.for_each_unmove(child, |parent, pit| {
            let own_row_only = pit + usize::from(parent.pit(pit)) < per_side;
            debug_assert_eq!(own_row_only, parent.same_opponent_row(&after));
            let q = if own_row_only {
                (*shared.get_or_insert_with(|| index.opponent_part(&after)))
                    .map(|opponent| opponent + index.mover_part(&parent))
            } else {
                // A parent with a full opponent row is not stored.
                index.rank(&parent)
            };
            if let Some(q) = q {
                self.push(q, parent, lost);
            }
        });
        if self.is_full() {
            self.apply();
        }
    }

    #[inline]
    fn push(&mut self, q: u64, parent: Board, child_in_loss: bool) {
        prefetch(&self.cells.nibbles[(q / 2) as usize]);
        prefetch(self.cells.value(q));
        // A parent of a lost board is nearly always decided (a win) and then
        // records its generation; other parents seldom are.
        if let (Some(recorded), true) = (self.recorded, child_in_loss) {
            prefetch(&recorded[q as usize]);
        }
        self.parents.push((q, parent, child_in_loss));
    }

    fn is_full(&self) -> bool {
        self.parents.len() >= Self::SIZE
    }

    /// True when one more decided board may go onto the list (taking a grant of
    /// [`LIST_GRANT`] entries from the shared allowance when this task has none).
    #[inline(always)]
    fn may_list(&mut self) -> bool {
        self.granted > 0 || self.take_grant()
    }

    /// Takes a grant from the shared allowance, if any is left; true if so.
    #[cold]
    #[inline(never)]
    fn take_grant(&mut self) -> bool {
        // Once the allowance is spent, every decision comes here: a plain read
        // keeps the shared counter's line unwritten (and uncontended) then.
        if self.room.load(Relaxed) == 0 {
            return false;
        }
        self.granted = self
            .room
            .fetch_update(Relaxed, Relaxed, |r| Some(r.saturating_sub(LIST_GRANT)))
            .map_or(0, |r| r.min(LIST_GRANT));
        if self.granted > 0 {
            // Room for the whole grant: no copying as the list grows
            // (what is left unused is given back when the task ends).
            self.lists.push(Vec::with_capacity(self.granted));
        }
        self.granted > 0
    }

    /// Marks or lists a board just decided (its nibble already says so):
    /// `listed` is its list entry when it goes onto a list.
    fn decided(&mut self, q: u64, listed: Option<u64>) {
        if let Some(recorded) = self.recorded {
            recorded[q as usize].store(self.generation, Relaxed);
        }
        if let Some(entry) = listed {
            self.granted -= 1;
            self.lists.last_mut().expect("a list per grant").push(entry);
        } else {
            self.state.mark_dirty(self.next, q);
        }
    }

    /// The list entry of `parent` when it goes onto a list if decided: it
    /// packs, and the allowance lasts.
    #[inline(always)]
    fn entry(&mut self, parent: &Board, lost: bool) -> Option<u64> {
        let packed = self.packer.pack(parent)?;
        self.may_list()
            .then_some(packed | if lost { LOST } else { 0 })
    }

    /// Tells every collected parent; see `run_stage`.
    fn apply(&mut self) {
        let (cells, k) = (self.cells, self.k);
        let parents = std::mem::take(&mut self.parents);
        for &(q, parent, child_in_loss) in &parents {
            // A board decided here is listed (nibble DONE: it needs no finding)
            // when it packs and the allowance lasts, else marked for the next
            // generation.
            if child_in_loss {
                // The parent can move into a lost position: it wins k. (It is
                // nearly always undecided, so its entry is made beforehand.)
                let listed = self.entry(&parent, false);
                let decided_nibble = if listed.is_some() {
                    DONE
                } else {
                    self.next_mark
                };
                if cells
                    .update_nibble(q, |n| (n <= 8).then_some(decided_nibble))
                    .is_some()
                {
                    cells.value(q).store(k, Relaxed);
                    self.decided(q, listed);
                    self.wins += 1;
                }
            } else {
                // One more quiet child in W; when none is left and the captures
                // give at most -k, the parent loses k (and a capture reaches
                // that value when B(q) is exactly -k). B(q) is read only then:
                // most updates touch the nibble alone. The parent is marked;
                // when it can be listed instead, its mark becomes DONE (an OR on
                // the byte just swapped: marks of the next generation are not
                // looked for before this generation ends).
                let mark = self.next_mark;
                let old = cells.update_nibble(q, |n| match n {
                    1 => {
                        let best = cells.value(q).load(Relaxed);
                        Some(if best <= -k {
                            with_free(mark, best == -k)
                        } else {
                            0
                        })
                    }
                    2..=8 => Some(n - 1),
                    _ => None,
                });
                // Decided here iff the counter was 1 and B(q) <= -k; no other
                // thread writes q's value after that swap.
                if old == Some(1) && cells.value(q).load(Relaxed) <= -k {
                    cells.value(q).store(-k, Relaxed);
                    let listed = self.entry(&parent, true);
                    if listed.is_some() {
                        cells.set_done(q, mark);
                    }
                    self.decided(q, listed);
                    self.losses += 1;
                }
            }
        }
        self.parents = parents;
        self.parents.clear();
    }
}
