//! The state of one partition of the level being solved: its cells, the
//! frontier (dirty blocks and lists), the summaries seeding reads, and the
//! recorded generations.
//!
//! A partition is a range of the level's indices ([`super::Partitions`]); the
//! in-memory solver of a whole level is the one-partition case. Inside a
//! `State` boards are numbered from the partition's first board (*local*
//! indices); [`State::local`] turns a level index into a local one, or says
//! that the board belongs to another partition.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use awari_dbformat::level::{Generations, Values};
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::BoardPacker;
use rayon::prelude::*;

use super::cold::{final_byte, from_final_byte, ColdBytes};
use crate::cells::{Cell, Packing};
use crate::error::SolveError;
use crate::lists::ListPool;

/// Nibble of a board that is decided and whose parents have been told.
pub(super) const DONE: u8 = 15;
/// Frontier mark of even generations. `MARK_A | (DONE ^ MARK_A) == DONE`: a
/// visit sets the one missing bit (see [`State::set_done`]).
pub(super) const MARK_A: u8 = 14;
/// Frontier mark of odd generations.
pub(super) const MARK_B: u8 = 13;
/// The bit that is clear in the free twins of the decided codes: `DONE`,
/// `MARK_A` and `MARK_B` of a board whose value a capture reaches are 11, 10
/// and 9. Every undecided code (0..=8) with this bit set is still below 13, so
/// `nibble | FREE_BIT == mark` finds a mark and only a mark, free or not.
pub(super) const FREE_BIT: u8 = 4;
/// In the split cells, the nibble of a decided board whose value is written
/// in its cold byte (the free twin of [`DONE`], which the split cells do not
/// use: they find the free bit when they write the value). A board decided
/// at stage k is `DONE` until the seeding of stage k - 1 writes its value.
pub(super) const WRITTEN: u8 = DONE & !FREE_BIT;

/// The decided code `code`, in its free twin when `free`.
#[inline]
pub(super) fn with_free(code: u8, free: bool) -> u8 {
    if free {
        code & !FREE_BIT
    } else {
        code
    }
}

/// Words per dirty bit (48 boards in the narrow layout). Small, so that a
/// sparse frontier costs little to find: a generation scans one bit per block
/// and 64 bytes per dirty block.
pub(super) const BLOCK_WORDS: usize = 8;
/// Words per task of the sequential passes.
pub(super) const CHUNK_WORDS: usize = 1 << 13;
/// Words per summary of the values boards may hold ([`State::summaries`]):
/// 3,072 boards in the narrow layout, 8 bytes of summary for every 4 KiB of
/// cells.
pub(super) const SUMMARY_WORDS: usize = 512;
// A task of the sequential passes covers whole summaries.
const _: () = assert!(CHUNK_WORDS.is_multiple_of(SUMMARY_WORDS));

/// True when a summary's bits say a board may hold `±k` (always so for
/// `k >= 63`, which shares its bit with every larger value).
#[inline]
pub(super) fn may_hold(summary: u64, k: i8) -> bool {
    k >= 63 || summary >> k & 1 == 1
}

/// The per-board state of one partition, see the module docs of
/// [`crate::retro`].
pub(crate) struct State<L: Packing> {
    /// The level index of the partition's first board.
    pub(super) start: u64,
    /// Boards in the partition.
    pub(super) size: u64,
    /// The cells, [`Packing::PER_WORD`] to a word.
    pub(super) words: HugeArray,
    /// Dirty blocks of the current and the next generation.
    pub(super) dirty: [Vec<AtomicU64>; 2],
    /// Per [`SUMMARY_WORDS`] words: bit `min(|B|, 63)` set for each value
    /// `B` that an undecided board there may still hold ([`may_hold`]), so
    /// that a stage's seeding skips the words where no board can be seeded.
    /// Made by the initial pass; an undecided board keeps its `B`, so the
    /// bits stay true (if no longer tight) as boards are decided.
    pub(super) summaries: Vec<AtomicU64>,
    /// When recorded: the generation in which each board was decided.
    pub(super) generations: Option<Generations>,
    /// The frontier lists of the current and the next generation, in one
    /// pool of chunks that the two share.
    pub(super) lists: ListPool,
    /// How the boards on the lists are packed.
    pub(super) packer: BoardPacker,
    /// The split cells' bytes of `B` and values ([`super::cold`]); `None`
    /// in the other layouts.
    pub(super) cold: Option<ColdBytes>,
    /// While the words are kept in a file (the initial pass of the split
    /// cells with their bytes in a file): its path.
    words_file: Option<std::path::PathBuf>,
    layout: std::marker::PhantomData<L>,
}

impl<L: Packing> State<L> {
    /// The state of boards `range` of a level, all cells zero, with frontier
    /// lists of `list_entries` per generation and, when `record_generations`,
    /// a generation per board.
    pub(super) fn new(
        range: Range<u64>,
        list_entries: u64,
        per_side: u8,
        record_generations: bool,
    ) -> State<L> {
        let size = range.end - range.start;
        let words = HugeArray::zeroed(State::<L>::word_bytes(size));
        let mut state = State::unloaded(range, list_entries, per_side);
        state.words = words;
        if record_generations {
            state.generations = Some(Generations::zeroed(size));
        }
        state
    }

    /// The state of boards `range` without its cells and generations (they
    /// are in files, mapped in while the partition is worked: see
    /// `super::store`), with frontier lists of `list_entries` per
    /// generation.
    pub(super) fn unloaded(range: Range<u64>, list_entries: u64, per_side: u8) -> State<L> {
        let size = range.end - range.start;
        let word_count = size.div_ceil(L::PER_WORD);
        let blocks = word_count.div_ceil(BLOCK_WORDS as u64);
        let dirty_words = blocks.div_ceil(64) as usize;
        State {
            start: range.start,
            size,
            summaries: (0..word_count.div_ceil(SUMMARY_WORDS as u64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            words: HugeArray::zeroed(0),
            dirty: [
                (0..dirty_words).map(|_| AtomicU64::new(0)).collect(),
                (0..dirty_words).map(|_| AtomicU64::new(0)).collect(),
            ],
            generations: None,
            lists: ListPool::new(pool_entries(list_entries)),
            packer: BoardPacker::new(per_side),
            cold: None,
            words_file: None,
            layout: std::marker::PhantomData,
        }
    }

    /// The state with its words in the file `path` (the split cells with
    /// their cold bytes in a file): written in order by the initial pass,
    /// their pages are the page cache's, given back under the resident
    /// ceiling, so the pass's lookups have the budget. They go to memory
    /// after the pass ([`State::words_to_memory`]).
    ///
    /// # Errors
    /// A file that cannot be made or mapped.
    pub(super) fn with_words_in_file(
        mut self,
        path: &std::path::Path,
    ) -> Result<State<L>, SolveError> {
        let bytes = State::<L>::word_bytes(self.size);
        self.words = awari_dbformat::memory::mapped::create(path, bytes)?;
        self.words_file = Some(path.to_path_buf());
        Ok(self)
    }

    /// Moves words kept in a file ([`State::with_words_in_file`]) to
    /// memory, where propagation reads them at random, and removes the
    /// file. Nothing happens to words already in memory.
    ///
    /// # Errors
    /// A file that cannot be removed.
    pub(super) fn words_to_memory(&mut self) -> Result<(), SolveError> {
        let Some(path) = self.words_file.take() else {
            return Ok(());
        };
        let mut words = HugeArray::zeroed(self.words.len());
        words
            .par_chunks_mut(8 * CHUNK_WORDS)
            .zip(self.words.par_chunks(8 * CHUNK_WORDS))
            .for_each(|(to, from)| to.copy_from_slice(from));
        self.words = words;
        std::fs::remove_file(&path).map_err(awari_dbformat::Error::io(&path))?;
        Ok(())
    }

    /// The split cells' cold bytes.
    ///
    /// # Panics
    /// In another layout, or before they are given ([`State::with_cold`]).
    #[inline]
    pub(super) fn cold(&self) -> &ColdBytes {
        self.cold.as_ref().expect("the split cells have cold bytes")
    }

    /// The state with its cold bytes (the split cells').
    pub(super) fn with_cold(mut self, cold: ColdBytes) -> State<L> {
        debug_assert!(L::SPLIT);
        self.cold = Some(cold);
        self
    }

    /// The first error in reading or writing the cold bytes, if any.
    ///
    /// # Errors
    /// That error (a full disk, say).
    pub(super) fn check_cold(&self) -> Result<(), SolveError> {
        self.cold.as_ref().map_or(Ok(()), ColdBytes::check)
    }

    /// The bytes of the cells of a partition of `boards` boards.
    pub(super) fn word_bytes(boards: u64) -> usize {
        8 * boards.div_ceil(L::PER_WORD) as usize
    }

    /// The summaries, one `u64` per [`SUMMARY_WORDS`] words.
    pub(super) fn summary_values(&self) -> Vec<u64> {
        self.summaries.iter().map(|s| s.load(Relaxed)).collect()
    }

    /// Sets the summaries to `values` (as [`State::summary_values`] gave
    /// them).
    ///
    /// # Panics
    /// When `values` has not one value per summary.
    pub(super) fn set_summaries(&mut self, values: &[u64]) {
        assert_eq!(values.len(), self.summaries.len(), "a value per summary");
        for (s, &v) in self.summaries.iter().zip(values) {
            s.store(v, Relaxed);
        }
    }

    /// The level indices of the partition's boards.
    pub(super) fn range(&self) -> Range<u64> {
        self.start..self.start + self.size
    }

    /// The local index of the level's board `q`, or `None` when another
    /// partition holds it. (One subtraction and one comparison: with a
    /// single partition every board is local and the branch always goes
    /// the same way.)
    #[inline(always)]
    pub(super) fn local(&self, q: u64) -> Option<u64> {
        let i = q.wrapping_sub(self.start);
        (i < self.size).then_some(i)
    }

    /// The words of cells.
    #[inline]
    pub(super) fn words(&self) -> &[AtomicU64] {
        self.words.as_atomic_u64()
    }

    /// The word holding local board i's cell.
    #[inline]
    pub(super) fn word_of(&self, i: u64) -> &AtomicU64 {
        &self.words()[L::locate(i).0]
    }

    /// Changes local board i's cell from `old` to `f(old)` atomically;
    /// returns the old cell when `f` made a change. `f` sees the current cell.
    #[inline]
    pub(super) fn update(&self, i: u64, f: impl Fn(Cell) -> Option<Cell>) -> Option<Cell> {
        let (w, shift) = L::locate(i);
        self.words()[w]
            .fetch_update(Relaxed, Relaxed, |word| {
                f(L::decode(word, shift)).map(|new| L::replace(word, shift, new))
            })
            .ok()
            .map(|word| L::decode(word, shift))
    }

    /// Marks local board i, whose nibble is `mark` or its free twin, as
    /// visited: its nibble becomes [`DONE`] or its free twin. The one bit
    /// `mark` lacks is set by an atomic OR, which cannot disturb the other
    /// boards of the word.
    #[inline]
    pub(super) fn set_done(&self, i: u64, mark: u8) {
        let (w, shift) = L::locate(i);
        self.words()[w].fetch_or(u64::from(DONE ^ mark) << shift, Relaxed);
    }

    /// Marks the block of local board i dirty in map `which`.
    #[inline]
    pub(super) fn mark_dirty(&self, which: usize, i: u64) {
        let block = L::locate(i).0 / BLOCK_WORDS;
        self.dirty[which][block / 64].fetch_or(1 << (block % 64), Relaxed);
    }

    /// True when some block of `which` is dirty.
    pub(super) fn any_dirty(&self, which: usize) -> bool {
        self.dirty[which].par_iter().any(|w| w.load(Relaxed) != 0)
    }

    /// The summaries from the one of local board `start` on (`start` begins
    /// a task of [`State::chunks`], so a summary).
    pub(super) fn summaries_from(&self, start: u64) -> &[AtomicU64] {
        &self.summaries[start as usize / L::PER_WORD as usize / SUMMARY_WORDS..]
    }

    /// Boards per task of the sequential passes (a multiple of 64, so that a
    /// task owns whole words of the free bits too).
    pub(super) const CHUNK: u64 = CHUNK_WORDS as u64 * L::PER_WORD;

    /// Disjoint tasks over the partition: `(first local board, boards, their
    /// words)`.
    pub(super) fn chunks(&self) -> impl IndexedParallelIterator<Item = (u64, usize, &[AtomicU64])> {
        let size = self.size;
        self.words()
            .par_chunks(CHUNK_WORDS)
            .enumerate()
            .map(move |(c, words)| {
                let start = c as u64 * Self::CHUNK;
                (start, (size - start).min(Self::CHUNK) as usize, words)
            })
    }

    /// The final values and free bits of the partition's boards, of a level
    /// of `seeds` seeds: decided boards keep theirs (all are visited, `DONE`
    /// or its free twin by now), the rest are 0, free when their captures
    /// give exactly 0. Local board i's free bit is bit `i % 64` of word
    /// `i / 64`.
    ///
    /// The values are made in the cells' memory, which then shrinks to them
    /// (a separate array would lift the peak above the state of the solve);
    /// the free bits are a new array of 1/8 byte per board.
    ///
    /// In the split cells the values are written into the cold bytes first
    /// ([`State::write_last_values`]); the words go, and the values are
    /// made from the cold bytes: in their own memory, or read from their
    /// file into a new array.
    ///
    /// # Errors
    /// Cold bytes in a file that cannot be read or written.
    pub(super) fn into_values(self, seeds: u32) -> Result<(Values, HugeArray), SolveError> {
        if L::SPLIT {
            self.write_last_values(seeds);
            self.check_cold()?;
            let State {
                words,
                lists,
                cold,
                size,
                ..
            } = self;
            drop((words, lists));
            let cold = cold.expect("the split cells have cold bytes");
            return cold_into_values(cold, size);
        }
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
                        let (value, is_free) = final_value(cell, seeds);
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
        Ok((Values::from_array(words), free))
    }

    /// In the split cells, after the last stage: writes every value not
    /// yet written into its cold byte (the boards stage 1 decided, ±1, and
    /// the undecided ones, 0), with its free bit, and turns every board
    /// `WRITTEN`. (A board already written is left as it is, so this may
    /// be done twice.)
    pub(super) fn write_last_values(&self, seeds: u32) {
        let per_word = L::PER_WORD as usize;
        self.chunks().for_each(|(start, boards, words)| {
            let mut cold = vec![0u8; boards];
            self.cold().read(start, &mut cold);
            for (w, word) in words.iter().enumerate() {
                let old = word.load(Relaxed);
                let mut new = old;
                for s in 0..per_word {
                    let j = w * per_word + s;
                    if j >= boards {
                        break;
                    }
                    let shift = s as u32 * L::BITS;
                    let cell = L::decode(old, shift);
                    let best = cold[j] as i8;
                    cold[j] = match cell.nibble {
                        WRITTEN => continue,
                        DONE => split_written(1, cell.value < 0, best, seeds),
                        // Undecided: 0, free when the captures give 0 (as in
                        // `final_value`).
                        _ => final_byte(0, best == 0 && seeds > 0),
                    };
                    new = with_written::<L>(new, shift, cell);
                }
                word.store(new, Relaxed);
            }
            self.cold().write(start, &cold);
        });
    }

    /// The final values and free bits of the partition's boards, as
    /// [`State::into_values`] makes them, written into `values` (a byte a
    /// board) and `free` (its words' bytes, a bit a board) without changing
    /// the cells: a partition in files stays the state to resume from
    /// while the level's values are assembled.
    ///
    /// # Panics
    /// When `values` and `free` are not of the partition's size.
    pub(super) fn values_into(&self, seeds: u32, values: &mut [i8], free: &mut [u8]) {
        assert_eq!(values.len() as u64, self.size, "a value per board");
        assert_eq!(
            free.len() as u64,
            8 * self.size.div_ceil(64),
            "a bit per board"
        );
        if L::SPLIT {
            self.write_last_values(seeds);
        }
        let per_word = L::PER_WORD as usize;
        self.chunks()
            .zip(values.par_chunks_mut(Self::CHUNK as usize))
            .zip(free.par_chunks_mut((Self::CHUNK / 8) as usize))
            .for_each(|(((start, boards, words), values), free)| {
                let mut cold = Vec::new();
                if L::SPLIT {
                    cold = vec![0u8; boards];
                    self.cold().read(start, &mut cold);
                }
                let mut free_word = 0u64;
                for j in 0..boards {
                    let (value, is_free) = if L::SPLIT {
                        from_final_byte(cold[j])
                    } else {
                        let word = words[j / per_word].load(Relaxed);
                        final_value(L::decode(word, (j % per_word) as u32 * L::BITS), seeds)
                    };
                    values[j] = value;
                    free_word |= u64::from(is_free) << (j % 64);
                    if j % 64 == 63 || j + 1 == boards {
                        let at = 8 * (j / 64);
                        free[at..at + 8].copy_from_slice(&free_word.to_ne_bytes());
                        free_word = 0;
                    }
                }
            });
    }
}

/// A board's final value and whether it is free, from its cell after the
/// last stage, in a level of `seeds` seeds: decided boards keep theirs, the
/// rest are 0, free when their captures give exactly 0.
fn final_value(cell: Cell, seeds: u32) -> (i8, bool) {
    if cell.nibble > 8 {
        (cell.value, cell.nibble & FREE_BIT == 0)
    } else {
        // Undecided: 0. (B = 0 = -n is the empty board, without moves.)
        (0, cell.value == 0 && seeds > 0)
    }
}

/// Whether a board of a level of `seeds` seeds whose value is `value` and
/// whose captures give `best` is free, as the packed cells find it when
/// they decide it: a capture reaches the value, unless the board has no
/// move at all and loses everything (`best` is then `-seeds`, which no
/// capture gives).
#[inline]
pub(super) fn split_free(value: i8, best: i8, seeds: u32) -> bool {
    value == best && !(value < 0 && u32::from(value.unsigned_abs()) == seeds)
}

/// `word` with the board at `shift` (whose cell is `cell`) `WRITTEN`: its
/// value is in its cold byte now.
#[inline]
pub(super) fn with_written<L: Packing>(word: u64, shift: u32, cell: Cell) -> u64 {
    L::replace(
        word,
        shift,
        Cell {
            nibble: WRITTEN,
            ..cell
        },
    )
}

/// The cold byte of a board decided at stage `k` (lost when `lost`) whose
/// captures gave `best`: its value and whether it is free.
#[inline]
pub(super) fn split_written(k: i8, lost: bool, best: i8, seeds: u32) -> u8 {
    let value = if lost { -k } else { k };
    final_byte(value, split_free(value, best, seeds))
}

/// The values and free bits of a partition of `size` boards from its cold
/// bytes, every value written ([`State::write_last_values`]): made in the
/// bytes' own memory, or in their file, then mapped (the file's name goes
/// with the bytes; its pages stay mapped while the values live).
fn cold_into_values(cold: ColdBytes, size: u64) -> Result<(Values, HugeArray), SolveError> {
    let mut free = HugeArray::zeroed(8 * size.div_ceil(64) as usize);
    let chunk = 64 * CHUNK_WORDS;
    let decode = |bytes: &mut [u8], free: &mut [u8]| {
        for (bytes, free) in bytes.chunks_mut(64).zip(free.chunks_mut(8)) {
            let mut bits = 0u64;
            for (j, byte) in bytes.iter_mut().enumerate() {
                let (value, is_free) = from_final_byte(*byte);
                *byte = value as u8;
                bits |= u64::from(is_free) << j;
            }
            free.copy_from_slice(&bits.to_ne_bytes());
        }
    };
    let values = match cold {
        ColdBytes::Memory(mut bytes) => {
            bytes[..size as usize]
                .par_chunks_mut(chunk)
                .zip(free.par_chunks_mut(chunk / 8))
                .for_each(|(bytes, free)| decode(bytes, free));
            bytes.shrink(size as usize);
            bytes
        }
        file => {
            // Made in the file, a chunk at a time, then mapped: its pages
            // are the page cache's, given back under the resident ceiling,
            // not memory the budget must hold.
            free.par_chunks_mut(chunk / 8).enumerate().for_each_init(
                Vec::new,
                |bytes, (c, free)| {
                    let start = (c * chunk) as u64;
                    bytes.resize((size - start).min(chunk as u64) as usize, 0);
                    file.read(start, bytes);
                    decode(bytes, free);
                    file.write(start, bytes);
                },
            );
            file.check()?;
            // (A file of exactly the partition's bytes.)
            let values = file.mapped()?.expect("bytes in a file");
            values.advise_random();
            values
        }
    };
    Ok((Values::from_array(values), free))
}

/// The entries of a pool that holds `list_entries` per generation for the
/// generations alive at once.
fn pool_entries(list_entries: u64) -> usize {
    let pool = list_entries.saturating_mul(super::LIVE_GENERATIONS);
    usize::try_from(pool).unwrap_or(usize::MAX)
}
