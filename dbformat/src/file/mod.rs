//! The level file format: one file per level (seed count), rule set and board
//! size, holding the value of every stored board of the level in index order,
//! in independently compressed and checksummed blocks.
//!
//! - [`LevelWriter`] (streaming) and [`write_level`] write a file under a
//!   temporary name and rename it when complete.
//! - [`LevelReader`] memory-maps a file, validates it, answers single lookups
//!   ([`LevelReader::get`], one block or segment decoded per miss, a small
//!   cache of decoded ones) and decodes whole levels ([`LevelReader::decode_all`],
//!   [`LevelReader::decode_range`]).
//! - [`scan_dir`] lists the level files of a database directory.
//!
//! # File names
//! `<rule set>-p<pits per side>-n<seeds>.awl`, e.g. `awari-p6-n16.awl` or
//! `grand-slam-captures-p4-n9.awl`, so one directory can hold several rule sets
//! and board sizes. A file being written is called `<name>.partial`.
//!
//! # Scores and lower bounds
//! A file holds one value per board: the board's score ([`Stored::Scores`]),
//! or, by default from the solver, a lower bound for the boards whose score a
//! capture reaches ([`Stored::LowerBounds`]; the score is then the larger of
//! the stored value and the board's best capture, found in lower levels). The
//! lower bounds are chosen to code cheaply, which makes files about a
//! quarter smaller; [`bounds`] explains it, and [`resolve`] and
//! [`resolve_level`] turn stored values into scores. [`LevelReader::get`]
//! and the decoders return *stored* values.
//!
//! Under `--repetition any` a level has two files instead, of the exact
//! lower and upper bounds of every board ([`Stored::RepetitionLower`],
//! [`Stored::RepetitionUpper`], named by [`bound_path`]; version 4). A reader
//! of scores refuses them ([`LevelReader::open_expecting`]) and a reader of
//! bounds refuses anything else ([`LevelReader::open_bound`]).
//!
//! # Byte layout (format versions 1 to 4)
//! All integers are little-endian. CRC-32 is the IEEE polynomial (crc32fast).
//! Version 2 adds segments: context-ans blocks cut into parts coded
//! independently, so that a lookup decodes one part. A file whose blocks are
//! not cut is written as version 1, byte for byte as before segments existed.
//! Version 3 adds byte 92, what the values are; files of scores keep
//! version 1 or 2, so that older readers still read them, and refuse files of
//! lower bounds instead of misreading them. Version 4 is version 3 with
//! byte 92 = 2 or 3, the bounds of `--repetition any`.
//!
//! | offset | size | meaning |
//! |-------:|-----:|---------|
//! | 0 | 8 | magic `AWARILVL` |
//! | 8 | 2 | format version: 4 for the bounds of `--repetition any`, 3 for lower bounds, else 2 when blocks are cut into segments, else 1 |
//! | 10 | 2 | header length, 128 |
//! | 12 | 1 | rule set code ([`crate::RuleSet::code`]: 0 awari, 1 abapa, 2 grand-slam-captures, 3 grand-slam-replay, 4 cross-wari) |
//! | 13 | 1 | pits per side, 2..=8 |
//! | 14 | 1 | value encoding: 0 raw, 1 context-rank, 2 context-ans ([`Encoding`]) |
//! | 15 | 1 | compression: 1 zstd (every block is one zstd frame; raw and context-rank), 0 none (context-ans blocks are rANS streams) |
//! | 16 | 4 | seeds on each board of the level |
//! | 20 | 4 | boards per block B, 1..=2^20 |
//! | 24 | 8 | boards N in the level (must equal the index's level size) |
//! | 32 | 8 | blocks K = ceil(N / B) |
//! | 40 | 8 | model length M (0 for raw) |
//! | 48 | 8 | offset of the offset table, 128 + M |
//! | 56 | 8 | offset of the first block, 128 + M + 12K + 8 |
//! | 64 | 8 | file length |
//! | 72 | 4 | zstd level used (informational; the level of the candidates' trial for context-ans) |
//! | 76 | 4 | CRC-32 of the model section |
//! | 80 | 4 | CRC-32 of the offset table |
//! | 84 | 4 | CRC-32 of every byte after the header (model, table, blocks) |
//! | 88 | 4 | versions 2 and 3: boards per segment S, 1..=2^14, dividing B and below it (context-ans only), or in version 3 also S = B (not cut); version 1: reserved, zero (S = B) |
//! | 92 | 1 | version 3: what the values are, 1 = lower bounds; version 4: 2 = lower, 3 = upper bounds under any repetition rule ([`Stored::code`]); versions 1 and 2: reserved, zero (scores) |
//! | 93 | 31 | reserved, zero |
//! | 124 | 4 | CRC-32 of header bytes 0..124 |
//! | 128 | M | model section: `u32` length + zstd frame of the per-context orders (context-rank, [`Model::to_bytes`]) or frequency tables (context-ans, [`AnsModel::to_bytes`]) |
//! | 128+M | 8(K+1) | block offsets: K+1 `u64` file offsets; block i spans `[off[i], off[i+1])`, `off[K]` = file length |
//! | … | 4K | CRC-32 of each block's stored bytes |
//! | … | … | K blocks of B boards (the last N − (K−1)B): zstd frames of one byte per board, or context-ans blocks (below) |
//!
//! A context-ans block of more than S boards is cut into `c = ceil(boards / S)`
//! segments of S boards (the last may be shorter). It starts with `c − 1`
//! `u16` byte lengths, of every segment but the last, followed by the
//! segments' rANS streams in order; a block of one segment is its stream. A
//! rANS stream is a `u32` state and then `u16` words ([`AnsModel`]).
//!
//! With encoding `raw` a block's zstd frame holds the values as signed bytes,
//! exactly the published `scores.n` layout. With `context-rank` it holds each
//! value's rank in the order its context selects; with `context-ans` the block
//! is the rANS code of the values under their contexts' probabilities. A
//! context is made of the values of up to three earlier boards of the block
//! (the board with one seed moved from pit B, C or D into A) and the board's
//! own pit A ([`codec`]); in a segmented block, of its segment. Blocks and
//! segments never depend on each other. A decoded value outside
//! `-seeds..=seeds` makes the block corrupt.
//!
//! # What is checked, and when
//! [`LevelReader::open`] checks the magic, version, header checksum, every
//! header field against the others and against the index (board count, block
//! count, offsets, file length), the model and table checksums, and that the
//! block offsets increase and stay within the largest size a block can have.
//! Every block read checks its checksum, its decompressed size or segment
//! directory and final rANS states, and its values.
//! [`LevelReader::verify_checksums`] also checks the whole-file checksum.
//! Corruption is reported as [`crate::Error::Corrupt`] naming the file; it
//! never panics and never yields a value.
//!
//! # Defaults
//! [`WriteOptions::default`]: blocks of 16384 boards in segments of 128, zstd
//! level 12; [`EncodingChoice::Auto`]: the writer tries the encodings on
//! training values and keeps the one that makes the smallest file (in
//! segmented files context-rank is not tried: its lookups decompress whole
//! blocks). `awari-solve` writes lower bounds unless asked for `--exact`.
//! A lookup ([`LevelReader::get`]) decodes part of one segment, so its cost
//! follows the segment size. What these choices cost and save, measured,
//! is in `docs/performance.md` of the repository; `docs/format.md` sums this
//! module up.

pub mod ans;
pub mod bounds;
pub mod certificate;
pub mod codec;
pub mod context;
pub mod layout;
mod reader;
pub mod shared;
mod writer;
mod zstd_ctx;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::game::rules::{RuleSet, Rules};
use crate::index::Index;
use crate::level::Bound;

pub use ans::AnsModel;
pub use bounds::{best_capture, resolve, resolve_level, resolve_level_in, BoundChooser, Stored};
pub use certificate::{
    certificate_path, read_certificate, read_certificate_range, write_certificate,
    CertificateWriter,
};
pub use codec::{Encoding, Model, RankModel};
pub use reader::LevelReader;
pub use writer::{
    spread_sample, temp_path, write_level, write_level_as, write_level_bounded, EncodingChoice,
    LevelWriter, WriteOptions, TRAIN_BOARDS,
};
pub use zstd_ctx::release_contexts;

/// The file name extension of level files.
pub const EXTENSION: &str = "awl";

/// Which level a file holds: the rules (rule set and pits per side) and the
/// number of seeds on every board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelId {
    /// Rule set and pits per side.
    pub rules: Rules,
    /// Seeds on each board of the level.
    pub seeds: u32,
}

impl LevelId {
    /// The level of `seeds` seeds under `rules`.
    pub fn new(rules: Rules, seeds: u32) -> LevelId {
        LevelId { rules, seeds }
    }

    /// The file name of this level, e.g. `awari-p6-n16.awl`.
    pub fn file_name(&self) -> String {
        format!(
            "{}-p{}-n{}.{EXTENSION}",
            self.rules.set().name(),
            self.rules.pits(),
            self.seeds
        )
    }

    /// The file name of this level's `bound` under `--repetition any`, e.g.
    /// `awari-p6-n16.lower.awl`. (No reader of even-split levels looks for
    /// these names, and [`LevelId::from_file_name`] does not take them.)
    pub fn bound_file_name(&self, bound: Bound) -> String {
        format!(
            "{}-p{}-n{}.{}.{EXTENSION}",
            self.rules.set().name(),
            self.rules.pits(),
            self.seeds,
            bound.name()
        )
    }

    /// The level a file name written by [`LevelId::file_name`] stands for, or
    /// `None` for any other name (temporary files included).
    pub fn from_file_name(name: &str) -> Option<LevelId> {
        let stem = name.strip_suffix(&format!(".{EXTENSION}"))?;
        let mut parts = stem.rsplitn(3, '-');
        let seeds = parts.next()?.strip_prefix('n')?;
        let pits = parts.next()?.strip_prefix('p')?;
        let set: RuleSet = parts.next()?.parse().ok()?;
        // Only canonical numbers ("16", not "016" or "+16") name a level.
        let seeds_n: u32 = seeds.parse().ok()?;
        let pits_n: u8 = pits.parse().ok()?;
        if seeds_n.to_string() != seeds || pits_n.to_string() != pits {
            return None;
        }
        if seeds_n > crate::game::rules::MAX_SEEDS {
            return None;
        }
        let rules = Rules::new(set, pits_n).ok()?;
        Some(LevelId {
            rules,
            seeds: seeds_n,
        })
    }

    /// The number of boards the level stores: `Index::for_pits(p).level_size(seeds)`.
    pub fn boards(&self) -> u64 {
        Index::for_pits(self.rules.pits()).level_size(self.seeds)
    }

    /// For messages: `awari, 6 pits per side, 16 seeds`.
    pub fn describe(&self) -> String {
        format!("{}, {} seeds", self.rules, self.seeds)
    }
}

impl fmt::Display for LevelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The path of level `id`'s file in database directory `dir`.
pub fn level_path(dir: &Path, id: LevelId) -> PathBuf {
    dir.join(id.file_name())
}

/// The path of the file of level `id`'s `bound` (`--repetition any`) in
/// database directory `dir`.
pub fn bound_path(dir: &Path, id: LevelId, bound: Bound) -> PathBuf {
    dir.join(id.bound_file_name(bound))
}

/// The level files in `dir`, identified by name (temporary files and other
/// files are ignored; the files are not opened), sorted by rule set, pits per
/// side and seeds.
///
/// # Errors
/// [`Error::Io`] naming `dir` when it cannot be read.
pub fn scan_dir(dir: &Path) -> Result<Vec<(LevelId, PathBuf)>> {
    let io = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(LevelId::from_file_name) else {
            continue;
        };
        if entry.path().is_file() {
            out.push((id, entry.path()));
        }
    }
    out.sort_by_key(|(id, _)| (id.rules.set(), id.rules.pits(), id.seeds));
    Ok(out)
}

#[cfg(test)]
mod tests;
