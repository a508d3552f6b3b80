//! The build: every missing level of a plan, in order, into a directory.
//!
//! A level is solved in memory, its statistics file is written, then the level
//! file is written to a temporary name and renamed: the rename is the moment the
//! level exists. A build that is stopped at any point (kill -9 included) is
//! resumed by running it again: present levels are checked and kept, the first
//! missing one is built again from the start.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::file::{self, LevelId, LevelReader, Stored, WriteOptions};
use awari_dbformat::level::Values;
use awari_dbformat::{Index, Rules};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::error::SolveError;
use crate::lower::{self, LowerLevels};
use crate::mapped;
use crate::memory::{format_size, peak_resident};
use crate::retro::{self, Stage, GENERATION_BYTES_PER_BOARD};
use crate::stats;
use awari_dbformat::cluster::{OneProcess, RankFigures, Ranks};
use awari_dbformat::memory::resident;

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
    /// Store every board's score. By default a board whose score a capture
    /// reaches stores a lower bound that codes cheaper
    /// ([`awari_dbformat::file::bounds`]): files about a quarter smaller, and
    /// a lookup searches the captures.
    pub exact: bool,
    /// The partitions each level is solved in ([`retro::Partitions`]);
    /// `None`: one when the level fits in memory, else as few as the budget
    /// allows with their cells on disk. The files are the same for any number.
    pub partitions: Option<u64>,
    /// Keep the partitions' cells in files of the work directory even when
    /// they would fit in memory.
    pub on_disk: bool,
    /// For a level on disk with the lower levels in files: give the lower
    /// levels' scores back while its stages run, and read them again after,
    /// even when the disk could hold them (it is done anyway when it
    /// cannot: [`PlannedLevel::spare_disk`]).
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
}

impl Options {
    /// The work directory: `work_dir`, else `work` in the database directory.
    pub fn work_dir(&self) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| self.dir.join("work"))
    }

    /// The fixed solver state per board of level `seeds`: its cells, and
    /// the generations with a certificate.
    fn state_bytes_per_board(&self, seeds: u32) -> f64 {
        let generations = if self.certificate {
            GENERATION_BYTES_PER_BOARD
        } else {
            0.0
        };
        retro::fixed_state_bytes_per_board(seeds) + generations
    }
}

/// What happened to one level: the line printed and the statistics file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LevelReport {
    /// The rule set.
    pub rules: String,
    /// Pits per side.
    pub pits: u8,
    /// The seed count of the level.
    pub seeds: u32,
    /// Stored boards.
    pub boards: u64,
    /// Seconds spent solving and writing (0 for a level that was already present).
    pub seconds: f64,
    /// Boards per second (solve and write).
    pub boards_per_second: f64,
    /// Seconds of the retrograde analysis alone.
    #[serde(default)]
    pub solve_seconds: f64,
    /// Of those, the seconds of the initial pass (the captures' values and
    /// the counters); the stages' own times are in `stages`.
    #[serde(default)]
    pub init_seconds: f64,
    /// Seconds spent counting values and compressing and writing the level file.
    #[serde(default)]
    pub write_seconds: f64,
    /// The process's peak resident memory so far, in bytes (0 where unknown).
    pub peak_memory_bytes: u64,
    /// The bytes of the lower levels held in memory while this level was
    /// built (the levels its captures read, and any kept for later levels):
    /// the peak less these is what the level itself cost.
    #[serde(default)]
    pub lower_levels_bytes: u64,
    /// Whether the lower levels were read from files of scores, mapped (the
    /// page cache holding what memory allows), rather than from memory.
    #[serde(default)]
    pub lower_levels_in_files: bool,
    /// Solver state per board of this level, in bytes: the cells of value
    /// and counter (1.333, or 1.6 above 31 seeds), plus the frontier lists
    /// the memory budget allowed.
    pub state_bytes_per_board: f64,
    /// Bytes of the level file.
    pub file_bytes: u64,
    /// "built" or "present".
    pub status: String,
    /// Boards with each value over the stored boards.
    pub counts_stored: stats::Counts,
    /// Boards with each value over all boards of the seed count (Lincke's form).
    pub counts_all: stats::Counts,
    /// The partitions the level was solved in (1 for a level already present).
    #[serde(default = "one")]
    pub partitions: u64,
    /// Whether the partitions' cells were kept in files of the work directory.
    #[serde(default)]
    pub on_disk: bool,
    /// When the level resumed from a checkpoint: the threshold of the first
    /// stage run after it (the level's seed count after the initial pass; 0
    /// when every stage was done and only the values were left to write).
    #[serde(default)]
    pub resumed_from_stage: Option<u32>,
    /// The boards whose initial pass a stopped run had checkpointed, taken
    /// from that checkpoint (0 when the pass ran whole in one run).
    #[serde(default)]
    pub resumed_initial_boards: u64,
    /// Whether the initial pass read the captures' children in their order
    /// (`retro::SolveOptions::sorted_lookups`) rather than at random.
    #[serde(default)]
    pub sorted_lookups: bool,
    /// Bytes this process read from and wrote to storage while it built the
    /// level (`/proc/self/io`: the work directory, the level file, and the
    /// page cache's write-back; 0 where unknown).
    #[serde(default)]
    pub disk_read_bytes: u64,
    #[serde(default)]
    pub disk_written_bytes: u64,
    /// What each rank of an MPI job did, by rank (none in one process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankFigures>,
    /// The threshold stages.
    pub stages: Vec<Stage>,
}

fn one() -> u64 {
    1
}

/// The statistics file beside a level file: `awari-p6-n16.awl` -> `awari-p6-n16.stats.json`.
pub fn stats_path(level_path: &Path) -> PathBuf {
    level_path.with_extension("stats.json")
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
    let root = ranks.is_root();
    let rules = plan.rules;
    let index = Index::for_pits(rules.pits());
    crate::memory::free_large_blocks_at_once();
    if let Some(&max) = plan.levels.last() {
        if max > awari_dbformat::MAX_SEEDS {
            return Err(SolveError::Invalid(format!(
                "{max} seeds is more than the {} supported",
                awari_dbformat::MAX_SEEDS
            )));
        }
    }
    fs::create_dir_all(&options.dir).map_err(|source| SolveError::Io {
        path: options.dir.clone(),
        source,
    })?;
    let id = |seeds| LevelId { rules, seeds };
    // The highest level that needs work decides which lower levels are read.
    let last_missing = last_missing(plan, options);
    let mut lower = LowerLevels::new(rules.pits());
    let lower_in_files = lower_levels_in_files(plan, options, last_missing);
    let work_dir = options.work_dir();
    let scores_path = |seeds| {
        work_dir
            .join(id(seeds).file_name())
            .with_extension("scores")
    };
    // Where a level on disk keeps its partitions.
    let level_work_dir = |seeds| work_dir.join(id(seeds).file_name()).with_extension("work");
    if lower_in_files && last_missing.is_some() {
        fs::create_dir_all(&work_dir).map_err(mapped::io(&work_dir))?;
    }
    // The levels present are decoded into files of scores within the budget.
    let mut watch = lower_in_files.then(|| resident::Watch::new(resident_ceiling(options)));

    // The lower levels are read from their files when a level needs them
    // (and again after a level that gave them back to spare the disk).
    let lower_levels = LowerSource {
        rules,
        dir: &options.dir,
        levels: &plan.levels,
        scores_path: lower_in_files.then_some(&scores_path),
        progress: options.progress,
    };
    // The levels that give the lower levels' scores back while their stages
    // run: the disk is short for both (see `PlannedLevel::spare_disk`).
    let spare: Vec<u32> = if lower_in_files && root {
        plan_levels(plan, options)
            .iter()
            .filter(|r| r.spare_disk)
            .map(|r| r.seeds)
            .collect()
    } else {
        Vec::new()
    };

    // Under a resident ceiling the statistics read the levels' values a
    // share at a time: three quarters of the room the ceiling leaves now
    // (the rest for the writer's pages and the statistics' own). Read all
    // at once, the mapped pages the watch gives back would be faulted in
    // again and again.
    let room = || room_under_ceiling(0);
    for &seeds in &plan.levels {
        let path = file::level_path(&options.dir, id(seeds));
        if path.exists() {
            // (A run stopped right after the level file was named leaves
            // the level's cells behind.)
            let stale = level_work_dir(seeds);
            if root && stale.exists() {
                fs::remove_dir_all(&stale).map_err(mapped::io(&stale))?;
            }
            let stats_file = stats_path(&path);
            // (Only rank 0 writes and reports.)
            if root {
                let level_report = match read_report(&stats_file) {
                    Some(r) => r,
                    None => {
                        // The level was renamed into place but its statistics are missing.
                        // A level the levels above read is loaded as they will
                        // read it (decoded once, into its file of scores with
                        // the lower levels in files); the others decoded here.
                        let decoded;
                        let values = if last_missing.is_some_and(|m| seeds + 2 <= m) {
                            lower_levels.load_below(seeds + 2, &mut lower)?;
                            lower.level(seeds).expect("the level is loaded")
                        } else {
                            lower_levels.load_below(seeds, &mut lower)?;
                            decoded = Arc::new(lower_levels.decode(seeds, &lower)?);
                            &decoded
                        };
                        let reader = LevelReader::open_expecting(&path, id(seeds))?;
                        let bar = counting_bar(options.progress, seeds);
                        let r =
                            make_report(rules, seeds, values, &lower, reader.file_bytes(), room());
                        bar.finish_and_clear();
                        write_report(&stats_file, &r)?;
                        r
                    }
                };
                report(&LevelReport {
                    status: "present".into(),
                    ..level_report
                });
            }
            continue;
        }
        // (A level that spares the disk reads them only for what needs them.)
        let spare_this = spare.contains(&seeds);
        if !spare_this {
            lower_levels.load_below(seeds, &mut lower)?;
        }

        // Solve, with the memory the last level's writing held given back.
        file::release_contexts();
        crate::memory::give_back_free_heap();
        let boards = index.level_size(seeds);
        let lower_in_memory = if lower_in_files { 0 } else { lower.bytes() };
        let level_plan = plan_memory(seeds, boards, lower_in_memory, options)?;
        // Pages of mapped files are held within the budget too (one watch
        // while any level needs it: the ceiling is the same for all).
        if !(lower_in_files || level_plan.on_disk) {
            watch = None;
        } else if watch.is_none() {
            watch = Some(resident::Watch::new(resident_ceiling(options)));
        }
        // The level file (its temporary copy is renamed), at twice the bits
        // per board of levels 20..=24 for room; with the lower levels in
        // files, this level's scores too when a later level reads them.
        let scores = lower_in_files && last_missing.is_some_and(|m| seeds + 2 <= m);
        crate::memory::check_free_disk(
            seeds,
            &options.dir,
            "its level file",
            2 * level_file_bytes(boards) + (64 << 20),
        )?;
        if scores {
            crate::memory::check_free_disk(
                seeds,
                &work_dir,
                "its scores for the levels above",
                boards,
            )?;
        }
        let list_entries = level_plan.list_entries;
        let started = Instant::now();
        let io_before = crate::memory::disk_io();
        let bar = progress_bar(options.progress, seeds, boards);
        // The bytes of the levels the initial pass reads (one per board),
        // and what the page cache may hold beside the budget.
        let reached_below = reached_bytes(plan, index, seeds);
        let cache_room = cache_room(options);
        let solve_options = retro::SolveOptions {
            record_generations: options.certificate,
            list_entries: Some(list_entries),
            partitions: level_plan.partitions,
            work_dir: level_plan.on_disk.then(|| level_work_dir(seeds)),
            checkpoint_seconds: options.checkpoint_seconds.unwrap_or(60.0),
            checkpoint_cost_multiple: if options.checkpoint_seconds.is_some() {
                0.0
            } else {
                9.0
            },
            resident_partitions: level_plan.resident_partitions,
            mail_bytes: level_plan.mail_bytes,
            // On disk, with the lower levels in files larger than the page
            // cache can hold beside the budget (level 36 here: 31 GiB of
            // scores, about 10 GiB of cache), the initial pass reads the
            // children in order: at random, most reads would wait for the
            // disk one by one (measured: 18,000 a second, against 1.4 GB a
            // second in order). Smaller, they are read at random, faster
            // (level 22 in 250M: initial pass 15.8 s against 23.5 s sorted).
            sorted_lookups: (level_plan.on_disk && lower_in_files && reached_below > cache_room)
                .then(|| {
                    let cells = boards.div_ceil(level_plan.partitions) as f64
                        * options.state_bytes_per_board(seeds);
                    level_plan.lookups_within(options.memory, cells as u64)
                }),
            // The cells stay, named as solved, until the level file is
            // written: a run stopped while it writes resumes there.
            keep_work_dir: true,
            ..retro::SolveOptions::default()
        };
        let solved = if spare_this && level_plan.on_disk {
            // The disk is short for the lower levels' scores and the
            // checkpoint together: the scores are read by the initial pass
            // (unless a checkpoint shows it done), given back while the
            // stages run (the checkpoint takes their room), and read again
            // for the statistics.
            let initialised = retro::has_checkpoint(rules, seeds, &solve_options);
            let mut resumed_initial_boards = 0;
            if !initialised {
                lower_levels.load_below(seeds, &mut lower)?;
                resumed_initial_boards =
                    retro::initialise_on_disk(rules, seeds, &lower, &bar, &solve_options)?;
            }
            lower_levels.give_back(&mut lower)?;
            bar.set_position(0);
            let mut solved =
                retro::solve_level_on(rules, seeds, &lower, &bar, &solve_options, ranks)?;
            if !initialised {
                // Initialised in this run (whole, or from a checkpoint of
                // the pass), not resumed after it.
                solved.resumed_from_stage = None;
                solved.resumed_initial_boards = resumed_initial_boards;
            }
            // (The scores are read again once the level file is written
            // and the cells are gone: see `count_alongside` below.)
            solved
        } else {
            lower_levels.load_below(seeds, &mut lower)?;
            retro::solve_level_on(rules, seeds, &lower, &bar, &solve_options, ranks)?
        };
        let solve_seconds = started.elapsed().as_secs_f64();
        if !root {
            // Rank 0 writes the level; the others keep it for the levels above.
            bar.finish_and_clear();
            if last_missing.is_some_and(|m| seeds + 2 <= m) {
                lower.insert(seeds, Arc::new(solved.values));
            }
            continue;
        }
        bar.set_message("writing");
        let values = Arc::new(solved.values);
        // The statistics over all boards read the lower levels. A level
        // that spares the disk counts them after its file is written and
        // its cells removed, the scores read again then; the others while
        // the file is written.
        let count_alongside = !(spare_this && level_plan.on_disk);
        let room_now = room();
        // The certificate before the level: the level's rename marks it
        // complete (with its statistics, written last). The statistics are
        // counted meanwhile: the writer leaves a core idle now and then (one
        // thread checks and writes the blocks), and the counting fills it.
        let (written, (counts_stored, counts_all)) = rayon::join(
            || -> Result<PathBuf, SolveError> {
                if let Some(g) = &solved.generations {
                    file::write_certificate(&options.dir, id(seeds), g)?;
                }
                Ok(if options.exact {
                    file::write_level(&options.dir, id(seeds), &values, options.write)?
                } else {
                    file::write_level_bounded(
                        &options.dir,
                        id(seeds),
                        &values,
                        solved.free.as_u64(),
                        options.write,
                    )?
                })
            },
            || {
                let stored = stats::count_stored(&values);
                let all = count_alongside
                    .then(|| stats::count_all(rules, seeds, &values, &lower, &stored, room_now));
                (stored, all)
            },
        );
        let written = written?;
        // The level file is whole and named: its cells can go.
        retro::remove_work_dir(&solve_options)?;
        let counts_all = match counts_all {
            Some(counts) => counts,
            None => {
                lower_levels.load_below(seeds, &mut lower)?;
                bar.set_message("counting");
                stats::count_all(rules, seeds, &values, &lower, &counts_stored, room())
            }
        };
        let tmp_report = LevelReport {
            counts_stored,
            counts_all,
            state_bytes_per_board: retro::state_bytes_per_board(seeds, boards, list_entries),
            partitions: solved.partitions.count() as u64,
            on_disk: level_plan.on_disk,
            resumed_from_stage: solved.resumed_from_stage,
            resumed_initial_boards: solved.resumed_initial_boards,
            sorted_lookups: solve_options.sorted_lookups.is_some(),
            ranks: solved.ranks.clone(),
            ..make_report_shell(rules, seeds, boards, solved.stages)
        };
        let seconds = started.elapsed().as_secs_f64();
        bar.finish_and_clear();
        let file_bytes = fs::metadata(&written).map(|m| m.len()).unwrap_or(0);
        let level_report = LevelReport {
            seconds,
            boards_per_second: boards as f64 / seconds.max(1e-9),
            solve_seconds,
            init_seconds: solved.init_seconds,
            write_seconds: seconds - solve_seconds,
            peak_memory_bytes: peak_resident().unwrap_or(0),
            lower_levels_bytes: lower.bytes(),
            lower_levels_in_files: lower_in_files,
            file_bytes,
            disk_read_bytes: io_delta(io_before).0,
            disk_written_bytes: io_delta(io_before).1,
            ..tmp_report
        };
        write_report(&stats_path(&written), &level_report)?;
        report(&level_report);
        if last_missing.is_some_and(|m| seeds + 2 <= m) {
            if lower_in_files {
                let copy = |out: &mut [i8]| {
                    out.copy_from_slice(&values);
                    Ok(())
                };
                let scores = lower::scores_in_file(&scores_path(seeds), boards, None, copy)?;
                lower.insert(seeds, Arc::new(scores));
            } else {
                lower.insert(seeds, values);
            }
        }
    }
    // Every level is built: the scores kept in files go, and the work
    // directory with them when empty (it may be the user's own).
    drop(lower);
    if lower_in_files {
        for &seeds in &plan.levels {
            let path = scores_path(seeds);
            if path.exists() {
                fs::remove_file(&path).map_err(mapped::io(&path))?;
            }
        }
    }
    let _ = fs::remove_dir(&work_dir);
    Ok(())
}

/// The resident set at which the pages of mapped files are given back: the
/// budget, less room for what a pass may map between two readings of the
/// resident set ([`resident::Watch`]).
fn resident_ceiling(options: &Options) -> u64 {
    options.memory - options.memory / 16
}

/// The bytes a level file of `boards` boards is planned at: the 2.6 bits per
/// board of levels 20..=24.
fn level_file_bytes(boards: u64) -> u64 {
    boards * 26 / 80
}

/// True when level `seeds` is complete in `options.dir`: its file is
/// present (it is renamed into place once whole; statistics missing beside
/// it, from a run stopped while it counted them, are counted again without
/// solving the level).
fn is_complete(rules: Rules, seeds: u32, options: &Options) -> bool {
    file::level_path(&options.dir, LevelId { rules, seeds }).exists()
}

/// Where the lower levels are read from when a level needs them: their
/// level files, decoded into memory or into files of scores.
struct LowerSource<'a> {
    rules: Rules,
    /// The database directory.
    dir: &'a Path,
    /// The levels of the plan, in order.
    levels: &'a [u32],
    /// The file of scores of each level, when they go to files.
    scores_path: Option<&'a dyn Fn(u32) -> PathBuf>,
    /// Show what is read on the terminal.
    progress: bool,
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
    fn load_below(&self, seeds: u32, lower: &mut LowerLevels) -> Result<(), SolveError> {
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
            let values = match self.scores_path {
                Some(scores_path) => {
                    let level = file::level_path(self.dir, self.id(s));
                    let fill = |out: &mut [i8]| self.decode_into(s, lower, out);
                    lower::scores_in_file(&scores_path(s), index.level_size(s), Some(&level), fill)?
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
    fn give_back(&self, lower: &mut LowerLevels) -> Result<(), SolveError> {
        for &s in self.levels {
            if lower.has(s) {
                lower.remove(s);
                if let Some(scores_path) = self.scores_path {
                    let path = scores_path(s);
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
    fn decode(&self, seeds: u32, lower: &LowerLevels) -> Result<Values, SolveError> {
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
            file::resolve_level_in(
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
fn room_under_ceiling(beside: u64) -> Option<u64> {
    resident::ceiling().map(|ceiling| {
        resident::release_file_pages();
        let now = resident::resident_bytes().unwrap_or(0);
        (ceiling.saturating_sub(now + beside) / 4 * 3).max(ceiling / 16)
    })
}

/// The highest level of `plan` that is not complete, if any.
fn last_missing(plan: &Plan, options: &Options) -> Option<u32> {
    let missing = |&&n: &&u32| !is_complete(plan.rules, n, options);
    plan.levels.iter().rev().find(missing).copied()
}

/// Whether the lower levels go to mapped files of scores: when they do not
/// fit in memory beside `last_missing`, the highest level to build (or with
/// `--on-disk`).
fn lower_levels_in_files(plan: &Plan, options: &Options, last_missing: Option<u32>) -> bool {
    let index = Index::for_pits(plan.rules.pits());
    options.on_disk
        || last_missing.is_some_and(|m| {
            let below = plan.levels.iter().filter(|&&s| s + 2 <= m);
            let bytes = below.map(|&s| index.level_size(s)).sum();
            plan_memory(m, index.level_size(m), bytes, options).map_or(true, |p| p.on_disk)
        })
}

/// How one level of a plan is to be built, as planned before any work
/// (`awari-solve --plan`).
#[derive(Clone, Debug, Serialize)]
pub struct PlannedLevel {
    pub seeds: u32,
    pub boards: u64,
    /// Complete already: nothing to do.
    pub present: bool,
    /// Its partitions' cells in files of the work directory.
    pub on_disk: bool,
    /// The lower levels read from mapped files of scores.
    pub lower_levels_in_files: bool,
    /// On disk, with the lower levels in files: their scores are given back
    /// while the stages run, because the disk cannot hold them beside the
    /// level's checkpoint (they are read again from the level files for
    /// the statistics: a little time for much disk).
    pub spare_disk: bool,
    /// The partitions the level is solved in.
    pub partitions: u64,
    /// On disk: the partitions kept mapped at once.
    pub resident_partitions: Option<u64>,
    /// The memory the plan counts on (at most the budget).
    pub memory_bytes: u64,
    /// The disk the level takes while it is built: its work directory (the
    /// partitions and their checkpoint, or the partitions and the level's
    /// assembled values), the files of
    /// scores of the lower levels, and its level file (at the 2.6 bits per
    /// board of levels 20..=24).
    pub disk_bytes: u64,
    /// The time estimated from the rates measured on 2 cores (in memory,
    /// on disk; docs/scaling.md), scaled to the threads, and slowed when
    /// the lower levels are files the page cache cannot hold.
    pub estimated_seconds: f64,
    /// Why the level cannot be built within the budget, if it cannot.
    pub refused: Option<String>,
}

/// Boards per second of a level solved in memory, as measured for levels
/// 20..=24 on a 2-core machine (6.0-7.5 M: docs/performance.md).
const IN_MEMORY_BOARDS_PER_SECOND: f64 = 6.0e6;

/// Boards per second of a level on disk, one partition mapped at a time,
/// as measured for level 22 in `--memory 300M` and level 24 in `600M` (2
/// partitions each) on a 2-core machine (4.39 M and 4.23 M:
/// docs/performance.md).
const ON_DISK_BOARDS_PER_SECOND: f64 = 4.2e6;

/// The bytes of the levels of `plan` that the captures of level `seeds`
/// reach (one per board: levels up to `seeds - 2`).
fn reached_bytes(plan: &Plan, index: &Index, seeds: u32) -> u64 {
    plan.levels
        .iter()
        .filter(|&&s| s + 2 <= seeds)
        .map(|&s| index.level_size(s))
        .sum()
}

/// What the page cache may hold beside `options`' memory budget (0 where
/// the available memory is unknown).
fn cache_room(options: &Options) -> u64 {
    crate::memory::available().map_or(0, |a| a.saturating_sub(options.memory))
}

/// How many times slower a level is built when the lower levels its
/// captures reach are files larger than the page cache can hold beside the
/// budget: their reads then wait for the disk. Levels 32 and 33 of the
/// 36-seed game, in memory with the lower levels in files (9.8 and 18.4 GB
/// of scores, about 10 GiB of cache beside `--memory 14G`), were built at
/// 1.41 and 1.63 M boards/s, against the 6.0 M of levels 20..=24 (measured
/// beside other work at nice 19: docs/scaling.md).
const BEYOND_CACHE_SLOWDOWN: f64 = 4.0;

/// The plan of every level of `plan` within `options`' budgets, before any
/// work: how it would be built, with what memory and disk, in about how
/// long.
pub fn plan_levels(plan: &Plan, options: &Options) -> Vec<PlannedLevel> {
    let index = Index::for_pits(plan.rules.pits());
    let last_missing = last_missing(plan, options);
    let lower_in_files = lower_levels_in_files(plan, options, last_missing);
    let threads = rayon::current_num_threads() as f64;
    let cache_room = cache_room(options);
    let work_dir = options.work_dir();
    // The free disk, less the level files planned before each level. What
    // the work directory holds already (files of scores, the partitions of
    // a stopped level) is counted in what the levels need, so it counts as
    // free here too (a build run again is not refused for its own files).
    let held = retro::dir_bytes(&work_dir);
    let mut free_disk = crate::memory::free_disk(&work_dir).map(|free| free + held);
    let mut rows = Vec::new();
    for &seeds in &plan.levels {
        let boards = index.level_size(seeds);
        let present = is_complete(plan.rules, seeds, options);
        // The lower levels held (or kept in files) while this one is built.
        let lower: u64 = plan
            .levels
            .iter()
            .filter(|&&s| s < seeds && last_missing.is_some_and(|m| s + 2 <= m))
            .map(|&s| index.level_size(s))
            .sum();
        let lower_in_memory = if lower_in_files { 0 } else { lower };
        let level_file = level_file_bytes(boards);
        let mut row = PlannedLevel {
            seeds,
            boards,
            present,
            on_disk: false,
            lower_levels_in_files: lower_in_files && !present,
            spare_disk: false,
            partitions: 1,
            resident_partitions: None,
            memory_bytes: 0,
            disk_bytes: 0,
            estimated_seconds: 0.0,
            refused: None,
        };
        if !present {
            match plan_memory(seeds, boards, lower_in_memory, options) {
                Ok(p) => {
                    let scores = if lower_in_files { lower } else { 0 };
                    let cells = (boards as f64 * options.state_bytes_per_board(seeds)) as u64;
                    let disk = DiskNeeds {
                        cells,
                        values: boards + boards / 8,
                        scores,
                        level_file,
                    };
                    let spare = p.on_disk
                        && scores > 0
                        && (options.spare_disk
                            || free_disk.is_some_and(|free| disk.holding_scores() > free));
                    // The bytes of the levels the captures reach (one per
                    // board), read from files when `lower_in_files`.
                    let reached = reached_bytes(plan, index, seeds);
                    let slowdown = if lower_in_files && reached > cache_room {
                        BEYOND_CACHE_SLOWDOWN
                    } else {
                        1.0
                    };
                    let rate = if p.on_disk {
                        ON_DISK_BOARDS_PER_SECOND
                    } else {
                        IN_MEMORY_BOARDS_PER_SECOND
                    } / slowdown;
                    row = PlannedLevel {
                        on_disk: p.on_disk,
                        partitions: p.partitions,
                        resident_partitions: p.on_disk.then_some(p.resident_partitions as u64),
                        memory_bytes: p.memory_bytes,
                        spare_disk: spare,
                        disk_bytes: match (p.on_disk, spare) {
                            (false, _) => scores + level_file,
                            (true, false) => disk.holding_scores(),
                            (true, true) => disk.sparing_scores(),
                        },
                        estimated_seconds: boards as f64 / (rate * threads / 2.0),
                        ..row
                    };
                    if let Some(free) = free_disk {
                        if row.disk_bytes > free {
                            row.refused = Some(format!(
                                "level {seeds} needs about {} of disk in {}, {} free",
                                format_size(row.disk_bytes),
                                work_dir.display(),
                                format_size(free)
                            ));
                        }
                        free_disk = Some(free.saturating_sub(level_file));
                    }
                }
                Err(err) => row.refused = Some(err.to_string()),
            }
        }
        rows.push(row);
    }
    rows
}

/// The disk a level on disk takes, from the bytes of what it keeps there.
#[derive(Clone, Copy)]
struct DiskNeeds {
    /// The partitions' cells (their checkpoint takes as much again).
    cells: u64,
    /// The level's values and free bits, assembled for the writer.
    values: u64,
    /// The lower levels' files of scores.
    scores: u64,
    /// The level file.
    level_file: u64,
}

impl DiskNeeds {
    /// The most the level takes at once with the lower levels' scores held
    /// throughout: the cells and their checkpoint while the stages run, the
    /// cells, the assembled values (the checkpoint gone) and the level file
    /// as it is written (the cells kept until it is whole).
    fn holding_scores(&self) -> u64 {
        let DiskNeeds {
            cells,
            values,
            scores,
            level_file,
        } = *self;
        scores + (2 * cells).max(cells + values + level_file)
    }

    /// The same with the scores given back while the stages run: the
    /// scores and the cells in the initial pass, the cells and their
    /// checkpoint in the stages, the cells, the values and the level file
    /// as it is written, then the values, the scores read again for the
    /// statistics and the level file (the cells gone).
    fn sparing_scores(&self) -> u64 {
        let DiskNeeds {
            cells,
            values,
            scores,
            level_file,
        } = *self;
        (scores + cells)
            .max(2 * cells)
            .max(cells + values + level_file)
            .max(values + scores + level_file)
    }
}

/// Memory the process uses besides the solver state and the lower levels: the
/// program, the pages of the level files being read, the writer's buffers,
/// rounding to huge pages (about 50 MB measured at level 21).
const OVERHEAD_BYTES: u64 = 64 << 20;

/// How one level is solved within the memory budget.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LevelPlan {
    /// Frontier list entries per generation, over the whole level.
    list_entries: u64,
    /// Partitions wanted.
    partitions: u64,
    /// Whether their cells are kept in files.
    on_disk: bool,
    /// On disk: the partitions that fit in memory at once.
    resident_partitions: usize,
    /// On disk: the updates in transit held in memory, in bytes (the rest
    /// wait in files).
    mail_bytes: u64,
    /// The memory this plan counts on, at most the budget.
    memory_bytes: u64,
}

/// Memory per board of a level kept on disk for the dirty maps and
/// summaries of every partition (a bit per 8 words and 8 bytes per 512
/// words: under 0.01).
const MAPS_BYTES_PER_BOARD: f64 = 1.0 / 64.0;

/// Memory per board of a level kept on disk for the updates in transit
/// between partitions that wait in memory; the rest wait in files of the
/// work directory. (Over all of level 22 with 16 partitions, 2.8 updates per
/// board cross, 22 bytes; a few percent of that in one generation; see
/// docs/scaling.md.)
const MAIL_BYTES_PER_BOARD: f64 = 7.0 / 64.0;

/// Partitions on disk below which a level is not cut (each costs a mapping
/// and a visit per generation).
const MAX_DISK_PARTITIONS: u64 = 4096;

/// How level `seeds` is solved within the budget: in memory when its state
/// fits (unless `options.on_disk`), in `options.partitions` or one
/// partition; else on disk, in as few partitions as the budget allows
/// (or `options.partitions`). The frontier lists get the default share
/// when it fits, fewer when not (slower, same values), none when only the
/// fixed state fits.
///
/// # Errors
/// [`SolveError::Memory`] up front when even the smallest plan exceeds the
/// budget: the lower levels (`lower_bytes`, 0 when they are in files), the
/// writer's working memory, the maps and mail of a level on disk, and one
/// partition.
fn plan_memory(
    seeds: u32,
    boards: u64,
    lower_bytes: u64,
    options: &Options,
) -> Result<LevelPlan, SolveError> {
    let budget = options.memory;
    let per_board = options.state_bytes_per_board(seeds);
    // The writer's working memory when it chooses lower bounds (the
    // encodings it weighs: 62 MiB measured at level 22).
    let writer = if options.exact {
        0
    } else {
        boards.min(64 << 20)
    };
    let base = lower_bytes + OVERHEAD_BYTES + writer;
    let lists_within = |spare: u64| {
        let affordable = spare / (retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES);
        retro::default_list_entries(boards).min(affordable)
    };
    // In memory: the cells shrink to the values and free bits when the
    // level is written, so the state covers both.
    let in_memory = (boards as f64 * per_board) as u64 + base;
    let list_bytes = |entries: u64| entries * retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES;
    if in_memory <= budget && !options.on_disk {
        let list_entries = lists_within(budget - in_memory);
        return Ok(LevelPlan {
            list_entries,
            partitions: options.partitions.unwrap_or(1),
            on_disk: false,
            resident_partitions: usize::MAX,
            mail_bytes: u64::MAX,
            memory_bytes: in_memory + list_bytes(list_entries),
        });
    }
    // On disk: the level's values, free bits and generations are
    // assembled in files too (taking the page cache), so besides one
    // partition's cells memory holds the maps and the mail.
    let maps = (boards as f64 * MAPS_BYTES_PER_BOARD) as u64;
    let mail = ((boards as f64 * MAIL_BYTES_PER_BOARD) as u64).max(1 << 20);
    let fixed = base + maps + mail;
    let partition_bytes = |k: u64| (boards.div_ceil(k) as f64 * per_board) as u64;
    let partitions = match options.partitions {
        Some(k) => k,
        None => (1..=MAX_DISK_PARTITIONS)
            .find(|&k| fixed + partition_bytes(k) <= budget)
            .unwrap_or(MAX_DISK_PARTITIONS),
    };
    let needed = fixed + partition_bytes(partitions);
    if needed > budget {
        return Err(SolveError::Memory {
            seeds,
            boards,
            state_bytes: per_board / partitions as f64,
            lower: format_size(lower_bytes),
            needed: format_size(needed),
            budget: format_size(budget),
        });
    }
    // The room left keeps more partitions mapped at once (each mapping
    // pages its partition in again), before it goes to frontier lists.
    let cells = partition_bytes(partitions);
    let resident = (1 + (budget - needed) / cells.max(1)).min(partitions);
    let spare = budget - needed - (resident - 1) * cells;
    let list_entries = lists_within(spare);
    Ok(LevelPlan {
        list_entries,
        partitions,
        on_disk: true,
        resident_partitions: resident as usize,
        mail_bytes: mail,
        memory_bytes: budget - spare + list_bytes(list_entries),
    })
}

impl LevelPlan {
    /// The lookups the initial pass may hold at once when it sorts them
    /// (see `retro::SolveOptions::sorted_lookups`), within `budget`, for a
    /// level on disk whose partitions' cells take `cells` bytes each: the
    /// room the frontier lists and the mail take later (neither is used
    /// yet) and the room of the mapped partitions' cells (written a window
    /// at a time, their pages given back under the resident ceiling), less
    /// a quarter of the budget (the ceiling's sixteenth; the pages read and
    /// written; a window richer in captures than sized for, by up to an
    /// eighth; the vectors of a group of chunks freed to the heap), at 24
    /// bytes a lookup (16, and the board's cell and best value while its
    /// window is open), and at least 64 MiB's worth. Each
    /// window reads nearly every page of the lower levels (level 36: 31 GiB
    /// of scores): the fewer, the better.
    fn lookups_within(&self, budget: u64, cells: u64) -> usize {
        let lists = self.list_entries * retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES;
        let mapped = self.resident_partitions.min(self.partitions as usize) as u64 * cells;
        let spare = budget.saturating_sub(self.memory_bytes) + lists + self.mail_bytes + mapped;
        (spare.saturating_sub(budget / 4).max(64 << 20) / 24) as usize
    }
}

/// The bytes read from and written to storage since `before`
/// ([`crate::memory::disk_io`]; 0 where unknown).
fn io_delta(before: Option<(u64, u64)>) -> (u64, u64) {
    match (before, crate::memory::disk_io()) {
        (Some((r0, w0)), Some((r1, w1))) => (r1.saturating_sub(r0), w1.saturating_sub(w0)),
        _ => (0, 0),
    }
}

fn make_report_shell(rules: Rules, seeds: u32, boards: u64, stages: Vec<Stage>) -> LevelReport {
    LevelReport {
        rules: rules.set().name().to_string(),
        pits: rules.pits(),
        seeds,
        boards,
        seconds: 0.0,
        boards_per_second: 0.0,
        solve_seconds: 0.0,
        init_seconds: 0.0,
        write_seconds: 0.0,
        peak_memory_bytes: 0,
        lower_levels_bytes: 0,
        lower_levels_in_files: false,
        // (The lists a level was built with are not known from its file.)
        state_bytes_per_board: retro::state_bytes_per_board(
            seeds,
            boards,
            retro::default_list_entries(boards),
        ),
        file_bytes: 0,
        status: "built".into(),
        counts_stored: Default::default(),
        counts_all: Default::default(),
        partitions: 1,
        on_disk: false,
        resumed_from_stage: None,
        resumed_initial_boards: 0,
        sorted_lookups: false,
        disk_read_bytes: 0,
        disk_written_bytes: 0,
        ranks: Vec::new(),
        stages,
    }
}

/// The report of a level present without its statistics: its values
/// counted (in shares of at most `room` bytes, as [`stats::count_all`]
/// reads them), its build's figures unknown.
fn make_report(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &LowerLevels,
    file_bytes: u64,
    room: Option<u64>,
) -> LevelReport {
    let counts_stored = stats::count_stored(values);
    let counts_all = stats::count_all(rules, seeds, values, lower, &counts_stored, room);
    LevelReport {
        file_bytes,
        counts_stored,
        counts_all,
        ..make_report_shell(rules, seeds, values.len() as u64, Vec::new())
    }
}

/// A spinner while the statistics of a level present are counted (they
/// read every board of the level and its children: minutes above 30 seeds).
fn counting_bar(show: bool, seeds: u32) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("level {prefix:>2} [{elapsed_precise}] {spinner} {msg}")
            .expect("a valid template"),
    );
    bar.set_prefix(seeds.to_string());
    bar.set_message("counting the statistics its file lacks");
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    bar
}

fn read_report(path: &Path) -> Option<LevelReport> {
    let text = fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes a report as JSON to a temporary name, then renames it into place.
fn write_report(path: &Path, report: &LevelReport) -> Result<(), SolveError> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(report).expect("a report serialises");
    let io = |source| SolveError::Io {
        path: path.to_path_buf(),
        source,
    };
    fs::write(&tmp, text + "\n").map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

fn progress_bar(show: bool, seeds: u32, boards: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    // One unit per board initialised and one per board decided; boards that end
    // as draws are never "decided", so the bar may finish early.
    let bar = ProgressBar::with_draw_target(Some(2 * boards), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "level {prefix:>2} [{elapsed_precise}] {bar:30} {percent:>3}% {rate} ETA {eta:<4} {msg}",
    )
    .expect("a valid template")
    .with_key(
        "rate",
        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:>6.2} M/s", state.per_sec() / 1e6);
        },
    );
    bar.set_style(style);
    bar.set_prefix(seeds.to_string());
    bar
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

    fn options(memory: u64, certificate: bool) -> Options {
        Options {
            dir: PathBuf::from("unused"),
            memory,
            progress: false,
            write: WriteOptions::default(),
            certificate,
            exact: false,
            partitions: None,
            on_disk: false,
            spare_disk: false,
            work_dir: None,
            checkpoint_seconds: None,
        }
    }

    #[test]
    fn the_budget_sizes_the_frontier_lists() {
        let boards = 3_200_000u64;
        let lower = 1_000_000u64;
        // 8 bytes per 6 boards (the narrow cells), and the writer's working
        // memory for lower bounds (a byte per board below 64 Mi boards).
        let cells = (boards as f64 * 8.0 / 6.0) as u64;
        let fixed = cells + lower + OVERHEAD_BYTES + boards;
        let full = retro::default_list_entries(boards);
        let list_bytes = 2 * retro::LIST_ENTRY_BYTES;
        let plan = |budget: u64, certificate: bool| {
            plan_memory(24, boards, lower, &options(budget, certificate))
        };
        let in_memory = |budget: u64, certificate: bool| {
            let plan = plan(budget, certificate).unwrap();
            assert!(!plan.on_disk && plan.partitions == 1, "{budget}: {plan:?}");
            plan.list_entries
        };
        // Room for everything: the default share.
        assert_eq!(in_memory(u64::MAX, false), full);
        assert_eq!(in_memory(fixed + full * list_bytes, false), full);
        // Room for half the lists: half of them.
        assert_eq!(in_memory(fixed + full / 2 * list_bytes, false), full / 2);
        // Room for the fixed state only: no lists, 1.333 bytes per board.
        assert_eq!(in_memory(fixed, false), 0);
        assert_eq!(retro::state_bytes_per_board(24, boards, 0), 8.0 / 6.0);
        // Above 31 seeds, the wide cells: 8 bytes per 5 boards.
        assert_eq!(retro::state_bytes_per_board(32, boards, 0), 1.6);
        // A certificate needs 2 bytes more per board.
        assert_eq!(in_memory(fixed + 2 * boards, true), 0);

        // Less: the level goes to disk, in as few partitions as fit, more
        // as the budget shrinks.
        let on_disk = |budget: u64| {
            let plan = plan(budget, false).unwrap();
            assert!(plan.on_disk, "{budget}: {plan:?}");
            plan.partitions
        };
        let two = on_disk(fixed - 1);
        assert!(two >= 2, "{two} partitions");
        let tighter = on_disk(fixed - cells / 2);
        assert!(
            tighter > two,
            "{tighter} partitions for a smaller budget than {two}"
        );
        // Not even the smallest partitions fit: refused, naming what it needs.
        let err = plan(lower + OVERHEAD_BYTES, false).unwrap_err();
        assert!(matches!(err, SolveError::Memory { seeds: 24, .. }), "{err}");
        assert!(err.to_string().contains("--memory"), "{err}");
        // Forced to disk, the level goes there even when it fits.
        let forced = Options {
            on_disk: true,
            ..options(u64::MAX, false)
        };
        assert!(plan_memory(24, boards, lower, &forced).unwrap().on_disk);
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
