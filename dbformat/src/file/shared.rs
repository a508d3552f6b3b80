//! A level file written from shares: under MPI each rank holds a run of
//! whole blocks of the level (its share, [`crate::cluster::Shares`]), and
//! no rank holds the whole, yet the file must be byte for byte the one a
//! single writer makes ([`super::write_level_bounded`], [`super::write_level`]).
//!
//! Everything a writer learns from the level is a count, and counts add
//! up: each rank counts its part of the sample the bound chooser learns
//! from and of the blocks the model learns from, and every rank sums what
//! all counted, so all learn the same chooser and the same candidate
//! models. The candidates are measured the same way (the bytes of each
//! rank's part of the measuring blocks, summed). Then each rank encodes the
//! blocks of its share, and rank 0, which writes the file, appends them in
//! order as they arrive, in rounds of at most [`TO_ROOT_PIECE`] bytes.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::cluster::{send_to_root_in_order, Ranks, TO_ROOT_PIECE};
use crate::error::{Error, Result};

use super::bounds::{BoundChooser, Stored};
use super::codec::Model;
use super::context::{
    add_counts, counts_to_bytes, usable_neighbours, Counts, LazyBlocks, Shape, PIT0_CLASSES,
};
use super::writer::{
    estimated_bytes, frame_bytes, keep_smaller, spread_sample, EncodingChoice, LevelWriter,
    WriteOptions, TRAIN_BOARDS,
};
use super::LevelId;

/// This rank's share of a level to write: boards `boards` (whole blocks,
/// from a multiple of 64 boards), their scores and, for a file of lower
/// bounds, their free bits (bit `i % 64` of word `i / 64` for the share's
/// board `i`).
#[derive(Clone)]
pub struct Share<'a> {
    pub boards: Range<u64>,
    pub scores: &'a [i8],
    pub free: Option<&'a [u64]>,
}

/// Writes level `id` into `dir` from every rank's share, as the ranks of
/// `ranks` hold them; every rank calls it, with the same `stored` and
/// `options`. A file of [`Stored::LowerBounds`] needs every share's free
/// bits. Returns the file's path on rank 0, `None` on the others.
///
/// The file is the one [`super::write_level_bounded`] (lower bounds) or
/// [`super::write_level_as`] (the others) write from the whole level.
///
/// # Errors
/// As those (rank 0 writes the file); also [`Error::Rules`] when a share
/// does not start on a block's first board.
///
/// # Panics
/// When a share's scores or free bits are not one per board.
pub fn write_level_shared<'a>(
    ranks: &dyn Ranks,
    dir: &Path,
    id: LevelId,
    stored: Stored,
    share: Share<'a>,
    options: WriteOptions,
) -> Result<Option<PathBuf>> {
    let boards = share.boards.end - share.boards.start;
    assert_eq!(share.scores.len() as u64, boards, "a score per board");
    let block = u64::from(options.block_boards);
    if !share.boards.start.is_multiple_of(block) && share.boards.start < id.boards() {
        return Err(Error::Rules(format!(
            "a share of level {} from board {} does not start a block of {block} boards",
            id.seeds, share.boards.start
        )));
    }
    let chooser = (stored == Stored::LowerBounds).then(|| {
        let free = share.free.expect("free bits for a file of lower bounds");
        assert!(free.len() as u64 * 64 >= boards, "a free bit per board");
        learn_chooser(ranks, id, options, &share)
    });
    // The values a block stores: chosen when the file holds lower bounds.
    let all_scores: &'a [i8] = share.scores;
    let stored_values = |range: Range<u64>| -> Cow<'a, [i8]> {
        let from = share.boards.start;
        let scores = &all_scores[(range.start - from) as usize..(range.end - from) as usize];
        match (&chooser, share.free) {
            (Some(chooser), Some(free)) => {
                Cow::Owned(chooser.choose_in(range.start, scores, free, share.boards.start))
            }
            _ => Cow::Borrowed(scores),
        }
    };
    // (Learning leaves many small rows of counts freed in the heap: given
    // back before the next step, which would otherwise peak above them.)
    crate::memory::resident::give_back_free_heap();
    let model = choose_model(ranks, id, options, &share.boards, &stored_values)?;
    crate::memory::resident::give_back_free_heap();
    // Rank 0 writes its blocks into the file as they are encoded; the
    // others keep theirs in a spool until rank 0 asks for them.
    let mut out = if ranks.is_root() {
        let mut writer = LevelWriter::create_as(dir, id, stored, options)?;
        writer.preset_model(&model)?;
        Encoded::File(Box::new(writer))
    } else {
        Encoded::Spool(Spool::new(dir)?)
    };
    encode_share(
        id,
        options,
        &model,
        chooser.as_ref(),
        &share,
        &stored_values,
        |boards, frames| out.push(boards, frames),
    )?;
    append_in_order(ranks, id, options, out)
}

/// The bound chooser of the whole level, learnt from the counts of every
/// rank's part of its sample.
fn learn_chooser(
    ranks: &dyn Ranks,
    id: LevelId,
    options: WriteOptions,
    share: &Share,
) -> BoundChooser {
    let unit = options.segment_boards;
    let mine =
        BoundChooser::sample_counts(id, unit, id.boards(), share.boards.clone(), share.scores);
    let Some(mine) = mine else {
        // (No contexts on this board size: none on any rank.)
        return BoundChooser::from_counts(id, unit, None);
    };
    let counts = summed_over_ranks(ranks, &mine);
    BoundChooser::from_counts(id, unit, Some(&counts))
}

/// The model [`LevelWriter`] would choose from the whole level's stored
/// values (`super::writer`'s `choose_model` on the blocks `spread_sample`
/// gives), from this rank's part of them, `stored_values(range)` for a
/// range of this rank's boards `mine`, and the others'.
fn choose_model<'v>(
    ranks: &dyn Ranks,
    id: LevelId,
    options: WriteOptions,
    mine: &Range<u64>,
    stored_values: &(dyn Fn(Range<u64>) -> Cow<'v, [i8]> + Sync),
) -> Result<Model> {
    let (boards, block) = (id.boards(), options.block_boards);
    let most = usable_neighbours(id.rules.pits());
    let ours = |r: &Range<u64>| mine.start <= r.start && r.end <= mine.end && !r.is_empty();
    let eval: Vec<Range<u64>> = spread_sample(boards, block, TRAIN_BOARDS as u64);
    let sampled: u64 = eval.iter().map(|r| r.end - r.start).sum();
    if most == 0 || sampled == 0 || options.encoding == EncodingChoice::Raw {
        return Ok(Model::Raw);
    }
    // 1. The counts over the training blocks, every rank's summed.
    let k = match options.encoding {
        EncodingChoice::ContextRank(k) | EncodingChoice::ContextAns(k) => k.clamp(1, most),
        _ => most,
    };
    let shape = Shape::new(id, k, PIT0_CLASSES);
    let train = LazyBlocks {
        ranges: spread_sample(boards, block, 64 * TRAIN_BOARDS as u64)
            .into_iter()
            .filter(ours)
            .collect(),
        values_of: stored_values,
    };
    let counts = summed_over_ranks(ranks, &shape.count(id, &train));
    crate::memory::resident::give_back_free_heap();
    // 2. The candidates, as the writer makes them.
    let with_rank = match options.encoding {
        EncodingChoice::Raw => unreachable!("returned above"),
        EncodingChoice::ContextRank(_) => {
            return Ok(Model::ContextRank(super::codec::RankModel::from_counts(
                shape, &counts,
            )))
        }
        EncodingChoice::ContextAns(_) => {
            return Ok(Model::ContextAns(super::ans::AnsModel::from_counts(
                shape, &counts,
            )))
        }
        // (Segmented blocks take context-ans only: `writer::choose_model`.)
        EncodingChoice::Auto => options.segment_boards >= options.block_boards,
    };
    let candidates = std::iter::once(Model::Raw)
        .chain(Model::candidates_from_counts(id, most, &counts, with_rank));
    // 3. Each measured on the measuring blocks, every rank's bytes summed;
    // the smallest estimate wins, the first of equals. One candidate at a
    // time, keeping only the best so far.
    let eval: Vec<(u64, Cow<'v, [i8]>)> = eval
        .into_iter()
        .filter(ours)
        .map(|r| (r.start, stored_values(r)))
        .collect();
    let eval: Vec<(u64, &[i8])> = eval.iter().map(|(start, v)| (*start, &v[..])).collect();
    let mut best: Option<(f64, Model)> = None;
    for model in candidates {
        // Its section's size first: packing it takes a few MiB for a while,
        // better before its encoder's tables are built. The best so far keeps
        // none while this one is measured (they are built again if it wins).
        let section = model.to_bytes().len();
        if let Some((_, best)) = &mut best {
            best.forget_coding();
        }
        let mine = frame_bytes(&model, id, options, &eval).map_err(|source| Error::Io {
            path: PathBuf::from(id.file_name()),
            source,
        })?;
        let estimate = estimated_bytes(id, section, ranks.sum(mine), sampled);
        keep_smaller(&mut best, estimate, model);
        // (The model dropped, or the one it replaced, goes back now.)
        crate::memory::resident::give_back_free_heap();
    }
    Ok(best.map(|(_, m)| m).unwrap_or(Model::Raw))
}

/// Blocks a rank encodes before handing their frames on (4 Mi boards of
/// 16 Ki-board blocks: about 1.3 MiB of frames at 2.6 bits a board).
const ENCODE_CHUNK_BLOCKS: usize = 256;

/// Encodes the blocks of this rank's share with `model`, for lower bounds
/// chosen by `chooser` in the walk that encodes them when the model is
/// context-ans in the chooser's shape, as the writer does; hands each run
/// of [`ENCODE_CHUNK_BLOCKS`] blocks' frames, in order, to `out(boards,
/// frames)`, so that only one run is held at a time.
///
/// # Errors
/// A block that cannot be encoded, or the first error of `out`.
fn encode_share<'v>(
    id: LevelId,
    options: WriteOptions,
    model: &Model,
    chooser: Option<&BoundChooser>,
    share: &Share,
    stored_values: &(dyn Fn(Range<u64>) -> Cow<'v, [i8]> + Sync),
    mut out: impl FnMut(u64, Vec<Vec<u8>>) -> Result<()>,
) -> Result<()> {
    let block = u64::from(options.block_boards);
    let segment = options.segment_boards as usize;
    let first = share.boards.start;
    let blocks: Vec<Range<u64>> = (share.boards.start..share.boards.end)
        .step_by(block as usize)
        .map(|start| start..(start + block).min(share.boards.end))
        .collect();
    let fused = match (model, chooser.and_then(BoundChooser::shape)) {
        (Model::ContextAns(m), Some(shape)) => m.shape() == shape,
        _ => false,
    };
    let encode = |r: &Range<u64>| match (model, chooser, share.free) {
        (Model::ContextAns(m), Some(chooser), Some(free)) if fused => {
            let chosen = |board: u64, ctx: usize| {
                let b = (board - first) as usize;
                chooser.stored_symbol(b, share.scores[b], ctx, free)
            };
            let len = (r.end - r.start) as usize;
            Ok(m.encode_frame(id, r.start, len, segment, &chosen))
        }
        _ => {
            let values = stored_values(r.clone());
            model.encode_frame(id, r.start, &values, options.zstd_level, segment)
        }
    };
    for run in blocks.chunks(ENCODE_CHUNK_BLOCKS) {
        let frames = run
            .par_iter()
            .map(encode)
            .collect::<std::io::Result<Vec<Vec<u8>>>>()
            .map_err(|source| Error::Io {
                path: PathBuf::from(id.file_name()),
                source,
            })?;
        let boards = run.iter().map(|r| r.end - r.start).sum();
        out(boards, frames)?;
    }
    Ok(())
}

/// Where a rank's encoded blocks go: rank 0's into the level file, the
/// others' into their spool.
enum Encoded {
    File(Box<LevelWriter>),
    Spool(Spool),
}

impl Encoded {
    /// Takes the frames of the next `boards` boards of this rank's share.
    fn push(&mut self, boards: u64, frames: Vec<Vec<u8>>) -> Result<()> {
        match self {
            Encoded::File(writer) => writer.push_frames(boards, frames),
            Encoded::Spool(spool) => spool.push(&frames),
        }
    }
}

/// A rank's encoded blocks, kept in an unnamed temporary file in the
/// database directory until rank 0 takes them: they would otherwise be held
/// in memory from the first block encoded to the last sent (a share of
/// 3 G boards makes about 1 GB of them). The file goes when the spool is
/// dropped, or the process ends.
struct Spool {
    /// The directory, for errors.
    dir: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    /// Each frame's length, in order.
    lengths: Vec<u64>,
}

impl Spool {
    /// An empty spool in `dir`.
    ///
    /// # Errors
    /// [`Error::Io`] when no file can be made there.
    fn new(dir: &Path) -> Result<Spool> {
        let file = tempfile::tempfile_in(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Spool {
            dir: dir.to_path_buf(),
            file: std::io::BufWriter::with_capacity(1 << 20, file),
            lengths: Vec::new(),
        })
    }

    fn io_error(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.dir.join("(the spool of a rank's blocks)"),
            source,
        }
    }

    /// Appends `frames`.
    fn push(&mut self, frames: &[Vec<u8>]) -> Result<()> {
        use std::io::Write;
        for frame in frames {
            self.file
                .write_all(frame)
                .map_err(|source| self.io_error(source))?;
            self.lengths.push(frame.len() as u64);
        }
        Ok(())
    }

    /// Bytes `range` of the frames laid end to end.
    fn read(&mut self, range: Range<u64>) -> Result<Vec<u8>> {
        use std::io::Write;
        use std::os::unix::fs::FileExt;
        self.file.flush().map_err(|source| self.io_error(source))?;
        let mut bytes = vec![0; (range.end - range.start) as usize];
        self.file
            .get_ref()
            .read_exact_at(&mut bytes, range.start)
            .map_err(|source| self.io_error(source))?;
        Ok(bytes)
    }
}

/// Rank 0, whose blocks are in the file already (`out`), appends each other
/// rank's, as they arrive (their lengths first, then their bytes in rounds
/// from their spools), and finishes the file. Returns its path on rank 0.
fn append_in_order(
    ranks: &dyn Ranks,
    id: LevelId,
    options: WriteOptions,
    out: Encoded,
) -> Result<Option<PathBuf>> {
    // Every rank's frames' lengths go to rank 0, and their total to all.
    let lengths: &[u64] = match &out {
        Encoded::File(_) => &[],
        Encoded::Spool(spool) => &spool.lengths,
    };
    let mut outgoing = vec![Vec::new(); ranks.size()];
    if !ranks.is_root() {
        outgoing[0] = lengths.to_vec();
    }
    let totals = ranks.all_gather(&[lengths.iter().sum::<u64>()]);
    let lengths_of = ranks.exchange(outgoing);
    let (mut writer, mut spool) = match out {
        Encoded::File(writer) => (Some(*writer), None),
        Encoded::Spool(spool) => (None, Some(spool)),
    };
    // On rank 0: each rank's frames, cut from its bytes as they come; its
    // first block follows the last of the rank before.
    let block = u64::from(options.block_boards);
    let mut pending: Vec<u8> = Vec::new();
    let mut next = 0usize;
    let mut from = 0usize;
    let read = |range: Range<u64>| -> Result<Vec<u8>> {
        spool.as_mut().expect("a rank besides 0 sends").read(range)
    };
    let write = |r: usize, piece: &[u8]| -> Result<()> {
        let writer = writer.as_mut().expect("rank 0 writes");
        if r != from {
            debug_assert!(pending.is_empty(), "whole frames from rank {from}");
            (from, next) = (r, 0);
        }
        pending.extend_from_slice(piece);
        let lengths = &lengths_of[r];
        let mut whole = Vec::new();
        let mut used = 0usize;
        while next < lengths.len() && pending.len() - used >= lengths[next] as usize {
            let len = lengths[next] as usize;
            whole.push(pending[used..used + len].to_vec());
            used += len;
            next += 1;
        }
        pending.drain(..used);
        if !whole.is_empty() {
            let done = writer.pushed_boards();
            let boards = (whole.len() as u64 * block).min(id.boards() - done);
            writer.push_frames(boards, whole)?;
        }
        Ok(())
    };
    send_to_root_in_order(ranks, &totals, TO_ROOT_PIECE, read, write)?;
    match writer {
        Some(writer) => Ok(Some(writer.finish()?)),
        None => Ok(None),
    }
}

/// Rows of counts a rank sends in one piece of [`summed_over_ranks`] (at 21
/// seeds, 4,096 rows of 43 symbols: 1.4 MiB; in the tests 64, so that
/// their small levels' counts go in many pieces too).
const COUNT_ROWS_PIECE: usize = if cfg!(test) { 64 } else { 4096 };

/// The sum of every rank's counts (`mine` here), on every rank. Each rank's
/// counts go to all in turn, in pieces of [`COUNT_ROWS_PIECE`] rows, so that
/// a rank holds its own counts, the sum and one piece, however many ranks
/// there are and however many contexts they saw. (The overall counts go in
/// a rank's first piece.)
fn summed_over_ranks(ranks: &dyn Ranks, mine: &Counts) -> Counts {
    let alphabet = mine.0.len();
    let rows: Vec<(usize, &[u64])> = mine.1.iter().map(|(&c, r)| (c, r.as_slice())).collect();
    let pieces = rows.len().div_ceil(COUNT_ROWS_PIECE).max(1);
    let pieces_of = ranks.all_gather(&[pieces as u64]);
    let zeros = vec![0; alphabet];
    let mut sum: Counts = (vec![0; alphabet], Default::default());
    for (r, &pieces) in pieces_of.iter().enumerate() {
        for i in 0..pieces as usize {
            let bytes = if r == ranks.rank() {
                let overall = if i == 0 { &mine.0[..] } else { &zeros[..] };
                let from = (i * COUNT_ROWS_PIECE).min(rows.len());
                let to = (from + COUNT_ROWS_PIECE).min(rows.len());
                counts_to_bytes(overall, rows[from..to].iter().copied())
            } else {
                Vec::new()
            };
            let theirs = ranks.all_gather_bytes(&bytes).swap_remove(r);
            drop(bytes);
            add_counts(&mut sum, &theirs);
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cluster::threads::ThreadRank;
    use crate::cluster::Shares;
    use crate::file::{level_path, write_level_as, write_level_bounded};
    use crate::game::rules::{RuleSet, Rules};

    /// Values in `-seeds..=seeds`, mostly small, and free bits, from a fixed
    /// generator: not a level's, but what the writer learns from all the same.
    fn arbitrary(boards: u64, seeds: u32) -> (Vec<i8>, Vec<u64>) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let s = i64::from(seeds);
        let scores = (0..boards)
            .map(|i| {
                let x = next();
                let small = (x % 5) as i64 - 2 + ((i >> 9) % 3) as i64 - 1;
                let v = if x % 17 == 0 {
                    (x >> 8) as i64 % (2 * s + 1) - s
                } else {
                    small
                };
                v.clamp(-s, s) as i8
            })
            .collect();
        let free = (0..boards.div_ceil(64)).map(|_| next() & next()).collect();
        (scores, free)
    }

    /// The file of level `id` written by `ranks` threads from even shares.
    fn written_by_ranks(
        ranks: usize,
        dir: &Path,
        id: LevelId,
        stored: Stored,
        (scores, free): (&[i8], &[u64]),
        options: WriteOptions,
    ) -> Vec<u8> {
        let shares = Shares::even(id.boards(), ranks);
        std::thread::scope(|scope| {
            for rank in ThreadRank::job(ranks) {
                let shares = &shares;
                scope.spawn(move || {
                    let b = shares.range(rank.rank());
                    let share = Share {
                        boards: b.clone(),
                        scores: &scores[b.start as usize..b.end as usize],
                        free: Some(&free[(b.start / 64) as usize..b.end.div_ceil(64) as usize]),
                    };
                    let written = write_level_shared(&rank, dir, id, stored, share, options);
                    assert_eq!(written.unwrap().is_some(), rank.rank() == 0);
                });
            }
        });
        std::fs::read(level_path(dir, id)).unwrap()
    }

    #[test]
    fn shares_write_the_file_one_writer_writes() {
        let dir = tempfile::tempdir().unwrap();
        let unsegmented = WriteOptions {
            segment_boards: 16384,
            ..WriteOptions::default()
        };
        let rank_model = WriteOptions {
            encoding: EncodingChoice::ContextRank(2),
            ..unsegmented
        };
        // Blocks small enough that a share is encoded in several runs
        // (`ENCODE_CHUNK_BLOCKS`).
        let small_blocks = WriteOptions {
            block_boards: 512,
            segment_boards: 256,
            ..WriteOptions::default()
        };
        for (pits, seeds) in [(6, 10), (4, 12), (2, 9)] {
            let id = LevelId::new(Rules::new(RuleSet::Awari, pits).unwrap(), seeds);
            let (scores, free) = arbitrary(id.boards(), seeds);
            for options in [
                WriteOptions::default(),
                unsegmented,
                rank_model,
                small_blocks,
            ] {
                let one = dir.path().join("one");
                std::fs::create_dir_all(&one).unwrap();
                let bounded = write_level_bounded(&one, id, &scores, &free, options).unwrap();
                let bounded = std::fs::read(bounded).unwrap();
                let exact = write_level_as(&one, id, &scores, Stored::Scores, options).unwrap();
                let exact = std::fs::read(exact).unwrap();
                for ranks in [1, 2, 3, 5] {
                    let shared = dir.path().join(format!("ranks-{ranks}"));
                    std::fs::create_dir_all(&shared).unwrap();
                    let level = (&scores[..], &free[..]);
                    let what = format!("{pits} pits, level {seeds}, {options:?}, {ranks} ranks");
                    let by_ranks =
                        written_by_ranks(ranks, &shared, id, Stored::LowerBounds, level, options);
                    assert!(by_ranks == bounded, "lower bounds, {what}");
                    let by_ranks =
                        written_by_ranks(ranks, &shared, id, Stored::Scores, level, options);
                    assert!(by_ranks == exact, "scores, {what}");
                }
            }
        }
    }
}
