//! Every level of a plan as planned before any work (`awari-solve
//! --plan`): in memory or on disk, with what memory and disk, in about how
//! long, or why it cannot be built ([`plan_levels`]).

use std::path::PathBuf;

use awari_dbformat::capture_reaches;
use awari_dbformat::file::LevelId;
use awari_dbformat::level::PackedScores;
use awari_dbformat::Index;
use serde::Serialize;

use super::budget::{
    cache_beside, estimated_level_file_bytes, plan_memory, plan_share, split_words_bytes,
    LevelPlan, MemoryLevelDisk, Reach,
};
use super::{is_complete, last_missing, lower_levels_in_files, Options, Plan};
use crate::memory::format_size;
use crate::retro;

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
    /// Solved in the split cells (`--cells`): their words in memory.
    pub split: bool,
    /// In the split cells: their byte a board (`B`, then the values) in a
    /// file of the work directory.
    pub cold_in_file: bool,
    /// The lower levels read from mapped files of scores.
    pub lower_levels_in_files: bool,
    /// On disk, with the lower levels in files: their scores are given back
    /// while the stages run, because the disk cannot hold them beside the
    /// level's checkpoint (they are read again from the level files for
    /// the statistics: a little time for much disk).
    pub spare_disk: bool,
    /// In memory, the last level: its statistics counted before its level
    /// file is written and the lower levels' scores given back between,
    /// because the disk cannot hold both (`--spare-disk` asks for it).
    pub count_before_writing: bool,
    /// The ranks (MPI processes) that share the level, each its own
    /// share: 1 in one process. The memory and disk are each rank's.
    pub ranks: u64,
    /// The partitions the level is solved in (over all ranks).
    pub partitions: u64,
    /// On disk: the partitions kept mapped at once.
    pub resident_partitions: Option<u64>,
    /// The memory the plan counts on (at most the budget; each rank's).
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

/// The rate of R ranks of one thread against one process of R threads:
/// levels 0..=21 under 2 ranks, their generations apart, took 64.8 s
/// against 47.6 s (docs/performance.md). (Not measured on disk, nor beyond
/// 2 cores.)
const RANKS_EFFICIENCY: f64 = 0.73;

/// The bytes of the levels of `plan` that the captures of level `seeds`
/// reach (one per board: levels up to `seeds - 2`).
pub(super) fn reached_bytes(plan: &Plan, index: &Index, seeds: u32) -> u64 {
    plan.levels
        .iter()
        .filter(|&&s| capture_reaches(seeds, s))
        .map(|&s| index.level_size(s))
        .sum()
}

/// What the page cache may hold beside `options`' memory budget (0 where
/// the available memory is unknown).
pub(super) fn cache_room(options: &Options) -> u64 {
    crate::memory::available().map_or(0, |a| a.saturating_sub(options.memory))
}

/// How many times slower a level in the packed cells is built when the
/// page cache holds none of the lower levels its captures reach (in
/// files): their reads at random then wait for the disk. In between, the
/// slowdown goes with the share the cache cannot hold
/// ([`beyond_cache_slowdown`]). Level 33 of the 36-seed game (10.5 GiB of
/// cells beside 13.3 GB of scores, about a quarter beyond) took 1,537.9 s
/// against the 1,078 s of 6.0 M boards/s (2026-12-05, docs/scaling.md);
/// levels in memory beyond the cache now take the split cells.
const BEYOND_CACHE_SLOWDOWN: f64 = 4.0;

/// [`BEYOND_CACHE_SLOWDOWN`] for a level in the split cells, their bytes in
/// a file, which reads its lower levels in sorted windows: level 24 of the
/// 24-seed game so built beside 220 MiB of page cache, 58% of its 518 MB
/// of scores beyond it (`scripts/miniature.sh`, level 36 in miniature),
/// took 80.3 s against 48.3 s in memory: 1.7 times as long, 2.2 with none
/// in the cache (docs/performance.md).
const SPLIT_BEYOND_CACHE_SLOWDOWN: f64 = 2.2;

/// The plan of every level of `plan` within `options`' budgets, before any
/// work, by `ranks` ranks (MPI processes, each with `options`' memory and
/// threads; 1: one process): how it would be built, with what memory and
/// disk (each rank's), in about how long.
pub fn plan_levels(plan: &Plan, options: &Options, ranks: u64) -> Vec<PlannedLevel> {
    let last_missing = last_missing(plan, options);
    let ranks = ranks.max(1);
    let planner = Planner {
        plan,
        options,
        index: Index::for_pits(plan.rules.pits()),
        last_missing,
        lower_in_files: lower_levels_in_files(plan, options, last_missing, ranks),
        ranks,
        threads: rayon::current_num_threads() as f64,
        available: crate::memory::available().unwrap_or(0),
        work_dir: options.work_dir(),
    };
    // The free disk, less the level files planned before each level. What
    // the work directory holds already (files of scores, the partitions of
    // a stopped level) is counted in what the levels need, so it counts as
    // free here too (a build run again is not refused for its own files).
    let held = retro::dir_bytes(&planner.work_dir);
    let mut free_disk = crate::memory::free_disk(&planner.work_dir).map(|free| free + held);
    plan.levels
        .iter()
        .map(|&seeds| planner.level(seeds, &mut free_disk))
        .collect()
}

/// What holds for every level of a plan being planned.
struct Planner<'a> {
    plan: &'a Plan,
    options: &'a Options,
    index: &'static Index,
    /// The highest level that is not complete.
    last_missing: Option<u32>,
    /// Whether the lower levels go to files of scores.
    lower_in_files: bool,
    /// The ranks that share each level.
    ranks: u64,
    /// The threads that would build.
    threads: f64,
    /// The memory available to the build (for the level and the page
    /// cache; 0 where unknown).
    available: u64,
    /// The work directory of every level.
    work_dir: PathBuf,
}

impl Planner<'_> {
    /// The plan of level `seeds`, where `free_disk` is free before it (less
    /// its level file after it, when it is built).
    fn level(&self, seeds: u32, free_disk: &mut Option<u64>) -> PlannedLevel {
        let boards = self.index.level_size(seeds);
        let present = is_complete(LevelId::new(self.plan.rules, seeds), self.options);
        let row = PlannedLevel {
            seeds,
            boards,
            present,
            on_disk: false,
            split: false,
            cold_in_file: false,
            lower_levels_in_files: self.lower_in_files && !present,
            spare_disk: false,
            count_before_writing: false,
            ranks: self.ranks,
            partitions: self.ranks,
            resident_partitions: None,
            memory_bytes: 0,
            disk_bytes: 0,
            estimated_seconds: 0.0,
            refused: None,
        };
        if present {
            return row;
        }
        // The lower levels held (or kept in files) while this one is built.
        let reads = |s: u32| self.last_missing.is_some_and(|m| capture_reaches(m, s));
        let held: Vec<u32> = self
            .plan
            .levels
            .iter()
            .copied()
            .filter(|&s| s < seeds && reads(s))
            .collect();
        let lower: u64 = held.iter().map(|&s| self.index.level_size(s)).sum();
        let lower_in_memory = if self.lower_in_files { 0 } else { lower };
        let reach = Reach {
            in_files: if self.lower_in_files {
                reached_bytes(self.plan, self.index, seeds)
            } else {
                0
            },
            available: (self.available > 0).then_some(self.available),
        };
        let planned = if self.ranks > 1 {
            // (A rank holds its shares packed: `Levels::pack`.)
            let packed: u64 = held
                .iter()
                .map(|&s| PackedScores::bytes_for(s, self.index.level_size(s)))
                .sum();
            let shares = packed.div_ceil(self.ranks);
            plan_share(seeds, boards, self.ranks, shares, reach, self.options)
        } else {
            plan_memory(seeds, boards, lower_in_memory, reach, self.options)
        };
        match planned {
            Ok(p) => self.missing(row, &p, lower, free_disk),
            Err(err) => PlannedLevel {
                refused: Some(err.to_string()),
                ..row
            },
        }
    }

    /// `row` of a missing level, planned as `p` with `lower` bytes of
    /// lower levels: its disk (refused when more than `free_disk`, which
    /// then loses its level file) and its time.
    fn missing(
        &self,
        row: PlannedLevel,
        p: &LevelPlan,
        lower: u64,
        free_disk: &mut Option<u64>,
    ) -> PlannedLevel {
        let (seeds, boards) = (row.seeds, row.boards);
        let level_file = estimated_level_file_bytes(boards);
        let scores = if self.lower_in_files { lower } else { 0 };
        // (A rank's share; rank 0 writes the whole level file.)
        let share = boards.div_ceil(self.ranks);
        let cells = (share as f64 * self.options.fixed_bytes_per_board(seeds)) as u64;
        let disk = DiskNeeds {
            cells,
            values: share + share / 8,
            scores,
            level_file,
        };
        let spare = p.on_disk
            && scores > 0
            && (self.options.spare_disk
                || free_disk.is_some_and(|free| disk.holding_scores() > free));
        // In memory: the split cells' bytes in a file, with their words
        // beside them during the initial pass when the disk has room (else
        // in memory), and for the last level, short of disk, the scores
        // given back before the level file is written (as the build does:
        // `Build::plan_disk`).
        let disk_in_memory = MemoryLevelDisk {
            scores,
            cold: if p.cold_in_file { boards } else { 0 },
            words: if p.cold_in_file {
                split_words_bytes(boards)
            } else {
                0
            },
            writing: level_file,
            last: self.last_missing == Some(seeds) && scores > 0,
            spare: self.options.spare_disk,
        };
        let (in_memory, in_memory_bytes) = disk_in_memory.choose(*free_disk);
        let mut row = PlannedLevel {
            on_disk: p.on_disk,
            split: p.split,
            cold_in_file: p.cold_in_file,
            partitions: p.partitions,
            resident_partitions: p.on_disk.then_some(p.resident_partitions as u64),
            memory_bytes: p.memory_bytes,
            spare_disk: spare,
            count_before_writing: !p.on_disk && in_memory.1,
            disk_bytes: match (p.on_disk, spare) {
                (false, _) => in_memory_bytes,
                (true, false) => disk.holding_scores(),
                (true, true) => disk.sparing_scores(),
            },
            estimated_seconds: self.estimated_seconds(seeds, boards, p),
            ..row
        };
        if let Some(free) = *free_disk {
            if row.disk_bytes > free {
                row.refused = Some(format!(
                    "level {seeds} needs about {} of disk in {}, {} free",
                    format_size(row.disk_bytes),
                    self.work_dir.display(),
                    format_size(free)
                ));
            }
            *free_disk = Some(free.saturating_sub(level_file));
        }
        row
    }

    /// The seconds level `seeds` of `boards` boards takes as planned, `p`:
    /// the rates measured on 2 cores scaled to the threads, and slowed when
    /// the levels its captures reach (one byte per board) are read from
    /// files larger than the page cache can hold beside the level.
    fn estimated_seconds(&self, seeds: u32, boards: u64, p: &LevelPlan) -> f64 {
        let reached = reached_bytes(self.plan, self.index, seeds);
        // A level in memory takes what it plans, one on disk maps its cells
        // up to the budget.
        let level = if p.on_disk {
            self.options.memory
        } else {
            p.memory_bytes
        };
        let cache = cache_beside(self.available, level);
        let slowdown = if self.lower_in_files {
            let full = if p.split && p.cold_in_file {
                SPLIT_BEYOND_CACHE_SLOWDOWN
            } else {
                BEYOND_CACHE_SLOWDOWN
            };
            beyond_cache_slowdown(reached, cache, full)
        } else {
            1.0
        };
        let rate = if p.on_disk {
            ON_DISK_BOARDS_PER_SECOND
        } else {
            IN_MEMORY_BOARDS_PER_SECOND
        } / slowdown;
        let ranks = if self.ranks > 1 {
            self.ranks as f64 * RANKS_EFFICIENCY
        } else {
            1.0
        };
        boards as f64 / (rate * self.threads / 2.0 * ranks)
    }
}

/// How many times slower a level is built whose captures reach `reached`
/// bytes of scores in files, beside `cache` bytes of page cache: not at all
/// while the cache holds them, `full` times when it holds none, and in
/// between by the share the cache cannot hold.
fn beyond_cache_slowdown(reached: u64, cache: u64, full: f64) -> f64 {
    if reached <= cache {
        return 1.0;
    }
    let beyond = 1.0 - cache as f64 / reached as f64;
    1.0 + beyond * (full - 1.0)
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
        self.scores + (2 * self.cells).max(self.writing())
    }

    /// The same with the scores given back while the stages run: the
    /// scores and the cells in the initial pass, the cells and their
    /// checkpoint in the stages, the cells, the values and the level file
    /// as it is written, then the values, the scores read again for the
    /// statistics and the level file (the cells gone).
    fn sparing_scores(&self) -> u64 {
        (self.scores + self.cells)
            .max(2 * self.cells)
            .max(self.writing())
            .max(self.values + self.scores + self.level_file)
    }

    /// What the level takes while its file is written: the cells, the
    /// assembled values and the level file.
    fn writing(&self) -> u64 {
        self.cells + self.values + self.level_file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_slows_by_the_share_of_its_reach_beyond_the_cache() {
        let full = 4.0;
        assert_eq!(beyond_cache_slowdown(10, 10, full), 1.0);
        assert_eq!(beyond_cache_slowdown(10, 20, full), 1.0);
        assert_eq!(beyond_cache_slowdown(10, 0, full), full);
        assert_eq!(beyond_cache_slowdown(10, 5, full), 2.5);
        let slower = (1..10).map(|cache| beyond_cache_slowdown(10, 10 - cache, full));
        assert!(slower.collect::<Vec<_>>().windows(2).all(|w| w[0] < w[1]));
    }
}
