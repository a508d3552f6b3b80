//! The streaming level writer.
//!
//! Values arrive in index order through [`LevelWriter::push`]. Training
//! blocks choose the value encoding and learn its model: the whole level for
//! [`write_level`], blocks given to [`LevelWriter::train_on`] (e.g. spread over
//! the level by [`spread_sample`]), or else the first [`TRAIN_BOARDS`] values
//! pushed (the start of a level is not typical of it: files come out a little
//! larger). Then the header is reserved, the model and a zeroed offset table
//! are written, and blocks follow, encoded a batch at a time in parallel.
//! Offset-table entries are written in place every [`TABLE_FLUSH`] blocks, so
//! memory does not grow with the level (only the model does, with the number
//! of contexts). [`LevelWriter::finish`] completes the table and the header,
//! syncs and renames the temporary file to its final name.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};

use super::bounds::{BoundChooser, Stored};
use super::codec::{usable_neighbours, Encoding, Model};
use super::context::{LazyBlocks, Shape, TrainingBlocks, PIT0_CLASSES};
use super::layout::{self, Header, HEADER_LEN, MAX_BLOCK_BOARDS, MAX_SEGMENT_BOARDS};
use super::{level_path, LevelId};

/// Values buffered to choose the encoding before the first block is written
/// (when no training blocks were given), and about how many boards measure
/// the candidate encodings.
pub const TRAIN_BOARDS: usize = 1 << 20;
/// Offset-table entries kept in memory before they are written in place.
const TABLE_FLUSH: usize = 1 << 14;
/// Blocks compressed together (in parallel) per batch.
const BATCH_BLOCKS: usize = 64;

/// How a level file is cut into blocks and compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Boards per block: each block has an offset and a checksum, and with
    /// the zstd encodings a lookup decompresses its whole block (1 to 2^20).
    pub block_boards: u32,
    /// Boards per segment of a context-ans block: segments are coded
    /// independently, and a lookup decodes (part of) one segment, so smaller
    /// segments answer faster and compress a little worse (each costs 6
    /// bytes). Equal to `block_boards` for blocks not cut; else it divides
    /// `block_boards` and is at most 2^14.
    pub segment_boards: u32,
    /// The zstd level of the raw and context-rank encodings, 1 to 22 (higher:
    /// smaller and slower to write; reading speed hardly changes).
    pub zstd_level: i32,
    /// The value encoding ([`EncodingChoice::Auto`]: the smallest on a
    /// sample of the level).
    pub encoding: EncodingChoice,
}

impl Default for WriteOptions {
    /// Blocks of 16384 boards, cut into segments of 128 with the context-ans
    /// encoding, and zstd level 12.
    ///
    /// A block costs 12 bytes (offset and checksum) and a segment 6 (its
    /// rANS state and length), and a lookup decodes part of one segment:
    /// smaller segments make quicker lookups and larger files. 128 is where
    /// lookups stopped getting quicker on awari level 22 (the figures for
    /// 128, 256 and 512 are in `docs/performance.md`). zstd level 12 makes
    /// files within 0.2% of level 19's at about twice the speed (levels
    /// 14..=23).
    fn default() -> WriteOptions {
        WriteOptions {
            block_boards: 16384,
            segment_boards: 128,
            zstd_level: 12,
            encoding: EncodingChoice::Auto,
        }
    }
}

/// Which value encoding a writer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EncodingChoice {
    /// Try every encoding on the training values and keep the one that makes
    /// the smallest file (model included); when blocks are cut into segments
    /// (for quick lookups), context-rank is left out, whose lookups
    /// decompress whole blocks.
    #[default]
    Auto,
    /// Raw signed bytes.
    Raw,
    /// Context ranks with this many neighbours (clamped to what the board size
    /// allows, at least 1).
    ContextRank(usize),
    /// Context rANS with this many neighbours (clamped likewise).
    ContextAns(usize),
}

// One per writer: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum State {
    /// Collecting values to choose the encoding.
    Training { values: Vec<i8> },
    /// Writing blocks; `pending` holds values not yet in a full batch.
    Writing {
        /// The model the values pushed are encoded with: none when the
        /// blocks come encoded already ([`LevelWriter::preset_model`]).
        model: Option<Model>,
        encoding: Encoding,
        pending: Vec<i8>,
        table: TableCursor,
    },
}

/// Where the next offset-table entries go, and the entries not yet written.
struct TableCursor {
    table_offset: u64,
    blocks: u64,
    /// Index of the first entry in `offsets` / `crcs`.
    first: u64,
    offsets: Vec<u64>,
    crcs: Vec<u32>,
    /// File offset of the next block.
    next_offset: u64,
    /// Blocks written so far.
    written: u64,
    /// CRC-32 of all block bytes so far.
    blocks_crc: crc32fast::Hasher,
}

/// Writes one level file from values in index order; see the module docs.
///
/// Dropping a writer without [`LevelWriter::finish`] removes its temporary file.
pub struct LevelWriter {
    id: LevelId,
    options: WriteOptions,
    temp: PathBuf,
    file: Option<BufWriter<File>>,
    /// Values received so far.
    pushed: u64,
    /// Values written into blocks so far.
    encoded: u64,
    /// Training blocks spread over the level (for [`write_level`]), used instead
    /// of the first values.
    sample: Option<Vec<(u64, Vec<i8>)>>,
    /// A model chosen before the writer was made (by [`write_level`]).
    preset: Option<Model>,
    model_bytes: Vec<u8>,
    /// What the values pushed are (the header says so).
    stored: Stored,
    state: State,
}

impl LevelWriter {
    /// Starts writing level `id` into directory `dir`, under a temporary name
    /// (`<final name>.partial`) that [`LevelWriter::finish`] renames.
    ///
    /// # Errors
    /// [`Error::Io`] naming the temporary file when it cannot be created;
    /// [`Error::Rules`] for a block size outside 1..=2^20 or a zstd level
    /// outside 1..=22; [`Error::TooManySeeds`] beyond `MAX_SEEDS`.
    pub fn create(dir: &Path, id: LevelId, options: WriteOptions) -> Result<LevelWriter> {
        LevelWriter::create_as(dir, id, Stored::Scores, options)
    }

    /// Like [`LevelWriter::create`], for values that are `stored`; the bounds
    /// of `--repetition any` go to their own names ([`super::bound_path`]).
    ///
    /// # Errors
    /// As [`LevelWriter::create`].
    pub fn create_as(
        dir: &Path,
        id: LevelId,
        stored: Stored,
        options: WriteOptions,
    ) -> Result<LevelWriter> {
        crate::game::rules::check_seeds(id.seeds)?;
        if !(1..=MAX_BLOCK_BOARDS).contains(&options.block_boards) {
            return Err(Error::Rules(format!(
                "{} boards per block; use 1 to {MAX_BLOCK_BOARDS}",
                options.block_boards
            )));
        }
        let segments_fit = options.segment_boards == options.block_boards
            || (1..=MAX_SEGMENT_BOARDS).contains(&options.segment_boards)
                && options.block_boards.is_multiple_of(options.segment_boards);
        if !segments_fit {
            return Err(Error::Rules(format!(
                "{} boards per segment in blocks of {}; use the block size, or 1 to \
                 {MAX_SEGMENT_BOARDS} dividing it",
                options.segment_boards, options.block_boards
            )));
        }
        if !(1..=22).contains(&options.zstd_level) {
            return Err(Error::Rules(format!(
                "zstd level {}; use 1 to 22",
                options.zstd_level
            )));
        }
        let temp = final_path(dir, id, stored).with_extension("awl.partial");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|source| Error::Io {
                path: temp.clone(),
                source,
            })?;
        Ok(LevelWriter {
            id,
            options,
            temp,
            file: Some(BufWriter::with_capacity(1 << 20, file)),
            pushed: 0,
            encoded: 0,
            sample: None,
            preset: None,
            model_bytes: Vec::new(),
            stored,
            state: State::Training { values: Vec::new() },
        })
    }

    /// Chooses the value encoding from these whole blocks `(first board,
    /// values)`, e.g. blocks spread over the level, instead of from the first
    /// [`TRAIN_BOARDS`] values pushed; then nothing is held back. Call it
    /// before the first [`LevelWriter::push`].
    ///
    /// # Errors
    /// [`Error::Rules`] when values were already pushed, or a block does not
    /// start on a block boundary or has the wrong length;
    /// [`Error::Corrupt`] naming the temporary file for a value out of range.
    pub fn train_on(&mut self, blocks: &[(u64, &[i8])]) -> Result<()> {
        if self.pushed > 0 {
            return Err(Error::Rules(
                "train_on must come before the first push".into(),
            ));
        }
        let bb = u64::from(self.options.block_boards);
        let boards = self.id.boards();
        let seeds = self.id.seeds as i32;
        for &(start, values) in blocks {
            let want = boards.saturating_sub(start).min(bb);
            if start % bb != 0 || start >= boards || values.len() as u64 != want {
                return Err(Error::Rules(format!(
                    "training block at board {start} with {} values is not a whole block of {bb} boards",
                    values.len()
                )));
            }
            if let Some(v) = values.iter().find(|&&v| i32::from(v).abs() > seeds) {
                return Err(
                    self.corrupt(format!("training value {v} is outside -{seeds}..={seeds}"))
                );
            }
        }
        self.sample = Some(blocks.iter().map(|&(s, v)| (s, v.to_vec())).collect());
        Ok(())
    }

    /// The temporary file being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Appends the values of the next boards in index order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the temporary file when a value lies outside
    /// `-seeds..=seeds` or more values arrive than the level has boards;
    /// [`Error::Io`] when writing fails (the disk is full, say). After an error
    /// the writer is unusable; dropping it removes the temporary file.
    pub fn push(&mut self, values: &[i8]) -> Result<()> {
        let boards = self.id.boards();
        if self.pushed + values.len() as u64 > boards {
            return Err(self.corrupt(format!(
                "{} values pushed, but level {} has only {boards} boards",
                self.pushed + values.len() as u64,
                self.id.seeds
            )));
        }
        let seeds = self.id.seeds;
        if let Some(i) = first_out_of_range(values, seeds) {
            return Err(self.corrupt(format!(
                "value {} of board {} is outside -{seeds}..={seeds}",
                values[i],
                self.pushed + i as u64
            )));
        }
        self.pushed += values.len() as u64;
        let mut rest = values;
        if let State::Training { values: buffer } = &mut self.state {
            if self.sample.is_none() && self.preset.is_none() {
                // Hold values back until there are enough to choose the encoding.
                let want = TRAIN_BOARDS.min(boards as usize);
                let take = rest.len().min(want - buffer.len());
                buffer.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if buffer.len() < want {
                    return Ok(());
                }
            }
            self.start_writing()?;
        }
        let batch = self.options.block_boards as usize * BATCH_BLOCKS;
        let State::Writing { pending, .. } = &mut self.state else {
            unreachable!("start_writing switched the state");
        };
        // Complete a started batch first, then write whole batches straight
        // from the caller's slice, and keep the rest.
        if !pending.is_empty() {
            let take = rest.len().min(batch.saturating_sub(pending.len()));
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if pending.len() >= batch {
                let full = std::mem::take(pending);
                self.write_batch(&full)?;
            }
        }
        while rest.len() >= batch {
            self.write_batch(&rest[..batch])?;
            rest = &rest[batch..];
        }
        if !rest.is_empty() {
            if let State::Writing { pending, .. } = &mut self.state {
                pending.extend_from_slice(rest);
            }
        }
        Ok(())
    }

    /// Completes the file: writes the last block, the offset table and the
    /// header, syncs the file to disk and renames it to
    /// [`level_path`]`(dir, id)`. Returns the final path.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when fewer values than the level's boards were pushed;
    /// [`Error::Io`] naming the file when writing, syncing or renaming fails. On
    /// error the temporary file is removed.
    pub fn finish(mut self) -> Result<PathBuf> {
        let boards = self.id.boards();
        if self.pushed != boards {
            return Err(self.corrupt(format!(
                "only {} of the {boards} values of level {} were written; the file is incomplete",
                self.pushed, self.id.seeds
            )));
        }
        if matches!(self.state, State::Training { .. }) {
            self.start_writing()?;
        }
        if let State::Writing { pending, .. } = &mut self.state {
            let last = std::mem::take(pending);
            if !last.is_empty() {
                self.write_batch(&last)?;
            }
        }
        let State::Writing {
            table, encoding, ..
        } = &mut self.state
        else {
            unreachable!("start_writing switched the state");
        };
        let encoding = *encoding;
        debug_assert_eq!(self.encoded, boards);
        let temp = self.temp.clone();
        let io = |source| Error::Io {
            path: temp.clone(),
            source,
        };
        let mut file = self.file.take().expect("the file is open until finish");
        flush_table(&mut file, table).map_err(io)?;
        // The table, read back, gives its checksum; then the whole body's.
        let mut file = file.into_inner().map_err(|e| io(e.into_error()))?;
        let tlen = layout::table_len(table.blocks);
        let mut table_bytes = vec![0u8; tlen as usize];
        file.seek(SeekFrom::Start(table.table_offset)).map_err(io)?;
        file.read_exact(&mut table_bytes).map_err(io)?;
        let table_crc = crc32fast::hash(&table_bytes);
        let mut body = crc32fast::Hasher::new();
        body.update(&self.model_bytes);
        body.update(&table_bytes);
        body.combine(&table.blocks_crc);
        let header = Header {
            rules: self.id.rules,
            seeds: self.id.seeds,
            encoding,
            compression: encoding.compression(),
            compression_level: self.options.zstd_level,
            block_boards: self.options.block_boards,
            segment_boards: if encoding == Encoding::ContextAns {
                self.options.segment_boards
            } else {
                self.options.block_boards
            },
            boards,
            blocks: table.blocks,
            model_len: self.model_bytes.len() as u64,
            model_crc: crc32fast::hash(&self.model_bytes),
            table_crc,
            body_crc: body.finalize(),
            file_len: table.next_offset,
            stored: self.stored,
        };
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&header.to_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        drop(file);
        let dir = self.temp.parent().unwrap_or(Path::new("."));
        let target = final_path(dir, self.id, self.stored);
        std::fs::rename(&self.temp, &target).map_err(io)?;
        // Make the rename durable; a directory that cannot be synced (some file
        // systems) is not an error for the data itself.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        self.temp = PathBuf::new(); // nothing left to clean up
        Ok(target)
    }

    /// Chooses the model from whole blocks spread over the level, whose
    /// values `values_of(range)` gives, and keeps it for the blocks to come.
    /// (Counting is cheap and probabilities want data: the whole level up to
    /// 64 Mi boards trains; beyond, the gain is below 0.005 bit per board.
    /// About [`TRAIN_BOARDS`] of it measures the candidates.)
    fn preset_from_spread<'v>(
        &mut self,
        values_of: impl Fn(std::ops::Range<u64>) -> Cow<'v, [i8]> + Sync,
    ) -> Result<()> {
        let (id, options) = (self.id, self.options);
        // The training blocks are made while they are counted, a few at a
        // time: held at once, those of a large level took 64 MiB (the
        // level's peak memory, at 22 and 23 seeds). The few that measure
        // the candidates are kept.
        let all = LazyBlocks {
            ranges: spread_sample(id.boards(), options.block_boards, 64 * TRAIN_BOARDS as u64),
            values_of: &values_of,
        };
        let eval: Vec<(u64, Cow<'v, [i8]>)> =
            spread_sample(id.boards(), options.block_boards, TRAIN_BOARDS as u64)
                .into_iter()
                .map(|r| (r.start, values_of(r)))
                .collect();
        let eval: Vec<(u64, &[i8])> = eval.iter().map(|(s, v)| (*s, v.as_ref())).collect();
        let model =
            choose_model(id, options, self.options.encoding, &all, &eval).map_err(|source| {
                Error::Io {
                    path: self.temp.clone(),
                    source,
                }
            })?;
        self.preset = Some(model);
        Ok(())
    }

    fn corrupt(&self, reason: String) -> Error {
        Error::Corrupt {
            path: self.temp.clone(),
            reason,
        }
    }

    /// Chooses the model, writes the header placeholder, the model and a zeroed
    /// offset table, and moves the training values into the pending buffer.
    fn start_writing(&mut self) -> Result<()> {
        let State::Training { values } =
            std::mem::replace(&mut self.state, State::Training { values: Vec::new() })
        else {
            return Ok(());
        };
        let bb = self.options.block_boards as usize;
        let model = match self.preset.take() {
            Some(model) => model,
            None => {
                let sample: Vec<(u64, &[i8])> = match &self.sample {
                    Some(s) => s.iter().map(|(start, v)| (*start, v.as_slice())).collect(),
                    None => values
                        .chunks(bb)
                        .enumerate()
                        .map(|(i, c)| ((i * bb) as u64, c))
                        .collect(),
                };
                // All of it trains; about TRAIN_BOARDS of it, spread, measures.
                let sampled: usize = sample.iter().map(|(_, v)| v.len()).sum();
                let step = sampled.div_ceil(TRAIN_BOARDS).max(1);
                let eval: Vec<(u64, &[i8])> = sample.iter().step_by(step).copied().collect();
                choose_model(
                    self.id,
                    self.options,
                    self.options.encoding,
                    &sample[..],
                    &eval,
                )
                .map_err(|source| Error::Io {
                    path: self.temp.clone(),
                    source,
                })?
            }
        };
        let encoding = model.encoding();
        self.open_sections(model.to_bytes(), encoding, Some(model), values)
    }

    /// Writes the header's room, the model's section `model_bytes` and the
    /// offset table's room, and turns to writing blocks encoded as
    /// `encoding` (with `model`, when values are to be pushed; `pending`
    /// are values pushed before).
    fn open_sections(
        &mut self,
        model_bytes: Vec<u8>,
        encoding: Encoding,
        model: Option<Model>,
        pending: Vec<i8>,
    ) -> Result<()> {
        self.model_bytes = model_bytes;
        let blocks = layout::block_count(self.id.boards(), self.options.block_boards);
        let table_offset = HEADER_LEN as u64 + self.model_bytes.len() as u64;
        let tlen = layout::table_len(blocks);
        let temp = self.temp.clone();
        let file = self.file.as_mut().expect("open while writing");
        let io = |source| Error::Io {
            path: temp.clone(),
            source,
        };
        file.write_all(&[0u8; HEADER_LEN]).map_err(io)?;
        file.write_all(&self.model_bytes).map_err(io)?;
        let zeros = vec![0u8; 1 << 16];
        let mut left = tlen;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            file.write_all(&zeros[..n]).map_err(io)?;
            left -= n as u64;
        }
        self.state = State::Writing {
            model,
            encoding,
            pending,
            table: TableCursor {
                table_offset,
                blocks,
                first: 0,
                offsets: Vec::new(),
                crcs: Vec::new(),
                next_offset: table_offset + tlen,
                written: 0,
                blocks_crc: crc32fast::Hasher::new(),
            },
        };
        self.sample = None;
        Ok(())
    }

    /// Encodes, compresses (in parallel, one block per task) and writes the
    /// values of the next boards, in whole blocks except at the level's end.
    fn write_batch(&mut self, chunk: &[i8]) -> Result<()> {
        let (id, first) = (self.id, self.encoded);
        let level = self.options.zstd_level;
        let segment = self.options.segment_boards as usize;
        self.write_frames(chunk.len(), |model, start, len| {
            let values = &chunk[(start - first) as usize..][..len];
            model.encode_frame(id, start, values, level, segment)
        })
    }

    /// Writes the blocks of the next `boards` boards, in whole blocks except
    /// at the level's end: `frame_of(model, first board, boards)` gives each
    /// block's bytes, made in parallel, one block per task.
    fn write_frames(
        &mut self,
        boards: usize,
        frame_of: impl Fn(&Model, u64, usize) -> std::io::Result<Vec<u8>> + Sync,
    ) -> Result<()> {
        let State::Writing {
            model: Some(model), ..
        } = &self.state
        else {
            unreachable!("values are encoded after start_writing, with its model");
        };
        let bb = self.options.block_boards as usize;
        let first_board = self.encoded;
        let frames: Vec<std::io::Result<Vec<u8>>> = (0..boards.div_ceil(bb))
            .into_par_iter()
            .map(|i| {
                frame_of(
                    model,
                    first_board + (i * bb) as u64,
                    bb.min(boards - i * bb),
                )
            })
            .collect();
        let frames = frames
            .into_iter()
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|source| Error::Io {
                path: self.temp.clone(),
                source,
            })?;
        self.append_frames(boards as u64, frames)
    }

    /// Appends the frames of the blocks of the next `boards` boards (whole
    /// blocks, but at the level's end), encoded already.
    fn append_frames(&mut self, boards: u64, frames: Vec<Vec<u8>>) -> Result<()> {
        let State::Writing { table, .. } = &mut self.state else {
            unreachable!("blocks are written after start_writing");
        };
        let temp = &self.temp;
        let io = |source| Error::Io {
            path: temp.clone(),
            source,
        };
        let file = self.file.as_mut().expect("open while writing");
        for frame in frames {
            file.write_all(&frame).map_err(io)?;
            table.offsets.push(table.next_offset);
            table.crcs.push(crc32fast::hash(&frame));
            table.blocks_crc.update(&frame);
            table.next_offset += frame.len() as u64;
            table.written += 1;
            if table.offsets.len() >= TABLE_FLUSH {
                flush_table(file, table).map_err(io)?;
            }
        }
        self.encoded += boards;
        Ok(())
    }

    /// The boards pushed so far.
    pub(crate) fn pushed_boards(&self) -> u64 {
        self.pushed
    }

    /// Writes the section of `model`, the model of the blocks to come,
    /// chosen before the writer was made: by the ranks of an MPI job
    /// together ([`super::shared`]), which push them encoded
    /// ([`LevelWriter::push_frames`]). The writer keeps the model's bytes
    /// only, not a copy of it. (Packing it takes a few MiB for a while,
    /// better before the blocks are encoded.) Call it before anything is
    /// pushed.
    ///
    /// # Errors
    /// [`Error::Io`] when writing fails.
    pub(crate) fn preset_model(&mut self, model: &Model) -> Result<()> {
        debug_assert_eq!(self.pushed, 0);
        debug_assert!(matches!(&self.state, State::Training { values } if values.is_empty()));
        self.open_sections(model.to_bytes(), model.encoding(), None, Vec::new())
    }

    /// Appends the blocks of the next `boards` boards (whole blocks, but
    /// at the level's end), encoded already with the preset model
    /// ([`LevelWriter::preset_model`]), one frame each.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when more boards arrive than the level has;
    /// [`Error::Io`] when writing fails.
    pub(crate) fn push_frames(&mut self, boards: u64, frames: Vec<Vec<u8>>) -> Result<()> {
        if self.pushed + boards > self.id.boards() {
            return Err(self.corrupt(format!(
                "{} boards pushed, but level {} has only {}",
                self.pushed + boards,
                self.id.seeds,
                self.id.boards()
            )));
        }
        debug_assert_eq!(
            frames.len() as u64,
            boards.div_ceil(u64::from(self.options.block_boards))
        );
        if matches!(self.state, State::Training { .. }) {
            self.start_writing()?;
        }
        self.pushed += boards;
        self.append_frames(boards, frames)
    }

    /// Writes the whole level from its scores, each board storing what
    /// `chooser` chooses for it ([`BoundChooser::choose`]), chosen in the
    /// same walk over the contexts that encodes it (choosing first walked
    /// them twice). Only for a preset context-ans model in the chooser's
    /// shape: otherwise it writes nothing and returns false, and the values
    /// are to be chosen and pushed.
    ///
    /// # Errors
    /// As [`LevelWriter::push`] (the scores are known to be in range).
    fn push_chosen(&mut self, scores: &[i8], free: &[u64], chooser: &BoundChooser) -> Result<bool> {
        let fused = match (&self.preset, chooser.shape()) {
            (Some(Model::ContextAns(m)), Some(shape)) => m.shape() == shape,
            _ => false,
        };
        if !fused || self.pushed > 0 || scores.len() as u64 != self.id.boards() {
            return Ok(false);
        }
        self.start_writing()?;
        self.pushed = self.id.boards();
        let id = self.id;
        let segment = self.options.segment_boards as usize;
        let chosen = |board: u64, ctx: usize| {
            let b = board as usize;
            chooser.stored_symbol(b, scores[b], ctx, free)
        };
        // In batches, as pushed values are: the table is flushed as it fills.
        let batch = self.options.block_boards as usize * BATCH_BLOCKS;
        for part in scores.chunks(batch) {
            self.write_frames(part.len(), |model, start, len| match model {
                Model::ContextAns(m) => Ok(m.encode_frame(id, start, len, segment, &chosen)),
                _ => unreachable!("checked above: context-ans"),
            })?;
        }
        Ok(true)
    }
}

impl std::fmt::Debug for LevelWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelWriter")
            .field("id", &self.id)
            .field("temp", &self.temp)
            .field("pushed", &self.pushed)
            .finish()
    }
}

impl Drop for LevelWriter {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// The temporary name of level `id` in `dir` while it is written.
pub fn temp_path(dir: &Path, id: LevelId) -> PathBuf {
    dir.join(format!("{}.partial", id.file_name()))
}

/// Where a level of `stored` values goes: its level file, or for the
/// bounds of `--repetition any` the file of that bound.
fn final_path(dir: &Path, id: LevelId, stored: Stored) -> PathBuf {
    match stored {
        Stored::RepetitionLower => super::bound_path(dir, id, crate::level::Bound::Lower),
        Stored::RepetitionUpper => super::bound_path(dir, id, crate::level::Bound::Upper),
        Stored::Scores | Stored::LowerBounds => level_path(dir, id),
    }
}

/// Writes the buffered table entries in place (and, once every block is
/// written, the final end offset), then returns to the end of the file.
fn flush_table(file: &mut BufWriter<File>, table: &mut TableCursor) -> std::io::Result<()> {
    let finished = table.written == table.blocks;
    if finished {
        table.offsets.push(table.next_offset); // the end of the last block
    }
    if table.offsets.is_empty() {
        return Ok(());
    }
    file.flush()?;
    let f = file.get_mut();
    let offsets: Vec<u8> = table.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    f.seek(SeekFrom::Start(table.table_offset + 8 * table.first))?;
    f.write_all(&offsets)?;
    if !table.crcs.is_empty() {
        let crcs: Vec<u8> = table.crcs.iter().flat_map(|c| c.to_le_bytes()).collect();
        f.seek(SeekFrom::Start(
            table.table_offset + 8 * (table.blocks + 1) + 4 * table.first,
        ))?;
        f.write_all(&crcs)?;
    }
    f.seek(SeekFrom::End(0))?;
    table.first += table.crcs.len() as u64;
    table.offsets.clear();
    table.crcs.clear();
    Ok(())
}

/// Picks the model for a level: every candidate of `choice` is learnt from
/// the `train` blocks `(first board, values)` and measured on the `eval`
/// blocks; the one whose model plus blocks, scaled to the whole level, is
/// smallest wins.
fn choose_model<'b>(
    id: LevelId,
    options: WriteOptions,
    choice: EncodingChoice,
    train: &(impl TrainingBlocks<'b> + ?Sized),
    eval: &[(u64, &[i8])],
) -> std::io::Result<Model> {
    let most = usable_neighbours(id.rules.pits());
    let sampled: u64 = eval.iter().map(|(_, v)| v.len() as u64).sum();
    if most == 0 || sampled == 0 || choice == EncodingChoice::Raw {
        return Ok(Model::Raw);
    }
    let candidates: Vec<Model> = match choice {
        EncodingChoice::Raw => unreachable!("returned above"),
        EncodingChoice::ContextRank(k) => return Ok(Model::train(id, k.clamp(1, most), train)),
        EncodingChoice::ContextAns(k) => return Ok(Model::train_ans(id, k.clamp(1, most), train)),
        EncodingChoice::Auto => {
            // Blocks cut into segments ask for quick lookups, which only
            // context-ans gives: a context-rank block is one zstd frame, and
            // a lookup decompresses all of it (with segments of 256, awari
            // levels 22..=24 in context-rank are 3% smaller than in
            // context-ans, and 15 to 27 times slower to look up).
            let segmented = options.segment_boards < options.block_boards;
            let counts = Shape::new(id, most, PIT0_CLASSES).count(id, train);
            std::iter::once(Model::Raw)
                .chain(Model::candidates_from_counts(id, most, &counts, !segmented))
                .collect()
        }
    };
    let scored: Vec<std::io::Result<(f64, Model)>> = candidates
        .into_par_iter()
        .map(|model| {
            let stored = frame_bytes(&model, id, options, eval)?;
            let estimate = estimated_bytes(id, model.to_bytes().len(), stored, sampled);
            Ok((estimate, model))
        })
        .collect();
    let mut best: Option<(f64, Model)> = None;
    for s in scored {
        let (estimate, model) = s?;
        keep_smaller(&mut best, estimate, model);
    }
    Ok(best.map(|(_, m)| m).unwrap_or(Model::Raw))
}

/// The bytes of `model`'s frames of the measuring blocks `eval` (`(first
/// board, values)`), encoded in parallel.
pub(super) fn frame_bytes(
    model: &Model,
    id: LevelId,
    options: WriteOptions,
    eval: &[(u64, &[i8])],
) -> std::io::Result<u64> {
    eval.par_iter()
        .map(|&(start, values)| {
            let frame = model.encode_frame(
                id,
                start,
                values,
                options.zstd_level,
                options.segment_boards as usize,
            )?;
            Ok(frame.len() as u64)
        })
        .sum()
}

/// The bytes level `id` would take in a model whose section takes
/// `section` bytes and whose frames of measuring blocks holding `sampled`
/// boards take `stored`: the frames scaled to the whole level.
pub(super) fn estimated_bytes(id: LevelId, section: usize, stored: u64, sampled: u64) -> f64 {
    section as f64 + stored as f64 * id.boards() as f64 / sampled as f64
}

/// Keeps in `best` the model of the smallest estimate, the first of equals
/// (candidates come in a fixed order, so every writer chooses the same).
pub(super) fn keep_smaller(best: &mut Option<(f64, Model)>, estimate: f64, model: Model) {
    match best {
        Some((b, _)) if *b <= estimate => {}
        _ => *best = Some((estimate, model)),
    }
}

/// Writes a whole level at once from its values in index order; returns the
/// final path. The encoding is chosen on blocks spread over the whole level.
///
/// # Errors
/// As [`LevelWriter::push`] and [`LevelWriter::finish`]; also
/// [`Error::Corrupt`] (naming the temporary file) when `values` does not hold
/// exactly `id.boards()` values.
pub fn write_level(
    dir: &Path,
    id: LevelId,
    values: &[i8],
    options: WriteOptions,
) -> Result<PathBuf> {
    write_level_as(dir, id, values, Stored::Scores, options)
}

/// Like [`write_level`], for values that are `stored`: e.g. the values
/// of another file, read with [`super::LevelReader::decode_all`], to encode
/// them again. (To make lower bounds from scores, see
/// [`write_level_bounded`].)
///
/// # Errors
/// As [`write_level`].
pub fn write_level_as(
    dir: &Path,
    id: LevelId,
    values: &[i8],
    stored: Stored,
    options: WriteOptions,
) -> Result<PathBuf> {
    let mut writer = LevelWriter::create_as(dir, id, stored, options)?;
    check_level(&writer, id, values)?;
    writer.preset_from_spread(|r| Cow::Borrowed(&values[r.start as usize..r.end as usize]))?;
    writer.push(values)?;
    writer.finish()
}

/// Writes a whole level of [`Stored::LowerBounds`] from its `scores` in index
/// order and `free`, one bit per board (bit `i % 64` of word `i / 64`) set
/// where a capturing move reaches the board's score: those boards store the
/// value at most their score that codes cheapest ([`BoundChooser`]); the
/// others store their score.
/// Returns the final path.
///
/// # Errors
/// As [`write_level`].
///
/// # Panics
/// When `free` has fewer bits than `scores` has values.
pub fn write_level_bounded(
    dir: &Path,
    id: LevelId,
    scores: &[i8],
    free: &[u64],
    options: WriteOptions,
) -> Result<PathBuf> {
    write_bounded(dir, id, scores, free, options, Walks::One)
}

/// How [`write_bounded`] chooses the values it stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walks {
    /// In the walk over the contexts that encodes them, where the model
    /// allows it ([`LevelWriter::push_chosen`]).
    One,
    /// In a walk of their own, before they are pushed.
    Two,
}

/// [`write_level_bounded`], with its values chosen as `walks` says: the
/// file is the same either way (a test checks it), one walk is faster.
pub(crate) fn write_bounded(
    dir: &Path,
    id: LevelId,
    scores: &[i8],
    free: &[u64],
    options: WriteOptions,
    walks: Walks,
) -> Result<PathBuf> {
    let mut writer = LevelWriter::create(dir, id, options)?;
    writer.stored = Stored::LowerBounds;
    check_level(&writer, id, scores)?;
    assert!(free.len() * 64 >= scores.len(), "a free bit per board");
    let chooser = BoundChooser::learn(id, scores, options.segment_boards);
    // The model learns from chosen values (a copy of the spread blocks: at
    // most 64 Mi boards); then the level is chosen and written a piece at a
    // time, so that memory stays small.
    writer.preset_from_spread(|r| {
        let part = &scores[r.start as usize..r.end as usize];
        Cow::Owned(chooser.choose(r.start, part, free))
    })?;
    if walks == Walks::Two || !writer.push_chosen(scores, free, &chooser)? {
        let bb = options.block_boards;
        let piece = bb as usize * BATCH_BLOCKS;
        for (k, part) in scores.chunks(piece).enumerate() {
            let start = (k * piece) as u64;
            writer.push(&chooser.choose(start, part, free))?;
        }
    }
    writer.finish()
}

/// Checks that `values` are a whole level `id` of values in range, else an
/// error naming `writer`'s temporary file.
fn check_level(writer: &LevelWriter, id: LevelId, values: &[i8]) -> Result<()> {
    if values.len() as u64 != id.boards() {
        return Err(writer.corrupt(format!(
            "{} values given for level {}, which has {} boards",
            values.len(),
            id.seeds,
            id.boards()
        )));
    }
    let seeds = id.seeds;
    if let Some(i) = first_out_of_range(values, seeds) {
        return Err(writer.corrupt(format!(
            "value {} of board {i} is outside -{seeds}..={seeds}",
            values[i]
        )));
    }
    Ok(())
}

/// The first of `values` outside `-seeds..=seeds`, if any. In parallel,
/// tens of thousands of values per task, each tested without a branch.
fn first_out_of_range(values: &[i8], seeds: u32) -> Option<usize> {
    const CHUNK: usize = 1 << 16;
    let out = |v: &i8| u32::from(v.unsigned_abs()) > seeds;
    let chunk = values
        .par_chunks(CHUNK)
        .position_first(|c| c.iter().fold(false, |any, v| any | out(v)))?;
    let from = chunk * CHUNK;
    values[from..].iter().position(out).map(|i| from + i)
}

/// Board ranges of whole blocks spread evenly over a level of `boards` boards,
/// about `target_boards` boards in all (at least one block): what
/// [`LevelWriter::train_on`] wants. [`TRAIN_BOARDS`] is enough to choose an
/// encoding; the context-ans probabilities gain from 16 times more.
pub fn spread_sample(
    boards: u64,
    block_boards: u32,
    target_boards: u64,
) -> Vec<std::ops::Range<u64>> {
    let bb = u64::from(block_boards.max(1));
    let blocks = boards.div_ceil(bb);
    let want = (target_boards / bb).max(1);
    let step = blocks.div_ceil(want).max(1);
    (0..blocks)
        .step_by(step as usize)
        .map(|b| b * bb..((b + 1) * bb).min(boards))
        .collect()
}
