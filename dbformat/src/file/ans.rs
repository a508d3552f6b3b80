//! The `context-ans` encoding: every value is entropy-coded with rANS under a
//! static per-level probability table chosen by its context
//! ([`super::context`]).
//!
//! zstd codes a block with one Huffman table for all its bytes, so even after
//! the context-rank transform it cannot use the context's own distribution; on
//! levels 20..=24 of the 6-pit game it stays 0.35–0.4 bit per board above the
//! conditional entropy of the values given their contexts. Coding each value
//! with its context's probabilities (rANS, 14-bit precision) comes within a few
//! hundredths of a bit of that entropy; the tables cost about 0.02 bit per
//! board on large levels. Blocks stay independent, as with zstd.
//!
//! Block bytes: the final encoder state (`u32`), then the renormalisation words
//! (`u16`) in the order the decoder reads them. A block decodes back to the
//! initial state having read every word; anything else is corruption.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::context::{pack, symbol, unpack, Counts, NextSymbol, Shape, MAX_MODEL_BYTES};
use super::LevelId;
use crate::error::{malformed, Malformed};

/// Probabilities are multiples of `1 / 2^SCALE`.
const SCALE: u32 = 14;
/// The total of every frequency table.
const TOTAL: u32 = 1 << SCALE;
/// The lower end of the coder's state interval `[LOW, LOW << 16)`.
const LOW: u32 = 1 << 16;
/// Contexts seen fewer times in training use the level's overall table.
const MIN_CONTEXT_COUNT: u64 = 32;

/// One table entry, packed: cumulative frequency (bits 0..16), frequency
/// (16..32), symbol (32..40).
#[derive(Clone, Copy)]
struct Entry(u64);

impl Entry {
    fn new(cum: u32, freq: u32, symbol: u8) -> Entry {
        Entry(u64::from(cum) | u64::from(freq) << 16 | u64::from(symbol) << 32)
    }
    #[inline]
    fn cum(self) -> u32 {
        (self.0 & 0xffff) as u32
    }
    #[inline]
    fn freq(self) -> u32 {
        (self.0 >> 16 & 0xffff) as u32
    }
    #[inline]
    fn symbol(self) -> u8 {
        (self.0 >> 32) as u8
    }
}

/// How many of a table's symbols the decoder finds without a search.
const LANES: usize = 16;

/// One table as the decoder reads it: where each of its first symbols'
/// slots start, side by side, so that finding the symbol of a slot is a count
/// of the starts at or below it (no branch, one cache line), not a walk down
/// the entries. Nearly half the boards of a large level are not coded with
/// their context's one or two most likely symbols, so this is the common path.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes {
    /// `starts[j]`: the cumulative frequency where entry `j` begins, for `j`
    /// in `0..=limit`; `starts[limit]` is where the entries past the lanes (or
    /// the unlisted symbols) begin. The lanes after `limit` hold `i16::MAX`,
    /// above every slot. Slots are below `TOTAL` = 2^14, so `i16` holds them.
    starts: [i16; LANES],
    /// `symbols[j]`: entry `j`'s symbol, for `j < limit`.
    symbols: [u8; LANES],
    /// Entries `0..limit` are decoded from the lanes.
    limit: u32,
    /// The table's listed entries.
    listed: u32,
    /// The index in `entries` of the table's first entry.
    first: u32,
}

impl Lanes {
    /// The lanes of the table whose `listed` entries start at `first`.
    fn new(entries: &[Entry], first: u32, listed: usize) -> Lanes {
        let limit = listed.min(LANES - 1);
        let table = &entries[first as usize..first as usize + listed];
        let mut lanes = Lanes {
            starts: [i16::MAX; LANES],
            symbols: [0; LANES],
            limit: limit as u32,
            listed: listed as u32,
            first,
        };
        for (j, e) in table.iter().take(limit).enumerate() {
            lanes.starts[j] = e.cum() as i16;
            lanes.symbols[j] = e.symbol();
        }
        let end = table[limit - 1].cum() + table[limit - 1].freq();
        lanes.starts[limit] = end as i16;
        lanes
    }
}

/// The rANS decoder's state while it decodes a block; `T` is the type of
/// the table numbers (see [`TableOf`]).
struct AnsNext<'a, T> {
    /// The coder's state.
    x: u32,
    /// The next word to read.
    at: usize,
    bytes: &'a [u8],
    /// The table each context uses, as an index into `lanes`.
    table_of: &'a [T],
    lanes: &'a [Lanes],
    entries: &'a [Entry],
    alphabet: usize,
}

impl<T> AnsNext<'_, T> {
    /// The symbol whose slot holds `v` in the table of `lanes`, past the
    /// lanes: `(symbol, cum, freq)`.
    #[inline(never)]
    fn search(&self, lanes: &Lanes, v: u32) -> Option<(u8, u32, u32)> {
        let entries = self.entries;
        let start = lanes.first as usize;
        let end = start + lanes.listed as usize;
        let mut tail = lanes.starts[lanes.limit as usize] as u32;
        for entry in entries.get(start + lanes.limit as usize..end)? {
            if v < entry.cum() + entry.freq() {
                return Some((entry.symbol(), entry.cum(), entry.freq()));
            }
            tail = entry.cum() + entry.freq();
        }
        // A symbol never seen in training: the unlisted ones, in increasing
        // order, share the tail with frequency 1 each.
        let k = v.checked_sub(tail)? as usize;
        let listed = |s: u8| entries[start..end].iter().any(|x| x.symbol() == s);
        let s = (0..self.alphabet as u8).filter(|&s| !listed(s)).nth(k)?;
        Some((s, v, 1))
    }
}

impl<T: Copy + Into<u32>> NextSymbol for AnsNext<'_, T> {
    #[inline(always)]
    fn next(&mut self, _: usize, ctx: usize) -> Option<u8> {
        let x = self.x;
        let v = x & (TOTAL - 1);
        let lanes = &self.lanes[(*self.table_of.get(ctx)?).into() as usize];
        // The slot's entry: the last lane starting at or below it (lane 0
        // starts at 0). The starts increase, so that is the lane before the
        // first one above it.
        let j = first_above(&lanes.starts, v as i16) - 1;
        let (s, cum, freq) = if j < lanes.limit as usize {
            let cum = lanes.starts[j] as u32;
            (lanes.symbols[j], cum, lanes.starts[j + 1] as u32 - cum)
        } else {
            self.search(lanes, v)?
        };
        let mut x = freq * (x >> SCALE) + v - cum;
        // Renormalise without a branch: read the next word whether or not it is
        // needed (0 past the end), keep it only when the state fell below LOW.
        // One word always suffices: x >= 1 here, so x << 16 >= LOW.
        let need = x < LOW;
        let w = match self.bytes.get(self.at..self.at + 2) {
            Some(w) => u32::from(u16::from_le_bytes([w[0], w[1]])),
            None if need => return None,
            None => 0,
        };
        x = if need { x << 16 | w } else { x };
        self.at += 2 * usize::from(need);
        self.x = x;
        Some(s)
    }
}

/// The first lane whose start is above `v` (32 when none is): all 16 lanes
/// compared at once, a mask of the answers, and its trailing zeros (about 15%
/// faster decoding than the same written as a loop, which the compiler did
/// not turn into these few instructions).
#[inline(always)]
fn first_above(starts: &[i16; LANES], v: i16) -> usize {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `starts`.
    unsafe {
        use std::arch::x86_64::*;
        let v = _mm_set1_epi16(v);
        let low = _mm_loadu_si128(starts.as_ptr().cast());
        let high = _mm_loadu_si128(starts.as_ptr().add(8).cast());
        let above = _mm_packs_epi16(_mm_cmpgt_epi16(low, v), _mm_cmpgt_epi16(high, v));
        (_mm_movemask_epi8(above) as u32).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    starts.iter().position(|&c| c > v).unwrap_or(32)
}

/// How the encoder puts one symbol of one table: its frequency, its
/// cumulative frequency, and a reciprocal of the frequency so that the
/// division on the coder's chain becomes a multiplication (a 32-bit `div` is
/// the slowest step of encoding, and every board waits for the one before).
#[derive(Clone, Copy)]
struct Put {
    /// `ceil(2^(32 + shift) / freq)`: then `x / freq` is
    /// `(x * recip) >> (32 + shift)` for every 32-bit `x` (Granlund and
    /// Montgomery, "Division by invariant integers using multiplication",
    /// 1994, theorem 4.2).
    recip: u64,
    freq: u16,
    cum: u16,
    /// `ceil(log2(freq))`.
    shift: u8,
}

impl Put {
    fn new(cum: u32, freq: u32) -> Put {
        debug_assert!((1..=TOTAL).contains(&freq) && cum + freq <= TOTAL);
        let shift = u32::BITS - (freq - 1).leading_zeros();
        let recip = (1u128 << (32 + shift)).div_ceil(u128::from(freq)) as u64;
        Put {
            recip,
            freq: freq as u16,
            cum: cum as u16,
            shift: shift as u8,
        }
    }

    /// `x / freq`, for any 32-bit `x`.
    #[inline(always)]
    fn quotient(self, x: u32) -> u32 {
        ((u128::from(x) * u128::from(self.recip)) >> (32 + u32::from(self.shift))) as u32
    }
}

/// How every symbol of every table is put, for the encoder: one load per value
/// instead of a walk down the table's entries.
#[derive(Clone)]
struct Coding {
    /// `puts[t * alphabet + symbol]`, for table number `t`.
    puts: Vec<Put>,
}

/// The number of the table each context uses, in two bytes when every table
/// number fits. The decoder reads it once per board, on the chain from one
/// board to the next: at level 22 of the 6-pit game it holds 84,640 contexts,
/// and in two bytes it and the 5,352 tables' lanes (342 KB) take about the
/// 512 KB of a core's L2 cache, where in four they take a third more.
#[derive(Clone)]
enum TableOf {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl TableOf {
    fn new(table_of: Vec<u32>, tables: usize) -> TableOf {
        if tables <= usize::from(u16::MAX) + 1 {
            TableOf::Narrow(table_of.into_iter().map(|t| t as u16).collect())
        } else {
            TableOf::Wide(table_of)
        }
    }

    /// The table number of context `ctx` (which must exist).
    fn get(&self, ctx: usize) -> usize {
        match self {
            TableOf::Narrow(t) => usize::from(t[ctx]),
            TableOf::Wide(t) => t[ctx] as usize,
        }
    }
}

/// Static per-context frequency tables of one level, for rANS.
#[derive(Clone)]
pub struct AnsModel {
    shape: Shape,
    /// `tables[t]`: `(context, listed symbols with their frequencies)`, by
    /// decreasing frequency; table 0 is the level's overall table. Every
    /// symbol not listed has frequency 1.
    tables: Vec<(usize, Vec<(u8, u16)>)>,
    /// The number of the table each context uses (an index into `tables`
    /// and `lanes`).
    table_of: TableOf,
    /// The listed entries of every table, one table after another.
    entries: Vec<Entry>,
    /// Every table as the decoder reads it ([`Lanes`]), in table order.
    lanes: Vec<Lanes>,
    /// The encoder's view of the tables, built on first use (readers never
    /// need it): see [`Coding`].
    coding: OnceLock<Coding>,
}

impl std::fmt::Debug for AnsModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "AnsModel({:?}, {} tables)",
            self.shape,
            self.tables.len()
        )
    }
}

/// The bits that coding `counts` with `table` costs (unlisted symbols have
/// frequency 1).
fn coding_bits(counts: &[u64], table: &[(u8, u16)]) -> f64 {
    let mut freq = vec![1u32; counts.len()];
    for &(s, f) in table {
        freq[usize::from(s)] = u32::from(f);
    }
    counts
        .iter()
        .zip(&freq)
        .filter(|(&c, _)| c > 0)
        .map(|(&c, &f)| c as f64 * (f64::from(SCALE) - f64::from(f).log2()))
        .sum()
}

/// Whether a context's own table saves more bits on its boards than it costs
/// in the model (about 4 bits per stored byte once zstd has packed the model),
/// compared with coding them with `fallback`.
fn pays(counts: &[u64], own: &[(u8, u16)], fallback: &[(u8, u16)]) -> bool {
    let cost = 4.0 * (5 + 3 * own.len()) as f64;
    counts.iter().sum::<u64>() >= MIN_CONTEXT_COUNT
        && coding_bits(counts, fallback) - coding_bits(counts, own) > cost
}

/// Frequencies summing to `TOTAL` for the symbols counted, 1 for every symbol
/// not counted, listed by decreasing frequency.
fn normalise(counts: &[u64]) -> Vec<(u8, u16)> {
    let total: u64 = counts.iter().sum();
    let unlisted = counts.iter().filter(|&&c| c == 0).count() as u64;
    let budget = u64::from(TOTAL) - unlisted;
    let mut list: Vec<(u8, u64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(s, &c)| (s as u8, (c * budget / total).max(1)))
        .collect();
    list.sort_by_key(|&(s, f)| (std::cmp::Reverse(f), s));
    let mut sum: u64 = list.iter().map(|&(_, f)| f).sum();
    // Rounding leaves the sum a little off: settle it on the largest ones.
    let mut k = 0;
    while sum > budget {
        if list[k].1 > 1 {
            list[k].1 -= 1;
            sum -= 1;
        }
        k = (k + 1) % list.len();
    }
    if sum < budget {
        list[0].1 += budget - sum;
    }
    list.sort_by_key(|&(s, f)| (std::cmp::Reverse(f), s));
    list.into_iter().map(|(s, f)| (s, f as u16)).collect()
}

impl AnsModel {
    /// Learns the tables from whole blocks `(first board, values)` of level
    /// `id` (every value in range), with contexts of `neighbours` neighbours
    /// and `pit0_classes` pit-0 classes.
    pub fn train(
        id: LevelId,
        neighbours: usize,
        pit0_classes: usize,
        blocks: &[(u64, &[i8])],
    ) -> AnsModel {
        let shape = Shape::new(id, neighbours, pit0_classes);
        let counts = shape.count(id, blocks);
        AnsModel::from_counts(shape, &counts)
    }

    /// Learns the tables from symbol counts per context.
    pub(crate) fn from_counts(shape: Shape, counts: &Counts) -> AnsModel {
        let (global, counts) = counts;
        let a = shape.alphabet;
        let global = if global.iter().all(|&c| c == 0) {
            vec![1; a]
        } else {
            global.clone()
        };
        let global_table = normalise(&global);
        // Parent contexts (neighbours 1 and 2 only) back off rare contexts.
        let parents = shape.parents();
        let mut parent_counts: HashMap<usize, Vec<u64>> = HashMap::new();
        for (ctx, c) in counts {
            let p = parent_counts
                .entry(ctx % parents)
                .or_insert_with(|| vec![0; a]);
            p.iter_mut().zip(c).for_each(|(x, y)| *x += y);
        }
        let mut parent_tables: HashMap<usize, Vec<(u8, u16)>> = HashMap::new();
        for (p, c) in &parent_counts {
            let own = normalise(c);
            if pays(c, &own, &global_table) {
                parent_tables.insert(*p, own);
            }
        }
        let mut tables: Vec<(usize, Vec<(u8, u16)>)> = Vec::new();
        for (ctx, c) in counts {
            let fallback = parent_tables.get(&(ctx % parents)).unwrap_or(&global_table);
            let own = normalise(c);
            if pays(c, &own, fallback) {
                tables.push((*ctx, own));
            }
        }
        let contexts = shape.contexts();
        tables.extend(parent_tables.into_iter().map(|(p, t)| (contexts + p, t)));
        // Keep the model within what a reader accepts: the most used tables.
        let room = (MAX_MODEL_BYTES - 8) / (5 + 3 * a) - 1;
        if tables.len() > room {
            let weight = |ctx: usize| match counts.get(&ctx) {
                Some(c) => c.iter().sum::<u64>(),
                None => u64::MAX, // parents first
            };
            tables.sort_unstable_by_key(|(ctx, _)| std::cmp::Reverse(weight(*ctx)));
            tables.truncate(room);
        }
        tables.sort_unstable_by_key(|(ctx, _)| *ctx);
        tables.insert(0, (0, global_table));
        AnsModel::install(shape, tables)
    }

    fn install(shape: Shape, tables: Vec<(usize, Vec<(u8, u16)>)>) -> AnsModel {
        let mut starts = Vec::with_capacity(tables.len());
        let mut entries = Vec::new();
        for (_, list) in &tables {
            starts.push(entries.len() as u32);
            let mut cum = 0u32;
            for &(s, f) in list {
                entries.push(Entry::new(cum, u32::from(f), s));
                cum += u32::from(f);
            }
        }
        // Each context uses its own table, else its parent's, else table 0.
        let contexts = shape.contexts();
        let parents = shape.parents();
        let mut parent_table = vec![0u32; parents];
        for (t, (ctx, _)) in tables.iter().enumerate().skip(1) {
            if *ctx >= contexts {
                parent_table[*ctx - contexts] = t as u32;
            }
        }
        let mut table_of: Vec<u32> = (0..contexts).map(|c| parent_table[c % parents]).collect();
        for (t, (ctx, _)) in tables.iter().enumerate().skip(1) {
            if *ctx < contexts {
                table_of[*ctx] = t as u32;
            }
        }
        let lanes: Vec<Lanes> = tables
            .iter()
            .zip(&starts)
            .map(|((_, list), &start)| Lanes::new(&entries, start, list.len()))
            .collect();
        AnsModel {
            shape,
            tables,
            table_of: TableOf::new(table_of, lanes.len()),
            entries,
            lanes,
            coding: OnceLock::new(),
        }
    }

    /// `3+p0` and the like.
    pub fn describe(&self) -> String {
        self.shape.describe()
    }

    /// The serialised model: the shape, `u32` number of tables, then per table
    /// `u32` context, `u8` number of listed symbols and per symbol `u8` symbol
    /// and `u16` frequency; all packed as `u32` length + one zstd frame. Table
    /// 0 is the level's overall table (its context is ignored); contexts from
    /// `Shape::contexts()` on are *parents* (neighbours 1 and 2 only), whose
    /// tables serve the contexts under them that have none of their own.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut raw = self.shape.header().to_vec();
        raw.extend_from_slice(&(self.tables.len() as u32).to_le_bytes());
        for (ctx, list) in &self.tables {
            raw.extend_from_slice(&(*ctx as u32).to_le_bytes());
            raw.push(list.len() as u8);
            for &(s, f) in list {
                raw.push(s);
                raw.extend_from_slice(&f.to_le_bytes());
            }
        }
        pack(&raw)
    }

    /// Reads a model written by [`AnsModel::to_bytes`] for level `id`.
    ///
    /// # Errors
    /// A description of the first inconsistency: lengths, contexts out of
    /// order or range, symbols out of range or repeated, frequencies that do
    /// not add up.
    pub fn parse(id: LevelId, bytes: &[u8]) -> Result<AnsModel, Malformed> {
        let raw = unpack(bytes)?;
        let shape = Shape::parse(id, &raw)?;
        if raw.len() < 8 {
            return Err(malformed!("model ends before its table count"));
        }
        let count = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]) as usize;
        // Table contexts: 0..contexts for contexts, then the parents.
        let contexts = shape.contexts() + shape.parents();
        let a = shape.alphabet;
        if count == 0 || count > contexts + 1 {
            return Err(malformed!(
                "model has {count} tables for {contexts} contexts"
            ));
        }
        let mut tables = Vec::with_capacity(count.min(raw.len() / 5));
        let mut at = 8;
        let mut previous: Option<usize> = None;
        for t in 0..count {
            if at + 5 > raw.len() {
                return Err(malformed!("model ends inside table {t}"));
            }
            let ctx = u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]) as usize;
            let n = usize::from(raw[at + 4]);
            at += 5;
            if t > 0 && (ctx >= contexts || previous.is_some_and(|p| ctx <= p)) {
                return Err(malformed!(
                    "model table {t} has context {ctx} out of order or range"
                ));
            }
            if t > 0 {
                previous = Some(ctx);
            }
            if n == 0 || n > a || at + 3 * n > raw.len() {
                return Err(malformed!("model table {t} of {n} symbols does not fit"));
            }
            let mut seen = vec![false; a];
            let mut list = Vec::with_capacity(n);
            let mut sum = (a - n) as u32;
            for k in 0..n {
                let s = raw[at + 3 * k];
                let f = u16::from_le_bytes([raw[at + 3 * k + 1], raw[at + 3 * k + 2]]);
                if usize::from(s) >= a || seen[usize::from(s)] || f == 0 {
                    return Err(malformed!(
                        "model table {t} repeats or exceeds symbol {s}, or gives it frequency 0"
                    ));
                }
                seen[usize::from(s)] = true;
                sum += u32::from(f);
                list.push((s, f));
            }
            if sum != TOTAL {
                return Err(malformed!(
                    "model table {t}'s frequencies add up to {sum}, not {TOTAL}"
                ));
            }
            at += 3 * n;
            tables.push((if t == 0 { 0 } else { ctx }, list));
        }
        if at != raw.len() {
            return Err(malformed!("{} stray bytes after the model", raw.len() - at));
        }
        Ok(AnsModel::install(shape, tables))
    }

    /// The shape of the model's contexts.
    /// Drops the encoder's view of the tables (built again on the next
    /// encode): a model kept aside need not hold it.
    pub(crate) fn forget_coding(&mut self) {
        self.coding = OnceLock::new();
    }

    pub(crate) fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The frame of a block of `len` boards from board `start` of level
    /// `id`, cut into segments of `segment_boards` (see
    /// [`super::codec::segment_bytes`]) unless it fits in one: board `b`'s
    /// symbol is `symbol_of(b, context)`, as in [`AnsModel::encode_symbols`].
    pub(crate) fn encode_frame(
        &self,
        id: LevelId,
        start: u64,
        len: usize,
        segment_boards: usize,
        symbol_of: &(impl Fn(u64, usize) -> u8 + ?Sized),
    ) -> Vec<u8> {
        let stream = |first: u64, len: usize| {
            self.encode_symbols(id, first, len, &mut |i, ctx| {
                Some(symbol_of(first + i as u64, ctx))
            })
        };
        if len <= segment_boards {
            return stream(start, len);
        }
        // The directory first (filled in as the streams come), then the
        // streams, each appended as it is made.
        let count = len.div_ceil(segment_boards);
        let mut frame = vec![0u8; 2 * (count - 1)];
        for k in 0..count {
            let first = k * segment_boards;
            let stream = stream(start + first as u64, segment_boards.min(len - first));
            if k + 1 < count {
                // A segment of at most MAX_SEGMENT_BOARDS boards takes at
                // most 2 bytes per board and its state: a u16.
                let len = u16::try_from(stream.len()).expect("segments fit 64 KiB");
                frame[2 * k..2 * k + 2].copy_from_slice(&len.to_le_bytes());
            }
            frame.extend_from_slice(&stream);
        }
        frame
    }

    /// The rANS stream of the values of boards `start..` of level `id` (values
    /// in range).
    pub fn encode_block(&self, id: LevelId, start: u64, values: &[i8]) -> Vec<u8> {
        self.encode_symbols(id, start, values.len(), &mut |i, _| {
            Some(symbol(values[i], id.seeds))
        })
    }

    /// The rANS stream of `len` boards from board `start` of level `id`,
    /// whose symbols `source` gives board by board (`i` from 0) in the
    /// context the decoder will see, so that it may choose each symbol from
    /// its context (the lower bounds of [`super::bounds::BoundChooser`]).
    /// The source must give a symbol below the alphabet for every board.
    pub(crate) fn encode_symbols(
        &self,
        id: LevelId,
        start: u64,
        len: usize,
        source: &mut impl NextSymbol,
    ) -> Vec<u8> {
        let a = self.shape.alphabet;
        // Every board's symbol and context, from the decoder's walk.
        let mut sym = vec![a as u8; len + 1];
        let mut contexts = vec![0u32; len];
        let known = self.shape.chain(id, start, len, &mut sym, &mut |i, ctx| {
            contexts[i] = ctx as u32;
            source.next(i, ctx)
        });
        debug_assert!(known.is_ok(), "known symbols are never corrupt");
        let coding = self.coding.get_or_init(|| self.coding());
        let mut x = LOW;
        // At most one word per value; `n` of them are written. (Written
        // without a branch: whether a value pushes a word is unpredictable.)
        let mut words = vec![0u16; len + 1];
        let mut n = 0;
        for (&s, &ctx) in sym[1..].iter().zip(&contexts).rev() {
            let table = self.table_of.get(ctx as usize);
            let put = coding.puts[table * a + usize::from(s)];
            // The state must be below 2^18 * freq before the symbol goes in.
            // It is below 2^32, so one 16-bit word out is always enough (and
            // with a single symbol, frequency TOTAL, none is ever needed).
            let out = u64::from(x) >= (u64::from(LOW >> SCALE) << 16) * u64::from(put.freq);
            words[n] = x as u16;
            n += usize::from(out);
            x >>= 16 * u32::from(out);
            // x = (x / freq) * TOTAL + x % freq + cum.
            let q = put.quotient(x);
            x += u32::from(put.cum) + q * (TOTAL - u32::from(put.freq));
        }
        words.truncate(n);
        let mut out = Vec::with_capacity(4 + 2 * words.len());
        out.extend_from_slice(&x.to_le_bytes());
        for w in words.iter().rev() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The encoder's tables ([`Coding`]) of every table of the model.
    fn coding(&self) -> Coding {
        let a = self.shape.alphabet;
        let puts = self
            .lanes
            .iter()
            .flat_map(|t| self.coding_table(t.first as usize, t.listed as usize, a))
            .map(|(cum, freq)| Put::new(cum, freq))
            .collect();
        Coding { puts }
    }

    /// `(cum, freq)` by symbol for the table of `listed` entries from entry
    /// `first` on.
    fn coding_table(&self, first: usize, listed: usize, a: usize) -> Vec<(u32, u32)> {
        let mut table = vec![(0, 1); a];
        let mut is_listed = vec![false; a];
        let mut tail = 0;
        for entry in &self.entries[first..first + listed] {
            table[usize::from(entry.symbol())] = (entry.cum(), entry.freq());
            is_listed[usize::from(entry.symbol())] = true;
            tail = entry.cum() + entry.freq();
        }
        let unlisted = is_listed.iter().enumerate().filter(|(_, &l)| !l);
        for (cum, (s, _)) in (tail..).zip(unlisted) {
            table[s] = (cum, 1);
        }
        table
    }

    /// Decodes `sym.len() - 1` symbols from `bytes` (past the initial state
    /// `x`) with the table numbers `table_of`; returns how that went and the
    /// final state and read position.
    #[inline(always)]
    fn decode_with<T: Copy + Into<u32>>(
        &self,
        id: LevelId,
        start: u64,
        bytes: &[u8],
        x: u32,
        table_of: &[T],
        sym: &mut [u8],
    ) -> (Result<(), usize>, u32, usize) {
        let mut next = AnsNext {
            x,
            at: 4,
            bytes,
            table_of,
            lanes: &self.lanes,
            entries: &self.entries,
            alphabet: self.shape.alphabet,
        };
        let len = sym.len() - 1;
        let decoded = self.shape.chain(id, start, len, sym, &mut next);
        (decoded, next.x, next.at)
    }

    /// Decodes the first `out.len()` values of the block of boards `start..`
    /// of level `id` from its stream `bytes`. When `out` is the whole block
    /// (`whole`), the stream must also end exactly in the initial state.
    ///
    /// # Errors
    /// A description of the corruption: a stream too short, a final state or
    /// length that does not match.
    pub fn decode_block(
        &self,
        id: LevelId,
        start: u64,
        bytes: &[u8],
        out: &mut [i8],
        whole: bool,
    ) -> Result<(), Malformed> {
        if bytes.len() < 4 || bytes.len() & 1 != 0 {
            return Err(malformed!(
                "rANS stream of {} bytes (at least 4, and even)",
                bytes.len()
            ));
        }
        let a = self.shape.alphabet;
        let mut sym = vec![a as u8; out.len() + 1];
        let x = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let (decoded, x, at) = match &self.table_of {
            TableOf::Narrow(table_of) => self.decode_with(id, start, bytes, x, table_of, &mut sym),
            TableOf::Wide(table_of) => self.decode_with(id, start, bytes, x, table_of, &mut sym),
        };
        if let Err(i) = decoded {
            return Err(malformed!(
                "rANS stream ends early or is damaged at board {}",
                start + i as u64
            ));
        }
        if whole && (x != LOW || at != bytes.len()) {
            return Err(malformed!(
                "rANS stream does not end where it should (state {x:#x}, {} of {} bytes read)",
                at,
                bytes.len()
            ));
        }
        let seeds = id.seeds as i32;
        for (o, &s) in out.iter_mut().zip(&sym[1..]) {
            *o = (i32::from(s) - seeds) as i8;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::rules::Rules;
    use crate::index::Index;

    #[test]
    fn normalised_tables_add_up() {
        for counts in [
            vec![1u64, 0, 0, 5],
            vec![1_000_000, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            vec![7],
            (0..97).map(|i| i * i).collect(),
            (0..97).map(|_| 1).collect(),
        ] {
            let list = normalise(&counts);
            let unlisted = counts.iter().filter(|&&c| c == 0).count() as u32;
            let sum: u32 = list.iter().map(|&(_, f)| u32::from(f)).sum::<u32>() + unlisted;
            assert_eq!(sum, TOTAL, "{counts:?}");
            assert!(list.iter().all(|&(_, f)| f >= 1));
            assert!(list.windows(2).all(|w| w[0].1 >= w[1].1));
        }
    }

    /// The reciprocal gives the quotient of the division it replaces, for
    /// every frequency and 32-bit states at and around its multiples.
    #[test]
    fn reciprocals_divide_exactly() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for freq in 1..=TOTAL {
            let put = Put::new(TOTAL - freq, freq);
            let top = u32::MAX / freq;
            let mut xs = vec![
                0,
                1,
                freq - 1,
                freq,
                u32::MAX,
                u32::MAX - 1,
                top * freq,
                top * freq - 1,
            ];
            for _ in 0..16 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let k = ((seed >> 32) % (u64::from(top) + 1)) as u32;
                xs.extend([k * freq, (k * freq).saturating_sub(1), (seed >> 16) as u32]);
            }
            for x in xs {
                assert_eq!(put.quotient(x), x / freq, "{x} / {freq}");
            }
        }
    }

    #[test]
    fn first_above_finds_the_first_lane_above() {
        let mut starts = [i16::MAX; LANES];
        for (k, s) in starts.iter_mut().enumerate().take(11) {
            *s = (k * k * 37) as i16;
        }
        for v in (0..TOTAL as i16).step_by(7) {
            let expected = starts.iter().position(|&c| c > v).unwrap_or(32);
            assert_eq!(first_above(&starts, v), expected, "v = {v}");
        }
        // Every lane at or below: none above.
        let full: [i16; LANES] = std::array::from_fn(|k| k as i16);
        assert_eq!(first_above(&full, 100), 32);
    }

    /// Tables listing more symbols than the decoder's lanes hold, and
    /// symbols no table lists, decode through the search past the lanes.
    #[test]
    fn wide_tables_round_trip() {
        let id = LevelId::new(Rules::default(), 24);
        // A fixed pseudo-random spread over -24..=12 for training, so that
        // tables list up to 37 symbols and 13..=24 are never listed.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = |range: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % range) as i8
        };
        let train: Vec<i8> = (0..20_000).map(|_| draw(37) - 24).collect();
        let model = AnsModel::train(id, 3, 4, &[(0, &train[..])]);
        let model = AnsModel::parse(id, &model.to_bytes()).unwrap();
        assert!(model.tables.iter().any(|(_, list)| list.len() > LANES));
        let block: Vec<i8> = (0..4096).map(|_| draw(49) - 24).collect();
        assert!(block.iter().any(|&v| v > 12));
        let bytes = model.encode_block(id, 0, &block);
        let mut out = vec![0i8; block.len()];
        model.decode_block(id, 0, &bytes, &mut out, true).unwrap();
        assert_eq!(out, block);
    }

    #[test]
    fn blocks_round_trip_including_unseen_symbols() {
        let id = LevelId::new(Rules::default(), 9);
        let values: Vec<i8> = Index::for_pits(6)
            .boards(9)
            .map(|b| (i16::from(b.pit(0)) - i16::from(b.pit(8))).clamp(-9, 9) as i8)
            .collect();
        for neighbours in 1..=3 {
            // Trained on a part only: other blocks hold contexts and symbols
            // the tables never saw.
            let model = AnsModel::train(id, neighbours, 4, &[(0, &values[..2000])]);
            let model = AnsModel::parse(id, &model.to_bytes()).unwrap();
            assert!(matches!(model.table_of, TableOf::Narrow(_)));
            // The same tables with four-byte table numbers, as a level with more
            // than 65,536 tables would have.
            let mut wide = model.clone();
            wide.table_of = TableOf::Wide(
                (0..model.shape.contexts())
                    .map(|c| model.table_of.get(c) as u32)
                    .collect(),
            );
            for start in [0usize, 2000, 100_000, values.len() - 500] {
                let end = (start + 4096).min(values.len());
                let mut block = values[start..end].to_vec();
                block[3] = 9; // surely rare
                let bytes = model.encode_block(id, start as u64, &block);
                let mut out = vec![0i8; block.len()];
                model
                    .decode_block(id, start as u64, &bytes, &mut out, true)
                    .unwrap();
                assert_eq!(out, block);
                assert_eq!(wide.encode_block(id, start as u64, &block), bytes);
                let mut out_wide = vec![0i8; block.len()];
                wide.decode_block(id, start as u64, &bytes, &mut out_wide, true)
                    .unwrap();
                assert_eq!(out_wide, block);
                let mut part = vec![0i8; 100];
                model
                    .decode_block(id, start as u64, &bytes, &mut part, false)
                    .unwrap();
                assert_eq!(part, &block[..100]);
                // Damage is caught by the end state, never a panic.
                for cut in [4, (bytes.len() / 2) & !1, bytes.len() - 2] {
                    assert!(model
                        .decode_block(id, start as u64, &bytes[..cut], &mut out, true)
                        .is_err());
                }
                let mut flipped = bytes.clone();
                flipped[bytes.len() / 2] ^= 0x40;
                let _ = model.decode_block(id, start as u64, &flipped, &mut out, true);
            }
        }
    }
}
