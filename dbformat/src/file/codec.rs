//! Value encodings: how the values of one block become the bytes that zstd
//! compresses, and back.
//!
//! - [`Encoding::Raw`]: one signed byte per board, as in the published files.
//! - [`Encoding::ContextRank`]: each value is replaced by its rank in a
//!   per-level frequency order chosen by the values of up to three
//!   *neighbours* — boards of the same block that differ by one seed moved from
//!   the mover's pit `k` (`k` = 1, 2, 3: B, C, D) into pit 0 (A). Such a board
//!   always comes earlier in index order, at a distance that depends only on
//!   pits 0..=2 (see [`neighbour_offsets`]), so a decoder finds it without
//!   ranking. Neighbouring boards usually have close or equal values, so the
//!   ranks are mostly 0 and 1 and zstd codes them in fewer bits than the raw
//!   values (measured in the module docs of [`super`]).
//!
//! The per-level orders (the *model*) are stored once, in the file's model
//! section, zstd-compressed.

use std::collections::HashMap;
use std::fmt;

use crate::board::MAX_BOARD_PITS;
use crate::index::Index;

use super::LevelId;

/// The most neighbours a context can use.
pub const MAX_NEIGHBOURS: usize = 3;

/// How a level's values are turned into bytes before compression (the header's
/// "value encoding" field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Code 0: the value itself as a signed byte.
    Raw,
    /// Code 1: the value's rank in the order its neighbours' values select.
    ContextRank,
}

impl Encoding {
    /// The header code.
    pub fn code(self) -> u8 {
        match self {
            Encoding::Raw => 0,
            Encoding::ContextRank => 1,
        }
    }

    /// The encoding with header code `code`, or `None` for an unknown code.
    pub fn from_code(code: u8) -> Option<Encoding> {
        match code {
            0 => Some(Encoding::Raw),
            1 => Some(Encoding::ContextRank),
            _ => None,
        }
    }

    /// `raw` or `context-rank`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Raw => "raw",
            Encoding::ContextRank => "context-rank",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// Calls `visit(i, offsets)` for the boards `start .. start + len` of a level,
/// where `i` counts from 0 at `start` and `offsets[k-1]` is the distance back to
/// neighbour `k` when it lies in `start..` (0 otherwise). Only the first
/// `neighbours` offsets are filled.
///
/// Boards come in *runs* that share pits 2.. and move seeds from pit 0 to pit
/// 1 one at a time; the offsets of neighbours 2 and 3 are constant along a run,
/// so the board itself is only stepped once per run (as [`crate::LevelIter`]
/// does, skipping unstored boards).
#[inline]
fn walk(
    id: LevelId,
    start: u64,
    len: usize,
    neighbours: usize,
    mut visit: impl FnMut(usize, [usize; 3]),
) {
    for_each_run(id, start, len, neighbours, |run| {
        for j in 0..run.len {
            let i = run.first + j;
            let o1 = usize::from(run.first_p1 + j > 0 && i >= 1);
            let o2 = if run.off2 <= i { run.off2 } else { 0 };
            let o3 = if run.off3 <= i { run.off3 } else { 0 };
            visit(i, [o1, o2, o3]);
        }
    });
}

/// Boards of a block that share pits 2.. (see [`walk`]).
#[derive(Clone, Copy, Debug)]
struct Run {
    /// Position of the run's first board in the block.
    first: usize,
    /// Boards in the run (within the block).
    len: usize,
    /// Pit 1 of the first board; it grows by one along the run.
    first_p1: usize,
    /// Distance to neighbour 2 along the run, 0 when there is none.
    off2: usize,
    /// Distance to neighbour 3 along the run, 0 when there is none.
    off3: usize,
}

/// Calls `visit` for each run of the boards `start .. start + len`, in order.
#[inline]
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

/// Decodes context ranks with `K` neighbours: the hot loop of a lookup.
///
/// `sym[0]` is the "no neighbour" symbol and board `i`'s symbol goes to
/// `sym[i + 1]`, so a missing neighbour is index 0 and the loop has no
/// branches on it. The part of the context from neighbours 2 and 3 does not
/// depend on the previous board, so only one add and one table load lie on
/// the chain from one board to the next.
fn decode_ranks<const K: usize>(
    m: &RankModel,
    id: LevelId,
    start: u64,
    bytes: &[u8],
    sym: &mut [u8],
) -> Result<(), usize> {
    let a = m.alphabet;
    let base = a + 1;
    let fast = &m.fast[..];
    let order = &m.order[..];
    let slot_of = &m.slot_of[..];
    let class3 = &m.class3[..];
    let mut bad = None;
    for_each_run(id, start, bytes.len(), K, |run| {
        // Neighbour 1 is the previous board of the run: keep it in a register.
        let mut prev = if run.first_p1 > 0 && run.first >= 1 {
            usize::from(sym[run.first])
        } else {
            a
        };
        for (i, &r) in (run.first..run.first + run.len).zip(&bytes[run.first..]) {
            let mut hi = 0;
            if K >= 3 {
                let i3 = if run.off3 != 0 && run.off3 <= i {
                    i + 1 - run.off3
                } else {
                    0
                };
                hi = usize::from(class3[usize::from(sym[i3])]);
            }
            if K >= 2 {
                let i2 = if run.off2 != 0 && run.off2 <= i {
                    i + 1 - run.off2
                } else {
                    0
                };
                hi = (hi * base + usize::from(sym[i2])) * base;
            }
            let ctx = hi + prev;
            let r = usize::from(r);
            let s = if r < FAST {
                fast[ctx * FAST + r]
            } else if r < a {
                order[slot_of[ctx] as usize * a + r]
            } else {
                bad.get_or_insert(i);
                0
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

/// A level's encoding together with what it needs to decode (the model).
#[derive(Clone, Debug)]
pub enum Model {
    /// See [`Encoding::Raw`].
    Raw,
    /// See [`Encoding::ContextRank`].
    ContextRank(RankModel),
}

/// Per-context frequency orders of the values of one level.
#[derive(Clone)]
pub struct RankModel {
    /// Neighbours in a context, 1..=3.
    neighbours: usize,
    /// Symbols: `2 * seeds + 1`.
    alphabet: usize,
    /// `slot_of[context]`: the order to use, 0 being the level's overall order.
    slot_of: Vec<u32>,
    /// `order[slot * alphabet + rank]`: the symbol of that rank.
    order: Vec<u8>,
    /// `rank[slot * alphabet + symbol]`: the rank of that symbol.
    rank: Vec<u8>,
    /// `fast[context * FAST + rank]`: the symbols of the first [`FAST`] ranks
    /// (nearly every board), one cache line per context.
    fast: Vec<u8>,
    /// [`class3`] of every symbol and of "none" (index `alphabet`).
    class3: Vec<u8>,
}

/// Ranks decoded from the dense per-context table.
const FAST: usize = 4;
/// Classes of neighbour 3's value in a context.
pub const CLASSES3: usize = 10;

/// The class of neighbour 3's symbol `s` in a level of `seeds` seeds: 0..=6
/// for values -3..=3 (clamped), 7 for -seeds, 8 for +seeds, 9 for no neighbour
/// (`s == 2 * seeds + 1`).
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

impl fmt::Debug for RankModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RankModel({} neighbours, {} orders)",
            self.neighbours,
            self.order.len() / self.alphabet.max(1)
        )
    }
}

/// The most bytes a serialised rank model may expand to (a guard against a
/// corrupt length field; real models are far smaller).
const MAX_MODEL_BYTES: usize = 64 << 20;

/// Contexts need at least this many training boards to get their own order.
const MIN_CONTEXT_COUNT: u64 = 8;

impl RankModel {
    fn base(&self) -> usize {
        self.alphabet + 1
    }

    /// The context number of board `i` of a block, from already known symbols:
    /// `s1 + base * (s2 + base * class(s3))`, see [`RankModel::contexts`].
    #[inline]
    fn context(&self, symbols: &[u8], i: usize, offsets: [usize; 3]) -> usize {
        let state = |k: usize| {
            if offsets[k] == 0 {
                self.alphabet
            } else {
                usize::from(symbols[i - offsets[k]])
            }
        };
        let base = self.base();
        let mut ctx = 0;
        if self.neighbours >= 3 {
            ctx = usize::from(self.class3[state(2)]);
        }
        if self.neighbours >= 2 {
            ctx = ctx * base + state(1);
        }
        ctx * base + state(0)
    }

    /// The number of contexts: neighbours 1 and 2 contribute their symbol or
    /// "none" (`base` states each), neighbour 3 one of [`CLASSES3`] classes
    /// (see [`class3`]): its exact value adds little once the first two are
    /// known, and the smaller table stays in the processor's caches.
    fn contexts(&self) -> usize {
        match self.neighbours {
            1 => self.base(),
            2 => self.base() * self.base(),
            _ => CLASSES3 * self.base() * self.base(),
        }
    }

    /// Learns the orders from whole blocks `(first index, values)` of a level.
    fn train(id: LevelId, neighbours: usize, blocks: &[(u64, &[i8])]) -> RankModel {
        let seeds = id.seeds;
        let alphabet = 2 * seeds as usize + 1;
        let mut global = vec![0u64; alphabet];
        let mut counts: HashMap<usize, Vec<u64>> = HashMap::new();
        let mut model = RankModel {
            neighbours,
            alphabet,
            slot_of: Vec::new(),
            order: Vec::new(),
            rank: Vec::new(),
            fast: Vec::new(),
            class3: (0..=alphabet).map(|s| class3(s, seeds)).collect(),
        };
        let mut symbols = Vec::new();
        for &(start, values) in blocks {
            symbols.clear();
            symbols.extend(values.iter().map(|&v| symbol(v, seeds)));
            walk(id, start, values.len(), neighbours, |i, offs| {
                let ctx = model.context(&symbols, i, offs);
                let s = usize::from(symbols[i]);
                global[s] += 1;
                counts.entry(ctx).or_insert_with(|| vec![0; alphabet])[s] += 1;
            });
        }
        let mut contexts: Vec<(usize, Vec<u64>)> = counts
            .into_iter()
            .filter(|(_, c)| c.iter().sum::<u64>() >= MIN_CONTEXT_COUNT)
            .collect();
        // Keep the model within what a reader accepts: the most used contexts.
        let room = (MAX_MODEL_BYTES - 8) / (5 + alphabet) - 1;
        if contexts.len() > room {
            contexts.sort_unstable_by_key(|(_, c)| std::cmp::Reverse(c.iter().sum::<u64>()));
            contexts.truncate(room);
        }
        contexts.sort_unstable_by_key(|(ctx, _)| *ctx);
        let mut lists = vec![(usize::MAX, order_of(&global))];
        lists.extend(contexts.iter().map(|(ctx, c)| (*ctx, order_of(c))));
        model.install(&lists);
        model
    }

    /// Fills the lookup tables from `(context, symbols by rank)` lists; the first
    /// list is the overall order (its context is ignored). Symbols missing from a
    /// list follow it in increasing order.
    fn install(&mut self, lists: &[(usize, Vec<u8>)]) {
        let a = self.alphabet;
        let contexts = self.contexts();
        self.slot_of = vec![0; contexts];
        self.order = vec![0; lists.len() * a];
        self.rank = vec![0; lists.len() * a];
        for (slot, (ctx, list)) in lists.iter().enumerate() {
            if slot > 0 {
                self.slot_of[*ctx] = slot as u32;
            }
            let mut seen = vec![false; a];
            let mut full: Vec<u8> = list.clone();
            for &s in list {
                seen[usize::from(s)] = true;
            }
            full.extend((0..a as u8).filter(|&s| !seen[usize::from(s)]));
            for (r, &s) in full.iter().enumerate() {
                self.order[slot * a + r] = s;
                self.rank[slot * a + usize::from(s)] = r as u8;
            }
        }
        self.fast = self
            .slot_of
            .iter()
            .flat_map(|&slot| {
                let first = slot as usize * a;
                (0..FAST).map(move |r| if r < a { first + r } else { first })
            })
            .map(|at| self.order[at])
            .collect();
    }

    /// The lists of [`RankModel::install`] back, for serialisation.
    fn lists(&self) -> Vec<(usize, Vec<u8>)> {
        let a = self.alphabet;
        let mut out = vec![(0, self.order[..a].to_vec())];
        for (ctx, &slot) in self.slot_of.iter().enumerate() {
            if slot > 0 {
                let s = slot as usize;
                out.push((ctx, self.order[s * a..(s + 1) * a].to_vec()));
            }
        }
        // `install` numbers slots in list order; keep the stored order stable.
        out[1..].sort_by_key(|(ctx, _)| *ctx);
        out
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

#[inline]
fn symbol(value: i8, seeds: u32) -> u8 {
    (i32::from(value) + seeds as i32) as u8
}

impl Model {
    /// The encoding this model implements.
    pub fn encoding(&self) -> Encoding {
        match self {
            Model::Raw => Encoding::Raw,
            Model::ContextRank(_) => Encoding::ContextRank,
        }
    }

    /// A short description: `raw`, or `context-rank/3` (neighbours used).
    pub fn describe(&self) -> String {
        match self {
            Model::Raw => "raw".into(),
            Model::ContextRank(m) => format!("context-rank/{}", m.neighbours),
        }
    }

    /// A context-rank model with `neighbours` neighbours learnt from whole
    /// blocks `(first index, values)` of level `id`. Every value must lie in
    /// `-seeds..=seeds` (the writer checks before calling).
    pub fn train(id: LevelId, neighbours: usize, blocks: &[(u64, &[i8])]) -> Model {
        Model::ContextRank(RankModel::train(id, neighbours, blocks))
    }

    /// The model section's bytes (empty for [`Model::Raw`]).
    ///
    /// A context-rank model is: `u8` neighbours, `u8` 0, `u16` alphabet, `u32`
    /// number of lists, then per list `u32` context, `u8` length and that many
    /// symbols by rank (the first list is the overall order, context 0); the
    /// whole is stored as `u32` length + one zstd frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let Model::ContextRank(m) = self else {
            return Vec::new();
        };
        let lists = m.lists();
        let mut raw = vec![m.neighbours as u8, 0];
        raw.extend_from_slice(&(m.alphabet as u16).to_le_bytes());
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
        let packed = zstd::bulk::compress(&raw, 19).expect("zstd compresses a buffer in memory");
        let mut out = (raw.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&packed);
        out
    }

    /// Reads a model section written by [`Model::to_bytes`] for `encoding` and
    /// level `id`.
    ///
    /// # Errors
    /// A description of the first inconsistency (bad length, zstd error,
    /// unknown context, symbol out of range, repeated symbol).
    pub fn parse(encoding: Encoding, id: LevelId, bytes: &[u8]) -> Result<Model, String> {
        match encoding {
            Encoding::Raw if bytes.is_empty() => Ok(Model::Raw),
            Encoding::Raw => Err(format!(
                "raw encoding with a {}-byte model section (expected none)",
                bytes.len()
            )),
            Encoding::ContextRank => parse_rank(id, bytes).map(Model::ContextRank),
        }
    }

    /// Appends the encoded bytes of the values of boards `start..` of level `id`.
    /// Values must lie in `-seeds..=seeds`.
    pub fn encode_block(&self, id: LevelId, start: u64, values: &[i8], out: &mut Vec<u8>) {
        match self {
            Model::Raw => out.extend(values.iter().map(|&v| v as u8)),
            Model::ContextRank(m) => {
                let symbols: Vec<u8> = values.iter().map(|&v| symbol(v, id.seeds)).collect();
                let first = out.len();
                out.resize(first + values.len(), 0);
                let a = m.alphabet;
                walk(id, start, values.len(), m.neighbours, |i, offs| {
                    let slot = m.slot_of[m.context(&symbols, i, offs)] as usize;
                    out[first + i] = m.rank[slot * a + usize::from(symbols[i])];
                });
            }
        }
    }

    /// Decodes bytes made by [`Model::encode_block`] for boards `start..` of level
    /// `id` into `out` (as many values as `out` holds, equal to `bytes.len()`).
    ///
    /// # Errors
    /// When a value or rank lies outside the level's range: the block is corrupt.
    pub fn decode_block(
        &self,
        id: LevelId,
        start: u64,
        bytes: &[u8],
        out: &mut [i8],
    ) -> Result<(), String> {
        debug_assert_eq!(bytes.len(), out.len());
        let seeds = id.seeds as i32;
        match self {
            Model::Raw => {
                // A branch-free pass (vectorised) first; find the culprit only on failure.
                let widest = bytes
                    .iter()
                    .fold(0u8, |m, &b| m.max((b as i8).unsigned_abs()));
                if u32::from(widest) > id.seeds {
                    let i = bytes
                        .iter()
                        .position(|&b| u32::from((b as i8).unsigned_abs()) > id.seeds)
                        .unwrap_or(0);
                    return Err(format!(
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
            Model::ContextRank(m) => {
                let mut sym = vec![m.alphabet as u8; bytes.len() + 1];
                let decoded = match m.neighbours {
                    1 => decode_ranks::<1>(m, id, start, bytes, &mut sym),
                    2 => decode_ranks::<2>(m, id, start, bytes, &mut sym),
                    _ => decode_ranks::<3>(m, id, start, bytes, &mut sym),
                };
                if let Err(i) = decoded {
                    return Err(format!(
                        "rank {} at board {} is outside 0..{}",
                        bytes[i],
                        start + i as u64,
                        m.alphabet
                    ));
                }
                for (o, &s) in out.iter_mut().zip(&sym[1..]) {
                    *o = (i32::from(s) - seeds) as i8;
                }
                Ok(())
            }
        }
    }
}

fn parse_rank(id: LevelId, bytes: &[u8]) -> Result<RankModel, String> {
    if bytes.len() < 4 {
        return Err(format!(
            "model section of {} bytes is too short",
            bytes.len()
        ));
    }
    let raw_len = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    if raw_len > MAX_MODEL_BYTES {
        return Err(format!(
            "model of {raw_len} bytes is larger than any real model"
        ));
    }
    let raw = zstd::bulk::decompress(&bytes[4..], raw_len)
        .map_err(|e| format!("model section does not decompress: {e}"))?;
    if raw.len() != raw_len || raw.len() < 8 {
        return Err(format!(
            "model decompresses to {} bytes, expected {raw_len}",
            raw.len()
        ));
    }
    let neighbours = usize::from(raw[0]);
    let alphabet = usize::from(u16::from_le_bytes([raw[2], raw[3]]));
    let expected_alphabet = 2 * id.seeds as usize + 1;
    if neighbours == 0 || neighbours > usable_neighbours(id.rules.pits()) || raw[1] != 0 {
        return Err(format!(
            "model uses {neighbours} neighbours; {} pits per side allow 1 to {}",
            id.rules.pits(),
            usable_neighbours(id.rules.pits())
        ));
    }
    if alphabet != expected_alphabet {
        return Err(format!(
            "model has {alphabet} symbols, level {} needs {expected_alphabet}",
            id.seeds
        ));
    }
    let count = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]) as usize;
    let contexts = match neighbours {
        1 => alphabet + 1,
        2 => (alphabet + 1) * (alphabet + 1),
        _ => CLASSES3 * (alphabet + 1) * (alphabet + 1),
    };
    if count == 0 || count > contexts + 1 {
        return Err(format!("model has {count} orders for {contexts} contexts"));
    }
    let mut lists = Vec::with_capacity(count);
    let mut at = 8;
    let mut previous: Option<usize> = None;
    for i in 0..count {
        if at + 5 > raw.len() {
            return Err(format!("model ends inside order {i}"));
        }
        let ctx = u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]) as usize;
        let len = usize::from(raw[at + 4]);
        at += 5;
        if at + len > raw.len() || len > alphabet {
            return Err(format!("model order {i} of {len} symbols does not fit"));
        }
        if i > 0 && (ctx >= contexts || previous.is_some_and(|p| ctx <= p)) {
            return Err(format!(
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
                return Err(format!("model order {i} repeats or exceeds symbol {s}"));
            }
            seen[s] = true;
        }
        lists.push((ctx, list));
    }
    if at != raw.len() {
        return Err(format!("{} stray bytes after the model", raw.len() - at));
    }
    let mut model = RankModel {
        neighbours,
        alphabet,
        slot_of: Vec::new(),
        order: Vec::new(),
        rank: Vec::new(),
        fast: Vec::new(),
        class3: (0..=alphabet).map(|s| class3(s, id.seeds)).collect(),
    };
    model.install(&lists);
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{RuleSet, Rules};

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

    #[test]
    fn walking_runs_matches_the_level_iterator() {
        for pits in 2..=6u8 {
            let rules = Rules::new(RuleSet::Awari, pits).unwrap();
            let index = Index::for_pits(pits);
            for seeds in [0, 1, 2, 6, 9] {
                let id = LevelId::new(rules, seeds);
                let boards: Vec<_> = index.boards(seeds).collect();
                let k = usable_neighbours(pits);
                for (start, len) in [(0, boards.len()), (1, 50), (7, 1), (boards.len() / 2, 333)] {
                    let len = len.min(boards.len().saturating_sub(start));
                    let mut seen = 0;
                    walk(id, start as u64, len, k, |i, offs| {
                        assert_eq!(i, seen);
                        seen += 1;
                        let want = neighbour_offsets(boards[start + i].pits());
                        for n in 0..3 {
                            let w = if n < k && want[n] as usize <= i {
                                want[n] as usize
                            } else {
                                0
                            };
                            assert_eq!(
                                offs[n],
                                w,
                                "P={pits} n={seeds} board {} k={}",
                                start + i,
                                n + 1
                            );
                        }
                    });
                    assert_eq!(seen, len);
                }
            }
        }
    }

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
            let model = Model::train(id, neighbours, &[(0, &v[..1000]), (5000, &v[5000..7000])]);
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
        let bytes = Model::train(id, 2, &[(0, &v)]).to_bytes();
        assert!(Model::parse(Encoding::ContextRank, id, &bytes[..bytes.len() - 1]).is_err());
        let other = LevelId { seeds: 5, ..id };
        assert!(Model::parse(Encoding::ContextRank, other, &bytes).is_err());
        assert!(Model::parse(Encoding::Raw, id, &bytes).is_err());
        assert!(Model::parse(Encoding::ContextRank, id, &[]).is_err());
    }
}
