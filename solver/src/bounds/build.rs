//! Building the levels of a plan under `--repetition any`: each missing
//! level solved in memory from the bounds below it, its two files and its
//! statistics written, a level present kept (and read when a level above
//! needs it).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::file::{self, LevelId, LevelReader, WriteOptions};
use awari_dbformat::level::Values;
use awari_dbformat::{Bound, Index};
use serde::{Deserialize, Serialize};

use super::level::{solve_bound_level, BoundLevels, STATE_BYTES_PER_BOARD};
use crate::build::{Options, Plan, PlannedLevel};
use crate::error::SolveError;
use crate::memory::{format_size, peak_resident};

/// What happened to one level of bounds: the line `awari-solve --repetition
/// any` prints and the statistics file beside the two bound files.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BoundReport {
    /// Always `any`: how endless play is valued.
    pub repetition: String,
    /// The rule set.
    pub rules: String,
    /// Pits per side.
    pub pits: u8,
    /// The seed count of the level.
    pub seeds: u32,
    /// Stored boards.
    pub boards: u64,
    /// "built" or "present".
    pub status: String,
    /// Seconds spent solving and writing (0 for a level already present).
    pub seconds: f64,
    /// Boards per second (solve and write).
    pub boards_per_second: f64,
    /// Of those, the seconds of the initial pass.
    pub init_seconds: f64,
    /// Seconds of the stages (seeding and generations).
    pub stage_seconds: f64,
    /// Seconds spent counting and writing the two files.
    pub write_seconds: f64,
    /// Stages run: `2n` for level n > 0.
    pub stages: u32,
    /// Generations of un-moves over all stages.
    pub generations: u64,
    /// The most boards in the frontiers of one generation (16 bytes each).
    #[serde(default)]
    pub largest_frontier: u64,
    /// Boards whose two bounds meet: the same value under every repetition rule.
    pub exact_boards: u64,
    /// `exact_boards / boards`.
    pub exact_share: f64,
    /// Boards with each lower bound.
    pub lower_counts: BTreeMap<i32, u64>,
    /// Boards with each upper bound.
    pub upper_counts: BTreeMap<i32, u64>,
    /// Bytes of the file of lower bounds.
    pub lower_file_bytes: u64,
    /// Bytes of the file of upper bounds.
    pub upper_file_bytes: u64,
    /// Bytes of solver state per board of this level.
    pub state_bytes_per_board: f64,
    /// The bytes of the lower levels' bounds held while it was built.
    pub lower_levels_bytes: u64,
    /// The process's peak resident memory so far, in bytes (0 where unknown).
    pub peak_memory_bytes: u64,
}

impl BoundReport {
    /// The heading of the table `awari-solve --repetition any` prints.
    pub fn table_heading() -> String {
        format!(
            "{:>5} {:>13} {:>8} {:>9} {:>8} {:>7} {:>11} {:>10}",
            "seeds", "boards", "status", "seconds", "M/s", "exact", "file bytes", "peak"
        )
    }

    /// This level's row of that table.
    pub fn table_row(&self) -> String {
        format!(
            "{:>5} {:>13} {:>8} {:>9.2} {:>8.2} {:>6.1}% {:>11} {:>10}",
            self.seeds,
            self.boards,
            self.status,
            self.seconds,
            self.boards_per_second / 1e6,
            100.0 * self.exact_share,
            self.lower_file_bytes + self.upper_file_bytes,
            format_size(self.peak_memory_bytes)
        )
    }
}

/// Boards per second of a level of bounds, as measured for awari and abapa
/// levels 20..=24 on a 2-core machine (2.4-3.0 M: docs/performance.md).
const BOUNDS_BOARDS_PER_SECOND: f64 = 2.4e6;

/// Bytes of the two bound files per board, at levels 16..=24 (0.6-0.7).
const FILE_BYTES_PER_BOARD: f64 = 0.7;

/// The memory level `seeds` needs while it is built, holding `lower_bytes`
/// of lower levels: its state, the lower levels and 64 MiB for the rest.
fn needed_bytes(boards: u64, lower_bytes: u64) -> u64 {
    (boards as f64 * STATE_BYTES_PER_BOARD) as u64 + lower_bytes + (64 << 20)
}

/// The plan of every level of `plan` under `--repetition any` within
/// `options.memory`, before any work (`awari-solve --repetition any
/// --plan`): each level in memory, its memory, the disk its two files
/// take, and the time estimated from the rates measured on 2 cores.
pub fn plan_bounds(plan: &Plan, options: &Options) -> Vec<PlannedLevel> {
    let rules = plan.rules;
    let index = Index::for_pits(rules.pits());
    let complete = |seeds| level_complete(&options.dir, LevelId::new(rules, seeds));
    let last_missing = plan.levels.iter().copied().filter(|&s| !complete(s)).max();
    let threads = rayon::current_num_threads().max(1) as f64;
    plan.levels
        .iter()
        .map(|&seeds| {
            let boards = index.level_size(seeds);
            // What the build holds then: the levels below kept for a level above.
            let lower: u64 = plan
                .levels
                .iter()
                .filter(|&&s| s < seeds && last_missing.is_some_and(|top| s + 2 <= top))
                .map(|&s| 2 * index.level_size(s))
                .sum();
            let memory = needed_bytes(boards, lower);
            let refused = (memory > options.memory).then(|| {
                format!(
                    "needs about {} of memory, more than --memory {}",
                    format_size(memory),
                    format_size(options.memory)
                )
            });
            PlannedLevel {
                seeds,
                boards,
                present: complete(seeds),
                on_disk: false,
                split: false,
                cold_in_file: false,
                lower_levels_in_files: false,
                spare_disk: false,
                count_before_writing: false,
                ranks: 1,
                partitions: 1,
                resident_partitions: None,
                memory_bytes: memory,
                disk_bytes: (boards as f64 * FILE_BYTES_PER_BOARD) as u64,
                estimated_seconds: boards as f64 / (BOUNDS_BOARDS_PER_SECOND * threads / 2.0),
                refused,
            }
        })
        .collect()
}

/// True when level `id`'s two bound files and its statistics are in `dir`.
fn level_complete(dir: &Path, id: LevelId) -> bool {
    Bound::BOTH
        .iter()
        .all(|&b| file::bound_path(dir, id, b).exists())
        && bound_stats_path(dir, id).exists()
}

/// The path of the statistics file of level `id` under `--repetition any`:
/// `<rules>-p<P>-n<N>.any.stats.json`.
pub fn bound_stats_path(dir: &Path, id: LevelId) -> PathBuf {
    let name = id.file_name();
    let stem = name.strip_suffix(".awl").unwrap_or(&name);
    dir.join(format!("{stem}.any.stats.json"))
}

/// Builds every missing level of `plan` under `--repetition any`, calling
/// `report` after each level of the plan (present or built), in order. A
/// level is present when both its bound files and its statistics file are.
///
/// Each level is solved in memory in one process
/// ([`STATE_BYTES_PER_BOARD`], and 2 bytes a board of each lower level its
/// captures reach); the files are written under temporary names and
/// renamed, the statistics last.
///
/// # Errors
/// [`SolveError::Invalid`] for options of the even-split solver that this
/// one does not have (`--on-disk`, `--partitions`, `--certificate`,
/// `--spare-disk`); [`SolveError::Memory`] when a level does not fit in
/// `options.memory`, before any work on it; a present file that is corrupt
/// or of another kind; a failure to write.
pub fn build_bounds(
    plan: &Plan,
    options: &Options,
    mut report: impl FnMut(&BoundReport),
) -> Result<(), SolveError> {
    refuse_even_split_options(options)?;
    fs::create_dir_all(&options.dir).map_err(awari_dbformat::Error::io(&options.dir))?;
    let rules = plan.rules;
    let complete = |seeds: u32| level_complete(&options.dir, LevelId::new(rules, seeds));
    let last_missing = plan.levels.iter().copied().filter(|&s| !complete(s)).max();
    let mut below = BoundLevels::new(rules.pits());
    for &seeds in &plan.levels {
        let id = LevelId::new(rules, seeds);
        // Captures take two seeds or more: level n reads levels 0..=n-2.
        let needed_above = last_missing.is_some_and(|top| seeds + 2 <= top);
        let level_report = if complete(seeds) {
            let stats = bound_stats_path(&options.dir, id);
            let text = fs::read_to_string(&stats).map_err(awari_dbformat::Error::io(&stats))?;
            let mut r: BoundReport = serde_json::from_str(&text).map_err(|e| {
                SolveError::Invalid(format!(
                    "{}: not a statistics file of bounds: {e}",
                    bound_stats_path(&options.dir, id).display()
                ))
            })?;
            if needed_above {
                for bound in Bound::BOTH {
                    let path = file::bound_path(&options.dir, id, bound);
                    let values = LevelReader::open_bound(&path, id, bound)?.decode_all()?;
                    held(&mut below, bound).insert(seeds, Arc::new(values));
                }
            }
            (r.status, r.seconds) = ("present".to_string(), 0.0);
            r
        } else {
            build_one(options, id, &mut below, needed_above)?
        };
        report(&level_report);
    }
    Ok(())
}

fn held(below: &mut BoundLevels, bound: Bound) -> &mut awari_dbformat::Levels {
    match bound {
        Bound::Lower => &mut below.lower,
        Bound::Upper => &mut below.upper,
    }
}

fn refuse_even_split_options(options: &Options) -> Result<(), SolveError> {
    let mut refused = Vec::new();
    if options.on_disk {
        refused.push("--on-disk");
    }
    if options.partitions.is_some_and(|k| k > 1) {
        refused.push("--partitions");
    }
    if options.certificate {
        refused.push("--certificate");
    }
    if options.spare_disk {
        refused.push("--spare-disk");
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(SolveError::Invalid(format!(
        "{} {} for even-split levels only: --repetition any solves each level in memory, \
         in one process, and is checked by `awari-probe verify --repetition any`",
        refused.join(", "),
        if refused.len() == 1 { "is" } else { "are" }
    )))
}

/// Solves, writes and reports level `id`; keeps its bounds in `below` when
/// a level above reads them.
fn build_one(
    options: &Options,
    id: LevelId,
    below: &mut BoundLevels,
    needed_above: bool,
) -> Result<BoundReport, SolveError> {
    let seeds = id.seeds;
    let boards = Index::for_pits(id.rules.pits()).level_size(seeds);
    let needed = needed_bytes(boards, below.bytes());
    if needed > options.memory {
        return Err(SolveError::memory(
            seeds,
            boards,
            below.bytes(),
            needed,
            options.memory,
        ));
    }
    let started = Instant::now();
    let bar = awari_dbformat::cli::level_bar(options.progress, "level", seeds, boards);
    let solved = solve_bound_level(id.rules, seeds, below, &bar);
    let solve_seconds = started.elapsed().as_secs_f64();
    bar.set_message("writing");
    let (lower_counts, upper_counts, exact_boards) = count(&solved.lower, &solved.upper);
    let mut file_bytes = [0u64; 2];
    for (i, (bound, values)) in [(Bound::Lower, &solved.lower), (Bound::Upper, &solved.upper)]
        .into_iter()
        .enumerate()
    {
        let path = write(&options.dir, id, bound, values, options.write)?;
        file_bytes[i] = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let r = BoundReport {
        repetition: "any".to_string(),
        rules: id.rules.set().name().to_string(),
        pits: id.rules.pits(),
        seeds,
        boards,
        status: "built".to_string(),
        seconds,
        boards_per_second: boards as f64 / seconds.max(1e-9),
        init_seconds: solved.init_seconds,
        stage_seconds: solve_seconds - solved.init_seconds,
        write_seconds: seconds - solve_seconds,
        stages: solved.stages,
        generations: solved.generations,
        largest_frontier: solved.largest_frontier,
        exact_boards,
        exact_share: exact_boards as f64 / boards.max(1) as f64,
        lower_counts,
        upper_counts,
        lower_file_bytes: file_bytes[0],
        upper_file_bytes: file_bytes[1],
        state_bytes_per_board: STATE_BYTES_PER_BOARD,
        lower_levels_bytes: below.bytes(),
        peak_memory_bytes: peak_resident().unwrap_or(0),
    };
    // The statistics last: with them the level counts as complete.
    let path = bound_stats_path(&options.dir, id);
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&r).expect("a report serialises");
    fs::write(&tmp, text + "\n").map_err(awari_dbformat::Error::io(&tmp))?;
    fs::rename(&tmp, &path).map_err(awari_dbformat::Error::io(&path))?;
    if needed_above {
        below.lower.insert(seeds, Arc::new(solved.lower));
        below.upper.insert(seeds, Arc::new(solved.upper));
    }
    Ok(r)
}

fn write(
    dir: &Path,
    id: LevelId,
    bound: Bound,
    values: &Values,
    options: WriteOptions,
) -> Result<PathBuf, SolveError> {
    Ok(file::write_level_as(
        dir,
        id,
        values,
        bound.stored(),
        options,
    )?)
}

/// Boards with each lower bound, each upper bound, and with both equal.
fn count(lower: &[i8], upper: &[i8]) -> (BTreeMap<i32, u64>, BTreeMap<i32, u64>, u64) {
    let (mut lo, mut up) = ([0u64; 256], [0u64; 256]);
    let mut exact = 0;
    for (&l, &u) in lower.iter().zip(upper) {
        lo[l as u8 as usize] += 1;
        up[u as u8 as usize] += 1;
        exact += u64::from(l == u);
    }
    let map = |counts: [u64; 256]| {
        (0..256)
            .filter(|&b| counts[b] > 0)
            .map(|b| (i32::from(b as u8 as i8), counts[b]))
            .collect()
    };
    (map(lo), map(up), exact)
}
