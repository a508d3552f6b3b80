//! The cold bytes of a partition in the split cells ([`crate::cells::Split`]):
//! a byte per board holding `B(p)` while the board is undecided, and its
//! value once it is found.
//!
//! The words of the split cells hold only what propagation reads at random
//! (the nibble and one bit). Everything else is read and written here in
//! index order, a task's chunk at a time: by the initial pass (which writes
//! `B`), by each stage's seeding (which reads `B`, and writes the values of
//! the boards the stage before decided) and by the assembly of the values.
//! So the bytes can live in a file whose pages the kernel reads and writes
//! back in order ([`ColdBytes::in_file`]), outside the memory the level's
//! plan counts, or in memory ([`ColdBytes::in_memory`]).
//!
//! A byte holds, while its board is undecided, `B(p)` as an `i8`
//! ([`crate::cells::Split::NO_EXIT`] when the board has no capture); once
//! the value is written, the value in its low 7 bits (two's complement) and
//! whether it is free in bit 7 ([`final_byte`]). Which of the two a byte
//! holds is told by the board's nibble ([`super::state::WRITTEN`]).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::memory::mapped;

use super::batch::lock;
use crate::error::SolveError;

/// Where a partition's cold bytes live.
pub(crate) enum ColdBytes {
    /// In anonymous memory, rounded up to whole words.
    Memory(HugeArray),
    /// In a file, removed when the bytes are dropped.
    File(ColdFile),
}

/// The file of [`ColdBytes::File`].
pub(crate) struct ColdFile {
    file: File,
    path: PathBuf,
    /// The first error of a read or write (see [`ColdBytes::check`]).
    failed: Mutex<Option<SolveError>>,
}

impl ColdBytes {
    /// `boards` zero bytes in memory.
    pub(crate) fn in_memory(boards: u64) -> ColdBytes {
        ColdBytes::Memory(HugeArray::zeroed(8 * boards.div_ceil(8) as usize))
    }

    /// `boards` zero bytes in a new file at `path` (any file there is
    /// replaced), its blocks allocated: a disk too full for them fails
    /// here, not in the middle of a stage.
    ///
    /// # Errors
    /// A file that cannot be made or allocated.
    pub(crate) fn in_file(path: &Path, boards: u64) -> Result<ColdBytes, SolveError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(awari_dbformat::Error::io(dir))?;
        }
        mapped::allocate(path, boards as usize)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(awari_dbformat::Error::io(path))?;
        Ok(ColdBytes::File(ColdFile {
            file,
            path: path.to_path_buf(),
            failed: Mutex::new(None),
        }))
    }

    /// Reads the bytes of boards `start..start + buf.len()` into `buf`.
    /// `start` is a multiple of 8, and no other task touches these boards
    /// meanwhile. A file that cannot be read leaves `buf` as it was and
    /// the error for [`ColdBytes::check`].
    pub(crate) fn read(&self, start: u64, buf: &mut [u8]) {
        match self {
            ColdBytes::Memory(array) => {
                let words = &array.as_atomic_u64()[start as usize / 8..];
                for (bytes, word) in buf.chunks_mut(8).zip(words) {
                    let all = word.load(Relaxed).to_ne_bytes();
                    bytes.copy_from_slice(&all[..bytes.len()]);
                }
            }
            ColdBytes::File(ColdFile { file, path, failed }) => {
                if let Err(err) = file.read_exact_at(buf, start) {
                    keep_first(failed, awari_dbformat::Error::io(path)(err).into());
                }
            }
        }
    }

    /// Writes `buf` as the bytes of boards `start..start + buf.len()`, as
    /// [`ColdBytes::read`] reads them.
    pub(crate) fn write(&self, start: u64, buf: &[u8]) {
        match self {
            ColdBytes::Memory(array) => {
                let words = &array.as_atomic_u64()[start as usize / 8..];
                for (bytes, word) in buf.chunks(8).zip(words) {
                    let mut all = word.load(Relaxed).to_ne_bytes();
                    all[..bytes.len()].copy_from_slice(bytes);
                    word.store(u64::from_ne_bytes(all), Relaxed);
                }
            }
            ColdBytes::File(ColdFile { file, path, failed }) => {
                if let Err(err) = file.write_all_at(buf, start) {
                    keep_first(failed, awari_dbformat::Error::io(path)(err).into());
                }
            }
        }
    }

    /// The file's bytes, mapped (the file itself is removed when the bytes
    /// are dropped; the mapping stays), when they are in a file.
    ///
    /// # Errors
    /// A file that cannot be mapped.
    pub(crate) fn mapped(&self) -> Result<Option<HugeArray>, SolveError> {
        match self {
            ColdBytes::Memory(_) => Ok(None),
            ColdBytes::File(ColdFile { path, .. }) => Ok(Some(mapped::open(path)?)),
        }
    }

    /// The first error of a read or a write so far (a full disk, say).
    ///
    /// # Errors
    /// That error.
    pub(crate) fn check(&self) -> Result<(), SolveError> {
        match self {
            ColdBytes::Memory(_) => Ok(()),
            ColdBytes::File(ColdFile { failed, .. }) => match lock(failed).take() {
                Some(err) => Err(err),
                None => Ok(()),
            },
        }
    }
}

impl Drop for ColdFile {
    fn drop(&mut self) {
        // Scratch only: nothing is lost when it cannot be removed. Its
        // directory goes too once empty.
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn keep_first(failed: &Mutex<Option<SolveError>>, err: SolveError) {
    lock(failed).get_or_insert(err);
}

/// The byte of a board whose value is `value` (in -64..=63), free or not.
#[inline]
pub(crate) fn final_byte(value: i8, free: bool) -> u8 {
    (value as u8 & 0x7F) | u8::from(free) << 7
}

/// The value and the free bit a [`final_byte`] holds.
#[inline]
pub(crate) fn from_final_byte(byte: u8) -> (i8, bool) {
    (((byte << 1) as i8) >> 1, byte >> 7 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_bytes_keep_value_and_free_bit() {
        for value in -64..=63i8 {
            for free in [false, true] {
                assert_eq!(from_final_byte(final_byte(value, free)), (value, free));
            }
        }
    }

    fn round_trip(cold: &ColdBytes, boards: u64) {
        let pattern: Vec<u8> = (0..boards).map(|i| (i * 7 + 3) as u8).collect();
        // Two tasks' chunks, the second ending mid-word.
        let half = (boards / 16) * 8;
        cold.write(0, &pattern[..half as usize]);
        cold.write(half, &pattern[half as usize..]);
        let mut back = vec![0u8; boards as usize];
        cold.read(0, &mut back[..half as usize]);
        cold.read(half, &mut back[half as usize..]);
        assert_eq!(back, pattern);
        cold.check().unwrap();
    }

    #[test]
    fn bytes_read_back_as_written_in_memory_and_in_a_file() {
        round_trip(&ColdBytes::in_memory(1003), 1003);
        let dir = std::env::temp_dir().join(format!("awari-cold-{}", std::process::id()));
        let path = dir.join("cold-0");
        let cold = ColdBytes::in_file(&path, 1003).unwrap();
        round_trip(&cold, 1003);
        drop(cold);
        assert!(!path.exists(), "the file goes with the bytes");
        let _ = std::fs::remove_dir_all(dir);
    }
}
