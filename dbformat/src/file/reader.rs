//! The memory-mapped level reader: single lookups through a small cache of
//! decoded blocks, and a parallel bulk decode.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::game::score::Score;
use crate::level::Values;

use super::bounds::Stored;
use super::codec::{Encoding, Model};
use super::layout::{self, FileLayout, HEADER_LEN};
use super::LevelId;
use crate::level::Bound;

/// Decoded segments (whole blocks when blocks are not cut) kept per reader,
/// direct-mapped by their number in the level.
const CACHE_SLOTS: usize = 64;
/// Boards decoded past the one asked for, when a segment is decoded partly.
const PREFIX_SLACK: usize = 32;

/// A decoded segment in the cache: its number in the level and the values
/// of its first boards.
type Slot = Mutex<Option<(u64, Arc<[i8]>)>>;

/// An open level file; see the module docs of [`super`].
///
/// The reader is `Send + Sync`: share it between threads behind an `Arc` or a
/// reference. The file is memory-mapped; it must not be modified while open
/// (level files are written under a temporary name and renamed, never changed
/// in place).
pub struct LevelReader {
    path: PathBuf,
    map: Mmap,
    layout: FileLayout,
    model: Model,
    cache: Vec<Slot>,
}

impl std::fmt::Debug for LevelReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelReader")
            .field("path", &self.path)
            .field("id", &self.id())
            .field("model", &self.model)
            .finish()
    }
}

impl LevelReader {
    /// Opens and memory-maps a level file, validating every header field, the
    /// offset table and the model (the blocks are checked when read).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or mapped;
    /// [`Error::Corrupt`] or [`Error::Unsupported`] naming the file and the
    /// first thing wrong with it.
    pub fn open(path: &Path) -> Result<LevelReader> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < HEADER_LEN as u64 {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                reason: format!(
                    "truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header"
                ),
            });
        }
        // SAFETY: the map is read-only and level files are never modified in
        // place (they are written under another name and renamed). A file
        // changed behind our back could give wrong bytes, which the checksums
        // catch, but not memory unsafety in this crate's code, which only reads
        // through bounds-checked slices.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let layout = layout::parse(&map, path)?;
        let id = layout.header.id();
        let model =
            Model::parse(layout.header.encoding, id, layout.model(&map)).map_err(|reason| {
                Error::Corrupt {
                    path: path.to_path_buf(),
                    reason: format!("bad {} model: {reason}", layout.header.encoding),
                }
            })?;
        Ok(LevelReader {
            path: path.to_path_buf(),
            map,
            layout,
            model,
            cache: (0..CACHE_SLOTS).map(|_| Mutex::new(None)).collect(),
        })
    }

    /// Like [`LevelReader::open`], and checks that the file holds level `id`.
    ///
    /// # Errors
    /// As [`LevelReader::open`]; [`Error::WrongLevel`] when the header names
    /// another rule set, board size or seed count.
    pub fn open_expecting(path: &Path, id: LevelId) -> Result<LevelReader> {
        let reader = LevelReader::open_level(path, id)?;
        if reader.stored().is_repetition_bound() {
            return Err(Error::WrongLevel {
                path: path.to_path_buf(),
                expected: format!("{} (even-split scores)", id.describe()),
                found: format!("{} ({})", id.describe(), reader.stored()),
            });
        }
        Ok(reader)
    }

    /// Like [`LevelReader::open`], and checks that the file holds the
    /// `bound` of level `id` under `--repetition any`.
    ///
    /// # Errors
    /// As [`LevelReader::open`]; [`Error::WrongLevel`] when the header names
    /// another level, or another kind of values (even-split scores, or the
    /// other bound).
    pub fn open_bound(path: &Path, id: LevelId, bound: Bound) -> Result<LevelReader> {
        let reader = LevelReader::open_level(path, id)?;
        if reader.stored() != bound.stored() {
            return Err(Error::WrongLevel {
                path: path.to_path_buf(),
                expected: format!("{} ({})", id.describe(), bound.stored()),
                found: format!("{} ({})", id.describe(), reader.stored()),
            });
        }
        Ok(reader)
    }

    fn open_level(path: &Path, id: LevelId) -> Result<LevelReader> {
        let reader = LevelReader::open(path)?;
        if reader.id() != id {
            return Err(Error::WrongLevel {
                path: path.to_path_buf(),
                expected: id.describe(),
                found: reader.id().describe(),
            });
        }
        Ok(reader)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The level the file holds (from its header).
    pub fn id(&self) -> LevelId {
        self.layout.header.id()
    }

    /// The number of boards (values) in the level.
    pub fn boards(&self) -> u64 {
        self.layout.header.boards
    }

    /// The size of the file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// Boards per block.
    pub fn block_boards(&self) -> u32 {
        self.layout.header.block_boards
    }

    /// Boards per segment: a lookup decodes (part of) one segment. Equal to
    /// [`LevelReader::block_boards`] when blocks are not cut into segments.
    pub fn segment_boards(&self) -> u32 {
        self.layout.header.segment_boards
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.layout.header.blocks
    }

    /// The value encoding of the file.
    pub fn encoding(&self) -> Encoding {
        self.layout.header.encoding
    }

    /// The encoding with its parameters, e.g. `context-rank/3`.
    pub fn encoding_description(&self) -> String {
        self.model.describe()
    }

    /// The zstd level the writer used.
    pub fn compression_level(&self) -> i32 {
        self.layout.header.compression_level
    }

    /// What the stored values are: the boards' scores, or lower bounds that a
    /// capture search turns into scores ([`super::bounds`]).
    pub fn stored(&self) -> Stored {
        self.layout.header.stored
    }

    /// The stored value of board `index` of the level: its score when
    /// [`LevelReader::stored`] is [`Stored::Scores`], else a lower bound
    /// that [`super::resolve`] turns into the score.
    ///
    /// Decodes the board's segment (its block, when blocks are not cut) up to
    /// the board, unless it is among the recently decoded ones.
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `index >= boards()`; [`Error::Corrupt`]
    /// naming the file when the block's checksum, size or values are wrong.
    pub fn get(&self, index: u64) -> Result<Score> {
        let h = &self.layout.header;
        if index >= h.boards {
            return Err(Error::IndexOutOfRange {
                seeds: h.seeds,
                index,
                boards: h.boards,
            });
        }
        // The cache holds decoded segments (whole blocks when blocks are not
        // cut), keyed by their number in the level: blocks are whole numbers
        // of segments, so that number is the index divided by their size.
        let unit = u64::from(h.segment_boards);
        let segment = index / unit;
        let offset = (index % unit) as usize;
        let slot = &self.cache[(segment % CACHE_SLOTS as u64) as usize];
        let mut known = 0;
        if let Some((s, values)) = &*lock(slot) {
            if *s == segment {
                if let Some(&v) = values.get(offset) {
                    return Ok(Score::new(v));
                }
                known = values.len();
            }
        }
        // Decode only as far as needed (values depend on earlier ones in the
        // segment, never on later ones), a little beyond for nearby lookups,
        // and twice as far as last time when the segment is read in order.
        let per_block = u64::from(h.block_boards) / unit;
        let (block, within) = (segment / per_block, (segment % per_block) as usize);
        let first = within * unit as usize;
        let len = (self.layout.boards_in_block(block) - first).min(unit as usize);
        let limit = match self.model {
            Model::Raw => len,
            _ => (offset + PREFIX_SLACK).max(2 * known).min(len),
        };
        let values: Arc<[i8]> = self.decode_segment_prefix(block, within, limit)?.into();
        let v = values[offset];
        *lock(slot) = Some((segment, values));
        Ok(Score::new(v))
    }

    /// The stored values (see [`LevelReader::get`]) of every block decoded in
    /// parallel, in index order, into
    /// huge pages (callers read them at random); every block's checksum and
    /// values are checked on the way.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file and the first bad block found;
    /// [`Error::Io`] naming it when the system refuses the memory.
    pub fn decode_all(&self) -> Result<Values> {
        let mut out = Values::try_zeroed(self.boards()).map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })?;
        self.decode_into(&mut out)?;
        Ok(out)
    }

    /// As [`LevelReader::decode_all`], into `out` (memory of the caller's,
    /// such as a mapped file), one byte per board of the level.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file and the first bad block found.
    ///
    /// # Panics
    /// When `out` does not hold exactly one byte per board of the level.
    pub fn decode_into(&self, out: &mut [i8]) -> Result<()> {
        assert_eq!(out.len() as u64, self.boards(), "one byte per board");
        let bb = self.block_boards() as usize;
        out.par_chunks_mut(bb)
            .enumerate()
            .try_for_each(|(b, chunk)| {
                // (`out` may be a mapped file under a resident ceiling.)
                crate::memory::resident::hold();
                self.decode_block_into(b as u64, chunk)
            })
    }

    /// The stored values of boards `first .. first + len`, decoded in parallel, with
    /// the same checks as [`LevelReader::decode_all`]. Memory is `len` bytes
    /// plus at most two blocks, so a large level can be streamed in pieces.
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when the range goes past the level's end;
    /// [`Error::Corrupt`] naming the file and the first bad block found.
    pub fn decode_range(&self, first: u64, len: usize) -> Result<Vec<i8>> {
        let h = &self.layout.header;
        let end = first.saturating_add(len as u64);
        if end > h.boards {
            return Err(Error::IndexOutOfRange {
                seeds: h.seeds,
                index: end - 1,
                boards: h.boards,
            });
        }
        if len == 0 {
            return Ok(Vec::new());
        }
        let bb = u64::from(h.block_boards);
        let (b0, b1) = (first / bb, (end - 1) / bb);
        let span_start = b0 * bb;
        let span_end = ((b1 + 1) * bb).min(h.boards);
        let mut span = vec![0i8; (span_end - span_start) as usize];
        span.par_chunks_mut(bb as usize)
            .enumerate()
            .try_for_each(|(i, chunk)| self.decode_block_into(b0 + i as u64, chunk))?;
        let skip = (first - span_start) as usize;
        if skip == 0 && span.len() == len {
            return Ok(span);
        }
        Ok(span[skip..skip + len].to_vec())
    }

    /// Checks the checksum over every byte after the header and the checksum
    /// of every block (the header, model and table checksums were checked by
    /// [`LevelReader::open`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file and the first checksum that fails.
    pub fn verify_checksums(&self) -> Result<()> {
        let body = &self.map[HEADER_LEN..];
        // Hash in parallel pieces and combine, in order.
        let piece = 16 << 20;
        let hashers: Vec<crc32fast::Hasher> = body
            .par_chunks(piece)
            .map(|c| {
                let mut h = crc32fast::Hasher::new();
                h.update(c);
                h
            })
            .collect();
        let mut whole = crc32fast::Hasher::new();
        for h in &hashers {
            whole.combine(h);
        }
        let computed = whole.finalize();
        if computed != self.layout.header.body_crc {
            return Err(self.corrupt(format!(
                "whole-file checksum mismatch (stored {:08x}, computed {computed:08x})",
                self.layout.header.body_crc
            )));
        }
        (0..self.blocks())
            .into_par_iter()
            .try_for_each(|b| self.block_bytes(b).map(|_| ()))
    }

    /// Checks the checksum of every block holding boards `first .. first +
    /// len` (a rank's share: with the checks of [`LevelReader::open`], the
    /// shares of all ranks check every block of the file, though not the
    /// whole-file checksum of [`LevelReader::verify_checksums`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the file and the first checksum that fails.
    pub fn verify_checksums_of(&self, first: u64, len: u64) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let bb = u64::from(self.layout.header.block_boards);
        let last = (first + len - 1).min(self.boards().saturating_sub(1)) / bb;
        (first / bb..=last)
            .into_par_iter()
            .try_for_each(|b| self.block_bytes(b).map(|_| ()))
    }

    fn corrupt(&self, reason: String) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            reason,
        }
    }

    /// The compressed bytes of block `block`, after checking their checksum.
    fn block_bytes(&self, block: u64) -> Result<&[u8]> {
        let (start, end) = self.layout.block_range(&self.map, block);
        let bytes = &self.map[start..end];
        let stored = self.layout.block_crc(&self.map, block);
        let computed = crc32fast::hash(bytes);
        if stored != computed {
            return Err(self.corrupt(format!(
                "block {block} (boards {}..) checksum mismatch (stored {stored:08x}, computed {computed:08x})",
                block * u64::from(self.block_boards())
            )));
        }
        Ok(bytes)
    }

    /// The values of the first `limit` boards of segment `segment` of block
    /// `block`.
    fn decode_segment_prefix(&self, block: u64, segment: usize, limit: usize) -> Result<Vec<i8>> {
        let h = &self.layout.header;
        let frame = self.block_bytes(block)?;
        let start = block * u64::from(h.block_boards);
        let len = self.layout.boards_in_block(block);
        let mut out = vec![0i8; limit];
        self.model
            .decode_segment(
                self.id(),
                start,
                frame,
                len,
                h.segment_boards as usize,
                segment,
                &mut out,
            )
            .map_err(|e| self.corrupt(format!("block {block}: {e}")))?;
        Ok(out)
    }

    /// Decodes the first `out.len()` boards of block `block` into `out`.
    fn decode_block_into(&self, block: u64, out: &mut [i8]) -> Result<()> {
        let frame = self.block_bytes(block)?;
        let start = block * u64::from(self.block_boards());
        let len = self.layout.boards_in_block(block);
        let segment_boards = self.layout.header.segment_boards as usize;
        self.model
            .decode_frame(self.id(), start, frame, len, segment_boards, out)
            .map_err(|e| self.corrupt(format!("block {block}: {e}")))
    }
}

/// Locks a cache slot; a poisoned slot (a panic elsewhere while it was held)
/// still holds a consistent value, since slots are replaced whole.
fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Option<(u64, Arc<[i8]>)>> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}
