//! Certificate files: for every stored board of a level, the generation of its
//! threshold stage in which the solver decided it.
//!
//! A certificate lets a verifier prove that every non-zero value is reachable
//! in one forward pass, instead of searching for the proofs (see
//! `awari_probe::verify`). It is never trusted: a certificate that does not
//! prove a level is simply not used, so a corrupted or forged one can slow a
//! verification down but never make a wrong value pass. Boards decided when
//! their stage is seeded, and boards of value 0, have generation 0; a count
//! past `u16::MAX` is stored as `u16::MAX` (the proof then fails and the
//! verifier searches).
//!
//! # File name
//! The level's file name with the extension `cert`: `awari-p6-n16.cert`.
//!
//! # Byte layout (version 1)
//! All integers are little-endian; CRC-32 as in level files.
//!
//! | offset | size | meaning |
//! |-------:|-----:|---------|
//! | 0 | 8 | magic `AWARICRT` |
//! | 8 | 2 | version, 1 |
//! | 10 | 1 | rule set code ([`crate::RuleSet::code`]) |
//! | 11 | 1 | pits per side |
//! | 12 | 4 | seeds on each board of the level |
//! | 16 | 8 | boards N (must equal the index's level size) |
//! | 24 | 8 | payload length L |
//! | 32 | 4 | CRC-32 of the payload |
//! | 36 | 4 | CRC-32 of bytes 0..36 |
//! | 40 | L | one zstd frame of N `u16`, in index order |

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::game::rules::{RuleSet, Rules};
use crate::level::Generations;

use super::LevelId;

/// The file name extension of certificates.
pub const CERT_EXTENSION: &str = "cert";
const MAGIC: &[u8; 8] = b"AWARICRT";
const VERSION: u16 = 1;
const HEADER_LEN: usize = 40;
/// Generations converted to bytes at a time when writing and reading.
const SLICE: usize = 1 << 20;
/// zstd level of the payload: a fast level, at which the generations
/// compress to about half a byte per board (`docs/performance.md`).
const ZSTD_LEVEL: i32 = 3;

/// The path of level `id`'s certificate in database directory `dir`.
pub fn certificate_path(dir: &Path, id: LevelId) -> PathBuf {
    dir.join(id.file_name()).with_extension(CERT_EXTENSION)
}

/// Writes the certificate of level `id` (`order`: one generation per board, in
/// index order) into `dir` under a temporary name, then renames it; returns the
/// final path.
///
/// # Errors
/// [`Error::Io`] naming the file when writing fails (a full disk), and
/// [`Error::Corrupt`] when `order` does not have one entry per board.
pub fn write_certificate(dir: &Path, id: LevelId, order: &[u16]) -> Result<PathBuf> {
    let mut writer = CertificateWriter::new(dir, id)?;
    writer.push(order)?;
    writer.finish()
}

/// A certificate written a piece at a time, the generations in index order
/// (as the ranks of an MPI job send theirs to rank 0): the file
/// [`write_certificate`] writes from the whole level at once.
pub struct CertificateWriter {
    id: LevelId,
    path: PathBuf,
    temp: PathBuf,
    encoder: zstd::stream::write::Encoder<'static, Vec<u8>>,
    /// Generations pushed so far.
    pushed: u64,
    /// Bytes not yet given to the encoder: it is given whole slices of
    /// [`SLICE`] generations, whatever the pieces pushed.
    pending: Vec<u8>,
}

impl CertificateWriter {
    /// Starts the certificate of level `id` in directory `dir`.
    ///
    /// # Errors
    /// [`Error::Io`] when zstd cannot start (allocation failure, in practice).
    pub fn new(dir: &Path, id: LevelId) -> Result<CertificateWriter> {
        let path = certificate_path(dir, id);
        let temp = path.with_extension(format!("{CERT_EXTENSION}.partial"));
        let io = |source| Error::Io {
            path: temp.clone(),
            source,
        };
        let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), ZSTD_LEVEL).map_err(io)?;
        // zstd's own workers, as many as the caller's threads (which wait
        // meanwhile): a level 24 certificate is a GB before compression. (The
        // frame is the same for any number of workers.)
        encoder
            .multithread(rayon::current_num_threads().max(1) as u32)
            .map_err(io)?;
        Ok(CertificateWriter {
            id,
            path,
            temp,
            encoder,
            pushed: 0,
            pending: Vec::with_capacity(2 * SLICE),
        })
    }

    /// Appends the generations of the next boards, in index order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when more arrive than the level has boards;
    /// [`Error::Io`] when zstd fails.
    pub fn push(&mut self, order: &[u16]) -> Result<()> {
        if self.pushed + order.len() as u64 > self.id.boards() {
            return Err(self.wrong_count(self.pushed + order.len() as u64));
        }
        self.pushed += order.len() as u64;
        // Compressed slice by slice: a copy of the whole level in bytes would
        // double what the certificate takes in memory (764 MB at level 24).
        for &g in order {
            self.pending.extend_from_slice(&g.to_le_bytes());
            if self.pending.len() == 2 * SLICE {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Gives the encoder the bytes pending.
    fn flush(&mut self) -> Result<()> {
        let temp = &self.temp;
        self.encoder
            .write_all(&self.pending)
            .map_err(|source| Error::Io {
                path: temp.clone(),
                source,
            })?;
        self.pending.clear();
        Ok(())
    }

    fn wrong_count(&self, count: u64) -> Error {
        Error::Corrupt {
            path: self.temp.clone(),
            reason: format!(
                "{count} generations given for level {}, which has {} boards",
                self.id.seeds,
                self.id.boards()
            ),
        }
    }

    /// Writes the file under its temporary name and renames it; returns the
    /// final path.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when fewer generations than boards were pushed;
    /// [`Error::Io`] naming the file when writing fails (a full disk).
    pub fn finish(mut self) -> Result<PathBuf> {
        if self.pushed != self.id.boards() {
            return Err(self.wrong_count(self.pushed));
        }
        if !self.pending.is_empty() {
            self.flush()?;
        }
        let CertificateWriter {
            id,
            path,
            temp,
            encoder,
            ..
        } = self;
        let io = |source| Error::Io {
            path: temp.clone(),
            source,
        };
        let payload = encoder.finish().map_err(io)?;
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        header.push(id.rules.set().code());
        header.push(id.rules.pits());
        header.extend_from_slice(&id.seeds.to_le_bytes());
        header.extend_from_slice(&id.boards().to_le_bytes());
        header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        header.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        let header_crc = crc32fast::hash(&header);
        header.extend_from_slice(&header_crc.to_le_bytes());
        let result = (|| {
            let mut file = File::create(&temp)?;
            file.write_all(&header)?;
            file.write_all(&payload)?;
            file.sync_all()?;
            std::fs::rename(&temp, &path)
        })();
        if let Err(source) = result {
            let _ = std::fs::remove_file(&temp);
            return Err(io(source));
        }
        Ok(path)
    }
}

/// Reads the certificate at `path`, which must belong to level `id`: one
/// generation per board, in index order.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read, [`Error::Corrupt`] naming it
/// when any field, checksum or length is wrong, and [`Error::WrongLevel`] when
/// it belongs to another rule set, board size or level.
pub fn read_certificate(path: &Path, id: LevelId) -> Result<Generations> {
    read_certificate_range(path, id, 0..id.boards())
}

/// [`read_certificate`] keeping only the generations of boards `range`
/// (a rank's share of the level): the whole file is read and checked, the
/// rest decompressed and let go.
///
/// # Errors
/// As [`read_certificate`]; [`Error::IndexOutOfRange`] when `range` goes
/// past the level's end.
pub fn read_certificate_range(
    path: &Path,
    id: LevelId,
    range: std::ops::Range<u64>,
) -> Result<Generations> {
    if range.end > id.boards() {
        return Err(Error::IndexOutOfRange {
            seeds: id.seeds,
            index: range.end - 1,
            boards: id.boards(),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let payload = checked_payload(path, id, &bytes)?;
    decompress_range(path, id.boards(), payload, range)
}

/// The error of a certificate at `path` that is corrupt for `reason`.
fn corrupt(path: &Path, reason: String) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        reason: format!("certificate: {reason}"),
    }
}

/// The payload of the certificate `bytes` (read from `path`), once its
/// header says it belongs to level `id` and every length and checksum
/// holds.
///
/// # Errors
/// As [`read_certificate`].
fn checked_payload<'b>(path: &Path, id: LevelId, bytes: &'b [u8]) -> Result<&'b [u8]> {
    let corrupt = |reason: String| corrupt(path, reason);
    if bytes.len() < HEADER_LEN {
        return Err(corrupt(format!(
            "{} bytes, shorter than the {HEADER_LEN}-byte header",
            bytes.len()
        )));
    }
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().expect("2 bytes"));
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    if &bytes[..8] != MAGIC {
        return Err(corrupt("bad magic (not a certificate file)".into()));
    }
    if crc32fast::hash(&bytes[..36]) != u32_at(36) {
        return Err(corrupt("header checksum mismatch".into()));
    }
    if u16_at(8) != VERSION {
        return Err(corrupt(format!(
            "version {} (this build reads {VERSION})",
            u16_at(8)
        )));
    }
    let set = RuleSet::from_code(bytes[10])
        .ok_or_else(|| corrupt(format!("unknown rule set code {}", bytes[10])))?;
    let rules = Rules::new(set, bytes[11]).map_err(|e| corrupt(format!("bad board size: {e}")))?;
    let found = LevelId::new(rules, u32_at(12));
    if found != id {
        return Err(Error::WrongLevel {
            path: path.to_path_buf(),
            expected: id.describe(),
            found: found.describe(),
        });
    }
    let boards = u64_at(16);
    if boards != id.boards() {
        return Err(corrupt(format!(
            "{boards} boards, but level {} has {}",
            id.seeds,
            id.boards()
        )));
    }
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != u64_at(24) {
        return Err(corrupt(format!(
            "payload of {} bytes, the header says {} (truncated?)",
            payload.len(),
            u64_at(24)
        )));
    }
    if crc32fast::hash(payload) != u32_at(32) {
        return Err(corrupt("payload checksum mismatch".into()));
    }
    Ok(payload)
}

/// The generations of boards `range` from the checked `payload` of a
/// certificate of `boards` boards (read from `path`), decompressed slice
/// by slice (no whole-level byte copy), the rest let go.
///
/// # Errors
/// [`Error::Corrupt`] when the payload does not decompress to exactly
/// `boards` generations; [`Error::Io`] when the result cannot be allocated.
fn decompress_range(
    path: &Path,
    boards: u64,
    payload: &[u8],
    range: std::ops::Range<u64>,
) -> Result<Generations> {
    let corrupt = |reason: String| corrupt(path, reason);
    let undecodable = |e: std::io::Error| corrupt(format!("payload does not decompress: {e}"));
    let mut decoder = zstd::stream::read::Decoder::with_buffer(payload).map_err(undecodable)?;
    let mut order =
        Generations::try_zeroed(range.end - range.start).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let mut bytes = vec![0u8; 2 * SLICE];
    let mut at = 0u64;
    while at < boards {
        let n = (boards - at).min(SLICE as u64);
        let bytes = &mut bytes[..2 * n as usize];
        decoder.read_exact(bytes).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                corrupt(format!("payload ends before board {} of {boards}", at + n))
            } else {
                undecodable(e)
            }
        })?;
        // The part of this slice within `range`, if any.
        let (from, to) = (at.max(range.start), (at + n).min(range.end));
        for i in from..to {
            let c = 2 * (i - at) as usize;
            order[(i - range.start) as usize] = u16::from_le_bytes([bytes[c], bytes[c + 1]]);
        }
        at += n;
    }
    let mut extra = [0u8; 1];
    if decoder.read(&mut extra).map_err(undecodable)? != 0 {
        return Err(corrupt(format!(
            "payload holds more than the {boards} boards of the level"
        )));
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::tests::scratch_dir;

    #[test]
    fn round_trip_and_every_corruption_is_named() {
        let scratch = scratch_dir("certificate");
        let dir = scratch.path();
        let id = LevelId::new(Rules::default(), 5);
        let order: Vec<u16> = (0..id.boards()).map(|i| (i * 7 % 300) as u16).collect();
        let path = write_certificate(dir, id, &order).unwrap();
        assert_eq!(path, certificate_path(dir, id));
        assert_eq!(read_certificate(&path, id).unwrap()[..], order[..]);
        let share = 100..id.boards() - 7;
        let part = read_certificate_range(&path, id, share.clone()).unwrap();
        assert_eq!(part[..], order[share.start as usize..share.end as usize]);
        assert!(read_certificate_range(&path, id, 0..id.boards() + 1).is_err());

        // Another level, or another rule set, is refused by name.
        let other = LevelId::new(Rules::new(RuleSet::Abapa, 6).unwrap(), 5);
        assert!(matches!(
            read_certificate(&path, other),
            Err(Error::WrongLevel { .. })
        ));
        let bytes = std::fs::read(&path).unwrap();
        let bad = dir.join("bad.cert");
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("truncated", bytes[..bytes.len() - 3].to_vec()),
            ("short", bytes[..20].to_vec()),
            ("magic", [b"XWARICRT", &bytes[8..]].concat()),
            ("header bit", {
                let mut b = bytes.clone();
                b[17] ^= 1;
                b
            }),
            ("payload bit", {
                let mut b = bytes.clone();
                let last = b.len() - 1;
                b[last] ^= 0x10;
                b
            }),
        ];
        for (what, b) in cases {
            std::fs::write(&bad, b).unwrap();
            match read_certificate(&bad, id) {
                Err(Error::Corrupt { path, reason }) => {
                    assert_eq!(path, bad, "{what}");
                    assert!(reason.starts_with("certificate"), "{what}: {reason}");
                }
                other => panic!("{what}: {other:?}"),
            }
        }
        // A wrong length is refused before anything is written.
        assert!(write_certificate(dir, id, &order[1..]).is_err());
    }
}
