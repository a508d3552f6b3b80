//! What happened to each level ([`LevelReport`]): the line `awari-solve`
//! prints and the statistics file written beside the level file.

use std::fs;
use std::path::{Path, PathBuf};

use awari_dbformat::cluster::RankFigures;
use awari_dbformat::file::LevelId;
use awari_dbformat::level::Values;
use awari_dbformat::Levels;
use serde::{Deserialize, Serialize};

use crate::error::SolveError;
use crate::retro::{self, Stage};
use crate::stats;

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
    /// Boards with each value over all boards of the seed count (Lincke's
    /// form), when they were counted (`--count-all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts_all: Option<stats::Counts>,
    /// The partitions the level was solved in (1 for a level already present).
    #[serde(default = "one")]
    pub partitions: u64,
    /// Whether the partitions' cells were kept in files of the work directory.
    #[serde(default)]
    pub on_disk: bool,
    /// Whether the level was solved in the split cells (`--cells`).
    #[serde(default)]
    pub split: bool,
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
    /// Whether the initial pass valued the captures of the level's
    /// unstored boards for the statistics, in its sorted windows
    /// (`retro::SolveOptions::unstored_captures`), rather than passes over
    /// the lower levels after the level was written.
    #[serde(default)]
    pub unstored_captures_in_initial_pass: bool,
    /// Whether the unstored boards' quiet moves were valued for the
    /// statistics once the level file was written, its free bits and the
    /// writer's memory given back, rather than beside the writer: their
    /// level's values mapped from a file, in fewer passes so (each pass
    /// generates every unstored board's moves).
    #[serde(default)]
    pub quiet_moves_after_writing: bool,
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

impl LevelReport {
    /// The heading of the table `awari-solve` prints, one row a level
    /// ([`LevelReport::table_row`]).
    pub fn table_heading() -> String {
        format!(
            "{:>5} {:>15} {:>9} {:>12} {:>10} {:>9}  status",
            "seeds", "boards", "seconds", "boards/s", "peak mem", "bits/brd"
        )
    }

    /// The level's row of the table `awari-solve` prints.
    pub fn table_row(&self) -> String {
        format!(
            "{:>5} {:>15} {:>9.2} {:>12.0} {:>10} {:>9.2}  {}",
            self.seeds,
            self.boards,
            self.seconds,
            self.boards_per_second,
            awari_dbformat::memory::format_size(self.peak_memory_bytes),
            self.file_bytes as f64 * 8.0 / self.boards.max(1) as f64,
            self.status
        )
    }

    /// The level's line of `awari-solve --json`: the report, with the
    /// counts keyed by value as strings.
    pub fn json_line(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("serialisable");
        v["counts_stored"] = stats::counts_json(&self.counts_stored);
        if let Some(counts) = &self.counts_all {
            v["counts_all"] = stats::counts_json(counts);
        }
        v
    }
}

fn one() -> u64 {
    1
}

/// The statistics file beside a level file: `awari-p6-n16.awl` -> `awari-p6-n16.stats.json`.
pub(super) fn stats_path(level_path: &Path) -> PathBuf {
    level_path.with_extension("stats.json")
}

/// The bytes read from and written to storage since `before`
/// ([`crate::memory::disk_io`]; 0 where unknown).
pub(super) fn io_delta(before: Option<(u64, u64)>) -> (u64, u64) {
    match (before, crate::memory::disk_io()) {
        (Some((r0, w0)), Some((r1, w1))) => (r1.saturating_sub(r0), w1.saturating_sub(w0)),
        _ => (0, 0),
    }
}

/// A report of level `id` (`boards` boards) with
/// `stages`, its figures zero until filled.
pub(super) fn make_report_shell(id: LevelId, boards: u64, stages: Vec<Stage>) -> LevelReport {
    let LevelId { rules, seeds } = id;
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
        split: false,
        resumed_from_stage: None,
        resumed_initial_boards: 0,
        sorted_lookups: false,
        unstored_captures_in_initial_pass: false,
        quiet_moves_after_writing: false,
        disk_read_bytes: 0,
        disk_written_bytes: 0,
        ranks: Vec::new(),
        stages,
    }
}

/// The report of a level present without its statistics: its values
/// counted, over all boards too with `count_all` (in shares of at most
/// `room` bytes, as [`stats::count_all`] reads them), its build's figures
/// unknown.
pub(super) fn make_report(
    id: LevelId,
    values: &Values,
    lower: &Levels,
    file_bytes: u64,
    count_all: bool,
    room: Option<u64>,
) -> LevelReport {
    let counts_stored = stats::count_stored(values);
    let counts_all = count_all
        .then(|| stats::count_all(id.rules, id.seeds, values, lower, &counts_stored, room));
    LevelReport {
        file_bytes,
        counts_stored,
        counts_all,
        ..make_report_shell(id, values.len() as u64, Vec::new())
    }
}

/// The report in statistics file `path`, if one can be read.
pub(super) fn read_report(path: &Path) -> Option<LevelReport> {
    let text = fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes a report as JSON to a temporary name, then renames it into place.
pub(super) fn write_report(path: &Path, report: &LevelReport) -> Result<(), SolveError> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(report).expect("a report serialises");
    fs::write(&tmp, text + "\n").map_err(awari_dbformat::Error::io(&tmp))?;
    fs::rename(&tmp, path).map_err(awari_dbformat::Error::io(path))?;
    Ok(())
}
