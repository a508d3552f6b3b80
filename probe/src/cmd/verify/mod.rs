//! `awari-probe verify`: check a database without trusting the solver, and settle
//! a game from its start position; with `--repetition any`, both bounds of
//! each level (module `bounds`).

mod bounds;
mod bounds_report;
mod plan;
mod read;
mod report;
mod shares;

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use awari_dbformat::cluster::Ranks;
use awari_dbformat::memory::resident;
use awari_dbformat::memory::{self, format_size};
use awari_dbformat::Repetition;
use awari_probe::verify::LevelCheck;
use awari_probe::{ProbeError, Tablebase};

use super::CmdResult;
use plan::{memory_needed, plan, Placement};
use report::{all_ok, start_report, Summary};

/// Verify levels: checksums, every value against its children (forward moves only),
/// and every non-zero value proven reachable; or settle a game from its start.
///
/// Exits 0 when everything checks out, 1 when a value or checksum is wrong (the
/// first mismatching boards are printed), 2 on other errors (a missing level).
///
/// Built with the `mpi` feature and run by `mpirun -n R`, the ranks check
/// every level together, each holding only its share of it and of the
/// levels below (in memory, within its own --memory), and rank 0 prints.
///
/// Examples:
///   awari-probe verify --db db                 # every level present
///   awari-probe verify --db db --levels 10..14
///   awari-probe verify --db db --start 2       # the 6-pit game with 2 seeds per pit
///   awari-probe verify --db db --repetition any  # both bound files of every level
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct Args {
    #[command(flatten)]
    database: super::Database,
    /// The levels to check, e.g. 10..14 or 12 [default: every level present].
    /// Lower levels are read but taken as correct.
    #[arg(long, value_parser = parse_levels, conflicts_with = "start")]
    levels: Option<RangeInclusive<u32>>,
    /// Check every level a game with this many seeds per pit needs, then print the
    /// value of its start position and of every first move.
    #[arg(long)]
    start: Option<u32>,
    /// The most mismatching boards to print per level.
    #[arg(long, default_value_t = 10)]
    limit: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// The memory the verification may use, e.g. 8G [default: 85% of the
    /// memory available]. The levels it reads are held in memory when they
    /// fit; else they are decoded into files of the work directory and
    /// mapped, and the resident set is held within the budget.
    #[arg(long, value_parser = awari_dbformat::cli::parse_size)]
    memory: Option<u64>,
    /// Keep the levels read in files of the work directory, whatever the
    /// budget.
    #[arg(long)]
    on_disk: bool,
    /// Where the levels read are kept when they are in files [default:
    /// `work/verify` in the database directory]; removed at the end.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// How the levels value endless play: `even-split` (one file of scores
    /// per level) or `any` (the lower and upper bound files of
    /// `awari-solve --repetition any`: both checked, the recurrence on each
    /// and every bound short of -n / +n forced by a finite strategy; the
    /// levels are held in memory).
    #[arg(long, default_value_t = Repetition::EvenSplit)]
    repetition: Repetition,
}

fn parse_levels(text: &str) -> Result<RangeInclusive<u32>, String> {
    let bad = || format!("{text:?}: write levels as A..B (inclusive) or a single number");
    let (a, b) = match text.split_once("..") {
        Some((a, b)) => (a, b.trim_start_matches('=')),
        None => (text, text),
    };
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok(a..=b)
}

/// One level's result: the check, whether the checksums held, and the
/// seconds it took.
type Checked = (LevelCheck, bool, f64);

/// Runs the verification; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    if args.repetition == Repetition::Any {
        return bounds::run(args);
    }
    let ranks = awari_dbformat::cluster::start()?;
    let tb = args.database.open().map_err(|e| hint_bounds(e, &args))?;
    let rules = tb.rules();
    let present = tb.levels();
    let wanted = wanted_levels(&args, &tb, &present)?;
    let top = *wanted.last().ok_or("no level to verify")?;
    // The budget, planned before any work.
    let budget = args.memory.unwrap_or_else(memory::default_budget);
    if ranks.size() > 1 {
        return run_by_shares(&args, ranks.as_ref(), &tb, &present, &wanted, budget);
    }
    let work_dir = work_dir(&args);
    let needed_in_memory = memory_needed(&tb, &wanted, top);
    let placement = plan(
        &tb,
        &wanted,
        top,
        needed_in_memory,
        budget,
        args.on_disk,
        work_dir,
    )?;
    // What this process prints as it goes.
    let talk = !args.json;
    let in_memory = matches!(placement, Placement::Memory);
    let _watch = (!in_memory).then(|| resident::Watch::new(resident::ceiling_for(budget)));
    if talk && !in_memory {
        println!(
            "levels in files of the work directory (a budget of {}; in memory it would need about {})",
            format_size(budget),
            format_size(needed_in_memory)
        );
    }
    let started = Instant::now();
    let job = read::Job {
        tb: &tb,
        present: &present,
        wanted: &wanted,
        top,
        placement: &placement,
        limit: args.limit,
        bars: !args.json,
        talk,
    };
    let (checks, levels) = job.run()?;
    let summary = Summary {
        rules,
        checks: &checks,
        levels_in_files: !in_memory,
        started,
        start: args.start.map(|s| (s, start_report(rules, s, &levels))),
        ranks: None,
    };
    if args.json {
        summary.print_json();
    } else {
        summary.print_text();
    }
    Ok(exit_code(summary.ok()))
}

/// The verification under `mpirun` (see module `shares`): every rank checks
/// its share of every level, within `budget` each; rank 0 prints.
fn run_by_shares(
    args: &Args,
    ranks: &dyn Ranks,
    tb: &Tablebase,
    present: &[u32],
    wanted: &[u32],
    budget: u64,
) -> CmdResult {
    let top = *wanted.last().expect("a level to verify");
    if args.on_disk {
        return Err("--on-disk: under mpirun each rank holds its shares in memory".into());
    }
    let needed = shares::memory_needed_by_shares(tb, wanted, top, ranks.size());
    if needed > budget {
        return Err(shares::too_large(needed, budget, ranks.size()).into());
    }
    let started = Instant::now();
    let job = shares::Job {
        tb,
        present,
        wanted,
        top,
        ranks,
        limit: args.limit,
        talk: !args.json,
    };
    let (checks, levels, held) = job.run()?;
    let start = args
        .start
        .map(|s| (s, shares::start_report(ranks, tb, s, &levels)));
    if !ranks.is_root() {
        return Ok(exit_code(all_ok(&checks)));
    }
    let summary = Summary {
        rules: tb.rules(),
        checks: &checks,
        levels_in_files: false,
        started,
        start,
        ranks: Some(held),
    };
    if args.json {
        summary.print_json();
    } else {
        summary.print_text();
    }
    Ok(exit_code(summary.ok()))
}

/// The levels to check: those of `--levels`, those a game of `--start` seeds
/// per pit needs, or every level `present`.
///
/// # Errors
/// A level to check that is not present.
fn wanted_levels(args: &Args, tb: &Tablebase, present: &[u32]) -> Result<Vec<u32>, ProbeError> {
    let wanted: Vec<u32> = match (&args.levels, args.start) {
        (Some(r), _) => r.clone().collect(),
        (None, Some(s)) => {
            let total = tb.rules().board_pits() as u32 * s;
            (0..=total).filter(|&n| n + 1 != total).collect()
        }
        (None, None) => present.to_vec(),
    };
    match wanted.iter().find(|n| !present.contains(n)) {
        Some(&missing) => Err(missing_level(tb, missing)),
        None => Ok(wanted),
    }
}

/// The work directory for the levels in files: `--work-dir` or `work/verify`
/// in the database directory.
fn work_dir(args: &Args) -> PathBuf {
    args.work_dir
        .clone()
        .unwrap_or_else(|| args.database.db.join("work").join("verify"))
}

/// The error of level `seeds` missing from `tb`'s directory.
fn missing_level(tb: &Tablebase, seeds: u32) -> ProbeError {
    ProbeError::MissingLevel {
        seeds,
        rules: tb.rules(),
        dir: tb.dir().to_path_buf(),
    }
}

/// `err` (opening the database of scores), with a hint when the directory
/// holds bound files of `--repetition any` for the size asked.
fn hint_bounds(err: ProbeError, args: &Args) -> Box<dyn std::error::Error> {
    let pits = args.database.pits;
    let bounds = bounds::bound_files(&args.database.db)
        .is_ok_and(|ids| ids.iter().any(|id| id.rules.pits() == pits));
    match err {
        ProbeError::Database { .. } if bounds => format!(
            "{err} (it holds bound files of --repetition any: verify them with --repetition any)"
        )
        .into(),
        err => err.into(),
    }
}

/// Exit status 0 when everything checked out, else 1.
fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
