//! The lower levels a level reads, from their level files as it needs
//! them: decoded into memory, or into mapped files of scores in the work
//! directory (read again by a build run again only when older than their
//! level file).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use awari_dbformat::file::{self, LevelId, LevelReader, Stored};
use awari_dbformat::huge::Values;
use awari_dbformat::resident;
use awari_dbformat::{Index, Rules};
use indicatif::ProgressBar;

use crate::error::SolveError;
use crate::lower::{self, LowerLevels};
use crate::mapped;
use crate::stats;

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
    pub fn load_below(&self, seeds: u32, lower: &mut LowerLevels) -> Result<(), SolveError> {
        let index = Index::for_pits(self.rules.pits());
        for &s in self.levels.iter().filter(|&&s| s + 2 <= seeds) {
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
            let values = match &self.scores_dir {
                Some(work_dir) => {
                    let level = file::level_path(self.dir, self.id(s));
                    let fill = |out: &mut [i8]| self.decode_into(s, lower, out);
                    let scores = scores_path(work_dir, self.id(s));
                    lower::scores_in_file(&scores, index.level_size(s), Some(&level), fill)?
                }
                None => self.decode(s, lower)?,
            };
            bar.finish_and_clear();
            lower.insert(s, Arc::new(values));
        }
        Ok(())
    }

    /// Gives back every level `lower` holds, removing their files of scores.
    ///
    /// # Errors
    /// A file that cannot be removed.
    pub fn give_back(&self, lower: &mut LowerLevels) -> Result<(), SolveError> {
        for &s in self.levels {
            if lower.has(s) {
                lower.remove(s);
                if let Some(work_dir) = &self.scores_dir {
                    let path = scores_path(work_dir, self.id(s));
                    fs::remove_file(&path).map_err(mapped::io(&path))?;
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
    pub fn decode(&self, seeds: u32, lower: &LowerLevels) -> Result<Values, SolveError> {
        let index = Index::for_pits(self.rules.pits());
        let mut values =
            Values::try_zeroed(index.level_size(seeds)).map_err(|source| SolveError::Io {
                path: file::level_path(self.dir, self.id(seeds)),
                source,
            })?;
        self.decode_into(seeds, lower, &mut values)?;
        Ok(values)
    }

    /// Decodes level `seeds` into `out`, one byte per board, lower bounds
    /// resolved from the levels below, which `lower` holds.
    fn decode_into(
        &self,
        seeds: u32,
        lower: &LowerLevels,
        out: &mut [i8],
    ) -> Result<(), SolveError> {
        let path = file::level_path(self.dir, self.id(seeds));
        let reader = LevelReader::open_expecting(&path, self.id(seeds))?;
        reader.decode_into(out)?;
        if reader.stored() != Stored::LowerBounds {
            return Ok(());
        }
        // Captures reach every level below seeds - 1, all loaded. They are
        // looked up at random: under a resident ceiling, in passes that each
        // read a share of the lower levels the room holds (read all at once,
        // level 34 here would take hours of pages given back and faulted in
        // again), the decoded values beside them.
        // (Mapped from a file, `out` is touched in order: when its pages
        // fill the room the watch gives them back with the share's, which
        // are mapped again from the page cache in a second or so. So no room
        // is kept for it: the passes stay few.)
        let room = room_under_ceiling(0);
        let sizes: Vec<u64> = (0..seeds.saturating_sub(1))
            .map(|s| lower.level(s).map_or(0, |level| level.len() as u64))
            .collect();
        for share in stats::passes(&sizes, room) {
            file::resolve_level_in_share(
                self.rules,
                seeds,
                0,
                out,
                |s| {
                    lower
                        .level(s)
                        .expect("the levels captures reach are loaded")
                },
                &share,
            );
            if room.is_some() {
                resident::release_file_pages();
            }
        }
        Ok(())
    }

    fn id(&self, seeds: u32) -> LevelId {
        LevelId {
            rules: self.rules,
            seeds,
        }
    }
}

/// The bytes of mapped files a pass may read at random under the ceiling of
/// the live [`resident::Watch`], with `beside` bytes more to be touched
/// meanwhile: three quarters of what the ceiling leaves once the file pages
/// are given back (the rest for pages mapped between two readings), and at
/// least a sixteenth of the ceiling, so that passes stay few. `None` without
/// a watch: one pass reads all.
pub(super) fn room_under_ceiling(beside: u64) -> Option<u64> {
    resident::ceiling().map(|ceiling| {
        resident::release_file_pages();
        let now = resident::resident_bytes().unwrap_or(0);
        (ceiling.saturating_sub(now + beside) / 4 * 3).max(ceiling / 16)
    })
}
