//! The updates in transit between partitions: one box per partition, filled
//! by every other partition's outbox during a generation and emptied before
//! the partition's next visit.
//!
//! A box is kept in memory while the updates held in all boxes stay within
//! a cap; past it (a level on disk, whose budget has room for only so many),
//! the box that went over is appended to a file of its own in the work
//! directory, and read back in pieces when it is emptied. Updates of one
//! generation commute, so they are applied in the order they come, and the
//! pieces in any order: the values are the same whatever the cap. (They are
//! not sorted: a generation's updates are too few to share cache lines, so
//! sorting them bought no locality and cost more than applying them.)

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use super::batch::{lock, Mailbox};
use super::partition::Partitions;
use crate::error::SolveError;
use awari_dbformat::Error;

/// One box of updates per partition.
pub(super) struct Mail {
    partitions: Partitions,
    boxes: Vec<Mutex<Inbox>>,
    /// The updates held in memory, over all boxes.
    held: AtomicUsize,
    /// At most this many held in memory before a box goes to its file.
    cap: usize,
    /// Where boxes go past the cap (`None`: they stay in memory), and the
    /// name of this set of boxes there.
    spill: Option<(PathBuf, &'static str)>,
    /// Updates written to files so far.
    spilled: AtomicU64,
}

/// A partition's box: the updates in memory, and those in its file.
#[derive(Default)]
struct Inbox {
    updates: Vec<u64>,
    file: Option<File>,
    in_file: u64,
}

/// The updates taken from a box ([`Mail::take`]), for
/// [`Delivery::each_piece`] or [`Delivery::read_into`].
#[derive(Default)]
pub(super) struct Delivery {
    updates: Vec<u64>,
    /// The updates in memory already read.
    read: usize,
    file: Option<SpilledBox>,
}

/// A box's file being read back: the file, its path, and the updates in it
/// not read yet (from its start: it was written before).
struct SpilledBox {
    file: File,
    path: PathBuf,
    left: u64,
    rewound: bool,
}

/// Updates read back from a box's file at a time (8 MiB).
const PIECE_UPDATES: usize = 1 << 20;

impl Mail {
    /// Empty boxes, one per partition of `partitions`, all in memory.
    pub fn in_memory(partitions: Partitions) -> Mail {
        Mail::new(partitions, usize::MAX, None)
    }

    /// Empty boxes, one per partition of `partitions`, holding at most about
    /// `cap` updates in memory; the rest go to files `mail-NAME-P` in `dir`.
    pub fn spilling(partitions: Partitions, cap: usize, dir: &Path, name: &'static str) -> Mail {
        Mail::new(partitions, cap, Some((dir.to_path_buf(), name)))
    }

    fn new(partitions: Partitions, cap: usize, spill: Option<(PathBuf, &'static str)>) -> Mail {
        Mail {
            partitions,
            boxes: (0..partitions.count())
                .map(|_| Mutex::new(Inbox::default()))
                .collect(),
            held: AtomicUsize::new(0),
            cap,
            spill,
            spilled: AtomicU64::new(0),
        }
    }

    /// Empties partition `p`'s box: its updates.
    pub fn take(&self, p: usize) -> Delivery {
        let mut taken = lock(&self.boxes[p]);
        let updates = std::mem::take(&mut taken.updates);
        self.held.fetch_sub(updates.len(), Relaxed);
        let file = match (taken.file.take(), &self.spill) {
            (Some(file), Some((dir, name))) => Some(SpilledBox {
                file,
                path: box_path(dir, name, p),
                left: std::mem::take(&mut taken.in_file),
                rewound: false,
            }),
            _ => None,
        };
        Delivery {
            updates,
            read: 0,
            file,
        }
    }

    /// The updates written to files so far.
    pub fn spilled(&self) -> u64 {
        self.spilled.load(Relaxed)
    }

    /// Appends box `p`'s updates in memory to its file.
    fn spill(&self, p: usize, into: &mut Inbox) -> Result<(), SolveError> {
        let Some((dir, name)) = &self.spill else {
            return Ok(());
        };
        let path = box_path(dir, name, p);
        if into.file.is_none() {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .map_err(Error::io(&path))?;
            into.file = Some(file);
        }
        let file = into.file.as_mut().expect("opened above");
        let mut bytes = Vec::with_capacity(8 * PIECE_UPDATES.min(into.updates.len()));
        for piece in into.updates.chunks(PIECE_UPDATES) {
            bytes.clear();
            bytes.extend(piece.iter().flat_map(|u| u.to_le_bytes()));
            file.write_all(&bytes).map_err(Error::io(&path))?;
        }
        let count = into.updates.len();
        into.in_file += count as u64;
        self.spilled.fetch_add(count as u64, Relaxed);
        self.held.fetch_sub(count, Relaxed);
        // (A new vector: the old one's memory goes back.)
        into.updates = Vec::new();
        Ok(())
    }
}

impl Mailbox for Mail {
    fn post(&self, updates: Vec<u64>) -> Result<(), SolveError> {
        // Split by partition in one pass, then into each box under one lock.
        // A batch for one partition only (always so with two) moves whole.
        let of = |u: u64| self.partitions.of(u >> 1);
        let mut runs: Vec<Vec<u64>> = vec![Vec::new(); self.partitions.count()];
        match updates.first() {
            Some(&first) if updates.iter().all(|&u| of(u) == of(first)) => {
                runs[of(first)] = updates;
            }
            _ => {
                for &u in &updates {
                    runs[of(u)].push(u);
                }
            }
        }
        for (p, run) in runs.into_iter().enumerate() {
            if run.is_empty() {
                continue;
            }
            let count = run.len();
            let mut into = lock(&self.boxes[p]);
            if into.updates.is_empty() {
                into.updates = run;
            } else {
                into.updates.extend_from_slice(&run);
            }
            let held = self.held.fetch_add(count, Relaxed) + count;
            if held > self.cap {
                self.spill(p, &mut into)?;
            }
        }
        Ok(())
    }
}

impl Delivery {
    /// True when no update was taken.
    pub fn is_empty(&self) -> bool {
        self.updates.is_empty() && self.file.is_none()
    }

    /// Hands the updates to `apply` in pieces: those held in
    /// memory, then those of the box's file a few mebibytes at a time. The
    /// file is removed after.
    ///
    /// # Errors
    /// [`SolveError::Io`] naming the box's file when it cannot be read.
    pub fn each_piece(mut self, mut apply: impl FnMut(&[u64])) -> Result<(), SolveError> {
        if !self.updates.is_empty() {
            apply(&self.updates);
        }
        self.updates = Vec::new();
        let mut piece = Vec::with_capacity(PIECE_UPDATES.min(self.in_file() as usize));
        while self.file.is_some() {
            piece.clear();
            self.read_into(&mut piece, PIECE_UPDATES)?;
            apply(&piece);
        }
        Ok(())
    }

    /// Moves the next updates to `out` until it holds `max` or none is
    /// left: those held in memory, then those of the box's file (removed
    /// once read). Returns true when none is left.
    ///
    /// # Errors
    /// [`SolveError::Io`] naming the box's file when it cannot be read or
    /// removed.
    pub fn read_into(&mut self, out: &mut Vec<u64>, max: usize) -> Result<bool, SolveError> {
        let n = (max.saturating_sub(out.len())).min(self.updates.len() - self.read);
        out.extend_from_slice(&self.updates[self.read..self.read + n]);
        self.read += n;
        if self.read == self.updates.len() {
            self.updates = Vec::new();
            self.read = 0;
        }
        let Some(spilled) = &mut self.file else {
            return Ok(self.updates.is_empty());
        };
        let path = &spilled.path;
        if !spilled.rewound {
            spilled
                .file
                .seek(SeekFrom::Start(0))
                .map_err(Error::io(path))?;
            spilled.rewound = true;
        }
        let n = (max.saturating_sub(out.len()) as u64).min(spilled.left) as usize;
        let mut bytes = vec![0u8; 8 * n];
        spilled
            .file
            .read_exact(&mut bytes)
            .map_err(Error::io(path))?;
        out.extend(
            bytes
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
        spilled.left -= n as u64;
        if spilled.left > 0 {
            return Ok(false);
        }
        let SpilledBox { file, path, .. } = self.file.take().expect("read above");
        drop(file);
        std::fs::remove_file(&path).map_err(Error::io(&path))?;
        Ok(self.updates.is_empty())
    }

    /// The updates not read yet.
    pub fn len(&self) -> u64 {
        (self.updates.len() - self.read) as u64 + self.in_file()
    }

    /// The updates in the box's file not read yet.
    fn in_file(&self) -> u64 {
        self.file.as_ref().map_or(0, |f| f.left)
    }
}

/// The file of box `p` of the set `name` in `dir`.
fn box_path(dir: &Path, name: &str, p: usize) -> PathBuf {
    dir.join(format!("mail-{name}-{p}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Updates for boards spread over a level of `boards` boards, in no
    /// order.
    fn updates(boards: u64, count: u64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..count)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (((x >> 20) % boards) << 1) | ((x >> 7) & 1)
            })
            .collect()
    }

    #[test]
    fn boxes_over_the_cap_go_to_files_and_come_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let boards = 1 << 20;
        let partitions = Partitions::new(boards, 5);
        let in_memory = Mail::in_memory(partitions);
        // A cap of a few updates: nearly every box goes to its file, and
        // files are appended to.
        let spilling = Mail::spilling(partitions, 1000, dir.path(), "a");
        for seed in 0..6 {
            let batch = updates(boards, 20_000 + 7 * seed, seed);
            in_memory.post(batch.clone()).unwrap();
            spilling.post(batch).unwrap();
        }
        assert!(spilling.spilled() > 100_000);
        for p in 0..partitions.count() {
            let collect = |mail: &Mail| {
                let mut all = Vec::new();
                mail.take(p)
                    .each_piece(|piece| all.extend_from_slice(piece))
                    .unwrap();
                all.sort_unstable();
                all
            };
            let expected = collect(&in_memory);
            assert!(!expected.is_empty());
            assert!(expected.iter().all(|&u| partitions.of(u >> 1) == p));
            assert_eq!(collect(&spilling), expected, "partition {p}");
            // Emptied: the box is empty and its file gone.
            assert!(spilling.take(p).is_empty());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
