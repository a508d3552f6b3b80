//! How one level fits the memory budget: in memory or on disk, in how
//! many partitions, with how many of them mapped at once, and with what
//! frontier lists and mail ([`plan_memory`]).

use awari_dbformat::file::Stored;
use awari_dbformat::memory::PROCESS_BYTES;

use crate::error::SolveError;
use crate::retro;

use super::Options;

/// How one level is solved within the memory budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LevelPlan {
    /// Frontier list entries per generation, over the whole level.
    pub list_entries: u64,
    /// Partitions wanted.
    pub partitions: u64,
    /// Whether their cells are kept in files.
    pub on_disk: bool,
    /// On disk: the partitions that fit in memory at once.
    pub resident_partitions: usize,
    /// On disk: the updates in transit held in memory, in bytes (the rest
    /// wait in files).
    pub mail_bytes: u64,
    /// The memory this plan counts on, at most the budget.
    pub memory_bytes: u64,
    /// Whether the level is solved in the split cells
    /// ([`crate::cells::Split`]: their words in memory, one partition).
    pub split: bool,
    /// In the split cells: whether their cold bytes (and then the level's
    /// values) are kept in a file of the work directory, outside the
    /// memory planned.
    pub cold_in_file: bool,
    /// In the split cells: the memory held during the initial pass (the
    /// rest of the process, the lower levels in memory, and the words and
    /// bytes when they are in memory; the lists are not touched yet, and
    /// the writer not started), which its lookups come on top of.
    pub split_init_bytes: u64,
    /// In the split cells with their bytes in a file: whether their words
    /// are in a file too during the initial pass (its lookups then have
    /// their memory), which takes [`split_words_bytes`] of disk more.
    pub words_in_file_at_init: bool,
    /// The statistics counted before the level file is written, and the
    /// lower levels' files of scores given back between the two (for the
    /// last level, when the disk cannot hold the scores and the level file
    /// at once), rather than counted while it is written.
    pub count_before_writing: bool,
}

/// Which cells a level is solved in ([`crate::cells`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cells {
    /// The packed cells when the level fits in memory in them, else the
    /// split cells with their cold bytes in a file when their words fit,
    /// else the packed cells on disk.
    #[default]
    Auto,
    /// Always the packed cells: in memory, or on disk in partitions.
    Packed,
    /// Always the split cells: their cold bytes in memory when both fit,
    /// else in a file.
    Split,
}

/// Bytes per board of the split cells' words.
const SPLIT_WORD_BYTES: f64 = 8.0 / 12.0;

/// The bytes of the split cells' words of a level of `boards` boards (the
/// disk they take in a file during the initial pass).
pub fn split_words_bytes(boards: u64) -> u64 {
    (boards as f64 * SPLIT_WORD_BYTES) as u64
}
/// Bytes per board of the level's free bits.
const FREE_BYTES: f64 = 1.0 / 8.0;

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

/// The lower levels in files that a level's captures reach (one byte a
/// board), and the memory the level and the page cache share.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Reach {
    /// The bytes of the files of scores the captures reach (0 when the
    /// lower levels are in memory).
    pub in_files: u64,
    /// The memory available to the level and the page cache (`None` where
    /// unknown).
    pub available: Option<u64>,
}

impl Reach {
    /// Whether a level taking `level` bytes leaves the page cache too little
    /// to hold the files its captures reach ([`cache_beside`]; level 33 of
    /// the 36-seed game, 10.5 GiB beside 13.3 GB of scores in 23 GiB, read
    /// them from the disk at random).
    fn beyond_cache(&self, level: u64) -> bool {
        self.in_files > 0
            && self
                .available
                .is_some_and(|a| self.in_files > cache_beside(a, level))
    }
}

/// The page cache a level taking `level` bytes leaves of `available` bytes
/// of memory, an eighth of them kept for the rest (the writer, the
/// kernel's own): what the plan, the choice of cells and the reading of
/// the lower levels before an initial pass all count on.
pub(super) fn cache_beside(available: u64, level: u64) -> u64 {
    (available - available / 8).saturating_sub(level)
}

/// How level `seeds` is solved within the budget: in memory when its state
/// fits (unless `options.on_disk`), in `options.partitions` or one
/// partition; else on disk, in as few partitions as the budget allows
/// (or `options.partitions`). The frontier lists get the default share
/// when it fits, fewer when not (slower, same values), none when only the
/// fixed state fits.
///
/// With the cells chosen for it (`--cells auto`), a level whose packed
/// cells fit in memory but leave too little beside them for the page cache
/// to hold its `reach` goes to the split cells with their bytes in a file
/// when they fit: their initial pass reads the lower levels in sorted
/// windows, where the packed level's would wait on the disk for each
/// lookup (level 33 of the 36-seed game: 579.5 s of its 1,537.9 s).
///
/// # Errors
/// [`SolveError::Memory`] up front when even the smallest plan exceeds the
/// budget: the lower levels (`lower_bytes`, 0 when they are in files), the
/// writer's working memory, the maps and mail of a level on disk, and one
/// partition.
pub(super) fn plan_memory(
    seeds: u32,
    boards: u64,
    lower_bytes: u64,
    reach: Reach,
    options: &Options,
) -> Result<LevelPlan, SolveError> {
    let budget = options.memory;
    let per_board = options.fixed_bytes_per_board(seeds);
    // The writer's working memory when it chooses lower bounds (the
    // encodings it weighs: 62 MiB measured at level 22).
    let writer = if options.stored == Stored::Scores {
        0
    } else {
        boards.min(64 << 20)
    };
    let base = lower_bytes + PROCESS_BYTES + writer;
    let lists_within = |spare: u64| {
        let affordable = spare / (retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES);
        retro::default_list_entries(boards).min(affordable)
    };
    // In memory: the cells shrink to the values and free bits when the
    // level is written, so the state covers both.
    let in_memory = (boards as f64 * per_board) as u64 + base;
    let list_bytes = |entries: u64| entries * retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES;
    // (Beyond the cache the split cells always fit where the packed ones
    // do: their words are half the packed cells.)
    let rather_split = options.cells == Cells::Auto && reach.beyond_cache(in_memory);
    let packed_in_memory = in_memory <= budget && !options.on_disk;
    if packed_in_memory && options.cells != Cells::Split && !rather_split {
        let list_entries = lists_within(budget - in_memory);
        return Ok(LevelPlan {
            list_entries,
            partitions: options.partitions.unwrap_or(1),
            on_disk: false,
            resident_partitions: usize::MAX,
            mail_bytes: u64::MAX,
            memory_bytes: in_memory + list_bytes(list_entries),
            split: false,
            cold_in_file: false,
            split_init_bytes: 0,
            words_in_file_at_init: false,
            count_before_writing: false,
        });
    }
    if let Some(plan) = plan_split_cells(seeds, boards, lower_bytes, base, options, &lists_within) {
        return plan;
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
        return Err(SolveError::memory(
            seeds,
            boards,
            lower_bytes,
            needed,
            budget,
        ));
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
        split: false,
        cold_in_file: false,
        split_init_bytes: 0,
        words_in_file_at_init: false,
        count_before_writing: false,
    })
}

/// How one of `ranks` ranks solves its share of level `seeds` (`boards`
/// boards over the ranks) within its own budget, beside `lower_bytes` of
/// the lower levels' shares it holds: [`plan_memory`] of the share, in the
/// packed cells (the split cells keep one partition's words in memory: not
/// made for a level shared out). The partitions and frontier lists are
/// the whole level's: a share's partitions times the ranks (or those
/// `options` asks for), its lists times the ranks.
///
/// # Errors
/// [`SolveError::RankMemory`] when even the smallest plan of the share
/// exceeds the budget.
pub(super) fn plan_share(
    seeds: u32,
    boards: u64,
    ranks: u64,
    lower_bytes: u64,
    reach: Reach,
    options: &Options,
) -> Result<LevelPlan, SolveError> {
    let asked = options.partitions;
    let options = Options {
        cells: Cells::Packed,
        partitions: asked.map(|k| k.div_ceil(ranks)),
        ..options.clone()
    };
    let share = boards.div_ceil(ranks);
    let mut plan =
        plan_memory(seeds, share, lower_bytes, reach, &options).map_err(|e| match e {
            SolveError::Memory {
                seeds,
                boards,
                state_bytes,
                lower,
                needed,
                budget,
            } => SolveError::RankMemory {
                seeds,
                ranks,
                boards,
                state_bytes,
                lower,
                needed,
                budget,
            },
            other => other,
        })?;
    plan.partitions = asked.unwrap_or(plan.partitions * ranks);
    plan.list_entries *= ranks;
    Ok(plan)
}

/// The plan of level `seeds` in the split cells when they are wanted
/// (`options.cells`; `--on-disk` asks for the packed cells on disk, unless
/// the split cells are asked for: then it keeps their bytes in a file) and
/// fit beside `base` (of which `lower_bytes` are the lower levels): their
/// bytes in memory only when asked for the split cells and all fits, in a
/// file otherwise. `None` when the packed cells on disk are to be tried;
/// an error when the split cells were asked for and do not fit.
fn plan_split_cells(
    seeds: u32,
    boards: u64,
    lower_bytes: u64,
    base: u64,
    options: &Options,
    lists_within: &dyn Fn(u64) -> u64,
) -> Option<Result<LevelPlan, SolveError>> {
    let wanted = match options.cells {
        Cells::Auto => !options.on_disk,
        Cells::Packed => false,
        Cells::Split => true,
    };
    if !wanted || !crate::cells::CellLayout::Split.holds(seeds) {
        return None;
    }
    let held = lower_bytes + PROCESS_BYTES;
    let only_in_file = options.cells == Cells::Auto || options.on_disk;
    let places = [false, true]
        .into_iter()
        .filter(|&file| file || !only_in_file);
    for cold_in_file in places {
        if let Some(plan) = split_plan(boards, base, held, options, cold_in_file, lists_within) {
            return Some(Ok(plan));
        }
    }
    (options.cells == Cells::Split).then(|| {
        let split = split_bytes(boards, options, true);
        let needed = base + split.solve.max(split.end);
        Err(SolveError::memory(
            seeds,
            boards,
            lower_bytes,
            needed,
            options.memory,
        ))
    })
}

/// The memory of a level of `boards` boards in the split cells: while it
/// is solved (the words, the cold bytes when in memory, the generations
/// of a certificate) and when its values are made (the words gone: the
/// free bits, the generations, and the values, in the cold bytes' memory or
/// in their file).
struct SplitBytes {
    solve: u64,
    end: u64,
}

fn split_bytes(boards: u64, options: &Options, cold_in_file: bool) -> SplitBytes {
    let generations = options.generation_bytes_per_board();
    let cold = if cold_in_file { 0.0 } else { 1.0 };
    let per_board = |bytes: f64| (boards as f64 * bytes) as u64;
    SplitBytes {
        solve: per_board(SPLIT_WORD_BYTES + cold + generations),
        end: per_board(FREE_BYTES + cold + generations),
    }
}

/// The plan of a level of `boards` boards in the split cells, one
/// partition, within the budget beside `base` (of which `held` is held
/// during the initial pass: the lower levels and the rest of the process,
/// not the writer); `None` when it does not fit.
fn split_plan(
    boards: u64,
    base: u64,
    held: u64,
    options: &Options,
    cold_in_file: bool,
    lists_within: &dyn Fn(u64) -> u64,
) -> Option<LevelPlan> {
    let split = split_bytes(boards, options, cold_in_file);
    let needed = base + split.solve.max(split.end);
    if needed > options.memory {
        return None;
    }
    let list_entries = lists_within(options.memory - base - split.solve);
    let lists = list_entries * retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES;
    Some(LevelPlan {
        list_entries,
        partitions: options.partitions.unwrap_or(1),
        on_disk: false,
        resident_partitions: usize::MAX,
        mail_bytes: 0,
        memory_bytes: needed.max(base + split.solve + lists),
        split: true,
        cold_in_file,
        // (With their bytes in a file, the words are in a file too until
        // the pass is done, unless the disk is short: `retro`'s
        // `State::with_words_in_file`.)
        split_init_bytes: if cold_in_file {
            held
        } else {
            held + split.solve
        },
        words_in_file_at_init: cold_in_file,
        count_before_writing: false,
    })
}

/// How a level in memory uses the disk: its split cells' words in a file
/// during the initial pass ([`LevelPlan::words_in_file_at_init`]), and its
/// statistics counted before its file is written
/// ([`LevelPlan::count_before_writing`]).
pub type DiskUse = (bool, bool);

/// The disk a level in memory takes (in bytes), as `--plan` and the build
/// (`Build::plan_disk`) count it.
#[derive(Clone, Copy, Debug)]
pub struct MemoryLevelDisk {
    /// The lower levels' files of scores it reads.
    pub scores: u64,
    /// Its split cells' bytes in a file (0 when in memory).
    pub cold: u64,
    /// Its split cells' words, when they may go to a file (else 0).
    pub words: u64,
    /// What its end writes: its level file (and its own scores for the
    /// levels above).
    pub writing: u64,
    /// The last level: the scores may go before its file is written.
    pub last: bool,
    /// `--spare-disk`: the last level counts first even with room.
    pub spare: bool,
}

impl MemoryLevelDisk {
    /// The most the level takes at once with `use_`: the scores, the bytes
    /// and the words during the initial pass; at the end the scores, the
    /// bytes and what it writes, or, counting first, the scores and the
    /// bytes, then the bytes and what it writes (the scores gone).
    pub fn needs(&self, (words, count_first): DiskUse) -> u64 {
        let words = if words { self.words } else { 0 };
        let initial = self.scores + self.cold + words;
        let end = if count_first {
            (self.scores + self.cold).max(self.cold + self.writing)
        } else {
            self.scores + self.cold + self.writing
        };
        initial.max(end)
    }

    /// The first use that fits in `free` bytes (`None`: unknown), the
    /// faster first, with what it needs; when none does, the one that
    /// needs the least.
    pub fn choose(&self, free: Option<u64>) -> (DiskUse, u64) {
        let choices = [(true, false), (false, false), (true, true), (false, true)];
        let usable = choices.into_iter().filter(|&(words, count_first)| {
            (self.words > 0 || !words)
                && (self.last || !count_first)
                && (!self.spare || !self.last || count_first)
        });
        let mut least: Option<(DiskUse, u64)> = None;
        for use_ in usable {
            let needed = self.needs(use_);
            if free.is_none_or(|free| needed <= free) {
                return (use_, needed);
            }
            if least.is_none_or(|(_, n)| needed < n) {
                least = Some((use_, needed));
            }
        }
        least.expect("words in memory, counted beside the writer: always usable")
    }
}

impl LevelPlan {
    /// The plan with the split cells' words in memory during the initial
    /// pass too (for a disk without room for them), for a level of
    /// `boards` boards: its lookups then have that much less memory.
    pub fn with_words_in_memory_at_init(self, boards: u64, options: &Options) -> LevelPlan {
        if !self.words_in_file_at_init {
            return self;
        }
        LevelPlan {
            words_in_file_at_init: false,
            split_init_bytes: self.split_init_bytes + split_bytes(boards, options, true).solve,
            ..self
        }
    }

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
    pub fn lookups_within(&self, budget: u64, cells: u64) -> usize {
        if self.split {
            return self.split_lookups_within(budget);
        }
        let lists = self.list_entries * retro::LIVE_GENERATIONS * retro::LIST_ENTRY_BYTES;
        let mapped = self.resident_partitions.min(self.partitions as usize) as u64 * cells;
        // (A level in memory has no bound on its mail, and no room kept
        // for it: under MPI, whose windows are sorted in memory too.)
        let mail = if self.on_disk { self.mail_bytes } else { 0 };
        let spare = budget.saturating_sub(self.memory_bytes) + lists + mail + mapped;
        (spare.saturating_sub(budget / 4).max(64 << 20) / 24) as usize
    }

    /// [`LevelPlan::lookups_within`] in the split cells: the room beside
    /// what the initial pass holds (`split_init_bytes`), less an eighth of
    /// the budget (the pages read and written, a window richer in captures
    /// than sized for) and 64 MiB (the heaps of the pass's threads, which
    /// keep the vectors of a group of chunks: level 18 in 120M peaked at
    /// 181 MiB without), at 24 bytes a lookup, at least 8 MiB's worth.
    fn split_lookups_within(&self, budget: u64) -> usize {
        let spare = budget.saturating_sub(self.split_init_bytes + (64 << 20));
        (spare.saturating_sub(budget / 8).max(8 << 20) / 24) as usize
    }
}

/// The bytes a level file of `boards` boards is planned at: the 2.6 bits per
/// board of levels 20..=24.
pub(super) fn estimated_level_file_bytes(boards: u64) -> u64 {
    boards * 26 / 80
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use awari_dbformat::file::WriteOptions;

    use super::*;

    fn options(memory: u64, certificate: bool) -> Options {
        Options {
            dir: PathBuf::from("unused"),
            memory,
            progress: false,
            write: WriteOptions::default(),
            certificate,
            stored: Stored::LowerBounds,
            partitions: None,
            on_disk: false,
            spare_disk: false,
            work_dir: None,
            checkpoint_seconds: None,
            cells: Cells::Auto,
            rank_mail_bytes: None,
            count_all: false,
        }
    }

    #[test]
    fn a_share_is_planned_within_a_rank_budget() {
        let (boards, ranks) = (40_000_000u64, 4);
        // Each rank holds a quarter of 40 MB of lower levels.
        let (lower, shares) = (40_000_000u64, 10_000_000u64);
        let budget = 150 << 20;
        // (One process of the same budget does not hold the level in memory
        // in the packed cells.)
        let one = plan_memory(24, boards, lower, Reach::default(), &options(budget, false));
        let one = one.unwrap();
        assert!(one.on_disk || one.split, "{one:?}");
        // A share fits in memory, in the packed cells, a partition a rank;
        // the lists are the whole level's.
        let plan = plan_share(
            24,
            boards,
            ranks,
            shares,
            Reach::default(),
            &options(budget, false),
        );
        let plan = plan.unwrap();
        assert!(!plan.on_disk && !plan.split, "{plan:?}");
        assert_eq!(plan.partitions, ranks);
        assert!(plan.memory_bytes <= budget, "{plan:?}");
        let alone = plan_memory(
            24,
            boards / ranks,
            shares,
            Reach::default(),
            &options(budget, false),
        );
        assert_eq!(plan.list_entries, ranks * alone.unwrap().list_entries);
        // Partitions asked for are the whole level's.
        let asked = Options {
            partitions: Some(6),
            on_disk: true,
            ..options(budget, false)
        };
        let plan = plan_share(24, boards, ranks, shares, Reach::default(), &asked).unwrap();
        assert_eq!(plan.partitions, 6);
        // A share that does not fit is refused as a rank's.
        let err = plan_share(
            24,
            boards,
            ranks,
            shares,
            Reach::default(),
            &options(1 << 20, false),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                SolveError::RankMemory {
                    ranks: 4,
                    boards: 10_000_000,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("each rank's budget"), "{err}");
    }

    #[test]
    fn the_budget_sizes_the_frontier_lists() {
        let boards = 3_200_000u64;
        let lower = 1_000_000u64;
        // 8 bytes per 6 boards (the narrow cells), and the writer's working
        // memory for lower bounds (a byte per board below 64 Mi boards).
        let cells = (boards as f64 * 8.0 / 6.0) as u64;
        let fixed = cells + lower + PROCESS_BYTES + boards;
        let full = retro::default_list_entries(boards);
        let list_bytes = 2 * retro::LIST_ENTRY_BYTES;
        let plan = |budget: u64, certificate: bool| {
            plan_memory(
                24,
                boards,
                lower,
                Reach::default(),
                &options(budget, certificate),
            )
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

        // Less, in the packed cells: the level goes to disk, in as few
        // partitions as fit, more as the budget shrinks.
        let on_disk = |budget: u64| {
            let packed = Options {
                cells: Cells::Packed,
                ..options(budget, false)
            };
            let plan = plan_memory(24, boards, lower, Reach::default(), &packed).unwrap();
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
        let err = plan(lower + PROCESS_BYTES, false).unwrap_err();
        assert!(matches!(err, SolveError::Memory { seeds: 24, .. }), "{err}");
        assert!(err.to_string().contains("--memory"), "{err}");
        // The bytes a board it names are what the level needs beside the
        // lower levels and the process (on disk: one partition, the maps,
        // the writer), not nothing.
        let SolveError::Memory { state_bytes, .. } = err else {
            unreachable!()
        };
        assert!(state_bytes > 0.01, "{state_bytes}");
        // Forced to disk, the level goes there even when it fits.
        let forced = Options {
            on_disk: true,
            ..options(u64::MAX, false)
        };
        assert!(
            plan_memory(24, boards, lower, Reach::default(), &forced)
                .unwrap()
                .on_disk
        );
    }

    #[test]
    fn the_split_cells_take_a_level_the_packed_cells_cannot_hold() {
        let boards = 3_200_000u64;
        let lower = 1_000_000u64;
        let base = lower + PROCESS_BYTES + boards;
        let packed = (boards as f64 * 8.0 / 6.0) as u64;
        let words = (boards as f64 * 8.0 / 12.0) as u64;
        let with = |budget: u64, cells: Cells| {
            let options = Options {
                cells,
                ..options(budget, false)
            };
            plan_memory(24, boards, lower, Reach::default(), &options)
        };
        // Room for the packed cells: they are used.
        let plan = with(base + packed, Cells::Auto).unwrap();
        assert!(!plan.split && !plan.on_disk, "{plan:?}");
        // Less: the split cells, their bytes in a file, one partition,
        // within the budget.
        for budget in [base + packed - 1, base + words] {
            let plan = with(budget, Cells::Auto).unwrap();
            assert!(plan.split && plan.cold_in_file && !plan.on_disk, "{plan:?}");
            assert_eq!(plan.partitions, 1);
            assert!(plan.memory_bytes <= budget, "{plan:?} in {budget}");
            // Their words in a file during the initial pass, unless the
            // disk is short: then in memory, the pass's lookups fewer.
            assert!(plan.words_in_file_at_init, "{plan:?}");
            let options = options(budget, false);
            let kept = plan.with_words_in_memory_at_init(boards, &options);
            assert!(!kept.words_in_file_at_init && kept.cold_in_file, "{kept:?}");
            assert!(kept.split_init_bytes >= plan.split_init_bytes + split_words_bytes(boards));
            assert!(kept.lookups_within(budget, 0) <= plan.lookups_within(budget, 0));
            assert_eq!(kept.memory_bytes, plan.memory_bytes);
        }
        // Less than their words: the packed cells on disk.
        let plan = with(base + words - 1, Cells::Auto).unwrap();
        assert!(plan.on_disk && !plan.split, "{plan:?}");
        // Asked for: the packed cells go to disk rather than split.
        let plan = with(base + packed - 1, Cells::Packed).unwrap();
        assert!(plan.on_disk && !plan.split, "{plan:?}");
        // Asked for, with room: the split cells, their bytes in memory too.
        let plan = with(u64::MAX, Cells::Split).unwrap();
        assert!(plan.split && !plan.cold_in_file, "{plan:?}");
        // Asked for without room for their words: refused.
        let err = with(base + words / 2, Cells::Split).unwrap_err();
        assert!(matches!(err, SolveError::Memory { seeds: 24, .. }), "{err}");
    }

    #[test]
    fn a_level_whose_reach_the_page_cache_cannot_hold_beside_it_is_split() {
        let boards = 3_200_000u64;
        let base = PROCESS_BYTES + boards;
        let packed = (boards as f64 * 8.0 / 6.0) as u64;
        let budget = base + 2 * packed;
        let with = |in_files: u64, available: Option<u64>, cells: Cells, budget: u64| {
            let reach = Reach {
                in_files,
                available,
            };
            let options = Options {
                cells,
                ..options(budget, false)
            };
            plan_memory(24, boards, 0, reach, &options).unwrap()
        };
        // The level in memory takes `base + packed`.
        let available = Some(4 * (base + packed));
        let far = 4 * (base + packed);
        // The cache holds the reach beside the packed cells: they stay.
        let plan = with(packed, available, Cells::Auto, budget);
        assert!(!plan.split && !plan.on_disk, "{plan:?}");
        // It cannot: the split cells, their bytes in a file.
        let plan = with(far, available, Cells::Auto, budget);
        assert!(plan.split && plan.cold_in_file && !plan.on_disk, "{plan:?}");
        // Not when the lower levels are in memory, the memory is unknown,
        // or the packed cells are asked for.
        for (in_files, available, cells) in [
            (0, available, Cells::Auto),
            (far, None, Cells::Auto),
            (far, available, Cells::Packed),
        ] {
            let plan = with(in_files, available, cells, budget);
            assert!(!plan.split && !plan.on_disk, "{plan:?}");
        }
    }
}
