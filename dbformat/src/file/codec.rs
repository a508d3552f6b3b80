//! Value encodings: how the values of one block become the bytes stored for
//! it, and back.
//!
//! - [`Encoding::Raw`]: one signed byte per board, as in the published files,
//!   compressed with zstd.
//! - [`Encoding::ContextRank`]: each value replaced by its rank in a per-level
//!   frequency order chosen by its context ([`super::context`]), compressed
//!   with zstd. In context the value is usually the most frequent one, so the
//!   ranks are mostly 0 and 1.
//! - [`Encoding::ContextAns`]: each value entropy-coded with rANS under its
//!   context's per-level probability table ([`super::ans`]); no zstd.
//!
//! The per-level orders or tables (the *model*) are stored once, in the file's
//! model section ([`Model::to_bytes`]). Decoding a board of a context encoding
//! costs one add and a table lookup on the chain from the previous board,
//! which is what a lookup pays, for the boards of its block up to the one
//! asked for.

use std::fmt;

use super::ans::AnsModel;
use super::context::{
    pack, symbol, unpack, Counts, NextSymbol, Shape, TrainingBlocks, MAX_MODEL_BYTES, PIT0_CLASSES,
};
use super::layout::{COMPRESSION_NONE, COMPRESSION_ZSTD};
use super::{zstd_ctx, LevelId};
use crate::error::{malformed, Malformed};

pub use super::context::{
    class3, neighbour_offsets, usable_neighbours, CLASSES3, MAX_NEIGHBOURS, MAX_PIT0_CLASSES,
};

/// How a level's values are turned into the bytes of its blocks (the header's
/// "value encoding" field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Code 0: the value itself as a signed byte; blocks are zstd frames.
    Raw,
    /// Code 1: the value's rank in its context's order; blocks are zstd frames.
    ContextRank,
    /// Code 2: the value rANS-coded with its context's probabilities; blocks
    /// are rANS streams.
    ContextAns,
}

impl Encoding {
    /// Every encoding, in code order.
    pub const ALL: [Encoding; 3] = [Encoding::Raw, Encoding::ContextRank, Encoding::ContextAns];

    /// The header code.
    pub fn code(self) -> u8 {
        match self {
            Encoding::Raw => 0,
            Encoding::ContextRank => 1,
            Encoding::ContextAns => 2,
        }
    }

    /// The encoding with header code `code`, or `None` for an unknown code.
    pub fn from_code(code: u8) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.code() == code)
    }

    /// The header's compression code that goes with this encoding: zstd for
    /// raw and context-rank, none (the encoding is the entropy coder) for
    /// context-ans.
    pub fn compression(self) -> u8 {
        match self {
            Encoding::Raw | Encoding::ContextRank => COMPRESSION_ZSTD,
            Encoding::ContextAns => COMPRESSION_NONE,
        }
    }

    /// `raw`, `context-rank` or `context-ans`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Raw => "raw",
            Encoding::ContextRank => "context-rank",
            Encoding::ContextAns => "context-ans",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level's encoding together with what it needs to decode (the model).
#[derive(Clone, Debug)]
pub enum Model {
    /// See [`Encoding::Raw`].
    Raw,
    /// See [`Encoding::ContextRank`].
    ContextRank(RankModel),
    /// See [`Encoding::ContextAns`].
    ContextAns(AnsModel),
}

/// Per-context frequency orders of the values of one level.
#[derive(Clone)]
pub struct RankModel {
    shape: Shape,
    /// `slot_of[context]`: the order to use, 0 being the level's overall order.
    slot_of: Vec<u32>,
    /// `order[slot * alphabet + rank]`: the symbol of that rank.
    order: Vec<u8>,
    /// `rank[slot * alphabet + symbol]`: the rank of that symbol.
    rank: Vec<u8>,
    /// `fast[context * FAST + rank]`: the symbols of the first [`FAST`] ranks
    /// (nearly every board), one cache line per context.
    fast: Vec<u8>,
}

/// Ranks decoded from the dense per-context table.
const FAST: usize = 4;

/// Contexts need at least this many training boards to get their own order.
const MIN_CONTEXT_COUNT: u64 = 8;

impl fmt::Debug for RankModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RankModel({:?}, {} orders)",
            self.shape,
            self.order.len() / self.shape.alphabet.max(1)
        )
    }
}

impl RankModel {
    /// Learns the orders from symbol counts per context (see [`Shape::count`]).
    pub(crate) fn from_counts(shape: Shape, counts: &Counts) -> RankModel {
        let alphabet = shape.alphabet;
        let (global, counts) = counts;
        let mut contexts: Vec<(usize, &Vec<u64>)> = counts
            .iter()
            .filter(|(_, c)| c.iter().sum::<u64>() >= MIN_CONTEXT_COUNT)
            .map(|(ctx, c)| (*ctx, c))
            .collect();
        // Keep the model within what a reader accepts: the most used contexts.
        let room = (MAX_MODEL_BYTES - 8) / (5 + alphabet) - 1;
        if contexts.len() > room {
            contexts.sort_unstable_by_key(|(_, c)| std::cmp::Reverse(c.iter().sum::<u64>()));
            contexts.truncate(room);
        }
        contexts.sort_unstable_by_key(|(ctx, _)| *ctx);
        let mut lists = vec![(usize::MAX, order_of(global))];
        lists.extend(contexts.iter().map(|(ctx, c)| (*ctx, order_of(c))));
        RankModel::install(shape, &lists)
    }

    /// Builds the lookup tables from `(context, symbols by rank)` lists; the
    /// first list is the overall order (its context is ignored). Symbols
    /// missing from a list follow it in increasing order.
    fn install(shape: Shape, lists: &[(usize, Vec<u8>)]) -> RankModel {
        let a = shape.alphabet;
        let mut slot_of = vec![0u32; shape.contexts()];
        let mut order = vec![0u8; lists.len() * a];
        let mut rank = vec![0u8; lists.len() * a];
        for (slot, (ctx, list)) in lists.iter().enumerate() {
            if slot > 0 {
                slot_of[*ctx] = slot as u32;
            }
            let mut seen = vec![false; a];
            let mut full: Vec<u8> = list.clone();
            for &s in list {
                seen[usize::from(s)] = true;
            }
            full.extend((0..a as u8).filter(|&s| !seen[usize::from(s)]));
            for (r, &s) in full.iter().enumerate() {
                order[slot * a + r] = s;
                rank[slot * a + usize::from(s)] = r as u8;
            }
        }
        let fast = slot_of
            .iter()
            .flat_map(|&slot| {
                let first = slot as usize * a;
                (0..FAST).map(move |r| if r < a { first + r } else { first })
            })
            .map(|at| order[at])
            .collect();
        RankModel {
            shape,
            slot_of,
            order,
            rank,
            fast,
        }
    }

    /// The lists of [`RankModel::install`] back, for serialisation.
    fn lists(&self) -> Vec<(usize, Vec<u8>)> {
        let a = self.shape.alphabet;
        let mut out = vec![(0, self.order[..a].to_vec())];
        for (ctx, &slot) in self.slot_of.iter().enumerate() {
            if slot > 0 {
                let s = slot as usize;
                out.push((ctx, self.order[s * a..(s + 1) * a].to_vec()));
            }
        }
        out
    }

    fn encode(&self, id: LevelId, start: u64, values: &[i8], out: &mut Vec<u8>) {
        let first = out.len();
        out.resize(first + values.len(), 0);
        let a = self.shape.alphabet;
        let mut sym = vec![a as u8; values.len() + 1];
        let ranked = self
            .shape
            .chain(id, start, values.len(), &mut sym, &mut |i, ctx| {
                let s = symbol(values[i], id.seeds);
                let slot = self.slot_of[ctx] as usize;
                out[first + i] = self.rank[slot * a + usize::from(s)];
                Some(s)
            });
        debug_assert!(ranked.is_ok(), "known symbols are never corrupt");
    }

    fn decode(
        &self,
        id: LevelId,
        start: u64,
        ranks: &[u8],
        out: &mut [i8],
    ) -> Result<(), Malformed> {
        let a = self.shape.alphabet;
        let mut sym = vec![a as u8; ranks.len() + 1];
        let mut next = RankNext {
            ranks,
            fast: &self.fast,
            order: &self.order,
            slot_of: &self.slot_of,
            alphabet: a,
        };
        let decoded = self
            .shape
            .chain(id, start, ranks.len(), &mut sym, &mut next);
        if let Err(i) = decoded {
            return Err(malformed!(
                "rank {} at board {} is outside 0..{a}",
                ranks[i],
                start + i as u64
            ));
        }
        let seeds = id.seeds as i32;
        for (o, &s) in out.iter_mut().zip(&sym[1..]) {
            *o = (i32::from(s) - seeds) as i8;
        }
        Ok(())
    }
}

/// The symbols of a context-rank block, from its ranks.
struct RankNext<'a> {
    ranks: &'a [u8],
    fast: &'a [u8],
    order: &'a [u8],
    slot_of: &'a [u32],
    alphabet: usize,
}

impl NextSymbol for RankNext<'_> {
    #[inline(always)]
    fn next(&mut self, i: usize, ctx: usize) -> Option<u8> {
        let r = usize::from(self.ranks[i]);
        if r < FAST {
            Some(self.fast[ctx * FAST + r])
        } else if r < self.alphabet {
            Some(self.order[self.slot_of[ctx] as usize * self.alphabet + r])
        } else {
            None
        }
    }
}

/// Symbols by decreasing count, ties by symbol; symbols never seen are left out.
fn order_of(counts: &[u64]) -> Vec<u8> {
    let mut symbols: Vec<u8> = (0..counts.len() as u8)
        .filter(|&s| counts[usize::from(s)] > 0)
        .collect();
    symbols.sort_by_key(|&s| (std::cmp::Reverse(counts[usize::from(s)]), s));
    symbols
}

impl Model {
    /// Drops what only the encoder needs, built on the next encode (see
    /// [`AnsModel`]): for a model kept aside while another encodes.
    pub(crate) fn forget_coding(&mut self) {
        if let Model::ContextAns(m) = self {
            m.forget_coding();
        }
    }

    /// The encoding this model implements.
    pub fn encoding(&self) -> Encoding {
        match self {
            Model::Raw => Encoding::Raw,
            Model::ContextRank(_) => Encoding::ContextRank,
            Model::ContextAns(_) => Encoding::ContextAns,
        }
    }

    /// A short description: `raw`, `context-rank/3+p0`, `context-ans/2+p0`
    /// (neighbours used, and whether pit 0 is part of the context).
    pub fn describe(&self) -> String {
        match self {
            Model::Raw => "raw".into(),
            Model::ContextRank(m) => format!("context-rank/{}", m.shape.describe()),
            Model::ContextAns(m) => format!("context-ans/{}", m.describe()),
        }
    }

    /// A context-rank model with `neighbours` neighbours (and pit 0) learnt
    /// from whole blocks of level `id` ([`TrainingBlocks`]). Every value must
    /// lie in `-seeds..=seeds` (the writer checks before calling).
    pub fn train<'b>(
        id: LevelId,
        neighbours: usize,
        blocks: &(impl TrainingBlocks<'b> + ?Sized),
    ) -> Model {
        let shape = Shape::new(id, neighbours, PIT0_CLASSES);
        let counts = shape.count(id, blocks);
        Model::ContextRank(RankModel::from_counts(shape, &counts))
    }

    /// A context-ans model, learnt as [`Model::train`] learns a context-rank
    /// one. Probabilities need more training data than orders: give it many
    /// blocks (the writer gives it the whole level when it has it).
    pub fn train_ans<'b>(
        id: LevelId,
        neighbours: usize,
        blocks: &(impl TrainingBlocks<'b> + ?Sized),
    ) -> Model {
        let shape = Shape::new(id, neighbours, PIT0_CLASSES);
        let counts = shape.count(id, blocks);
        Model::ContextAns(AnsModel::from_counts(shape, &counts))
    }

    /// The context models a writer chooses among, made one at a time from
    /// the counts over its training blocks with `most` neighbours
    /// (`Shape::count`; counts of several processes' blocks add up to those
    /// of all the blocks), narrowed exactly for fewer neighbours by
    /// `Shape::narrow_counts`: for 1 to `most` neighbours, context-rank (when
    /// `with_rank`), then context-ans. A caller keeping only the best holds a
    /// few models at once, not all (at 21 seeds they take some 14 MiB
    /// together).
    pub(crate) fn candidates_from_counts(
        id: LevelId,
        most: usize,
        counts: &Counts,
        with_rank: bool,
    ) -> impl Iterator<Item = Model> + '_ {
        let widest = Shape::new(id, most, PIT0_CLASSES);
        (1..=most).flat_map(move |k| {
            let shape = Shape::new(id, k, PIT0_CLASSES);
            let mine = if k == most {
                std::borrow::Cow::Borrowed(counts)
            } else {
                std::borrow::Cow::Owned(shape.narrow_counts(&widest, counts))
            };
            let rank =
                with_rank.then(|| Model::ContextRank(RankModel::from_counts(shape.clone(), &mine)));
            let ans = Model::ContextAns(AnsModel::from_counts(shape, &mine));
            rank.into_iter().chain(std::iter::once(ans))
        })
    }

    /// The model section's bytes (empty for [`Model::Raw`]).
    ///
    /// A context-rank model is: `u8` neighbours (1..=3), `u8` pit-0 classes
    /// (1..=8), `u16` alphabet (`2 * seeds + 1`; symbol = value + seeds), `u32`
    /// number of lists, then per list `u32` context, `u8` length and that many
    /// symbols by rank (the first list is the overall order, used for contexts
    /// without a list; its context field is ignored); symbols left out of a list
    /// follow it in increasing order. The whole is stored as `u32` length + one
    /// zstd frame. A context-ans model: see [`AnsModel::to_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let m = match self {
            Model::Raw => return Vec::new(),
            Model::ContextAns(m) => return m.to_bytes(),
            Model::ContextRank(m) => m,
        };
        let lists = m.lists();
        let mut raw = m.shape.header().to_vec();
        raw.extend_from_slice(&(lists.len() as u32).to_le_bytes());
        for (ctx, list) in &lists {
            // A strictly increasing tail is what `install` implies; leave it out.
            let mut keep = list.len().saturating_sub(1);
            while keep > 0 && list[keep - 1] < list[keep] {
                keep -= 1;
            }
            raw.extend_from_slice(&(*ctx as u32).to_le_bytes());
            raw.push(keep as u8);
            raw.extend_from_slice(&list[..keep]);
        }
        pack(&raw)
    }

    /// Reads a model section written by [`Model::to_bytes`] for `encoding` and
    /// level `id`.
    ///
    /// # Errors
    /// A description of the first inconsistency (bad length, zstd error,
    /// unknown context, symbol out of range, repeated symbol, frequencies that
    /// do not add up).
    pub fn parse(encoding: Encoding, id: LevelId, bytes: &[u8]) -> Result<Model, Malformed> {
        match encoding {
            Encoding::Raw if bytes.is_empty() => Ok(Model::Raw),
            Encoding::Raw => Err(malformed!(
                "raw encoding with a {}-byte model section (expected none)",
                bytes.len()
            )),
            Encoding::ContextRank => parse_rank(id, bytes).map(Model::ContextRank),
            Encoding::ContextAns => AnsModel::parse(id, bytes).map(Model::ContextAns),
        }
    }

    /// The bytes stored for a block: the values of boards `start..` of level
    /// `id` (in range), encoded and, for the zstd encodings, compressed at
    /// `zstd_level`. A context-ans block of more than `segment_boards` boards
    /// is cut into segments of that many, coded independently (see
    /// [`segment_bytes`]); the zstd encodings ignore `segment_boards`.
    ///
    /// # Errors
    /// zstd's error (allocation failure only, in practice).
    pub fn encode_frame(
        &self,
        id: LevelId,
        start: u64,
        values: &[i8],
        zstd_level: i32,
        segment_boards: usize,
    ) -> std::io::Result<Vec<u8>> {
        match self {
            Model::ContextAns(m) => {
                Ok(
                    m.encode_frame(id, start, values.len(), segment_boards, &|board, _| {
                        symbol(values[(board - start) as usize], id.seeds)
                    }),
                )
            }
            _ => {
                let mut bytes = Vec::with_capacity(values.len());
                self.encode_block(id, start, values, &mut bytes);
                zstd_ctx::compress(&bytes, zstd_level)
            }
        }
    }

    /// Decodes the first `out.len()` values of a stored block of `block_len`
    /// boards starting at board `start`, cut into segments of
    /// `segment_boards` (values depend only on earlier ones of their segment,
    /// so a prefix can be decoded alone).
    ///
    /// # Errors
    /// A description of the corruption: a frame that does not decompress to
    /// `block_len` bytes, a rank or value out of range, a segment directory
    /// that does not fit, a rANS stream that does not end as it should.
    pub fn decode_frame(
        &self,
        id: LevelId,
        start: u64,
        frame: &[u8],
        block_len: usize,
        segment_boards: usize,
        out: &mut [i8],
    ) -> Result<(), Malformed> {
        match self {
            Model::ContextAns(m) => {
                // The directory is read once for all the segments (reading it
                // per segment would cost the square of their number).
                let segment_boards = segment_boards.max(1);
                let count = block_len.div_ceil(segment_boards);
                let streams = segment_streams(frame, count)?;
                for (k, (part, stream)) in out.chunks_mut(segment_boards).zip(streams).enumerate() {
                    let first = k * segment_boards;
                    let whole = part.len() == (block_len - first).min(segment_boards);
                    m.decode_block(id, start + first as u64, stream, part, whole)?;
                }
                Ok(())
            }
            _ => {
                let mut bytes = vec![0u8; block_len];
                zstd_ctx::decompress_exact(frame, &mut bytes)?;
                let len = out.len();
                self.decode_block(id, start, &bytes[..len], out)
            }
        }
    }

    /// Decodes the first `out.len()` values of segment `segment` of a stored
    /// context-ans block (as [`Model::decode_frame`]); for the other
    /// encodings, whose blocks are one segment (number 0), of the block.
    ///
    /// # Errors
    /// As [`Model::decode_frame`].
    #[allow(clippy::too_many_arguments)]
    pub fn decode_segment(
        &self,
        id: LevelId,
        block_start: u64,
        frame: &[u8],
        block_len: usize,
        segment_boards: usize,
        segment: usize,
        out: &mut [i8],
    ) -> Result<(), Malformed> {
        let Model::ContextAns(m) = self else {
            if segment != 0 {
                return Err(malformed!(
                    "segment {segment} of a {} block, which has one",
                    self.encoding()
                ));
            }
            return self.decode_frame(id, block_start, frame, block_len, block_len, out);
        };
        let segment_boards = segment_boards.max(1);
        let count = block_len.div_ceil(segment_boards);
        let first = segment * segment_boards;
        let len = block_len.saturating_sub(first).min(segment_boards);
        if segment >= count || out.len() > len {
            return Err(malformed!(
                "segment {segment} of a {block_len}-board block in segments of {segment_boards}"
            ));
        }
        let bytes = segment_bytes(frame, count, segment)?;
        let whole = out.len() == len;
        m.decode_block(id, block_start + first as u64, bytes, out, whole)
    }

    /// Appends the encoded (not yet compressed) bytes of the values of boards
    /// `start..` of level `id`; values must lie in `-seeds..=seeds`. For
    /// context-ans this is the whole rANS stream.
    pub fn encode_block(&self, id: LevelId, start: u64, values: &[i8], out: &mut Vec<u8>) {
        match self {
            Model::Raw => out.extend(values.iter().map(|&v| v as u8)),
            Model::ContextRank(m) => m.encode(id, start, values, out),
            Model::ContextAns(m) => out.extend(m.encode_block(id, start, values)),
        }
    }

    /// Decodes bytes made by [`Model::encode_block`] for boards `start..` of
    /// level `id` into `out` (for raw and context-rank one byte per value;
    /// for context-ans `out` is the whole block).
    ///
    /// # Errors
    /// When a value or rank lies outside the level's range, or a rANS stream
    /// is damaged: the block is corrupt.
    pub fn decode_block(
        &self,
        id: LevelId,
        start: u64,
        bytes: &[u8],
        out: &mut [i8],
    ) -> Result<(), Malformed> {
        let seeds = id.seeds as i32;
        match self {
            Model::Raw => {
                debug_assert_eq!(bytes.len(), out.len());
                // A branch-free pass (vectorised) first; find the culprit only on failure.
                let widest = bytes
                    .iter()
                    .fold(0u8, |m, &b| m.max((b as i8).unsigned_abs()));
                if u32::from(widest) > id.seeds {
                    let i = bytes
                        .iter()
                        .position(|&b| u32::from((b as i8).unsigned_abs()) > id.seeds)
                        .unwrap_or(0);
                    return Err(malformed!(
                        "value {} at board {} is outside -{seeds}..={seeds}",
                        bytes[i] as i8,
                        start + i as u64
                    ));
                }
                for (o, &b) in out.iter_mut().zip(bytes) {
                    *o = b as i8;
                }
                Ok(())
            }
            Model::ContextRank(m) => m.decode(id, start, bytes, out),
            Model::ContextAns(m) => m.decode_block(id, start, bytes, out, true),
        }
    }
}

fn parse_rank(id: LevelId, bytes: &[u8]) -> Result<RankModel, Malformed> {
    let raw = unpack(bytes)?;
    let shape = Shape::parse(id, &raw)?;
    if raw.len() < 8 {
        return Err(malformed!("model ends before its list count"));
    }
    let alphabet = shape.alphabet;
    let count = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]) as usize;
    let contexts = shape.contexts();
    if count == 0 || count > contexts + 1 {
        return Err(malformed!(
            "model has {count} orders for {contexts} contexts"
        ));
    }
    let mut lists = Vec::with_capacity(count.min(raw.len() / 5));
    let mut at = 8;
    let mut previous: Option<usize> = None;
    for i in 0..count {
        if at + 5 > raw.len() {
            return Err(malformed!("model ends inside order {i}"));
        }
        let ctx = u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]) as usize;
        let len = usize::from(raw[at + 4]);
        at += 5;
        if at + len > raw.len() || len > alphabet {
            return Err(malformed!("model order {i} of {len} symbols does not fit"));
        }
        if i > 0 && (ctx >= contexts || previous.is_some_and(|p| ctx <= p)) {
            return Err(malformed!(
                "model order {i} has context {ctx} out of order or range"
            ));
        }
        if i > 0 {
            previous = Some(ctx);
        }
        let list = raw[at..at + len].to_vec();
        at += len;
        let mut seen = vec![false; alphabet];
        for &s in &list {
            let s = usize::from(s);
            if s >= alphabet || seen[s] {
                return Err(malformed!("model order {i} repeats or exceeds symbol {s}"));
            }
            seen[s] = true;
        }
        lists.push((ctx, list));
    }
    if at != raw.len() {
        return Err(malformed!("{} stray bytes after the model", raw.len() - at));
    }
    Ok(RankModel::install(shape, &lists))
}

/// The rANS stream of segment `k` of a context-ans block of `count`
/// segments. A block of one segment is its stream; a block of more starts with
/// a directory of `count - 1` `u16` byte lengths (every segment's but the
/// last), followed by the streams in order.
///
/// # Errors
/// When the directory does not fit the block or its lengths overrun it, or
/// when `k >= count`.
pub fn segment_bytes(frame: &[u8], count: usize, k: usize) -> Result<&[u8], Malformed> {
    segment_streams(frame, count)?
        .nth(k)
        .ok_or_else(|| malformed!("segment {k} of a block of {count}"))
}

/// The rANS streams of the `count` segments of a context-ans block, in order,
/// once the directory is checked (see [`segment_bytes`]).
fn segment_streams(
    frame: &[u8],
    count: usize,
) -> Result<impl Iterator<Item = &[u8]> + '_, Malformed> {
    let count = count.max(1);
    let directory = 2 * (count - 1);
    let Some(body) = frame.get(directory..) else {
        return Err(malformed!(
            "a directory of {count} segments does not fit a block of {} bytes",
            frame.len()
        ));
    };
    let lengths = frame[..directory]
        .chunks_exact(2)
        .map(|w| usize::from(u16::from_le_bytes([w[0], w[1]])));
    let listed: usize = lengths.clone().sum();
    if listed > body.len() {
        return Err(malformed!(
            "segment lengths add up to {listed} bytes, more than the block's {}",
            body.len()
        ));
    }
    // Every stream but the last has its listed length; the last takes the rest.
    let mut rest = body;
    Ok(lengths.chain([body.len() - listed]).map(move |len| {
        let (stream, after) = rest.split_at(len);
        rest = after;
        stream
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::rules::{RuleSet, Rules};
    use crate::index::Index;

    fn values(id: LevelId) -> Vec<i8> {
        // Values that depend on the board, so that neighbours agree often.
        let n = id.seeds as i32;
        Index::for_pits(id.rules.pits())
            .boards(id.seeds)
            .map(|b| {
                ((i32::from(b.pit(0)) - i32::from(b.pit(4)) + i32::from(b.pit(7))) % (n + 1)) as i8
            })
            .collect()
    }

    #[test]
    fn context_rank_round_trips_through_bytes() {
        let id = LevelId {
            rules: Rules::new(RuleSet::Awari, 6).unwrap(),
            seeds: 7,
        };
        let v = values(id);
        for neighbours in 1..=3 {
            let model = Model::train(
                id,
                neighbours,
                &[(0, &v[..1000]), (5000, &v[5000..7000])][..],
            );
            let model = Model::parse(Encoding::ContextRank, id, &model.to_bytes()).unwrap();
            for start in [0u64, 1000, 30000] {
                let end = (start as usize + 1500).min(v.len());
                let mut enc = Vec::new();
                model.encode_block(id, start, &v[start as usize..end], &mut enc);
                let mut dec = vec![0i8; enc.len()];
                model.decode_block(id, start, &enc, &mut dec).unwrap();
                assert_eq!(dec, &v[start as usize..end]);
                let zeros = enc.iter().filter(|&&r| r == 0).count();
                assert!(zeros > enc.len() / 3, "ranks should be mostly 0");
            }
        }
    }

    #[test]
    fn corrupt_models_are_rejected() {
        let id = LevelId {
            rules: Rules::default(),
            seeds: 4,
        };
        let v = values(id);
        let bytes = Model::train(id, 2, &[(0, &v[..])][..]).to_bytes();
        assert!(Model::parse(Encoding::ContextRank, id, &bytes[..bytes.len() - 1]).is_err());
        let other = LevelId { seeds: 5, ..id };
        assert!(Model::parse(Encoding::ContextRank, other, &bytes).is_err());
        assert!(Model::parse(Encoding::Raw, id, &bytes).is_err());
        assert!(Model::parse(Encoding::ContextRank, id, &[]).is_err());
        assert!(Model::parse(Encoding::ContextAns, id, &bytes).is_err());
        let ans = Model::train_ans(id, 3, &[(0, &v[..])][..]).to_bytes();
        assert!(Model::parse(Encoding::ContextAns, id, &ans).is_ok());
        assert!(Model::parse(Encoding::ContextAns, id, &ans[..ans.len() - 1]).is_err());
        assert!(Model::parse(Encoding::ContextRank, id, &ans).is_err());
    }

    #[test]
    fn frames_round_trip_for_every_encoding_and_prefix() {
        let id = LevelId::new(Rules::default(), 8);
        let v = values(id);
        let blocks: Vec<(u64, &[i8])> = v
            .chunks(1000)
            .enumerate()
            .map(|(i, c)| ((i * 1000) as u64, c))
            .collect();
        for model in [
            Model::Raw,
            Model::train(id, 3, &blocks[..20]),
            Model::train_ans(id, 1, &blocks[..]),
            Model::train_ans(id, 3, &blocks[..]),
        ] {
            let model = Model::parse(model.encoding(), id, &model.to_bytes()).unwrap();
            // Whole blocks, and (context-ans only) segments of 1, 99 and 250.
            for segment in [1000, 250, 99, 1] {
                for &(start, values) in blocks.iter().step_by(9) {
                    let frame = model.encode_frame(id, start, values, 3, segment).unwrap();
                    let mut out = vec![0i8; values.len()];
                    model
                        .decode_frame(id, start, &frame, values.len(), segment, &mut out)
                        .unwrap();
                    assert_eq!(out, values, "{} / {segment}", model.describe());
                    let mut prefix = vec![0i8; 123];
                    model
                        .decode_frame(id, start, &frame, values.len(), segment, &mut prefix)
                        .unwrap();
                    assert_eq!(prefix, &values[..123]);
                    if let Model::ContextAns(_) = model {
                        let k = 2.min(values.len().div_ceil(segment) - 1);
                        let first = k * segment;
                        let mut part = vec![0i8; (values.len() - first).min(segment).min(7)];
                        model
                            .decode_segment(id, start, &frame, values.len(), segment, k, &mut part)
                            .unwrap();
                        assert_eq!(part, &values[first..first + part.len()]);
                    }
                }
            }
        }
    }
}
