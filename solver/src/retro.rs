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
//! ## State: 1.333 bytes per board
//! Each board has a [`Cell`] of 10 bits, six to a 64-bit word ([`crate::cells`];
//! 12 bits, five to a word, above 31 seeds):
//! - its value: `B(p)` (or the layout's [`Layout::NO_EXIT`]) until p is
//!   decided, then p's value;
//! - its nibble: the counter `0..=8` while undecided, [`DONE`] once decided and
//!   visited, or one of two frontier marks ([`MARK_A`], [`MARK_B`]) while
//!   decided but not yet visited. Keeping the frontier in the nibble costs no
//!   memory; a small bitmap of dirty blocks (one bit per [`BLOCK_WORDS`] words)
//!   keeps the scan for marks short.
//!
//! Value and nibble share a word, so a board is decided by one
//! compare-and-swap that sets both, and telling a parent touches one cache line.
//!
//! "Free": whether p's value is `B(p)`, so that a capture reaches it and the
//! level file may store a lower bound instead ([`awari_dbformat::file::bounds`]).
//! It is known when p is decided (a board seeded from `B`, except one without
//! moves; a loss whose `B` is exactly `-k`) and lost once the value is
//! overwritten, so the decided codes keep it: each of `DONE` and the two
//! marks has a free twin with bit 2 clear ([`FREE_BIT`]). The decided codes
//! are 9..=15, the undecided ones 0..=8. A board left undecided (value 0)
//! is free when its `B` is 0.
//!
//! ## Frontier lists
//! A board found by a mark must be unranked before its parents can be made,
//! and unranking costs more than all the rest of a visit. Boards decided during
//! propagation are found by un-moving a child, so their board is at hand: they
//! go onto a list of the next generation instead, their nibble set to
//! [`DONE`] or its free twin (a loss is marked by the swap that decides it,
//! then turned to `DONE` by an OR once listed): one `u64` each, the board
//! packed ([`BoardPacker`]) and the top bit set when it is lost (a board with
//! a pit too full to pack is marked). The lists of the generation being
//! visited and the one being made share room for two boards in [`LIST_SHARE`]
//! of the level (8 bytes each; fewer when the memory
//! budget asks, see [`solve_level_within`]), in a fixed pool of chunks that
//! tasks fill and the next generation empties ([`crate::lists`]); past
//! that, decisions fall back to marks (slower, and the values are the same:
//! see the tests with short lists).
//! Boards seeded from `B` are found by a sweep over the indices and
//! keep using marks; those are found in index order, so the next one is
//! mostly in the opponent's row of the last ([`awari_dbformat::BoardFinder`]).
//!
//! ## Threads
//! The initial pass and the stage seeding own disjoint index ranges and store
//! plainly. Propagation updates parents anywhere in the level, so a parent's
//! cell is changed by compare-and-swap on its word: the swap that moves a board
//! from "undecided" to "decided" is the single point where it is decided, so a
//! board is decided once whatever the number of threads. The values found do not
//! depend on the order of work: the output is identical for any thread count.

use std::ops::Range;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

use awari_dbformat::cache::prefetch;
use awari_dbformat::huge::{Generations, HugeArray, Values};
use awari_dbformat::{
    with_pits, BoardFinder, BoardPacker, Gain, Index, MoveList, Parents, Rules, Score,
};
use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::cells::{Cell, CellLayout, Layout, Narrow, Wide};
use crate::lists::ListPool;
use crate::lower::LowerLevels;

/// Nibble of a board that is decided and whose parents have been told.
const DONE: u8 = 15;
/// Frontier mark of even generations. `MARK_A | (DONE ^ MARK_A) == DONE`: a
/// visit sets the one missing bit (see [`State::set_done`]).
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
/// Words per dirty bit (48 boards in the narrow layout). Small, so that a
/// sparse frontier costs little to find: a generation scans one bit per block
/// and 64 bytes per dirty block.
pub const BLOCK_WORDS: usize = 8;
/// Words per task of the sequential passes.
const CHUNK_WORDS: usize = 1 << 13;
/// Words per summary of the values boards may hold ([`State::summaries`]):
/// 3,072 boards in the narrow layout, 8 bytes of summary for every 4 KiB of
/// cells.
const SUMMARY_WORDS: usize = 512;
// A task of the sequential passes covers whole summaries.
const _: () = assert!(CHUNK_WORDS.is_multiple_of(SUMMARY_WORDS));

/// True when a summary's bits say a board may hold `±k` (always so for
/// `k >= 63`, which shares its bit with every larger value).
#[inline]
fn may_hold(summary: u64, k: i8) -> bool {
    k >= 63 || summary >> k & 1 == 1
}

/// Words of the dirty map per task that visits marked boards: 64 of 64
/// blocks each, some 200,000 boards in the narrow layout. (A task per word
/// made up to 125,000 tasks a generation at level 24, each with a batch and
/// a segment of list of its own.)
const DIRTY_WORDS_PER_TASK: usize = 64;

/// The share of a level's boards the frontier lists may hold per generation
/// when memory allows (see [`default_list_entries`]): a pool of
/// [`LIVE_GENERATIONS`] boards in this many, 0.125 bytes per board, so that
/// the narrow state and the lists stay within 1.5 bytes per board. (At level 24 of 6-pit awari, with a fixed half of the pool for
/// each generation, lists of one board in 64 solved some 20% faster than
/// one in 256, and none at all took 1.5 times as long as one in 64.)
pub const LIST_SHARE: u64 = 128;
/// The bytes of one frontier list entry (a board and whether it is lost).
pub const LIST_ENTRY_BYTES: u64 = std::mem::size_of::<u64>() as u64;
/// The generations whose frontier lists are alive at once: the one being
/// visited and the one being made. Their pool holds this many times the
/// entries of one generation.
pub const LIVE_GENERATIONS: u64 = 2;
/// The bit of a list entry that says its board is lost (a packed board leaves
/// it clear).
const LOST: u64 = BoardPacker::SPARE_BIT;

/// The bytes of solver state per board of a level of `seeds` seeds that
/// cannot be done without: the cells (1.333 up to 31 seeds, 1.6 above).
pub fn fixed_state_bytes_per_board(seeds: u32) -> f64 {
    CellLayout::for_seeds(seeds).bytes_per_board()
}

/// The frontier list entries per generation by default in a level of
/// `boards` boards: one board in [`LIST_SHARE`] (the pool holds
/// [`LIVE_GENERATIONS`] times as many).
pub fn default_list_entries(boards: u64) -> u64 {
    boards / LIST_SHARE
}

/// The bytes of solver state per board for level `seeds` of `boards` boards
/// whose lists may hold `list_entries` per generation: the fixed state plus
/// the pool of lists of two generations (the one being visited and the
/// next), full.
pub fn state_bytes_per_board(seeds: u32, boards: u64, list_entries: u64) -> f64 {
    fixed_state_bytes_per_board(seeds)
        + (LIVE_GENERATIONS * list_entries * LIST_ENTRY_BYTES) as f64 / boards.max(1) as f64
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

/// Like [`solve_level_with`], with frontier lists of `list_entries` boards
/// per generation ([`LIST_ENTRY_BYTES`] each, in a pool of
/// [`LIVE_GENERATIONS`] times as many), to fit a memory budget. Fewer
/// entries cost time, not correctness:
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
    let layout = CellLayout::for_seeds(seeds);
    solve_level_in(
        layout,
        rules,
        seeds,
        lower,
        progress,
        record_generations,
        list_entries,
    )
}

/// Like [`solve_level_within`], in the cell layout `layout` rather than the
/// smallest that holds the level (so that tests can solve small levels in
/// the wide layout too). The values are the same in every layout.
///
/// # Panics
/// When `layout` does not hold the values of a level of `seeds` seeds.
pub fn solve_level_in(
    layout: CellLayout,
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    record_generations: bool,
    list_entries: u64,
) -> SolvedLevel {
    assert!(
        layout.holds(seeds),
        "{layout:?} cells cannot hold level {seeds}"
    );
    let job = Job {
        rules,
        seeds,
        lower,
        progress,
        record_generations,
        list_entries,
    };
    // The initial pass and the propagation are compiled for one cell layout
    // and one board size at a time (see `awari_dbformat::Parents`).
    match layout {
        CellLayout::Narrow => with_pits!(rules.pits(), P => solve::<Narrow, P>(job)),
        CellLayout::Wide => with_pits!(rules.pits(), P => solve::<Wide, P>(job)),
    }
}

/// What [`solve`] is asked: the arguments of [`solve_level_in`] but the layout.
#[derive(Clone, Copy)]
struct Job<'a> {
    rules: Rules,
    seeds: u32,
    lower: &'a LowerLevels,
    progress: &'a ProgressBar,
    record_generations: bool,
    list_entries: u64,
}

/// Solves `job` in cells of layout `L`, for boards of `P` pits per side
/// (the rules' own).
fn solve<L: Layout, const P: usize>(job: Job) -> SolvedLevel {
    let Job {
        rules,
        seeds,
        lower,
        progress,
        record_generations,
        list_entries,
    } = job;
    let index = Index::for_pits(rules.pits());
    let size = index.level_size(seeds);
    let mut state = State::<L>::new(size, list_entries, rules.pits());
    if record_generations {
        state.generations = Some(Generations::zeroed(size));
    }
    let started = std::time::Instant::now();
    init::<L, P>(rules, seeds, index, lower, &state, progress);
    let init_seconds = started.elapsed().as_secs_f64();

    let mut stages = Vec::new();
    for k in (1..=seeds as i8).rev() {
        progress.set_message(format!("stage {k}"));
        let stage = run_stage::<L, P>(rules, seeds, index, &state, k, progress);
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
struct State<L: Layout> {
    /// The cells, [`Layout::PER_WORD`] to a word.
    words: HugeArray,
    /// Dirty blocks of the current and the next generation.
    dirty: [Vec<AtomicU64>; 2],
    /// Per [`SUMMARY_WORDS`] words: bit `min(|B|, 63)` set for each value
    /// `B` that an undecided board there may still hold ([`may_hold`]), so
    /// that a stage's seeding skips the words where no board can be seeded.
    /// Made by the initial pass; an undecided board keeps its `B`, so the
    /// bits stay true (if no longer tight) as boards are decided.
    summaries: Vec<AtomicU64>,
    size: u64,
    /// When recorded: the generation in which each board was decided.
    generations: Option<Generations>,
    /// The frontier lists of the current and the next generation, in one
    /// pool of chunks that the two share.
    lists: ListPool,
    /// How the boards on the lists are packed.
    packer: BoardPacker,
    layout: std::marker::PhantomData<L>,
}

impl<L: Layout> State<L> {
    fn new(size: u64, list_entries: u64, per_side: u8) -> State<L> {
        let pool_entries = list_entries.saturating_mul(LIVE_GENERATIONS);
        let pool_entries = usize::try_from(pool_entries).unwrap_or(usize::MAX);
        let words = size.div_ceil(L::PER_WORD);
        let blocks = words.div_ceil(BLOCK_WORDS as u64);
        let dirty_words = blocks.div_ceil(64) as usize;
        State {
            summaries: (0..words.div_ceil(SUMMARY_WORDS as u64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            words: HugeArray::zeroed(8 * words as usize),
            dirty: [
                (0..dirty_words).map(|_| AtomicU64::new(0)).collect(),
                (0..dirty_words).map(|_| AtomicU64::new(0)).collect(),
            ],
            size,
            generations: None,
            lists: ListPool::new(pool_entries),
            packer: BoardPacker::new(per_side),
            layout: std::marker::PhantomData,
        }
    }

    /// The words of cells.
    #[inline]
    fn words(&self) -> &[AtomicU64] {
        self.words.as_atomic_u64()
    }

    /// The word holding board i's cell.
    #[inline]
    fn word_of(&self, i: u64) -> &AtomicU64 {
        &self.words()[L::locate(i).0]
    }

    /// Changes board i's cell from `old` to `f(old)` atomically; returns the
    /// old cell when `f` made a change. `f` sees the current cell.
    #[inline]
    fn update(&self, i: u64, f: impl Fn(Cell) -> Option<Cell>) -> Option<Cell> {
        let (w, shift) = L::locate(i);
        self.words()[w]
            .fetch_update(Relaxed, Relaxed, |word| {
                f(L::decode(word, shift)).map(|new| L::replace(word, shift, new))
            })
            .ok()
            .map(|word| L::decode(word, shift))
    }

    /// Marks board i, whose nibble is `mark` or its free twin, as visited: its
    /// nibble becomes [`DONE`] or its free twin. The one bit `mark` lacks is
    /// set by an atomic OR, which cannot disturb the other boards of the word.
    #[inline]
    fn set_done(&self, i: u64, mark: u8) {
        let (w, shift) = L::locate(i);
        self.words()[w].fetch_or(u64::from(DONE ^ mark) << shift, Relaxed);
    }

    #[inline]
    fn mark_dirty(&self, which: usize, i: u64) {
        let block = L::locate(i).0 / BLOCK_WORDS;
        self.dirty[which][block / 64].fetch_or(1 << (block % 64), Relaxed);
    }

    /// True when some block of `which` is dirty.
    fn any_dirty(&self, which: usize) -> bool {
        self.dirty[which].par_iter().any(|w| w.load(Relaxed) != 0)
    }

    /// The summaries from the one of board `start` on (`start` begins a
    /// task of [`State::chunks`], so a summary).
    fn summaries_from(&self, start: u64) -> &[AtomicU64] {
        &self.summaries[start as usize / L::PER_WORD as usize / SUMMARY_WORDS..]
    }

    /// Boards per task of the sequential passes (a multiple of 64, so that a
    /// task owns whole words of the free bits too).
    const CHUNK: u64 = CHUNK_WORDS as u64 * L::PER_WORD;

    /// Disjoint tasks over the level: `(first board, boards, their words)`.
    fn chunks(&self) -> impl IndexedParallelIterator<Item = (u64, usize, &[AtomicU64])> {
        let size = self.size;
        self.words()
            .par_chunks(CHUNK_WORDS)
            .enumerate()
            .map(move |(c, words)| {
                let start = c as u64 * Self::CHUNK;
                (start, (size - start).min(Self::CHUNK) as usize, words)
            })
    }

    /// The final values and free bits of level `seeds`: decided boards keep
    /// theirs (all are visited, `DONE` or its free twin by now), the rest are
    /// 0, free when their captures give exactly 0.
    ///
    /// The values are made in the cells' memory, which then shrinks to them
    /// (a separate array would lift the peak above the state of the solve);
    /// the free bits, one per board (bit `i % 64` of word `i / 64`), are a
    /// new array of 1/8 byte per board.
    fn into_values(self, seeds: u32) -> (Values, HugeArray) {
        let State {
            mut words,
            size,
            lists,
            ..
        } = self;
        drop(lists); // (unmapped: their memory goes back at once)
        let mut free = HugeArray::zeroed(8 * size.div_ceil(64) as usize);
        let chunk_bytes = 8 * CHUNK_WORDS;
        // Each chunk's values over the start of its own words: value j goes
        // to byte j, which lies in word j / PER_WORD or below, read already.
        words
            .par_chunks_mut(chunk_bytes)
            .zip(free.par_chunks_mut((Self::CHUNK / 8) as usize))
            .enumerate()
            .for_each(|(c, (bytes, free))| {
                let boards = (size - c as u64 * Self::CHUNK).min(Self::CHUNK) as usize;
                let mut free_word = 0u64;
                for w in 0..boards.div_ceil(L::PER_WORD as usize) {
                    // The whole word is read before its values are written
                    // (to bytes below its end).
                    let word = u64::from_ne_bytes(bytes[8 * w..8 * w + 8].try_into().unwrap());
                    for s in 0..L::PER_WORD as usize {
                        let j = w * L::PER_WORD as usize + s;
                        if j >= boards {
                            break;
                        }
                        let cell = L::decode(word, s as u32 * L::BITS);
                        let (value, is_free) = if cell.nibble > 8 {
                            (cell.value, cell.nibble & FREE_BIT == 0)
                        } else {
                            // Undecided: 0. (B = 0 = -n is the empty board,
                            // without moves.)
                            (0, cell.value == 0 && seeds > 0)
                        };
                        bytes[j] = value as u8;
                        free_word |= u64::from(is_free) << (j % 64);
                        if j % 64 == 63 || j + 1 == boards {
                            let at = 8 * (j / 64);
                            free[at..at + 8].copy_from_slice(&free_word.to_ne_bytes());
                            free_word = 0;
                        }
                    }
                }
            });
        // Then the chunks' values side by side, in order: chunk c's go to
        // c * CHUNK, below its words, where chunks before it have been read.
        let chunks = size.div_ceil(Self::CHUNK) as usize;
        for c in 1..chunks {
            let start = c as u64 * Self::CHUNK;
            let boards = (size - start).min(Self::CHUNK) as usize;
            let from = c * chunk_bytes;
            words.copy_within(from..from + boards, start as usize);
        }
        words.shrink(size as usize);
        (Values::from_array(words), free)
    }
}

/// The initial pass: `B(p)` and the quiet-move counter of every board.
fn init<L: Layout, const P: usize>(
    rules: Rules,
    seeds: u32,
    index: &Index,
    lower: &LowerLevels,
    state: &State<L>,
    progress: &ProgressBar,
) {
    progress.set_message("captures");
    state.chunks().for_each(|(start, boards, words)| {
        // The chunk's cells, made here and packed into its words at the end.
        let mut cells = vec![
            Cell {
                value: 0,
                nibble: 0
            };
            boards
        ];
        // Capture values waiting for their lower-level byte: (board in chunk,
        // what the capture adds, the child's value byte). See `ParentBatch`
        // for why in batches.
        let mut pending: Vec<(u32, Gain, &i8)> = Vec::with_capacity(2 * INIT_BATCH);
        let mut captures = MoveList::new();
        for (k, board) in index.boards_from(seeds, start).take(boards).enumerate() {
            let quiet = rules.quiet_moves_and_captures_sized::<P>(&board, &mut captures);
            let best = if quiet == 0 && captures.is_empty() {
                -(seeds as i8) // no move: the opponent takes every seed
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
        progress.inc(boards as u64);
    });
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

/// One threshold stage: seed it from `B`, then propagate until nothing changes.
fn run_stage<L: Layout, const P: usize>(
    rules: Rules,
    seeds: u32,
    index: &Index,
    state: &State<L>,
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
    let (plus_k, minus_k) = (L::any_value_equal(k), L::any_value_equal(-k));
    state.chunks().for_each(|(start, boards, words)| {
        let (mut w, mut l) = (0, 0);
        // Only this task touches the chunk while seeding: plain loads and stores.
        // Runs of words where no undecided board holds ±k are skipped whole.
        let runs = words.chunks(SUMMARY_WORDS).zip(state.summaries_from(start));
        for (r, (run, summary)) in runs.enumerate() {
            if !may_hold(summary.load(Relaxed), k) {
                continue;
            }
            for (m, word) in run.iter().enumerate() {
                let old = word.load(Relaxed);
                // Most words hold no value ±k, and one test skips them.
                if !plus_k(old) && !minus_k(old) {
                    continue;
                }
                let first = start + ((r * SUMMARY_WORDS + m) as u64) * L::PER_WORD;
                let end = start + boards as u64;
                let (new, won, lost) = seed_word(state, old, first..end, k, seeds, mark);
                word.store(new, Relaxed);
                (w, l) = (w + won, l + lost);
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
    // The segments of the current list that the tasks of the last generation
    // filled, one or more per task.
    let mut frontier: Vec<Range<usize>> = Vec::new();
    let packer = state.packer;
    let words = state.words();
    let pool = &state.lists;
    loop {
        if frontier.is_empty() && !state.any_dirty(current) {
            break;
        }
        generations += 1;
        let next_of = |batch: ParentBatch<L, P>| -> Vec<Range<usize>> {
            if batch.wins + batch.losses > 0 {
                wins.fetch_add(batch.wins, Relaxed);
                losses.fetch_add(batch.losses, Relaxed);
                progress.inc(batch.wins + batch.losses);
            }
            batch.finish()
        };
        // The listed boards, a segment (at most one grant) per task.
        let mut segments: Vec<Range<usize>> = std::mem::take(&mut frontier)
            .into_par_iter()
            .flat_map_iter(|segment| {
                let mut batch = ParentBatch::new(state, rules, k, generations, next, next_mark);
                for entry in &pool.entries()[segment.clone()] {
                    let entry = entry.load(Relaxed);
                    batch.tell_parents_of(packer.unpack_pits(entry), entry & LOST != 0);
                }
                // Read: the chunk may take the boards this generation lists.
                pool.release(segment);
                batch.apply();
                next_of(batch)
            })
            .collect();
        // The marked boards, one task per DIRTY_WORDS_PER_TASK words of the
        // dirty map.
        segments.extend(
            state.dirty[current]
                .par_chunks(DIRTY_WORDS_PER_TASK)
                .enumerate()
                .map(|(task, dirty)| {
                    // Most words are clear in most generations: read before
                    // writing, and make no batch (an allocation) for nothing.
                    if dirty.iter().all(|bits| bits.load(Relaxed) == 0) {
                        return Vec::new();
                    }
                    let mut batch = ParentBatch::new(state, rules, k, generations, next, next_mark);
                    let mut finder = BoardFinder::<P>::new(index, seeds);
                    for (d, bits) in dirty.iter().enumerate() {
                        if bits.load(Relaxed) == 0 {
                            continue;
                        }
                        let mut bits = bits.swap(0, Relaxed);
                        let dirty_index = task * DIRTY_WORDS_PER_TASK + d;
                        while bits != 0 {
                            let block = dirty_index * 64 + bits.trailing_zeros() as usize;
                            bits &= bits - 1;
                            let first = block * BLOCK_WORDS;
                            let last = (first + BLOCK_WORDS).min(words.len());
                            // Marked boards of the block. Other threads may
                            // change the words meanwhile, but never a cell
                            // with this generation's mark (they touch
                            // undecided boards, and turn their own new marks
                            // of the next generation to DONE), so one load
                            // per word is enough.
                            for (w, word) in (first..last).zip(&words[first..last]) {
                                let word = word.load(Relaxed);
                                let mut marked = L::fields_with_nibble(word, FREE_BIT, cur_mark);
                                while marked != 0 {
                                    let shift = marked.trailing_zeros();
                                    marked &= marked - 1;
                                    let cell = L::decode(word, shift);
                                    let i = w as u64 * L::PER_WORD + u64::from(shift / L::BITS);
                                    state.set_done(i, cur_mark);
                                    let board = finder.board(i).expect("index within the level");
                                    batch.tell_parents_of(board.packed(), cell.value < 0);
                                }
                            }
                        }
                    }
                    batch.apply();
                    next_of(batch)
                })
                .flatten_iter()
                .collect::<Vec<_>>(),
        );
        pool.end_generation();
        frontier = pool.pieces(segments);
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

/// Seeds stage `k` in one word of cells, `old`, whose first board is
/// `boards.start` (boards from `boards.end` on lie past the task): an
/// undecided board whose captures reach `k` wins `k`, one whose captures give
/// `-k` and whose quiet children are all in W loses `k`, and each gets
/// `mark`, the first generation's (or its free twin). Returns the new word
/// and the wins and losses.
///
/// The fields are tested all at once ([`Layout::fields_with_value`]): which
/// boards of a word are seeded is as good as random, and a branch per field
/// was mispredicted accordingly. Only their nibbles change.
#[inline]
fn seed_word<L: Layout>(
    state: &State<L>,
    old: u64,
    boards: Range<u64>,
    k: i8,
    seeds: u32,
    mark: u8,
) -> (u64, u64, u64) {
    // The fields of this task's boards (a level's last word may have fewer).
    let fields = boards.end.saturating_sub(boards.start).min(L::PER_WORD);
    let ours = L::FIELD_ONES
        & u64::MAX
            .checked_shr(64 - fields as u32 * L::BITS)
            .unwrap_or(0);
    let wins = L::fields_with_value(old, k) & L::undecided_fields(old) & ours;
    // A zero counter: every quiet child is in W.
    let losses = L::fields_with_value(old, -k) & L::fields_with_nibble(old, 0, 0) & ours;
    if wins | losses == 0 {
        return (old, 0, 0);
    }
    // A capture reaches the value, unless the board has no move at all
    // (B = -n; any capture gives more): always so for a win (k > 0).
    let win_code = u64::from(with_free(mark, true));
    let loss_code = u64::from(with_free(mark, k as u32 != seeds));
    let new = (old & !((wins | losses) * 0xF)) | (wins * win_code) | (losses * loss_code);
    // (All the boards of a word lie in one dirty block.)
    state.mark_dirty(0, boards.start);
    (
        new,
        u64::from(wins.count_ones()),
        u64::from(losses.count_ones()),
    )
}

/// Parent updates of one propagation task, applied in batches.
///
/// A parent lies anywhere in the level, so telling it is a cache miss; done one
/// at a time, right after ranking the parent, the task would wait out every miss.
/// Instead the parents of a few frontier boards are collected, their words are
/// prefetched as they are collected, and the updates are applied together, when
/// most of the words have arrived. Updates within a generation commute (counters
/// only fall, decided boards only join the next generation), so the order does
/// not matter.
struct ParentBatch<'a, L: Layout, const P: usize> {
    state: &'a State<L>,
    /// The stored parents of a board, ranked.
    parents_of: Parents,
    k: i8,
    /// The generation boards decided here belong to, and where it is recorded.
    generation: u16,
    recorded: Option<&'a [AtomicU16]>,
    /// The dirty map and the mark of the next generation.
    next: usize,
    next_mark: u8,
    /// `(parent index, parent's [`Board::packed`] pits, whether the child
    /// that told it is lost)`. (Pits rather than a `Board`: the copy of a
    /// `Board` just made from its pits went through memory and stalled.)
    parents: Vec<(u64, u128, bool)>,
    /// The entries of the pool of lists (`state.lists`) this task has filled
    /// for the next generation, one segment per grant
    /// (so that the next generation's tasks take at most a grant each).
    segments: Vec<Range<usize>>,
    /// The unfilled part of this task's grant.
    grant: Range<usize>,
    wins: u64,
    losses: u64,
}

impl<'a, L: Layout, const P: usize> ParentBatch<'a, L, P> {
    /// Parents collected before the batch is applied: enough to cover the memory
    /// latency, few enough that the prefetched lines are still in the cache.
    const SIZE: usize = 48;

    fn new(
        state: &'a State<L>,
        rules: Rules,
        k: i8,
        generation: u32,
        next: usize,
        next_mark: u8,
    ) -> ParentBatch<'a, L, P> {
        ParentBatch {
            state,
            parents_of: Parents::new(rules),
            k,
            generation: generation.min(u32::from(u16::MAX)) as u16,
            recorded: state.generations.as_ref().map(Generations::as_atomic),
            next,
            next_mark,
            parents: Vec::with_capacity(Self::SIZE + 2 * awari_dbformat::MAX_PITS as usize * 8),
            segments: Vec::new(),
            grant: 0..0,
            wins: 0,
            losses: 0,
        }
    }

    /// Collects the stored parents of frontier board `child` (its pits,
    /// [`Board::packed`]; lost or not), and applies the batch when it is full.
    #[inline]
    fn tell_parents_of(&mut self, child: u128, lost: bool) {
        let parents_of = self.parents_of;
        parents_of.for_each::<P>(child, |q, parent| self.push(q, parent, lost));
        if self.is_full() {
            self.apply();
        }
    }

    #[inline]
    fn push(&mut self, q: u64, parent: u128, child_in_loss: bool) {
        prefetch(self.state.word_of(q));
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

    /// True when one more decided board may go onto the list (taking a
    /// grant from the pool of lists when this task has none).
    #[inline(always)]
    fn may_list(&mut self) -> bool {
        !self.grant.is_empty() || self.take_grant()
    }

    /// Takes a grant from the pool of lists, if any is left; true if so.
    #[cold]
    #[inline(never)]
    fn take_grant(&mut self) -> bool {
        match self.state.lists.grant() {
            Some(grant) => {
                self.segments.push(grant.start..grant.start);
                self.grant = grant;
                true
            }
            None => false,
        }
    }

    /// The segments of the next generation's list this task filled; the
    /// unfilled rest of its grant goes to the next task on this thread.
    fn finish(self) -> Vec<Range<usize>> {
        self.state.lists.give_back(self.grant);
        let mut segments = self.segments;
        segments.retain(|segment| !segment.is_empty());
        segments
    }

    /// Marks or lists a board just decided (its nibble already says so):
    /// `listed` is its list entry when it goes onto a list.
    fn decided(&mut self, q: u64, listed: Option<u64>) {
        if let Some(recorded) = self.recorded {
            recorded[q as usize].store(self.generation, Relaxed);
        }
        if let Some(entry) = listed {
            let at = self.grant.start;
            self.state.lists.entries()[at].store(entry, Relaxed);
            self.grant.start += 1;
            self.segments.last_mut().expect("a segment per grant").end = at + 1;
        } else {
            self.state.mark_dirty(self.next, q);
        }
    }

    /// The list entry of the board of pits `parent` when it goes onto a list
    /// if decided: it packs, and the pool has room.
    #[inline(always)]
    fn entry(&mut self, parent: u128, lost: bool) -> Option<u64> {
        let packed = self.state.packer.pack_pits(parent)?;
        self.may_list()
            .then_some(packed | if lost { LOST } else { 0 })
    }

    /// Tells every collected parent; see `run_stage`.
    fn apply(&mut self) {
        let (state, k) = (self.state, self.k);
        let parents = std::mem::take(&mut self.parents);
        for &(q, parent, child_in_loss) in &parents {
            // A board decided here is listed (nibble DONE: it needs no finding)
            // when it packs and the pool has room, else marked for the next
            // generation.
            if child_in_loss {
                // The parent can move into a lost position: it wins k. (It is
                // nearly always undecided, so its entry is made beforehand.)
                let listed = self.entry(parent, false);
                let nibble = if listed.is_some() {
                    DONE
                } else {
                    self.next_mark
                };
                let won = Cell { value: k, nibble };
                if state
                    .update(q, |c| (c.nibble <= 8).then_some(won))
                    .is_some()
                {
                    self.decided(q, listed);
                    self.wins += 1;
                }
            } else {
                // One more quiet child in W; when none is left and the captures
                // give at most -k, the parent loses k (and a capture reaches
                // that value when B(q) is exactly -k). The parent is marked;
                // when it can be listed instead, its mark becomes DONE (an OR on
                // the word just swapped: marks of the next generation are not
                // looked for before this generation ends).
                let mark = self.next_mark;
                let old = state.update(q, |c| match c.nibble {
                    1 if c.value <= -k => Some(Cell {
                        value: -k,
                        nibble: with_free(mark, c.value == -k),
                    }),
                    1..=8 => Some(Cell {
                        nibble: c.nibble - 1,
                        ..c
                    }),
                    _ => None,
                });
                // Decided here iff the counter was 1 and B(q) <= -k.
                if old.is_some_and(|c| c.nibble == 1 && c.value <= -k) {
                    let listed = self.entry(parent, true);
                    if listed.is_some() {
                        state.set_done(q, mark);
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
