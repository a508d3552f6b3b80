//! Building one missing level, phase by phase: its memory planned, the
//! lower levels read, the level solved, its certificate and level file
//! written while its statistics are counted, its report written, and its
//! values kept for the levels above.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::file::{self, Stored};
use awari_dbformat::level::scores::scores_in_file;
use awari_dbformat::level::Values;
use awari_dbformat::memory::resident;
use awari_dbformat::Levels;
use indicatif::ProgressBar;

use super::budget::{
    cache_beside, estimated_level_file_bytes, plan_memory, split_words_bytes, LevelPlan,
    MemoryLevelDisk, Reach,
};
use super::lower_source::scores_path;
use super::plan::{cache_room, reached_bytes};
use super::progress::progress_bar;
use super::report::{io_delta, make_report_shell, stats_path, write_report, LevelReport};
use super::{Build, Held};
use crate::cells::CellLayout;
use crate::error::SolveError;
use crate::memory::peak_resident;
use crate::retro::{self, Partitions, SolveOptions, SolvedLevel};
use crate::stats::{self, Counts};

/// The file of a level's directory in which its initial pass values the
/// unstored boards' captures (`SolveOptions::unstored_captures`).
const UNSTORED_CAPTURES: &str = "unstored-captures";

/// The updates in transit a rank holds in memory when its share of a level
/// is in memory, at least (4 MiB: half a million updates), unless the
/// options say; the rest wait in files of its own (`SolveOptions::mail_dir`),
/// in the page cache while it has room. (Running apart, half of it is for
/// the messages the other ranks have not taken yet.)
const RANK_MAIL_BYTES: u64 = 4 << 20;

/// What writing a level gives its report.
pub(super) struct Written {
    /// The level file.
    pub path: PathBuf,
    pub counts_stored: Counts,
    /// The counts over all boards, when asked for (`--count-all`).
    pub counts_all: Option<Counts>,
    /// Whether the initial pass valued the unstored boards' captures.
    pub unstored_in_pass: bool,
    /// Whether their quiet moves were valued once the level file was
    /// written rather than beside the writer.
    pub quiet_after_writing: bool,
}

/// What the report of a level takes from its solve, apart from its values.
struct SolvedMeta {
    stages: Vec<retro::Stage>,
    partitions: Partitions,
    ranks: Vec<awari_dbformat::cluster::RankFigures>,
    init_seconds: f64,
    resumed_from_stage: Option<u32>,
    resumed_initial_boards: u64,
}

impl SolvedMeta {
    fn take_from(solved: &mut SolvedLevel) -> SolvedMeta {
        SolvedMeta {
            stages: std::mem::take(&mut solved.stages),
            partitions: solved.partitions,
            ranks: std::mem::take(&mut solved.ranks),
            init_seconds: solved.init_seconds,
            resumed_from_stage: solved.resumed_from_stage,
            resumed_initial_boards: solved.resumed_initial_boards,
        }
    }
}

/// The statistics over all boards of a level once its file is written.
enum CountsAll {
    /// Counted.
    Counted(Counts),
    /// The unstored boards' quiet moves still to be valued, and their
    /// captures unless `captures_valued`: beside the writer the quiet moves
    /// would have taken more passes over the level's values than once the
    /// writer is done.
    QuietMoves {
        unstored: stats::Unstored,
        captures_valued: bool,
    },
    /// The unstored boards' captures still to be valued.
    Captures(stats::Unstored),
    /// Not asked for (`--count-all` off): only the stored boards are
    /// counted.
    NotAsked,
}

impl Build<'_> {
    /// Builds missing level `seeds` and gives its report to `report` (on
    /// rank 0, which alone writes its files; the other ranks keep its
    /// values for the levels above).
    ///
    /// # Errors
    /// A level that does not fit in the budget (before any work on it), a
    /// lower level that cannot be read, or a file that cannot be written.
    pub(super) fn build_level(
        &self,
        held: &mut Held,
        seeds: u32,
        report: &mut impl FnMut(&LevelReport),
    ) -> Result<(), SolveError> {
        // (A level that spares the disk reads them only for what needs them.)
        let spare_this = self.spare.contains(&seeds);
        if !spare_this {
            self.lower_levels.load_below(seeds, &mut held.lower)?;
        }
        // A stopped run's directory for this level without a checkpoint
        // is scratch, cleared before the disk is planned: its room is the
        // level's (a level 36 killed in its stages left 23 GB, and the
        // rerun was refused for want of disk). (Under MPI each rank clears
        // its own directory in it.)
        retro::clear_without_checkpoint(&self.rank_dir(seeds))?;
        // Solve, with the memory the last level's writing held given back.
        file::release_contexts();
        crate::memory::give_back_free_heap();
        let boards = self.index.level_size(seeds);
        let level_plan = self.plan_level(held, seeds, boards)?;
        let started = Instant::now();
        let io_before = crate::memory::disk_io();
        let bar = progress_bar(self.options.progress, seeds, boards);
        let solve_options = self.solve_options(seeds, boards, &level_plan);
        let spares = spare_this && level_plan.on_disk;
        let level_memory = level_plan.memory_bytes;
        let mut solved = self.solve(held, seeds, &bar, &solve_options, spares, level_memory)?;
        let solve_seconds = started.elapsed().as_secs_f64();
        let mut meta = SolvedMeta::take_from(&mut solved);
        let written = if self.ranks.size() > 1 {
            let written = self.write_by_ranks(held, seeds, solved, &solve_options, &bar)?;
            // Each rank's peak so far, for rank 0's report.
            let peaks = self.ranks.all_gather(&[peak_resident().unwrap_or(0)]);
            for (figures, peak) in meta.ranks.iter_mut().zip(peaks) {
                figures.peak_resident_bytes = peak;
            }
            written
        } else {
            Some(self.write_alone(held, seeds, solved, &level_plan, &solve_options, &bar)?)
        };
        let Some(written) = written else {
            // (Under MPI rank 0 reports.)
            bar.finish_and_clear();
            return Ok(());
        };
        let tmp_report = LevelReport {
            counts_stored: written.counts_stored,
            counts_all: written.counts_all,
            state_bytes_per_board: if level_plan.split {
                retro::split_state_bytes_per_board(boards, level_plan.list_entries)
            } else {
                retro::state_bytes_per_board(seeds, boards, level_plan.list_entries)
            },
            partitions: meta.partitions.count() as u64,
            on_disk: level_plan.on_disk,
            split: level_plan.split,
            resumed_from_stage: meta.resumed_from_stage,
            resumed_initial_boards: meta.resumed_initial_boards,
            sorted_lookups: solve_options.sorted_lookups.is_some(),
            unstored_captures_in_initial_pass: written.unstored_in_pass,
            quiet_moves_after_writing: written.quiet_after_writing,
            ranks: meta.ranks,
            ..make_report_shell(self.id(seeds), boards, meta.stages)
        };
        let written = written.path;
        let seconds = started.elapsed().as_secs_f64();
        bar.finish_and_clear();
        let file_bytes = fs::metadata(&written).map(|m| m.len()).unwrap_or(0);
        let (disk_read_bytes, disk_written_bytes) = io_delta(io_before);
        let level_report = LevelReport {
            seconds,
            boards_per_second: boards as f64 / seconds.max(1e-9),
            solve_seconds,
            init_seconds: meta.init_seconds,
            write_seconds: seconds - solve_seconds,
            peak_memory_bytes: peak_resident().unwrap_or(0),
            lower_levels_bytes: held.lower.bytes(),
            lower_levels_in_files: self.lower_in_files,
            file_bytes,
            disk_read_bytes,
            disk_written_bytes,
            ..tmp_report
        };
        write_report(&stats_path(&written), &level_report)?;
        report(&level_report);
        Ok(())
    }

    /// Writes level `seeds`, `solved` by this process alone, and counts its
    /// statistics; keeps its values for the levels above that read them.
    ///
    /// # Errors
    /// A file that cannot be written, or a lower level that cannot be read.
    fn write_alone(
        &self,
        held: &mut Held,
        seeds: u32,
        solved: SolvedLevel,
        level_plan: &LevelPlan,
        solve_options: &SolveOptions,
        bar: &ProgressBar,
    ) -> Result<Written, SolveError> {
        let (path, counts_stored, counts_all, unstored_in_pass) =
            self.write_counted(held, seeds, &solved, level_plan, solve_options, bar)?;
        // What only the writing needed goes before the captures are
        // counted, their passes over the lower levels getting its room
        // (level 36: 1.8 GB of free bits, the writer's contexts).
        let values = Arc::new(solved.values);
        drop(solved.free);
        drop(solved.generations);
        file::release_contexts();
        crate::memory::give_back_free_heap();
        // The quiet moves left for now read the level's values, in as few
        // passes as the room left allows (level 36: one, against four
        // beside the writer, each generating the moves of its 3.16 G
        // unstored boards).
        let quiet_after_writing = matches!(counts_all, CountsAll::QuietMoves { .. });
        let counts_all = match counts_all {
            CountsAll::QuietMoves {
                mut unstored,
                captures_valued,
            } => {
                bar.set_message("counting quiet moves");
                unstored.value_quiet_moves(&values, resident::room_for_one_reader(0));
                if captures_valued {
                    CountsAll::Counted(unstored.counts(&counts_stored))
                } else {
                    CountsAll::Captures(unstored)
                }
            }
            other => other,
        };
        // The level's values go too (to a file of scores for the levels
        // above, or nowhere): the captures' passes have the room they held.
        let boards = self.index.level_size(seeds);
        self.keep_for_above(held, seeds, boards, values)?;
        let counts_all = match counts_all {
            CountsAll::Counted(counts) => Some(counts),
            CountsAll::QuietMoves { .. } => unreachable!("the quiet moves are valued above"),
            CountsAll::Captures(unstored) => {
                bar.set_message("counting captures");
                Some(self.count_captures(held, seeds, unstored, &counts_stored)?)
            }
            CountsAll::NotAsked => None,
        };
        Ok(Written {
            path,
            counts_stored,
            counts_all,
            unstored_in_pass,
            quiet_after_writing,
        })
    }

    /// How level `seeds` of `boards` boards is solved within the budget,
    /// with the watch of mapped pages set for it and the disk checked for
    /// its files.
    ///
    /// # Errors
    /// A level that does not fit in the budget, or a disk without room.
    fn plan_level(
        &self,
        held: &mut Held,
        seeds: u32,
        boards: u64,
    ) -> Result<LevelPlan, SolveError> {
        let options = self.options;
        let lower_in_memory = if self.lower_in_files {
            0
        } else {
            held.lower.bytes()
        };
        let reach = Reach {
            in_files: if self.lower_in_files {
                reached_bytes(self.plan, self.index, seeds)
            } else {
                0
            },
            available: crate::memory::available(),
        };
        let level_plan = if self.ranks.size() > 1 {
            self.plan_share_with_ranks(seeds, boards, lower_in_memory, reach)?
        } else {
            plan_memory(seeds, boards, lower_in_memory, reach, options)?
        };
        // Pages of mapped files are held within the budget too (one watch
        // while any level needs it: the ceiling is the same for all). The
        // split cells with their bytes in a file map their words during
        // the initial pass and their values after.
        if !(self.lower_in_files || level_plan.on_disk || level_plan.cold_in_file) {
            held.watch = None;
        } else if held.watch.is_none() {
            held.watch = Some(resident::Watch::new(resident::ceiling_for(options.memory)));
        }
        self.plan_disk(held, seeds, boards, level_plan)
    }

    /// `level_plan` of level `seeds` (`boards` boards) with the disk it
    /// needs beside what is there already: the level file (its temporary
    /// copy is renamed, at twice the bits per board of levels 20..=24 for
    /// room), and in the work directory the split cells' bytes, then values
    /// (a byte a board), their words beside them during the initial pass,
    /// and this level's scores when a later level reads them. Short of
    /// disk, the words stay in memory (smaller windows), and for the last
    /// level the statistics are counted before the level file is written,
    /// the lower levels' scores given back between (see
    /// [`LevelPlan::count_before_writing`]; `--spare-disk` asks for it).
    ///
    /// # Errors
    /// A disk without room even so.
    fn plan_disk(
        &self,
        held: &Held,
        seeds: u32,
        boards: u64,
        level_plan: LevelPlan,
    ) -> Result<LevelPlan, SolveError> {
        let options = self.options;
        let level_file = 2 * estimated_level_file_bytes(boards) + (64 << 20);
        crate::memory::check_free_disk(seeds, &options.dir, "its level file", level_file)?;
        // The lower levels' scores are on the disk already: counted in what
        // the level needs, and in what is free.
        let scores = if self.lower_in_files {
            held.lower.bytes()
        } else {
            0
        };
        let own_scores = self.lower_in_files && self.read_above(seeds);
        let disk = MemoryLevelDisk {
            scores,
            cold: if level_plan.cold_in_file { boards } else { 0 },
            words: if level_plan.words_in_file_at_init {
                split_words_bytes(boards)
            } else {
                0
            },
            // The level file and the work directory are on one disk, as a
            // rule: counted together.
            writing: level_file + if own_scores { boards } else { 0 },
            last: self.last_missing == Some(seeds) && self.lower_in_files,
            spare: options.spare_disk,
        };
        let free = crate::memory::free_disk(&self.work_dir);
        let ((words, count_first), needed) = disk.choose(free.map(|free| free + scores));
        if let Some(free) = free.filter(|&free| needed > free + scores) {
            return Err(SolveError::Disk {
                seeds,
                dir: self.work_dir.clone(),
                what: "its cells, scores and level file",
                needed: crate::memory::format_size(needed - scores),
                available: crate::memory::format_size(free),
            });
        }
        let level_plan = if words {
            level_plan
        } else {
            level_plan.with_words_in_memory_at_init(boards, options)
        };
        Ok(LevelPlan {
            count_before_writing: count_first,
            ..level_plan
        })
    }

    /// How the solver solves level `seeds` of `boards` boards as
    /// `level_plan` has it.
    fn solve_options(&self, seeds: u32, boards: u64, level_plan: &LevelPlan) -> SolveOptions {
        let options = self.options;
        // The bytes of the levels the initial pass reads (one per board),
        // and what the page cache may hold beside the budget.
        let reached_below = reached_bytes(self.plan, self.index, seeds);
        let cache_room = cache_room(options);
        // On disk, with the lower levels in files larger than the page
        // cache can hold beside the budget (level 36 here: 31 GiB of
        // scores, about 10 GiB of cache), the initial pass reads the
        // children in order: at random, most reads would wait for the
        // disk one by one (measured: 18,000 a second, against 1.4 GB a
        // second in order). Smaller, they are read at random, faster
        // (level 22 in 250M: initial pass 15.8 s against 23.5 s sorted).
        // In the split cells with their bytes in a file, the budget
        // is mostly their words, and the room left for the lower
        // levels' mapped pages too small to read them at random
        // (level 24 in 420M: initial pass 106.8 s at random, with the
        // pages given back under the ceiling as fast as they come,
        // 61.1 s sorted, with 33 bytes a board read from disk besides).
        // Under MPI the lower levels are shared out among the ranks, and
        // the captures asked of their owners in the same sorted windows.
        let ranks_in_memory = self.ranks.size() > 1 && !level_plan.on_disk;
        let sorts = self.ranks.size() > 1
            || self.lower_in_files
                && ((level_plan.on_disk && reached_below > cache_room) || level_plan.cold_in_file);
        SolveOptions {
            record_generations: options.certificate,
            list_entries: Some(level_plan.list_entries),
            partitions: level_plan.partitions,
            level_dir: level_plan.on_disk.then(|| self.rank_dir(seeds)),
            layout: level_plan.split.then_some(CellLayout::Split),
            cold_dir: level_plan.cold_in_file.then(|| self.level_dir(seeds)),
            words_in_file_at_init: level_plan.words_in_file_at_init,
            // (Whole blocks of the level file, and whole words of its free
            // bits.)
            share_align: lcm(u64::from(options.write.block_boards), 64),
            checkpoint_seconds: options.checkpoint_seconds.unwrap_or(60.0),
            checkpoint_cost_multiple: if options.checkpoint_seconds.is_some() {
                0.0
            } else {
                9.0
            },
            resident_partitions: level_plan.resident_partitions,
            // A rank in memory holds a few mebibytes of the updates in
            // transit (most are a whole generation's for the other ranks,
            // until the exchange), or a quarter of a byte per board of its
            // share if more; the rest wait in files of its own.
            mail_bytes: if ranks_in_memory {
                let share = boards / self.ranks.size() as u64;
                options
                    .rank_mail_bytes
                    .unwrap_or(RANK_MAIL_BYTES.max(share / 4))
            } else {
                level_plan.mail_bytes
            },
            mail_dir: ranks_in_memory.then(|| {
                self.level_dir(seeds)
                    .join(format!("mail-rank-{}", self.ranks.rank()))
            }),
            sorted_lookups: sorts.then(|| {
                let cells = if level_plan.on_disk {
                    boards.div_ceil(level_plan.partitions) as f64
                        * options.fixed_bytes_per_board(seeds)
                } else {
                    0.0
                };
                let within = level_plan.lookups_within(options.memory, cells as u64);
                if self.ranks.size() > 1 {
                    // (Under MPI, windows of lookups for a 128th of a
                    // rank's share, about an eighth of a byte a board of it
                    // (with the copies and the asks, a third), so that the
                    // memory of a rank falls with the ranks.)
                    let share = boards / self.ranks.size() as u64;
                    within.min((share / 128).max(1 << 16) as usize)
                } else {
                    within
                }
            }),
            // Where the sorted windows also value the unstored boards'
            // captures for the statistics (under MPI, a file per rank, each
            // valuing the unstored boards that go with its share).
            unstored_captures: (sorts && options.count_all)
                .then(|| self.level_dir(seeds).join(self.unstored_name())),
            // The cells stay, named as solved, until the level file is
            // written: a run stopped while it writes resumes there.
            keep_level_dir: true,
        }
    }

    /// Solves level `seeds` with `solve_options`, the lower levels read
    /// first. A level that `spares` the disk (on disk, which is short for
    /// the lower levels' scores and the checkpoint together) reads them for
    /// its initial pass only (unless a checkpoint shows it done) and gives
    /// them back while the stages run (the checkpoint takes their room);
    /// they are read again for the statistics, once the level file is
    /// written and the cells are gone. Before an initial pass at random,
    /// the lower levels in files are read into the page cache beside the
    /// level's `level_memory` bytes.
    ///
    /// # Errors
    /// As [`retro::solve_level_on`], and a lower level that cannot be read.
    fn solve(
        &self,
        held: &mut Held,
        seeds: u32,
        bar: &ProgressBar,
        solve_options: &SolveOptions,
        spares: bool,
        level_memory: u64,
    ) -> Result<SolvedLevel, SolveError> {
        let (rules, ranks) = (self.plan.rules, self.ranks);
        let initialised = retro::has_checkpoint(rules, seeds, solve_options);
        let cache_lower = |held: &Held| {
            if solve_options.sorted_lookups.is_none() && !initialised {
                bar.set_message("reading the lower levels in");
                let available = crate::memory::available().unwrap_or(0);
                let room = cache_beside(available, level_memory);
                self.lower_levels.cache_reached(seeds, &held.lower, room);
            }
        };
        if !spares {
            self.lower_levels.load_below(seeds, &mut held.lower)?;
            cache_lower(held);
            return retro::solve_level_on(rules, seeds, &held.lower, bar, solve_options, ranks);
        }
        let mut resumed_initial_boards = 0;
        if !initialised {
            self.lower_levels.load_below(seeds, &mut held.lower)?;
            cache_lower(held);
            resumed_initial_boards =
                retro::initialise_on_disk(rules, seeds, &held.lower, bar, solve_options)?;
        }
        self.lower_levels.give_back(&mut held.lower)?;
        bar.set_position(0);
        let mut solved =
            retro::solve_level_on(rules, seeds, &held.lower, bar, solve_options, ranks)?;
        if !initialised {
            // Initialised in this run (whole, or from a checkpoint of
            // the pass), not resumed after it.
            solved.resumed_from_stage = None;
            solved.resumed_initial_boards = resumed_initial_boards;
        }
        Ok(solved)
    }

    /// Writes level `seeds`, `solved` as `level_plan` has it, and counts
    /// its statistics, as far as they do not need the lower levels: over
    /// the stored boards, and with `--count-all` (else the rest is
    /// [`CountsAll::NotAsked`]) the unstored boards' quiet moves, while the
    /// file is written ([`stats::Unstored`]); their captures are left to
    /// be counted once the level's values are gone, unless the initial pass
    /// valued them (`SolveOptions::unstored_captures`). Short of disk, the
    /// last level counts them all first and gives the scores back before its
    /// file is written. The cells go once the level file is whole. Returns
    /// its path, the counts over the stored boards and over all (or the
    /// unstored boards still to be valued by their captures), and whether
    /// the initial pass had valued those captures.
    ///
    /// # Errors
    /// A lower level that cannot be read, or a file that cannot be written
    /// or removed.
    fn write_counted(
        &self,
        held: &mut Held,
        seeds: u32,
        solved: &SolvedLevel,
        level_plan: &LevelPlan,
        solve_options: &SolveOptions,
        bar: &ProgressBar,
    ) -> Result<(PathBuf, Counts, CountsAll, bool), SolveError> {
        let rules = self.plan.rules;
        // The unstored boards' captures, if the initial pass valued them.
        let from_pass = match &solve_options.unstored_captures {
            Some(path) => retro::read_unstored_captures(path)?,
            None => None,
        };
        let in_pass = from_pass.is_some();
        let from_pass =
            from_pass.map(|captures| stats::Unstored::with_captures(rules, seeds, captures));
        let (counted_first, from_pass) = if level_plan.count_before_writing
            && !self.options.count_all
        {
            // (Nothing to count: the scores go before the file is written,
            // as planned.)
            self.lower_levels.give_back(&mut held.lower)?;
            (None, None)
        } else if level_plan.count_before_writing {
            bar.set_message("counting");
            let (values, room) = (&solved.values, resident::room(0));
            let stored = stats::count_stored(values);
            let all = match from_pass {
                Some(unstored) => stats::count_quiet_moves(unstored, values, &stored, room),
                None => {
                    self.lower_levels.load_below(seeds, &mut held.lower)?;
                    let all = stats::count_all(rules, seeds, values, &held.lower, &stored, room);
                    self.lower_levels.give_back(&mut held.lower)?;
                    all
                }
            };
            (Some(all), None)
        } else {
            (None, from_pass)
        };
        bar.set_message("writing");
        // (A level that spares the disk has given its lower levels back.)
        let spares = self.spare.contains(&seeds) && level_plan.on_disk;
        let lower = (!spares).then_some(&held.lower);
        let (written, counts_stored, counts_all) =
            self.write_and_count(seeds, solved, lower, counted_first, from_pass);
        let written = written?;
        // The level file is whole and named: its cells can go, and the
        // unstored boards' captures.
        retro::remove_level_dir(solve_options)?;
        if let Some(path) = &solve_options.unstored_captures {
            retro::remove_unstored_captures(path)?;
        }
        Ok((written, counts_stored, counts_all, in_pass))
    }

    /// Finishes the statistics over all boards of level `seeds`: values
    /// the captures of its `unstored` boards over the lower levels (read
    /// again if given back), in passes within the resident ceiling, and
    /// adds the counts over the `stored` boards.
    ///
    /// # Errors
    /// A lower level that cannot be read.
    fn count_captures(
        &self,
        held: &mut Held,
        seeds: u32,
        mut unstored: stats::Unstored,
        stored: &Counts,
    ) -> Result<Counts, SolveError> {
        self.lower_levels.load_below(seeds, &mut held.lower)?;
        unstored.value_captures(&held.lower, resident::room(0));
        Ok(unstored.counts(stored))
    }

    /// Writes the certificate (when recorded) and the level file of
    /// level `seeds`, `solved`, and counts its statistics meanwhile: over the stored
    /// boards, and, unless `counted_first` has the counts over all boards,
    /// the unstored boards' ends and quiet moves, with their captures in
    /// the same pass when the `lower` levels (if held) fit it, or valued
    /// already (`from_pass`). Returns the level file's path and the counts.
    ///
    /// The certificate goes before the level: the level's rename marks it
    /// complete (with its statistics, written last). The writer leaves a
    /// core idle now and then (one thread checks and writes the blocks),
    /// and the counting fills it.
    fn write_and_count(
        &self,
        seeds: u32,
        solved: &SolvedLevel,
        lower: Option<&Levels>,
        counted_first: Option<Counts>,
        from_pass: Option<stats::Unstored>,
    ) -> (Result<PathBuf, SolveError>, Counts, CountsAll) {
        let (options, rules) = (self.options, self.plan.rules);
        let values = &solved.values;
        let id = self.id(seeds);
        let room_now = resident::room(0);
        let (written, (counts_stored, counts_all)) = rayon::join(
            || -> Result<PathBuf, SolveError> {
                if let Some(g) = &solved.generations {
                    file::write_certificate(&options.dir, id, g)?;
                }
                Ok(match options.stored {
                    // (The bounds of `--repetition any` are built by `crate::bounds`.)
                    Stored::Scores | Stored::RepetitionLower | Stored::RepetitionUpper => {
                        file::write_level(&options.dir, id, values, options.write)?
                    }
                    Stored::LowerBounds => {
                        let free = solved.free.as_u64();
                        file::write_level_bounded(&options.dir, id, values, free, options.write)?
                    }
                })
            },
            || {
                let stored = stats::count_stored(values);
                let all = match (counted_first, from_pass) {
                    _ if !options.count_all => CountsAll::NotAsked,
                    (Some(counts), _) => CountsAll::Counted(counts),
                    // (One pass over the level's values here, or as few as
                    // the room allows once the writer is done.)
                    (None, Some(unstored)) if unstored.quiet_passes(values, room_now) > 1 => {
                        CountsAll::QuietMoves {
                            unstored,
                            captures_valued: true,
                        }
                    }
                    (None, Some(unstored)) => CountsAll::Counted(stats::count_quiet_moves(
                        unstored, values, &stored, room_now,
                    )),
                    (None, None) => {
                        let mut unstored = stats::Unstored::new(rules, seeds);
                        // In one pass all is counted here, beside the writer;
                        // in more, each pass would generate the boards' moves
                        // again: the captures wait for the room the level's
                        // values hold (level 28: writing 36.4 s, against 28.4
                        // s in one pass).
                        let at_once =
                            lower.is_some_and(|l| unstored.value_in_one_pass(values, l, room_now));
                        if at_once {
                            CountsAll::Counted(unstored.counts(&stored))
                        } else if unstored.quiet_passes(values, room_now) > 1 {
                            CountsAll::QuietMoves {
                                unstored,
                                captures_valued: false,
                            }
                        } else {
                            unstored.value_quiet_moves(values, room_now);
                            CountsAll::Captures(unstored)
                        }
                    }
                };
                (stored, all)
            },
        );
        (written, counts_stored, counts_all)
    }

    /// The name of the file of the unstored boards' captures of this rank
    /// (see [`SolveOptions::unstored_captures`]).
    fn unstored_name(&self) -> String {
        if self.ranks.is_root() {
            UNSTORED_CAPTURES.to_string()
        } else {
            format!("{UNSTORED_CAPTURES}-rank-{}", self.ranks.rank())
        }
    }

    /// Keeps the `values` of level `seeds` (`boards` boards) for the levels
    /// above that read them: in a file of scores with the lower levels in
    /// files, else in memory.
    ///
    /// # Errors
    /// A file of scores that cannot be written.
    fn keep_for_above(
        &self,
        held: &mut Held,
        seeds: u32,
        boards: u64,
        values: Arc<Values>,
    ) -> Result<(), SolveError> {
        if !self.read_above(seeds) {
            return Ok(());
        }
        if self.lower_in_files {
            let copy = |out: &mut [i8]| {
                out.copy_from_slice(&values);
                Ok(())
            };
            let path = scores_path(&self.work_dir, self.id(seeds));
            let scores = scores_in_file::<SolveError>(&path, boards, None, copy)?;
            held.lower.insert(seeds, Arc::new(scores));
        } else {
            held.lower.insert(seeds, values);
        }
        Ok(())
    }
}

/// The least common multiple of `a` and `b`.
fn lcm(a: u64, b: u64) -> u64 {
    let gcd = |mut x: u64, mut y: u64| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b) * b
}
