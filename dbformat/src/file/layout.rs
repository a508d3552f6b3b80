//! The fixed part of a level file: the 128-byte header and the block offset
//! table, written and parsed without touching the compressed blocks.
//!
//! [`parse`] is the single entry point for untrusted bytes: it checks every
//! header field and the whole offset table, so that the reader can index blocks
//! afterwards without bounds surprises. It never panics, whatever the input.

use std::path::Path;

use crate::error::{Error, Result};
use crate::game::rules::{RuleSet, Rules, MAX_PITS, MAX_SEEDS, MIN_PITS};
use crate::index::Index;

use super::bounds::Stored;
use super::codec::Encoding;
use super::LevelId;

/// The first 8 bytes of every level file.
pub const MAGIC: [u8; 8] = *b"AWARILVL";
/// The newest format version, which this build writes for files of
/// [`Stored::LowerBounds`]. It reads every version from 1 up.
pub const VERSION: u16 = 3;
/// The format version of the bound files of `--repetition any` (byte 92 is
/// 2 or 3): newer than every file of scores, so a reader of scores only
/// (versions 1 to 3) refuses them.
pub const VERSION_REPETITION: u16 = 4;
/// The version of files of scores whose blocks are cut into segments.
pub const VERSION_SEGMENTED: u16 = 2;
/// The version of files of scores whose blocks are not cut into segments:
/// version 1 had no segments, so such files are written as version 1,
/// unchanged.
pub const VERSION_UNSEGMENTED: u16 = 1;
/// The length of the header in bytes.
pub const HEADER_LEN: usize = 128;
/// The most boards one block may hold.
pub const MAX_BLOCK_BOARDS: u32 = 1 << 20;
/// The most boards one segment may hold, so that a segment's rANS stream (at
/// most two bytes per board and its state) has a `u16` length.
pub const MAX_SEGMENT_BOARDS: u32 = 1 << 14;
/// The compression code for blocks stored as the encoding made them (the
/// context-ans encoding is its own entropy coder).
pub const COMPRESSION_NONE: u8 = 0;
/// The compression code for blocks that are zstd frames.
pub const COMPRESSION_ZSTD: u8 = 1;
/// Bytes per offset-table entry: a `u64` offset and a `u32` checksum.
const ENTRY_LEN: u64 = 12;

/// Every field of the header, decoded. See the byte table in [`super`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Rule set and pits per side.
    pub rules: Rules,
    /// Seeds on every board of the level.
    pub seeds: u32,
    /// How values are turned into block bytes before compression.
    pub encoding: Encoding,
    /// The compression code: [`COMPRESSION_ZSTD`], or [`COMPRESSION_NONE`]
    /// for context-ans (see [`Encoding::compression`]).
    pub compression: u8,
    /// The zstd level the writer used (informational).
    pub compression_level: i32,
    /// Boards per block (the last block may hold fewer).
    pub block_boards: u32,
    /// Boards per segment: the parts of a context-ans block coded
    /// independently, so that a lookup decodes one segment, not the whole
    /// block. It divides `block_boards`; equal to it when blocks are not cut
    /// (always so in version 1 and for the zstd encodings).
    pub segment_boards: u32,
    /// Boards in the level.
    pub boards: u64,
    /// Number of blocks: `ceil(boards / block_boards)`.
    pub blocks: u64,
    /// Length of the model section, which starts right after the header.
    pub model_len: u64,
    /// CRC-32 of the model section.
    pub model_crc: u32,
    /// CRC-32 of the offset table.
    pub table_crc: u32,
    /// CRC-32 of every byte after the header (model, table and blocks).
    pub body_crc: u32,
    /// Total length of the file.
    pub file_len: u64,
    /// What the values are: scores, or lower bounds of boards a capture
    /// resolves (version 3).
    pub stored: Stored,
}

impl Header {
    /// The level this header describes.
    pub fn id(&self) -> LevelId {
        LevelId {
            rules: self.rules,
            seeds: self.seeds,
        }
    }

    /// Where the offset table starts.
    pub fn table_offset(&self) -> u64 {
        HEADER_LEN as u64 + self.model_len
    }

    /// Where the first block starts (just after the offset table).
    pub fn blocks_offset(&self) -> u64 {
        self.table_offset() + table_len(self.blocks)
    }

    /// The format version of these bytes: [`VERSION`] for lower bounds, else
    /// [`VERSION_SEGMENTED`] when blocks are cut into segments, else
    /// [`VERSION_UNSEGMENTED`]. (Each file gets the oldest version that can
    /// say what it holds, so older readers keep reading what they can.)
    pub fn version(&self) -> u16 {
        if self.stored.is_repetition_bound() {
            VERSION_REPETITION
        } else if self.stored != Stored::Scores {
            VERSION
        } else if self.segment_boards == self.block_boards {
            VERSION_UNSEGMENTED
        } else {
            VERSION_SEGMENTED
        }
    }

    /// The 128 header bytes, with the header checksum in the last four.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.version().to_le_bytes());
        b[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        b[12] = self.rules.set().code();
        b[13] = self.rules.pits();
        b[14] = self.encoding.code();
        b[15] = self.compression;
        b[16..20].copy_from_slice(&self.seeds.to_le_bytes());
        b[20..24].copy_from_slice(&self.block_boards.to_le_bytes());
        b[24..32].copy_from_slice(&self.boards.to_le_bytes());
        b[32..40].copy_from_slice(&self.blocks.to_le_bytes());
        b[40..48].copy_from_slice(&self.model_len.to_le_bytes());
        b[48..56].copy_from_slice(&self.table_offset().to_le_bytes());
        b[56..64].copy_from_slice(&self.blocks_offset().to_le_bytes());
        b[64..72].copy_from_slice(&self.file_len.to_le_bytes());
        b[72..76].copy_from_slice(&self.compression_level.to_le_bytes());
        b[76..80].copy_from_slice(&self.model_crc.to_le_bytes());
        b[80..84].copy_from_slice(&self.table_crc.to_le_bytes());
        b[84..88].copy_from_slice(&self.body_crc.to_le_bytes());
        if self.version() >= 2 {
            b[88..92].copy_from_slice(&self.segment_boards.to_le_bytes());
        }
        if self.version() >= 3 {
            b[92] = self.stored.code();
        }
        let crc = crc32fast::hash(&b[..HEADER_LEN - 4]);
        b[HEADER_LEN - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    }
}

/// Bytes of the offset table for `blocks` blocks: `blocks + 1` offsets and
/// `blocks` checksums.
pub fn table_len(blocks: u64) -> u64 {
    blocks.saturating_mul(ENTRY_LEN).saturating_add(8)
}

/// The number of blocks of a level of `boards` boards.
pub fn block_count(boards: u64, block_boards: u32) -> u64 {
    boards.div_ceil(u64::from(block_boards.max(1)))
}

/// The most bytes a stored block of `block_boards` boards in segments of
/// `segment_boards` may take: the zstd bound for that input, or two bytes per
/// board for rANS streams (a value costs at most 14 bits there) plus each
/// segment's state and length. A larger block is corrupt by construction.
pub fn max_block_bytes(block_boards: u32, segment_boards: u32) -> u64 {
    let zstd = zstd::zstd_safe::compress_bound(block_boards as usize) as u64 + 64;
    let segments = u64::from(block_boards / segment_boards.max(1));
    zstd.max(2 * u64::from(block_boards) + 6 * segments + 64)
}

/// A parsed and fully validated file: the header and where each block lies.
#[derive(Clone, Debug)]
pub struct FileLayout {
    /// The header.
    pub header: Header,
}

impl FileLayout {
    /// The byte range of block `block` (which the caller keeps below `blocks`),
    /// read from the offset table in `file`. The table was validated by [`parse`],
    /// so the range lies inside the file and the ranges are increasing.
    pub fn block_range(&self, file: &[u8], block: u64) -> (usize, usize) {
        let start = read_u64(file, self.header.table_offset() + 8 * block);
        let end = read_u64(file, self.header.table_offset() + 8 * (block + 1));
        (start as usize, end as usize)
    }

    /// The stored CRC-32 of block `block`'s compressed bytes.
    pub fn block_crc(&self, file: &[u8], block: u64) -> u32 {
        let at = self.header.table_offset() + 8 * (self.header.blocks + 1) + 4 * block;
        let mut b = [0u8; 4];
        b.copy_from_slice(&file[at as usize..at as usize + 4]);
        u32::from_le_bytes(b)
    }

    /// The model section's bytes.
    pub fn model<'a>(&self, file: &'a [u8]) -> &'a [u8] {
        &file[HEADER_LEN..HEADER_LEN + self.header.model_len as usize]
    }

    /// Boards in block `block` (the last one may be short).
    pub fn boards_in_block(&self, block: u64) -> usize {
        let h = &self.header;
        let start = block * u64::from(h.block_boards);
        (h.boards - start).min(u64::from(h.block_boards)) as usize
    }
}

fn read_u64(file: &[u8], at: u64) -> u64 {
    let at = at as usize;
    let mut b = [0u8; 8];
    b.copy_from_slice(&file[at..at + 8]);
    u64::from_le_bytes(b)
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Parses and validates the header and the offset table of a whole level file
/// (`file` is every byte of it, usually a memory map). The model section's
/// checksum is checked too; the blocks are not read.
///
/// # Errors
/// - [`Error::Corrupt`] naming `path` and the first field that is wrong: a file
///   shorter than the header or than the header says, a wrong magic, a header,
///   model or table checksum mismatch, an unknown rule set, board size or
///   encoding, a board count that does not match the rules and seeds, offsets
///   that are out of order or out of the file.
/// - [`Error::Unsupported`] for another format version or header length.
pub fn parse(file: &[u8], path: &Path) -> Result<FileLayout> {
    let fields = Fields { file, path };
    let version = fields.preamble()?;
    let header = fields.header(version)?;
    fields.sections(&header)?;
    fields.offsets(&header)?;
    Ok(FileLayout { header })
}

/// A level file being parsed: its bytes and its path, for the errors.
struct Fields<'a> {
    file: &'a [u8],
    path: &'a Path,
}

impl Fields<'_> {
    /// [`Error::Corrupt`] for this file.
    fn corrupt(&self, reason: String) -> Error {
        Error::Corrupt {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    /// [`Error::Unsupported`] for this file.
    fn unsupported(&self, reason: String) -> Error {
        Error::Unsupported {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    /// The header's bytes (the file is at least that long once
    /// [`Fields::preamble`] passed).
    fn bytes(&self) -> &[u8] {
        &self.file[..HEADER_LEN]
    }

    /// Checks what every version shares (the length, the magic, the
    /// header's length and checksum) and returns the format version.
    fn preamble(&self) -> Result<u16> {
        let len = self.file.len();
        if len < HEADER_LEN {
            return Err(self.corrupt(format!(
                "truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header"
            )));
        }
        let b = self.bytes();
        if b[0..8] != MAGIC {
            return Err(self.corrupt(format!(
                "not a level file: magic is {:?}, expected {:?}",
                String::from_utf8_lossy(&b[0..8]),
                String::from_utf8_lossy(&MAGIC)
            )));
        }
        let version = le16(b, 8);
        if !(1..=VERSION_REPETITION).contains(&version) {
            return Err(self.unsupported(format!(
                "format version {version}; this build reads versions 1 to {VERSION_REPETITION}"
            )));
        }
        let header_len = le16(b, 10);
        if usize::from(header_len) != HEADER_LEN {
            return Err(self.unsupported(format!(
                "header of {header_len} bytes; version {VERSION} has {HEADER_LEN}"
            )));
        }
        let header_crc = le32(b, HEADER_LEN - 4);
        let actual = crc32fast::hash(&b[..HEADER_LEN - 4]);
        if header_crc != actual {
            return Err(self.corrupt(format!(
                "header checksum mismatch (stored {header_crc:08x}, computed {actual:08x})"
            )));
        }
        Ok(version)
    }

    /// The header's fields, each checked against the others and the file.
    fn header(&self, version: u16) -> Result<Header> {
        let b = self.bytes();
        let (rules, encoding, compression) = self.game_and_encoding()?;
        let (seeds, block_boards, boards, blocks) = self.level_and_blocks(rules)?;
        let (model_len, file_len) = (le64(b, 40), le64(b, 64));
        self.extent(model_len, file_len, blocks)?;
        let (segment_boards, stored) = self.segments(version, block_boards, encoding)?;
        Ok(Header {
            rules,
            seeds,
            encoding,
            compression,
            compression_level: le32(b, 72) as i32,
            block_boards,
            segment_boards,
            boards,
            blocks,
            model_len,
            model_crc: le32(b, 76),
            table_crc: le32(b, 80),
            body_crc: le32(b, 84),
            file_len,
            stored,
        })
    }

    /// The rules (rule set and board size), the value encoding and the
    /// compression that goes with it.
    fn game_and_encoding(&self) -> Result<(Rules, Encoding, u8)> {
        let b = self.bytes();
        let set = RuleSet::from_code(b[12])
            .ok_or_else(|| self.corrupt(format!("unknown rule set code {}", b[12])))?;
        let pits = b[13];
        if !(MIN_PITS..=MAX_PITS).contains(&pits) {
            return Err(self.corrupt(format!(
                "{pits} pits per side; expected {MIN_PITS} to {MAX_PITS}"
            )));
        }
        let rules = Rules::new(set, pits).map_err(|e| self.corrupt(e.to_string()))?;
        let encoding = Encoding::from_code(b[14])
            .ok_or_else(|| self.corrupt(format!("unknown value encoding code {}", b[14])))?;
        let compression = b[15];
        if compression != encoding.compression() {
            return Err(self.corrupt(format!(
                "compression code {compression} does not go with the {encoding} encoding (expected {})",
                encoding.compression()
            )));
        }
        Ok((rules, encoding, compression))
    }

    /// The seed count, the boards per block, and the boards and blocks of
    /// the level, which must be what the rules and seeds make.
    fn level_and_blocks(&self, rules: Rules) -> Result<(u32, u32, u64, u64)> {
        let b = self.bytes();
        let seeds = le32(b, 16);
        if seeds > MAX_SEEDS {
            return Err(self.corrupt(format!("{seeds} seeds; at most {MAX_SEEDS} are supported")));
        }
        let block_boards = le32(b, 20);
        if !(1..=MAX_BLOCK_BOARDS).contains(&block_boards) {
            return Err(self.corrupt(format!(
                "{block_boards} boards per block; expected 1 to {MAX_BLOCK_BOARDS}"
            )));
        }
        let boards = le64(b, 24);
        let pits = rules.pits();
        let expected_boards = Index::for_pits(pits).level_size(seeds);
        if boards != expected_boards {
            return Err(self.corrupt(format!(
                "header says {boards} boards, but level {seeds} with {pits} pits per side has {expected_boards}"
            )));
        }
        let blocks = le64(b, 32);
        if blocks != block_count(boards, block_boards) {
            return Err(self.corrupt(format!(
                "header says {blocks} blocks, but {boards} boards in blocks of {block_boards} make {}",
                block_count(boards, block_boards)
            )));
        }
        Ok((seeds, block_boards, boards, blocks))
    }

    /// The boards per segment and what the values are, by version, and the
    /// reserved bytes after them (zero).
    fn segments(
        &self,
        version: u16,
        block_boards: u32,
        encoding: Encoding,
    ) -> Result<(u32, Stored)> {
        let b = self.bytes();
        // Version 2 keeps the boards per segment in bytes 88..92, version 3 also
        // what the values are in byte 92.
        let (segment_boards, stored, reserved) = match version {
            1 => (block_boards, Stored::Scores, 88),
            2 => (le32(b, 88), Stored::Scores, 92),
            3 => {
                let stored = Stored::from_code(b[92])
                    .filter(|&s| s == Stored::LowerBounds)
                    .ok_or_else(|| {
                        self.corrupt(format!(
                            "stored-values code {} in a version 3 file; expected 1 (lower bounds)",
                            b[92]
                        ))
                    })?;
                (le32(b, 88), stored, 93)
            }
            _ => {
                let stored = Stored::from_code(b[92])
                    .filter(|&s| s.is_repetition_bound())
                    .ok_or_else(|| {
                        self.corrupt(format!(
                            "stored-values code {} in a version 4 file; expected 2 or 3 (bounds under any repetition rule)",
                            b[92]
                        ))
                    })?;
                (le32(b, 88), stored, 93)
            }
        };
        if b[reserved..HEADER_LEN - 4].iter().any(|&x| x != 0) {
            return Err(self.corrupt(format!(
                "reserved header bytes {reserved}..124 are not zero"
            )));
        }
        // Version 3 may have blocks not cut into segments (S = B).
        let uncut_v3 = version >= 3 && segment_boards == block_boards;
        if version >= 2
            && !uncut_v3
            && (segment_boards == 0
                || segment_boards > MAX_SEGMENT_BOARDS
                || segment_boards >= block_boards
                || !block_boards.is_multiple_of(segment_boards)
                || encoding != Encoding::ContextAns)
        {
            return Err(self.corrupt(format!(
                "{segment_boards} boards per segment in {block_boards}-board {encoding} blocks; \
                 segments of 1 to {MAX_SEGMENT_BOARDS} boards divide context-ans blocks into at least two"
            )));
        }
        Ok((segment_boards, stored))
    }

    /// Checks that the file has the length the header says, and that the
    /// sections (model, offset table, blocks) fit it one after the other.
    fn extent(&self, model_len: u64, file_len: u64, blocks: u64) -> Result<()> {
        let b = self.bytes();
        let len = self.file.len() as u64;
        if file_len != len {
            return Err(self.corrupt(if len < file_len {
                format!("truncated: header says {file_len} bytes, the file has {len}")
            } else {
                format!(
                    "{} bytes too many: header says {file_len} bytes, the file has {len}",
                    len - file_len
                )
            }));
        }
        let (table_offset, blocks_offset) = (le64(b, 48), le64(b, 56));
        if model_len > len || table_offset != HEADER_LEN as u64 + model_len {
            return Err(self.corrupt(format!(
                "model section of {model_len} bytes and table offset {table_offset} do not fit a {len}-byte file"
            )));
        }
        let tlen = table_len(blocks);
        if blocks_offset != table_offset.saturating_add(tlen) || blocks_offset > len {
            return Err(self.corrupt(format!(
                "offset table at {table_offset} of {tlen} bytes and blocks at {blocks_offset} do not fit a {len}-byte file"
            )));
        }
        Ok(())
    }

    /// Checks the checksums of the model section and the offset table.
    fn sections(&self, header: &Header) -> Result<()> {
        let table_offset = header.table_offset();
        let blocks_offset = header.blocks_offset();
        let model = &self.file[HEADER_LEN..table_offset as usize];
        let model_crc = crc32fast::hash(model);
        if model_crc != header.model_crc {
            return Err(self.corrupt(format!(
                "model section checksum mismatch (stored {:08x}, computed {model_crc:08x})",
                header.model_crc
            )));
        }
        let table = &self.file[table_offset as usize..blocks_offset as usize];
        let table_crc = crc32fast::hash(table);
        if table_crc != header.table_crc {
            return Err(self.corrupt(format!(
                "offset table checksum mismatch (stored {:08x}, computed {table_crc:08x})",
                header.table_crc
            )));
        }
        Ok(())
    }

    /// Checks the offset table: the first entry at the blocks, the last at
    /// the end of the file, each after the one before, no block larger than
    /// its boards can take.
    fn offsets(&self, header: &Header) -> Result<()> {
        let len = self.file.len() as u64;
        let (table_offset, blocks) = (header.table_offset(), header.blocks);
        let blocks_offset = table_offset + table_len(blocks);
        let block_boards = header.block_boards;
        let max_block = max_block_bytes(block_boards, header.segment_boards);
        let mut previous = blocks_offset;
        for i in 0..=blocks {
            let at = table_offset + 8 * i;
            let offset = read_u64(self.file, at);
            let expected_first = i == 0 && offset != blocks_offset;
            let expected_last = i == blocks && offset != len;
            if expected_first || expected_last {
                return Err(self.corrupt(format!(
                    "offset table entry {i} is {offset}, expected {}",
                    if i == 0 { blocks_offset } else { len }
                )));
            }
            if i > 0 {
                if offset <= previous {
                    return Err(self.corrupt(format!(
                        "offset table entry {i} ({offset}) is not after entry {} ({previous})",
                        i - 1
                    )));
                }
                if offset - previous > max_block {
                    return Err(self.corrupt(format!(
                        "block {} takes {} bytes, more than {max_block} possible for {block_boards} boards",
                        i - 1,
                        offset - previous
                    )));
                }
            }
            previous = offset;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_sizes() {
        assert_eq!(table_len(0), 8);
        assert_eq!(table_len(3), 44);
        assert_eq!(block_count(0, 4096), 0);
        assert_eq!(block_count(4096, 4096), 1);
        assert_eq!(block_count(4097, 4096), 2);
    }

    #[test]
    fn short_or_foreign_bytes_are_corrupt() {
        let path = Path::new("x.awl");
        assert!(matches!(parse(b"", path), Err(Error::Corrupt { .. })));
        let mut junk = vec![0u8; 200];
        junk[..8].copy_from_slice(b"NOTLEVEL");
        let err = parse(&junk, path).unwrap_err();
        assert!(err.to_string().contains("magic"), "{err}");
    }
}
