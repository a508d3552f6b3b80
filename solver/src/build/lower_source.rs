//! The lower levels a level reads, from their level files as it needs
//! them: decoded into memory, or into mapped files of scores in the work
//! directory (read again by a build run again only when older than their
//! level file).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use awari_dbformat::capture_reaches;
use awari_dbformat::cluster::{Ranks, Shares};
use awari_dbformat::file::{self, LevelId, LevelReader};
use awari_dbformat::level::Values;
use awari_dbformat::memory::resident;
use awari_dbformat::{Index, Rules};
use indicatif::ProgressBar;

use crate::error::SolveError;
use crate::retro;

use awari_dbformat::level::scores::{decode_scores, decode_scores_into, scores_in_file};
use awari_dbformat::Levels;

/// The file of scores of level `id` in work directory `work_dir`.
pub(super) fn scores_path(work_dir: &Path, id: LevelId) -> PathBuf {
    work_dir.join(id.file_name()).with_extension("scores")
}

/// Where the lower levels are read from when a level needs them: their
/// level files, decoded into memory or into files of scores.
pub(super) struct LowerSource<'a> {
    pub rules: Rules,
    /// The database directory.
    pub dir: &'a Path,
    /// The levels of the plan, in order.
    pub levels: &'a [u32],
    /// The work directory, when the levels go to files of scores there
    /// ([`scores_path`]).
    pub scores_dir: Option<PathBuf>,
    /// Show what is read on the terminal.
    pub progress: bool,
    /// The ranks: with several, each holds its share of each level.
    pub ranks: &'a dyn Ranks,
}

impl LowerSource<'_> {
    /// Loads into `lower`, in order, every level of the plan that a capture
    /// from level `seeds` may reach (below `seeds - 1`) and that `lower`
    /// does not hold. A file of scores newer than its level file is mapped
    /// as it is (a build run again reads nothing twice).
    ///
    /// # Errors
    /// A level file that is missing, corrupt or of other rules, or a file of
    /// scores that cannot be written (a full disk).
    pub fn load_below(&self, seeds: u32, lower: &mut Levels) -> Result<(), SolveError> {
        let index = Index::for_pits(self.rules.pits());
        for &s in self.levels.iter().filter(|&&s| capture_reaches(seeds, s)) {
            if lower.has(s) {
                continue;
            }
            let bar = if self.progress {
                ProgressBar::new_spinner()
            } else {
                ProgressBar::hidden()
            };
            bar.set_message(format!(
                "reading level {s} ({} boards) for the levels above",
                index.level_size(s)
            ));
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            if self.ranks.size() > 1 {
                self.load_share(s, lower)?;
                bar.finish_and_clear();
                continue;
            }
            let values = match &self.scores_dir {
                Some(work_dir) => {
                    let level = file::level_path(self.dir, self.id(s));
                    let fill = |out: &mut [i8]| self.decode_into(s, lower, out);
                    let scores = scores_path(work_dir, self.id(s));
                    scores_in_file(&scores, index.level_size(s), Some(&level), fill)?
                }
                None => self.decode(s, lower)?,
            };
            bar.finish_and_clear();
            lower.insert(s, Arc::new(values));
        }
        Ok(())
    }

    /// Loads this rank's share of level `seeds` into `lower`, which holds
    /// this rank's share of every level its captures reach: an even share
    /// of whole blocks ([`Shares::even`]), decoded with the other ranks
    /// ([`retro::decode_share`]).
    ///
    /// # Errors
    /// A level file that is missing, corrupt or of other rules.
    fn load_share(&self, seeds: u32, lower: &mut Levels) -> Result<(), SolveError> {
        let reader = self.open(seeds)?;
        let shares = Shares::even(reader.boards(), self.ranks.size());
        let share = shares.range(self.ranks.rank());
        let values = retro::decode_share(&reader, lower, self.ranks, share)?;
        lower.insert_shared(seeds, shares, self.ranks.rank(), Arc::new(values));
        // Held packed, as the shares a rank solved itself (`write_by_ranks`).
        lower.pack(seeds);
        Ok(())
    }

    /// Reads the files of scores of the levels a capture from level `seeds`
    /// reaches into the page cache, the nearest first (most captures take
    /// two or three seeds), as many as fit in `room` bytes: for an initial
    /// pass that looks them up at random, whose faults would otherwise each
    /// wait on the disk. They are read in order at the disk's rate (1.6
    /// GB/s here, against about 40 MB/s faulted in at random) and unmapped
    /// again, so the resident set does not grow. Pages left unread for a
    /// while may have left the cache by the time the next level reads them:
    /// the kernel may reclaim idle file pages before memory runs short (on
    /// this machine's virtual machines, `DAMON` pages out what was not used
    /// for a minute), so each level reads its own in. Nothing for levels in
    /// memory. Returns the bytes read in.
    pub fn cache_reached(&self, seeds: u32, lower: &Levels, room: u64) -> u64 {
        if self.scores_dir.is_none() {
            return 0;
        }
        let index = Index::for_pits(self.rules.pits());
        let mut cached = 0;
        for &s in self.levels.iter().rev() {
            let bytes = index.level_size(s);
            if !capture_reaches(seeds, s) || !lower.has(s) || cached + bytes > room {
                continue;
            }
            lower.cache(s);
            cached += bytes;
        }
        cached
    }

    /// Gives back every level `lower` holds, removing their files of scores.
    ///
    /// # Errors
    /// A file that cannot be removed.
    pub fn give_back(&self, lower: &mut Levels) -> Result<(), SolveError> {
        for &s in self.levels {
            if lower.has(s) {
                lower.remove(s);
                if let Some(work_dir) = &self.scores_dir {
                    let path = scores_path(work_dir, self.id(s));
                    fs::remove_file(&path).map_err(awari_dbformat::Error::io(&path))?;
                }
            }
        }
        Ok(())
    }

    /// The values of level `seeds`, decoded into memory (lower bounds
    /// resolved from the levels below, which `lower` holds).
    ///
    /// # Errors
    /// As [`LowerSource::load_below`].
    pub fn decode(&self, seeds: u32, lower: &Levels) -> Result<Values, SolveError> {
        let reader = self.open(seeds)?;
        Ok(decode_scores(&reader, lower, resident::room(0))?)
    }

    /// Decodes level `seeds` into `out`, one byte per board, lower bounds
    /// resolved from the levels below, which `lower` holds.
    fn decode_into(&self, seeds: u32, lower: &Levels, out: &mut [i8]) -> Result<(), SolveError> {
        let reader = self.open(seeds)?;
        // Captures reach every level below seeds - 1, all loaded. They are
        // looked up at random: under a resident ceiling, in passes that each
        // read a share of the lower levels the room holds (read all at once,
        // level 34 here would take hours of pages given back and faulted in
        // again), the decoded values beside them.
        // (Mapped from a file, `out` is touched in order: when its pages
        // fill the room the watch gives them back with the share's, which
        // are mapped again from the page cache in a second or so. So no room
        // is kept for it: the passes stay few.)
        decode_scores_into(&reader, lower, out, resident::room(0))?;
        Ok(())
    }

    /// The file of level `seeds`, opened and checked to be that level.
    fn open(&self, seeds: u32) -> Result<LevelReader, SolveError> {
        let path = file::level_path(self.dir, self.id(seeds));
        Ok(LevelReader::open_expecting(&path, self.id(seeds))?)
    }

    fn id(&self, seeds: u32) -> LevelId {
        LevelId {
            rules: self.rules,
            seeds,
        }
    }
}
