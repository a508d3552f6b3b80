//! The build: every missing level of a plan, in order, into a directory.
//!
//! A level is solved in memory, its statistics file is written, then the level
//! file is written to a temporary name and renamed: the rename is the moment the
//! level exists. A build that is stopped at any point (kill -9 included) is
//! resumed by running it again: present levels are checked and kept, the first
//! missing one is built again from the start.
//!
//! - [`Plan`] and [`Options`]: which levels, and how.
//! - `budget`: how one level fits the memory budget (in memory or on disk,
//!   partitions, frontier lists).
//! - `level`: building one missing level, phase by phase.
//! - `lower_source`: the lower levels read from their files as a level
//!   needs them.
//! - `plan`: every level of a plan as planned before any work
//!   (`awari-solve --plan`).
//! - `report`: what happened to each level, and its statistics file.
//! - `progress`: the bars on the terminal.

mod budget;
mod level;
mod lower_source;
mod plan;
mod progress;
mod ranks;
mod report;

pub use budget::Cells;
pub use plan::{plan_levels, PlannedLevel};
pub use report::LevelReport;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use awari_dbformat::capture_reaches;
use awari_dbformat::cluster::{OneProcess, Ranks};
use awari_dbformat::file::Stored;
use awari_dbformat::file::{self, LevelId, LevelReader, WriteOptions};
use awari_dbformat::memory::resident;
use awari_dbformat::Levels;
use awari_dbformat::{Index, Rules};

use crate::error::SolveError;

use crate::retro::{self, GENERATION_BYTES_PER_BOARD};
use budget::{plan_memory, Reach};
use lower_source::{scores_path, LowerSource};
use progress::counting_bar;
use report::{make_report, read_report, stats_path, write_report};

/// Which levels to build.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The rules and board size.
    pub rules: Rules,
    /// The levels, ascending.
    pub levels: Vec<u32>,
}

impl Plan {
    /// Every level from 0 to `max_seeds`.
    pub fn up_to(rules: Rules, max_seeds: u32) -> Plan {
        Plan {
            rules,
            levels: (0..=max_seeds).collect(),
        }
    }

    /// Every level a game starting with `per_pit` seeds in each pit needs: all up
    /// to `2P x per_pit` except `2P x per_pit - 1`, which a capture (at least two
    /// seeds) can never reach.
    pub fn for_start(rules: Rules, per_pit: u32) -> Plan {
        let total = rules.board_pits() as u32 * per_pit;
        Plan {
            rules,
            levels: (0..=total).filter(|&n| n + 1 != total).collect(),
        }
    }
}

/// How to build.
#[derive(Clone, Debug)]
pub struct Options {
    /// The database directory (created if missing).
    pub dir: PathBuf,
    /// The memory a level may use, in bytes.
    pub memory: u64,
    /// Show progress bars on the terminal.
    pub progress: bool,
    /// How level files are compressed.
    pub write: WriteOptions,
    /// Also write each built level's certificate (the generation in which each
    /// board was decided; see [`awari_dbformat::file::certificate`]), which lets
    /// `awari-probe verify` prove the values in one pass. Costs 2 bytes per board
    /// while solving and about half a byte per board on disk.
    pub certificate: bool,
    /// What the level files store: [`Stored::LowerBounds`] (the default of
    /// `awari-solve`), where a board whose score a capture reaches stores a
    /// lower bound that codes cheaper ([`awari_dbformat::file::bounds`]):
    /// files about a quarter smaller, and a lookup searches the captures;
    /// or [`Stored::Scores`] (`--exact`), every board's score.
    pub stored: Stored,
    /// The partitions each level is solved in ([`retro::Partitions`]);
    /// `None`: one when the level fits in memory, else as few as the budget
    /// allows with their cells on disk. The files are the same for any number.
    pub partitions: Option<u64>,
    /// Keep the partitions' cells in files of the work directory even when
    /// they would fit in memory.
    pub on_disk: bool,
    /// For a level on disk with the lower levels in files: give the lower
    /// levels' scores back while its stages run, and read them again after;
    /// for the last level in memory, count its statistics before its file
    /// is written and give the scores back between; even when the disk
    /// could hold them (it is done anyway when it cannot:
    /// [`PlannedLevel::spare_disk`], [`PlannedLevel::count_before_writing`]).
    pub spare_disk: bool,
    /// The directory of the partitions kept on disk (a subdirectory per
    /// level, removed when the level is complete); `None`: `work` in the
    /// database directory.
    pub work_dir: Option<PathBuf>,
    /// With the partitions on disk: the least seconds between two
    /// checkpoints a level resumes from (one is made after the initial
    /// pass, and at the end of a stage). `None`: 60, and besides 9 times
    /// as long as the last checkpoint took, so that the checkpoints of a
    /// large level take at most about a tenth of its stages' time.
    pub checkpoint_seconds: Option<f64>,
    /// Which cells the levels are solved in ([`Cells::Auto`]: the packed
    /// cells in memory when they fit, else the split cells when their
    /// words fit, else the packed cells on disk). The files are the same
    /// whichever.
    pub cells: Cells,
    /// Under MPI, with its share of a level in memory: the bytes of updates
    /// in transit a rank holds in memory, the rest in files of its own in
    /// the work directory; `None`: 4 MiB. The files are the same for any.
    pub rank_mail_bytes: Option<u64>,
    /// Also count the values of every board of each level built, stored
    /// or not (Lincke's tables: [`crate::stats::count_all`]), into its
    /// statistics' `counts_all`. The unstored boards (the opponent's row
    /// full) are valued one ply ahead, over the level and the lower
    /// levels: at 33 seeds and above that took about a fifth of the
    /// build. Without it only the stored boards are counted.
    pub count_all: bool,
}

impl Options {
    /// The work directory: `work_dir`, else `work` in the database directory.
    pub fn work_dir(&self) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| self.dir.join("work"))
    }

    /// The solver state per board of level `seeds` that the budget must
    /// hold whatever its frontier lists: its cells, and the generations
    /// with a certificate (the report's `state_bytes_per_board` is the
    /// cells and the lists: [`retro::state_bytes_per_board`]).
    fn fixed_bytes_per_board(&self, seeds: u32) -> f64 {
        retro::cell_bytes_per_board(seeds) + self.generation_bytes_per_board()
    }

    /// The bytes per board of the generations a certificate records while
    /// a level is solved (0 without one).
    fn generation_bytes_per_board(&self) -> f64 {
        if self.certificate {
            GENERATION_BYTES_PER_BOARD
        } else {
            0.0
        }
    }
}

/// Builds every missing level of `plan`, calling `report` after each level of the
/// plan (present or built), in order.
///
/// # Errors
/// A level that does not fit in `options.memory` ([`SolveError::Memory`], before
/// any work on it), a present level file that is corrupt or of other rules, or a
/// failure to write (a full disk) — in that case nothing partial is left as a level.
pub fn build(
    plan: &Plan,
    options: &Options,
    report: impl FnMut(&LevelReport),
) -> Result<(), SolveError> {
    build_on(plan, options, &OneProcess, report)
}

/// [`build`] by the ranks `ranks` together ([`awari_dbformat::cluster`]): each level
/// is solved by all of them, rank 0 writes its files and is the only one to
/// `report`; every rank keeps the levels the ones above read.
///
/// # Errors
/// As [`build`].
pub fn build_on(
    plan: &Plan,
    options: &Options,
    ranks: &dyn Ranks,
    mut report: impl FnMut(&LevelReport),
) -> Result<(), SolveError> {
    let (build, mut held) = Build::new(plan, options, ranks)?;
    for &seeds in &plan.levels {
        let path = file::level_path(&options.dir, build.id(seeds));
        if path.exists() {
            build.present_level(&mut held, seeds, &path, &mut report)?;
        } else {
            build.build_level(&mut held, seeds, &mut report)?;
        }
    }
    build.finish(held)
}

/// A build under way: what holds for every level of its plan.
struct Build<'a> {
    plan: &'a Plan,
    options: &'a Options,
    ranks: &'a dyn Ranks,
    index: &'static Index,
    /// The highest level that needs work: it decides which lower levels
    /// are read.
    last_missing: Option<u32>,
    /// Whether the lower levels go to mapped files of scores in the work
    /// directory.
    lower_in_files: bool,
    /// The work directory of every level ([`Options::work_dir`]).
    work_dir: PathBuf,
    /// Where the lower levels are read from when a level needs them (and
    /// again after a level that gave them back to spare the disk).
    lower_levels: LowerSource<'a>,
    /// The levels that give the lower levels' scores back while their
    /// stages run: the disk is short for both (see
    /// [`PlannedLevel::spare_disk`]).
    spare: Vec<u32>,
}

/// What a build holds from one level to the next.
struct Held {
    /// The lower levels read so far, in memory or in files of scores.
    lower: Levels,
    /// Holds the pages of mapped files within the budget while a level
    /// needs it (one watch for all: the ceiling is the same).
    watch: Option<resident::Watch>,
}

impl<'a> Build<'a> {
    /// Sets up the build of `plan`: its directories made, which lower
    /// levels it reads and where it keeps them.
    ///
    /// # Errors
    /// A level above [`awari_dbformat::MAX_SEEDS`], or a directory that
    /// cannot be made.
    fn new(
        plan: &'a Plan,
        options: &'a Options,
        ranks: &'a dyn Ranks,
    ) -> Result<(Build<'a>, Held), SolveError> {
        let rules = plan.rules;
        crate::memory::free_large_blocks_at_once();
        if let Some(&max) = plan.levels.last() {
            if max > awari_dbformat::MAX_SEEDS {
                return Err(SolveError::Invalid(format!(
                    "{max} seeds is more than the {} supported",
                    awari_dbformat::MAX_SEEDS
                )));
            }
        }
        fs::create_dir_all(&options.dir).map_err(awari_dbformat::Error::io(&options.dir))?;
        let last_missing = last_missing(plan, options);
        let lower = Levels::new(rules.pits());
        // (Under MPI each rank holds its share of the lower levels in
        // memory.)
        let lower_in_files =
            lower_levels_in_files(plan, options, last_missing, ranks.size() as u64);
        let work_dir = options.work_dir();
        if lower_in_files && last_missing.is_some() {
            fs::create_dir_all(&work_dir).map_err(awari_dbformat::Error::io(&work_dir))?;
        }
        // The levels present are decoded into files of scores within the budget.
        let watch =
            lower_in_files.then(|| resident::Watch::new(resident::ceiling_for(options.memory)));
        let lower_levels = LowerSource {
            rules,
            dir: &options.dir,
            levels: &plan.levels,
            scores_dir: lower_in_files.then(|| work_dir.clone()),
            progress: options.progress,
            ranks,
        };
        let spare = if lower_in_files && ranks.is_root() {
            plan_levels(plan, options, 1)
                .iter()
                .filter(|r| r.spare_disk)
                .map(|r| r.seeds)
                .collect()
        } else {
            Vec::new()
        };
        let build = Build {
            plan,
            options,
            ranks,
            index: Index::for_pits(rules.pits()),
            last_missing,
            lower_in_files,
            work_dir,
            lower_levels,
            spare,
        };
        Ok((build, Held { lower, watch }))
    }

    /// Level `seeds` of the plan's rules.
    fn id(&self, seeds: u32) -> LevelId {
        LevelId::new(self.plan.rules, seeds)
    }

    /// Whether a level still to build reads level `seeds` (its captures
    /// reach it).
    fn read_above(&self, seeds: u32) -> bool {
        self.last_missing.is_some_and(|m| capture_reaches(m, seeds))
    }

    /// Where level `seeds` keeps its partitions when it is built on disk.
    fn level_dir(&self, seeds: u32) -> PathBuf {
        self.work_dir
            .join(self.id(seeds).file_name())
            .with_extension("work")
    }

    /// Where this rank keeps its partitions of level `seeds` when they are
    /// on disk: the level's directory in one process, a directory of its
    /// own in it under MPI.
    fn rank_dir(&self, seeds: u32) -> PathBuf {
        let dir = self.level_dir(seeds);
        if self.ranks.size() > 1 {
            dir.join(format!("rank-{}", self.ranks.rank()))
        } else {
            dir
        }
    }

    /// Level `seeds`, present at `path`: its report from its statistics
    /// file (counted again when missing, or, with `--count-all`, when it
    /// lacks the counts over all boards), given to `report` on rank 0.
    ///
    /// # Errors
    /// A stale work directory that cannot be removed, or a level that
    /// cannot be read or counted.
    fn present_level(
        &self,
        held: &mut Held,
        seeds: u32,
        path: &Path,
        report: &mut impl FnMut(&LevelReport),
    ) -> Result<(), SolveError> {
        // (Only rank 0 writes and reports.)
        if !self.ranks.is_root() {
            return Ok(());
        }
        // (A run stopped right after the level file was named leaves
        // the level's cells behind.)
        let stale = self.level_dir(seeds);
        if stale.exists() {
            fs::remove_dir_all(&stale).map_err(awari_dbformat::Error::io(&stale))?;
        }
        let level_report = match read_report(&stats_path(path)) {
            Some(r) if r.counts_all.is_some() || !self.options.count_all => r,
            found => {
                let counted = self.count_present(held, seeds, path)?;
                // (Built without `--count-all`: its figures kept, its
                // boards counted now.)
                let r = match found {
                    Some(built) => LevelReport {
                        counts_all: counted.counts_all,
                        ..built
                    },
                    None => counted,
                };
                write_report(&stats_path(path), &r)?;
                r
            }
        };
        report(&LevelReport {
            status: "present".into(),
            ..level_report
        });
        Ok(())
    }

    /// The report of level `seeds`, present at `path` without its
    /// statistics (renamed into place, then stopped), counted.
    /// A level the levels above read is loaded as they will read it
    /// (decoded once, into its file of scores with the lower levels in
    /// files); the others decoded here.
    fn count_present(
        &self,
        held: &mut Held,
        seeds: u32,
        path: &Path,
    ) -> Result<LevelReport, SolveError> {
        if self.ranks.size() > 1 {
            return self.count_present_alone(seeds, path);
        }
        let decoded;
        let values = if self.read_above(seeds) {
            self.lower_levels.load_below(seeds + 2, &mut held.lower)?;
            held.lower.get(seeds).expect("the level is loaded")
        } else {
            self.lower_levels.load_below(seeds, &mut held.lower)?;
            decoded = Arc::new(self.lower_levels.decode(seeds, &held.lower)?);
            &decoded
        };
        let reader = LevelReader::open_expecting(path, self.id(seeds))?;
        let bar = counting_bar(self.options.progress, seeds);
        let file_bytes = reader.file_bytes();
        let r = make_report(
            self.id(seeds),
            values,
            &held.lower,
            file_bytes,
            self.options.count_all,
            resident::room(0),
        );
        bar.finish_and_clear();
        Ok(r)
    }

    /// [`Build::count_present`] under MPI, by rank 0 alone (the ranks hold
    /// shares of the levels, and only rank 0 reports): the level and those
    /// its captures reach decoded whole, for this count only. (A rare case:
    /// a run stopped between a level's file and its statistics.)
    fn count_present_alone(&self, seeds: u32, path: &Path) -> Result<LevelReport, SolveError> {
        let alone = LowerSource {
            scores_dir: None,
            ranks: &OneProcess,
            ..self.lower_levels
        };
        let mut lower = Levels::new(self.plan.rules.pits());
        alone.load_below(seeds, &mut lower)?;
        let values = alone.decode(seeds, &lower)?;
        let reader = LevelReader::open_expecting(path, self.id(seeds))?;
        let r = make_report(
            self.id(seeds),
            &values,
            &lower,
            reader.file_bytes(),
            self.options.count_all,
            resident::room(0),
        );
        Ok(r)
    }

    /// Every level is built: the scores kept in files go, and the work
    /// directory with them when empty (it may be the user's own).
    ///
    /// # Errors
    /// A file of scores that cannot be removed.
    fn finish(self, held: Held) -> Result<(), SolveError> {
        let Held { lower, watch } = held;
        drop(lower);
        if self.lower_in_files {
            for &seeds in &self.plan.levels {
                let path = scores_path(&self.work_dir, self.id(seeds));
                if path.exists() {
                    fs::remove_file(&path).map_err(awari_dbformat::Error::io(&path))?;
                }
            }
        }
        let _ = fs::remove_dir(&self.work_dir);
        drop(watch);
        Ok(())
    }
}

/// True when level `seeds` is complete in `options.dir`: its file is
/// present (it is renamed into place once whole; statistics missing beside
/// it, from a run stopped while it counted them, are counted again without
/// solving the level).
fn is_complete(id: LevelId, options: &Options) -> bool {
    file::level_path(&options.dir, id).exists()
}

/// The highest level of `plan` that is not complete, if any.
fn last_missing(plan: &Plan, options: &Options) -> Option<u32> {
    let missing = |&&n: &&u32| !is_complete(LevelId::new(plan.rules, n), options);
    plan.levels.iter().rev().find(missing).copied()
}

/// Whether the lower levels go to mapped files of scores: when they do not
/// fit in memory beside `last_missing`, the highest level to build (or with
/// `--on-disk`); never under `ranks` > 1, where each rank holds its shares
/// of them.
fn lower_levels_in_files(
    plan: &Plan,
    options: &Options,
    last_missing: Option<u32>,
    ranks: u64,
) -> bool {
    if ranks > 1 {
        return false;
    }
    let index = Index::for_pits(plan.rules.pits());
    options.on_disk
        || last_missing.is_some_and(|m| {
            let below = plan.levels.iter().filter(|&&s| capture_reaches(m, s));
            let bytes = below.map(|&s| index.level_size(s)).sum();
            plan_memory(m, index.level_size(m), bytes, Reach::default(), options)
                .map_or(true, |p| p.on_disk)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_a_work_directory_holds_count_its_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(retro::dir_bytes(&dir.path().join("missing")), 0);
        fs::write(dir.path().join("awari-p6-n20.scores"), vec![0u8; 1000]).unwrap();
        let level = dir.path().join("awari-p6-n22.work");
        fs::create_dir(&level).unwrap();
        fs::write(level.join("cells-0"), vec![0u8; 234]).unwrap();
        fs::write(level.join("manifest.json"), b"{}").unwrap();
        assert_eq!(retro::dir_bytes(dir.path()), 1000 + 234 + 2);
    }

    #[test]
    fn a_directory_without_room_is_named_with_what_it_lacks() {
        let dir = std::env::temp_dir();
        assert!(crate::memory::check_free_disk(3, &dir, "its level file", 1).is_ok());
        if crate::memory::free_disk(&dir).is_some() {
            let err =
                crate::memory::check_free_disk(3, &dir, "its level file", u64::MAX).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, SolveError::Disk { seeds: 3, .. }), "{text}");
            assert!(
                text.contains("its level file") && text.contains("--db"),
                "{text}"
            );
        }
    }
}
