//! Contexts for the context encodings: where a board's *neighbours* are in
//! index order, how a context number is formed, and the decoding chain shared
//! by [`super::codec::RankModel`] and [`super::ans::AnsModel`].
//!
//! A neighbour `k` (`k` = 1, 2, 3: the mover's pits B, C, D) of a board is the
//! board with one seed moved from pit `k` into pit 0 (A). It always comes
//! earlier in index order, at a distance that depends only on pits 0..=2
//! ([`neighbour_offsets`]), so a decoder finds it without ranking. The context
//! of a board is made of the values of neighbours 1 and 2 (or "none" when the
//! neighbour does not exist or lies before the block), the class of neighbour
//! 3's value ([`class3`]) and the board's own pit 0, clamped
//! ([`PIT0_CLASSES`]).
//!
//! Why these (conditional entropies measured on real levels 14..=24 of the
//! 6-pit game): a value given neighbours 1 and 2 has 0.8–1.0 bit less entropy
//! than alone; neighbour 3 takes off about 0.1 bit more, nearly all of it kept
//! when its value is reduced to 10 classes; pit 0 another 0.1. Neighbours that
//! merely equal the value are not enough (a move-to-front over neighbours does
//! worse than the raw bytes): the gain comes from per-context statistics.

use std::borrow::Cow;
use std::collections::HashMap;

use rayon::prelude::*;

use crate::game::board::MAX_BOARD_PITS;
use crate::index::Index;

use super::LevelId;
use crate::error::{malformed, Malformed};

/// The most neighbours a context can use.
pub const MAX_NEIGHBOURS: usize = 3;
/// Classes of neighbour 3's value in a context ([`class3`]).
pub const CLASSES3: usize = 10;
/// Classes of the board's pit 0 in the contexts the writer makes (0, 1, 2, 3+):
/// about 0.1 bit per board less on levels 16..=20.
pub const PIT0_CLASSES: usize = 4;
/// The most pit-0 classes a model may use.
pub const MAX_PIT0_CLASSES: usize = 8;

/// How many neighbour kinds boards with `pits` pits per side have: pits 1..=k
/// must all be the mover's, so `min(3, pits - 1)`.
pub fn usable_neighbours(pits: u8) -> usize {
    (pits as usize).saturating_sub(1).min(MAX_NEIGHBOURS)
}

/// The distance back, in index order, from a board to its neighbour `k`
/// (`k` = 1..=3: the board with one seed moved from pit `k` to pit 0), or 0
/// when pit `k` is empty. `pits` are the board's pits 0..=3.
///
/// All boards that agree on pits `k+1..` are contiguous in the index and
/// enumerate pits `k..=0` lexicographically, so the distance is a count of
/// compositions: 1 for `k` = 1, `p0 + p1 + 2` for `k` = 2, and
/// `(s+2)(s+3)/2 - p2` with `s = p0 + p1 + p2` for `k` = 3. It needs the
/// mover to own pits `1..=k` (more than `k` pits per side), because whether a
/// board is stored depends on the opponent's pits only.
#[inline]
pub fn neighbour_offsets(pits: &[u8]) -> [u64; MAX_NEIGHBOURS] {
    let p0 = u64::from(pits[0]);
    let p1 = u64::from(pits[1]);
    let p2 = u64::from(pits[2]);
    let s = p0 + p1 + p2;
    [
        u64::from(pits[1] > 0),
        if pits[2] > 0 { p0 + p1 + 2 } else { 0 },
        if pits.get(3).copied().unwrap_or(0) > 0 {
            (s + 2) * (s + 3) / 2 - p2
        } else {
            0
        },
    ]
}

/// The class of neighbour 3's symbol `s` in a level of `seeds` seeds: 0..=6
/// for values -3..=3 (clamped), 7 for -seeds, 8 for +seeds, 9 for no neighbour
/// (`s > 2 * seeds`).
pub fn class3(s: usize, seeds: u32) -> u8 {
    let n = seeds as i64;
    if s > 2 * seeds as usize {
        return 9;
    }
    let v = s as i64 - n;
    if v == -n && n > 0 {
        7
    } else if v == n && n > 0 {
        8
    } else {
        (v.clamp(-3, 3) + 3) as u8
    }
}

/// The symbol of a value: `value + seeds`, in `0..=2 * seeds`.
#[inline]
pub(crate) fn symbol(value: i8, seeds: u32) -> u8 {
    (i32::from(value) + seeds as i32) as u8
}

/// Boards of a block that share pits 2..: seeds move from pit 0 to pit 1 one
/// at a time, and the offsets of neighbours 2 and 3 stay the same.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// Position of the run's first board in the block.
    first: usize,
    /// Boards in the run (within the block).
    len: usize,
    /// Pit 1 of the first board; it grows by one along the run.
    first_p1: usize,
    /// Pit 0 of the first board; it shrinks by one along the run.
    first_p0: usize,
    /// Distance to neighbour 2 along the run, 0 when there is none.
    off2: usize,
    /// Distance to neighbour 3 along the run, 0 when there is none.
    off3: usize,
}

/// Calls `visit` for each run of the boards `start .. start + len`, in order.
/// The board is unranked once and then stepped once per run (as
/// [`crate::LevelIter`] does, skipping unstored boards).
#[inline(always)]
fn for_each_run(
    id: LevelId,
    start: u64,
    len: usize,
    neighbours: usize,
    mut visit: impl FnMut(Run),
) {
    let p = usize::from(id.rules.pits());
    let Ok(board) = Index::for_pits(id.rules.pits()).unrank(id.seeds, start) else {
        return;
    };
    let mut pits = [0u8; MAX_BOARD_PITS];
    pits[..2 * p].copy_from_slice(board.pits());
    let mut pos = 0usize;
    while pos < len {
        let r = usize::from(pits[0]) + usize::from(pits[1]);
        let p1 = usize::from(pits[1]);
        let p2 = usize::from(pits[2]);
        let take = (r - p1 + 1).min(len - pos);
        let off2 = if neighbours >= 2 && p2 > 0 { r + 2 } else { 0 };
        let off3 = if neighbours >= 3 && pits[3] > 0 {
            let s = r + p2;
            (s + 2) * (s + 3) / 2 - p2
        } else {
            0
        };
        visit(Run {
            first: pos,
            len: take,
            first_p1: p1,
            first_p0: usize::from(pits[0]),
            off2,
            off3,
        });
        pos += take;
        if pos < len {
            // The run ends with all r seeds in pit 1; go on to the next run.
            pits[0] = 0;
            pits[1] = r as u8;
            if !next_board(&mut pits, p) {
                return;
            }
        }
    }
}

/// Steps `pits` to the next stored board in index order, as
/// [`crate::LevelIter`] does; false when there is none (past the level's end).
fn next_board(pits: &mut [u8; MAX_BOARD_PITS], per_side: usize) -> bool {
    let n = 2 * per_side;
    let step = |pits: &mut [u8; MAX_BOARD_PITS]| -> bool {
        let Some(low) = pits[..n].iter().position(|&s| s > 0) else {
            return false;
        };
        if low + 1 >= n {
            return false;
        }
        let rest = pits[low] - 1;
        pits[low] = 0;
        pits[low + 1] += 1;
        pits[0] = rest;
        true
    };
    if !step(pits) {
        return false;
    }
    // An opponent row without an empty pit is not stored: skip every mover
    // arrangement of that row at once.
    while pits[per_side..n].iter().all(|&s| s > 0) {
        let mover: u8 = pits[..per_side].iter().sum();
        pits[..per_side].fill(0);
        pits[per_side - 1] = mover;
        if !step(pits) {
            return false;
        }
    }
    true
}

/// Where a decoder gets each symbol from (the rank bytes, a rANS stream):
/// `next(i, context)` is board `i`'s symbol, or `None` when the data is
/// corrupt. A trait rather than a closure so that it is inlined into the loop.
pub(crate) trait NextSymbol {
    /// Board `i`'s symbol in context `context`.
    fn next(&mut self, i: usize, context: usize) -> Option<u8>;
}

/// A closure `|i, context| symbol` (an encoder's or counter's view, where the
/// symbols are known) is a source of symbols too.
impl<F: FnMut(usize, usize) -> Option<u8>> NextSymbol for F {
    #[inline(always)]
    fn next(&mut self, i: usize, context: usize) -> Option<u8> {
        self(i, context)
    }
}

/// Symbol counts of the contexts seen by one counting task: a row of
/// `alphabet` counts per context seen, found through `row_of[context]`.
struct Tally {
    /// The row of each context in `counts`, or [`Tally::UNSEEN`].
    row_of: Vec<u32>,
    /// The contexts of the rows, in row order.
    contexts: Vec<usize>,
    /// `alphabet` counts per row.
    counts: Vec<u64>,
    alphabet: usize,
}

impl Tally {
    const UNSEEN: u32 = u32::MAX;

    fn new(contexts: usize, alphabet: usize) -> Tally {
        Tally {
            row_of: vec![Self::UNSEEN; contexts],
            contexts: Vec::new(),
            counts: Vec::new(),
            alphabet,
        }
    }

    /// Counts symbol `s` in context `ctx`.
    #[inline]
    fn add(&mut self, ctx: usize, s: u8) {
        let row = self.row(ctx);
        self.counts[row * self.alphabet + usize::from(s)] += 1;
    }

    /// The row of context `ctx`, made when it is first seen.
    #[inline]
    fn row(&mut self, ctx: usize) -> usize {
        let mut row = self.row_of[ctx];
        if row == Self::UNSEEN {
            row = self.contexts.len() as u32;
            self.row_of[ctx] = row;
            self.contexts.push(ctx);
            self.counts.resize(self.counts.len() + self.alphabet, 0);
        }
        row as usize
    }

    /// Adds the counts of `other` to these.
    fn merge(mut self, other: Tally) -> Tally {
        for (ctx, counts) in other.rows() {
            let row = self.row(ctx) * self.alphabet;
            for (x, &y) in self.counts[row..row + self.alphabet].iter_mut().zip(counts) {
                *x += y;
            }
        }
        self
    }

    /// Every context seen, with its row of counts.
    fn rows(&self) -> impl Iterator<Item = (usize, &[u64])> + '_ {
        self.contexts
            .iter()
            .copied()
            .zip(self.counts.chunks(self.alphabet))
    }
}

/// Symbol counts: overall, and per context.
pub(crate) type Counts = (Vec<u64>, HashMap<usize, Vec<u64>>);

/// Overall counts `overall` and counts `rows` (each a context's number and
/// its row) as bytes, to send to other processes: the overall counts, then
/// each context's number and row, every number a little-endian `u64` (both
/// ends know the alphabet's size).
pub(crate) fn counts_to_bytes<'a>(
    overall: &[u64],
    rows: impl ExactSizeIterator<Item = (usize, &'a [u64])>,
) -> Vec<u8> {
    let alphabet = overall.len();
    let mut bytes = Vec::with_capacity(8 * (alphabet + rows.len() * (alphabet + 1)));
    let mut put = |x: u64| bytes.extend_from_slice(&x.to_le_bytes());
    overall.iter().for_each(|&x| put(x));
    for (ctx, row) in rows {
        put(ctx as u64);
        row.iter().for_each(|&x| put(x));
    }
    bytes
}

/// Adds to `sum` the counts that `bytes` hold, as [`counts_to_bytes`]
/// makes them (of `sum`'s alphabet): counts of parts of a sample add up to
/// the whole sample's.
pub(crate) fn add_counts(sum: &mut Counts, bytes: &[u8]) {
    let alphabet = sum.0.len();
    let mut words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
    let add = |sum: &mut [u64], words: &mut dyn Iterator<Item = u64>| {
        sum.iter_mut().zip(words).for_each(|(s, m)| *s += m)
    };
    add(&mut sum.0, &mut words);
    while let Some(ctx) = words.next() {
        let row = sum
            .1
            .entry(ctx as usize)
            .or_insert_with(|| vec![0; alphabet]);
        add(row, &mut words);
    }
}

/// Whole blocks of a level's values that a model learns from, in a fixed
/// order: `(first board, values)` slices already in memory, or [`LazyBlocks`],
/// made one at a time while they are counted (so that a sample of many
/// blocks need not be held at once).
pub trait TrainingBlocks<'v>: Sync {
    /// The number of blocks.
    fn len(&self) -> usize;

    /// True when there is no block.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block `i` (below [`TrainingBlocks::len`]): its first board and its values.
    fn block(&self, i: usize) -> (u64, Cow<'v, [i8]>);
}

impl<'v> TrainingBlocks<'v> for [(u64, &'v [i8])] {
    fn len(&self) -> usize {
        <[_]>::len(self)
    }

    fn block(&self, i: usize) -> (u64, Cow<'v, [i8]>) {
        let (start, values) = self[i];
        (start, Cow::Borrowed(values))
    }
}

/// Blocks given by their board ranges and made on demand by `values_of`
/// (for instance chosen from a level's scores), dropped once counted.
pub struct LazyBlocks<F> {
    /// The blocks' board ranges.
    pub ranges: Vec<std::ops::Range<u64>>,
    /// The values of the boards of a range.
    pub values_of: F,
}

impl<'v, F> TrainingBlocks<'v> for LazyBlocks<F>
where
    F: Fn(std::ops::Range<u64>) -> Cow<'v, [i8]> + Sync,
{
    fn len(&self) -> usize {
        self.ranges.len()
    }

    fn block(&self, i: usize) -> (u64, Cow<'v, [i8]>) {
        let range = self.ranges[i].clone();
        (range.start, (self.values_of)(range))
    }
}

/// What a context is made of, for one level.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Neighbours in a context, 1..=3.
    pub neighbours: usize,
    /// Classes of the board's pit 0 (1: not used); pit 0 is clamped to
    /// `pit0_classes - 1`.
    pub pit0_classes: usize,
    /// Symbols: `2 * seeds + 1`; the symbol `alphabet` stands for "none".
    pub alphabet: usize,
    /// [`class3`] of every symbol and of "none".
    class3: Vec<u8>,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Shape {
    /// The shape for level `id` with `neighbours` neighbours and
    /// `pit0_classes` pit-0 classes (both already checked).
    pub fn new(id: LevelId, neighbours: usize, pit0_classes: usize) -> Shape {
        let alphabet = 2 * id.seeds as usize + 1;
        Shape {
            neighbours,
            pit0_classes,
            alphabet,
            class3: (0..=alphabet).map(|s| class3(s, id.seeds)).collect(),
        }
    }

    /// The counts this shape would get from the blocks that gave `counts` to
    /// `wider`, a shape of the same level and pit-0 classes with at least as
    /// many neighbours: each of `wider`'s contexts is added into the one made
    /// of its first neighbours and pit 0. (Neighbour offsets do not depend on
    /// how many neighbours are used, so this is exact, and one count serves
    /// every narrower shape.)
    pub fn narrow_counts(&self, wider: &Shape, counts: &Counts) -> Counts {
        debug_assert!(self.neighbours <= wider.neighbours);
        debug_assert_eq!(self.alphabet, wider.alphabet);
        let base = self.base();
        let mut narrow: HashMap<usize, Vec<u64>> = HashMap::new();
        for (&ctx, row) in &counts.1 {
            // Take `wider`'s context apart (see `Shape::context`).
            let s1 = ctx % base;
            let mut rest = ctx / base;
            let mut s2 = 0;
            if wider.neighbours >= 2 {
                s2 = rest % base;
                rest /= base;
            }
            if wider.neighbours >= 3 {
                rest /= CLASSES3;
            }
            let pit0 = rest;
            let mine = match self.neighbours {
                1 => pit0 * base + s1,
                2 => (pit0 * base + s2) * base + s1,
                _ => ctx,
            };
            let sum = narrow.entry(mine).or_insert_with(|| vec![0; self.alphabet]);
            for (x, y) in sum.iter_mut().zip(row) {
                *x += y;
            }
        }
        (counts.0.clone(), narrow)
    }

    /// The four bytes that start a serialised model: neighbours, pit-0
    /// classes, alphabet (`u16`).
    pub fn header(&self) -> [u8; 4] {
        let a = (self.alphabet as u16).to_le_bytes();
        [self.neighbours as u8, self.pit0_classes as u8, a[0], a[1]]
    }

    /// Reads and checks the four bytes of [`Shape::header`] for level `id`.
    pub fn parse(id: LevelId, raw: &[u8]) -> Result<Shape, Malformed> {
        if raw.len() < 4 {
            return Err(malformed!("model of {} bytes is too short", raw.len()));
        }
        let neighbours = usize::from(raw[0]);
        let pit0_classes = usize::from(raw[1]);
        let alphabet = usize::from(u16::from_le_bytes([raw[2], raw[3]]));
        let most = usable_neighbours(id.rules.pits());
        if neighbours == 0 || neighbours > most {
            return Err(malformed!(
                "model uses {neighbours} neighbours; {} pits per side allow 1 to {most}",
                id.rules.pits()
            ));
        }
        if !(1..=MAX_PIT0_CLASSES).contains(&pit0_classes) {
            return Err(malformed!(
                "model uses {pit0_classes} pit-0 classes; expected 1 to {MAX_PIT0_CLASSES}"
            ));
        }
        let expected = 2 * id.seeds as usize + 1;
        if alphabet != expected {
            return Err(malformed!(
                "model has {alphabet} symbols, level {} needs {expected}",
                id.seeds
            ));
        }
        Ok(Shape::new(id, neighbours, pit0_classes))
    }

    /// `3+p0`: neighbours, and whether pit 0 is used.
    pub fn describe(&self) -> String {
        if self.pit0_classes > 1 {
            format!("{}+p0", self.neighbours)
        } else {
            self.neighbours.to_string()
        }
    }

    fn base(&self) -> usize {
        self.alphabet + 1
    }

    /// The number of contexts: `pit0_classes` × (`base` for neighbour 1) ×
    /// (`base` for neighbour 2) × ([`CLASSES3`] for neighbour 3), for the
    /// neighbours used.
    pub fn contexts(&self) -> usize {
        self.pit0_classes
            * match self.neighbours {
                1 => self.base(),
                2 => self.base() * self.base(),
                _ => CLASSES3 * self.base() * self.base(),
            }
    }

    /// The number of *parent* contexts, made of neighbours 1 and 2 only: a
    /// context's parent is `context % parents()`.
    pub fn parents(&self) -> usize {
        self.base().pow(self.neighbours.min(2) as u32)
    }

    /// Symbol counts per context (and overall) over whole blocks of level
    /// `id`, counted in parallel.
    ///
    /// Each task counts a share of the blocks into a [`Tally`] (rows found by
    /// an array indexed by context, not by hashing: counting is most of the
    /// time it takes to train a model); the tallies are then added up.
    pub fn count<'b>(&self, id: LevelId, blocks: &(impl TrainingBlocks<'b> + ?Sized)) -> Counts {
        let a = self.alphabet;
        // A few tasks per thread, so that the threads finish together.
        let per_task = blocks
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1);
        // (Folded: the tasks a thread runs add to one tally, since a tally of
        // a large sample takes tens of MiB; the threads' are added up after.)
        let tally = (0..blocks.len().div_ceil(per_task))
            .into_par_iter()
            .fold(
                || Tally::new(self.contexts(), a),
                |mut tally, task| {
                    let mut sym = Vec::new();
                    let share = task * per_task..((task + 1) * per_task).min(blocks.len());
                    for (start, values) in share.map(|i| blocks.block(i)) {
                        sym.clear();
                        sym.resize(values.len() + 1, a as u8);
                        let counted =
                            self.chain(id, start, values.len(), &mut sym, &mut |i, ctx| {
                                let s = symbol(values[i], id.seeds);
                                tally.add(ctx, s);
                                Some(s)
                            });
                        debug_assert!(counted.is_ok(), "known symbols are never corrupt");
                    }
                    tally
                },
            )
            .reduce_with(Tally::merge);
        let mut global = vec![0u64; a];
        let mut counts: HashMap<usize, Vec<u64>> = HashMap::new();
        for (ctx, row) in tally.iter().flat_map(Tally::rows) {
            for (g, &y) in global.iter_mut().zip(row) {
                *g += y;
            }
            counts.insert(ctx, row.to_vec());
        }
        (global, counts)
    }

    /// Goes through boards `start .. start + len` in order, each with its
    /// context: `next.next(i, context)` gives board `i`'s symbol, which goes
    /// into `sym[i + 1]` (`sym[0]` must hold "none", `alphabet`), or `None`
    /// when the data is corrupt (the walk then stops; the error is `Err(i)`).
    ///
    /// A decoder takes the symbol from its data; an encoder, a counter and
    /// the bound chooser know it (or choose it) and note the context. All go
    /// through this one walk, so they all see the contexts the decoder sees.
    ///
    /// The parts of the context from neighbours 2 and 3 and pit 0 do not
    /// depend on the previous board, so only an add and `next` lie on the
    /// chain from one board to the next.
    #[inline(always)]
    pub fn chain(
        &self,
        id: LevelId,
        start: u64,
        len: usize,
        sym: &mut [u8],
        next: &mut impl NextSymbol,
    ) -> Result<(), usize> {
        match self.neighbours {
            1 => self.chain_k::<1>(id, start, len, sym, next),
            2 => self.chain_k::<2>(id, start, len, sym, next),
            _ => self.chain_k::<3>(id, start, len, sym, next),
        }
    }

    #[inline(always)]
    fn chain_k<const K: usize>(
        &self,
        id: LevelId,
        start: u64,
        len: usize,
        sym: &mut [u8],
        next: &mut impl NextSymbol,
    ) -> Result<(), usize> {
        let a = self.alphabet;
        let base = a + 1;
        let class3 = &self.class3[..];
        let p0_last = self.pit0_classes - 1;
        let mut bad = None;
        for_each_run(id, start, len, K, |run| {
            if bad.is_some() {
                return;
            }
            // Neighbour 1 is the previous board of the run: keep it in a register.
            let mut prev = if run.first_p1 > 0 && run.first >= 1 {
                usize::from(sym[run.first])
            } else {
                a
            };
            for j in 0..run.len {
                let i = run.first + j;
                let mut hi = (run.first_p0 - j).min(p0_last);
                if K >= 3 {
                    let i3 = if run.off3 != 0 && run.off3 <= i {
                        i + 1 - run.off3
                    } else {
                        0
                    };
                    hi = hi * CLASSES3 + usize::from(class3[usize::from(sym[i3])]);
                }
                if K >= 2 {
                    let i2 = if run.off2 != 0 && run.off2 <= i {
                        i + 1 - run.off2
                    } else {
                        0
                    };
                    hi = (hi * base + usize::from(sym[i2])) * base;
                } else {
                    hi *= base;
                }
                let Some(s) = next.next(i, hi + prev) else {
                    bad = Some(i);
                    return;
                };
                sym[i + 1] = s;
                prev = usize::from(s);
            }
        });
        match bad {
            Some(i) => Err(i),
            None => Ok(()),
        }
    }
}

/// The most bytes a serialised model may expand to (a guard against a
/// corrupt length field; real models are far smaller).
pub(crate) const MAX_MODEL_BYTES: usize = 64 << 20;

/// A model section: `u32` length of `raw`, then `raw` as one zstd frame.
pub(crate) fn pack(raw: &[u8]) -> Vec<u8> {
    let packed = zstd::bulk::compress(raw, 19).expect("zstd compresses a buffer in memory");
    let mut out = (raw.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&packed);
    out
}

/// The bytes [`pack`] packed, after checking the length.
pub(crate) fn unpack(bytes: &[u8]) -> Result<Vec<u8>, Malformed> {
    if bytes.len() < 4 {
        return Err(malformed!(
            "model section of {} bytes is too short",
            bytes.len()
        ));
    }
    let raw_len = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    if raw_len > MAX_MODEL_BYTES {
        return Err(malformed!(
            "model of {raw_len} bytes is larger than any real model"
        ));
    }
    let raw = zstd::bulk::decompress(&bytes[4..], raw_len)
        .map_err(|e| malformed!("model section does not decompress: {e}"))?;
    if raw.len() != raw_len {
        return Err(malformed!(
            "model decompresses to {} bytes, expected {raw_len}",
            raw.len()
        ));
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::rules::{RuleSet, Rules};

    #[test]
    fn neighbour_offsets_match_the_index() {
        for pits in 4..=6u8 {
            let index = Index::for_pits(pits);
            for seeds in [1, 5, 9] {
                for (i, board) in index.boards(seeds).enumerate() {
                    let offs = neighbour_offsets(board.pits());
                    for k in 1..=usable_neighbours(pits) {
                        let mut p = board.pits().to_vec();
                        if p[k] == 0 {
                            assert_eq!(offs[k - 1], 0);
                            continue;
                        }
                        p[k] -= 1;
                        p[0] += 1;
                        let j = index.rank(&crate::Board::new(&p).unwrap()).unwrap();
                        assert_eq!(i as u64 - j, offs[k - 1], "{board:?} k={k}");
                    }
                }
            }
        }
    }

    /// The context [`Shape::chain`] gives every board of a block whose
    /// symbols are `symbols`.
    fn contexts_of(shape: &Shape, id: LevelId, start: u64, symbols: &[u8]) -> Vec<u32> {
        let mut contexts = vec![0u32; symbols.len()];
        let mut sym = vec![shape.alphabet as u8; symbols.len() + 1];
        let known = shape.chain(id, start, symbols.len(), &mut sym, &mut |i, ctx| {
            contexts[i] = ctx as u32;
            Some(symbols[i])
        });
        assert_eq!(known, Ok(()));
        contexts
    }

    /// Board `i`'s context by its definition (module docs, [`Shape::chain`]):
    /// neighbour `k` from [`neighbour_offsets`], "none" when it does not exist
    /// or lies before the block; `s1 + base * (s2 + base * (class3(s3) + 10 *
    /// pit0 class))`, leaving out the neighbours not used.
    fn context_by_definition(
        shape: &Shape,
        symbols: &[u8],
        i: usize,
        board: &crate::Board,
    ) -> usize {
        let offsets = neighbour_offsets(board.pits());
        let state = |k: usize| match offsets[k] as usize {
            0 => shape.alphabet,
            d if d > i => shape.alphabet,
            d => usize::from(symbols[i - d]),
        };
        let base = shape.alphabet + 1;
        let mut ctx = usize::from(board.pit(0)).min(shape.pit0_classes - 1);
        if shape.neighbours >= 3 {
            ctx = ctx * CLASSES3 + usize::from(shape.class3[state(2)]);
        }
        if shape.neighbours >= 2 {
            ctx = ctx * base + state(1);
        }
        ctx * base + state(0)
    }

    /// The one walk every coder goes through gives each board the context of
    /// its definition, computed board by board from the level's iterator, for
    /// every board size and number of neighbours; and it stops where a
    /// decoder finds the data corrupt.
    #[test]
    fn the_chain_gives_the_contexts_of_their_definition() {
        for pits in 2..=6u8 {
            let rules = Rules::new(RuleSet::Awari, pits).unwrap();
            let index = Index::for_pits(pits);
            for seeds in [0, 1, 2, 6, 9] {
                let id = LevelId::new(rules, seeds);
                let boards: Vec<_> = index.boards(seeds).collect();
                let symbol_of =
                    |b: &crate::Board| (b.pit(0) + b.pit(pits as usize + 1)).min(2 * seeds as u8);
                for (start, len) in [(0, boards.len()), (1, 50), (7, 1), (boards.len() / 2, 333)] {
                    let start = start.min(boards.len());
                    let len = len.min(boards.len() - start);
                    let block = &boards[start..start + len];
                    let symbols: Vec<u8> = block.iter().map(symbol_of).collect();
                    for neighbours in 1..=usable_neighbours(pits) {
                        let shape = Shape::new(id, neighbours, PIT0_CLASSES);
                        let contexts = contexts_of(&shape, id, start as u64, &symbols);
                        for (i, board) in block.iter().enumerate() {
                            let want = context_by_definition(&shape, &symbols, i, board);
                            assert!(want < shape.contexts());
                            assert_eq!(
                                contexts[i] as usize,
                                want,
                                "P={pits} n={seeds} board {} with {neighbours} neighbours",
                                start + i
                            );
                        }
                        if len > 10 {
                            let mut sym = vec![shape.alphabet as u8; len + 1];
                            let stopped =
                                shape.chain(id, start as u64, len, &mut sym, &mut |i, _| {
                                    (i < 7).then_some(symbols[i])
                                });
                            assert_eq!(stopped, Err(7));
                            assert_eq!(&sym[1..8], &symbols[..7]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn narrowed_counts_equal_counting_with_fewer_neighbours() {
        for pit0_classes in [1, PIT0_CLASSES] {
            let id = LevelId::new(Rules::default(), 9);
            // Values that depend on the board, so that contexts matter.
            let values: Vec<i8> = Index::for_pits(6)
                .boards(9)
                .map(|b| {
                    let v = i16::from(b.pit(0)) - i16::from(b.pit(6)) + i16::from(b.pit(3) % 3);
                    v.clamp(-9, 9) as i8
                })
                .collect();
            let blocks = [(0u64, &values[..4000]), (10_000, &values[10_000..15_000])];
            let widest = Shape::new(id, 3, pit0_classes);
            let counts = widest.count(id, &blocks[..]);
            for k in 1..=3 {
                let shape = Shape::new(id, k, pit0_classes);
                let direct = shape.count(id, &blocks[..]);
                let narrowed = shape.narrow_counts(&widest, &counts);
                assert_eq!(narrowed.0, direct.0, "{k} neighbours");
                // Contexts seen with no board are left out by both.
                assert_eq!(
                    narrowed.1, direct.1,
                    "{k} neighbours, {pit0_classes} pit-0 classes"
                );
            }
        }
    }

    #[test]
    fn counts_of_blocks_made_on_demand_equal_counts_of_slices_and_of_one_pass() {
        let id = LevelId::new(Rules::default(), 9);
        let values: Vec<i8> = Index::for_pits(6)
            .boards(9)
            .map(|b| (i16::from(b.pit(1)) - i16::from(b.pit(7))).clamp(-9, 9) as i8)
            .collect();
        let shape = Shape::new(id, 3, PIT0_CLASSES);
        // Many blocks, so that several tasks count and their tallies merge.
        let ranges: Vec<std::ops::Range<u64>> = (0..values.len() as u64 / 700)
            .map(|b| b * 700..b * 700 + 500)
            .collect();
        let slices: Vec<(u64, &[i8])> = ranges
            .iter()
            .map(|r| (r.start, &values[r.start as usize..r.end as usize]))
            .collect();
        let lazy = LazyBlocks {
            ranges: ranges.clone(),
            values_of: |r: std::ops::Range<u64>| {
                Cow::Owned(values[r.start as usize..r.end as usize].to_vec())
            },
        };
        let from_slices = shape.count(id, &slices[..]);
        assert_eq!(shape.count(id, &lazy), from_slices);
        // The same counts, tallied by hand in one pass.
        let mut global = vec![0u64; shape.alphabet];
        let mut by_context: HashMap<usize, Vec<u64>> = HashMap::new();
        for &(start, block) in &slices {
            let symbols: Vec<u8> = block.iter().map(|&v| symbol(v, id.seeds)).collect();
            for (&ctx, &s) in contexts_of(&shape, id, start, &symbols)
                .iter()
                .zip(&symbols)
            {
                global[usize::from(s)] += 1;
                by_context
                    .entry(ctx as usize)
                    .or_insert_with(|| vec![0; shape.alphabet])[usize::from(s)] += 1;
            }
        }
        assert_eq!(from_slices, (global, by_context));
    }
}
