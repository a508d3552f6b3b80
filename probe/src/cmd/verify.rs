//! `awari-probe verify`: check a database without trusting the solver, and settle
//! a game from its start position.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::cluster::Ranks;
use awari_dbformat::file::{self, LevelId, LevelReader, Stored};
use awari_dbformat::level::{Generations, Values};
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::memory::mapped;
use awari_dbformat::memory::resident;
use awari_dbformat::memory::{self, format_size};
use awari_dbformat::{Board, Rules};
use awari_probe::verify::{self, LevelCheck, Levels};
use awari_probe::ProbeError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::CmdResult;

/// Verify levels: checksums, every value against its children (forward moves only),
/// and every non-zero value proven reachable; or settle a game from its start.
///
/// Exits 0 when everything checks out, 1 when a value or checksum is wrong (the
/// first mismatching boards are printed), 2 on other errors (a missing level).
///
/// Built with the `mpi` feature and run by `mpirun -n R`, the ranks share the
/// levels to check (each reads every level it needs) and rank 0 prints.
///
/// Examples:
///   awari-probe verify --db db                 # every level present
///   awari-probe verify --db db --levels 10..14
///   awari-probe verify --db db --start 2       # the 6-pit game with 2 seeds per pit
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
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
    #[arg(long, value_parser = super::parse_bytes)]
    memory: Option<u64>,
    /// Keep the levels read in files of the work directory, whatever the
    /// budget.
    #[arg(long)]
    on_disk: bool,
    /// Where the levels read are kept when they are in files [default:
    /// `work/verify` in the database directory]; removed at the end.
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

/// Memory for the rest of the process besides the levels.
const BASE_BYTES: u64 = 64 << 20;

/// Room for the pages of the files mapped between two readings of the
/// resident set, when the levels are in files: the passes read it after
/// every 128 page faults of a thread (`resident::hold`), each of which maps
/// at most 64 KiB, so two threads map at most 16 MiB unseen; the watch's
/// thread, for the writes in order, less.
const FILE_PAGES_BYTES: u64 = 32 << 20;

/// The resident ceiling under `budget` when the levels are in files.
fn ceiling(budget: u64) -> u64 {
    budget.saturating_sub(budget / 16 + FILE_PAGES_BYTES)
}

/// Where the levels a verification reads are kept, planned before any work.
enum Placement {
    /// Decoded in memory.
    Memory,
    /// Decoded into files of scores (one byte per board) in a work
    /// directory, mapped shared; a [`resident::Watch`] gives their pages
    /// back whenever the resident set goes over the ceiling, and the page
    /// cache keeps what the machine can spare. The proof search's progress
    /// is a file there too, and certificates are not read (the search does
    /// without them). The directory is removed at the end.
    Files {
        /// The work directory.
        dir: PathBuf,
        /// The directories made for it, the deepest first: removed at the
        /// end when empty.
        made: Vec<PathBuf>,
    },
}

impl Drop for Placement {
    fn drop(&mut self) {
        if let Placement::Files { dir, made } = self {
            let _ = std::fs::remove_dir_all(dir);
            for made in made {
                let _ = std::fs::remove_dir(made);
            }
        }
    }
}

impl Placement {
    /// Decodes level `seeds` from `reader` into memory or into its file.
    fn decode(&self, reader: &LevelReader, seeds: u32) -> Result<Values, awari_dbformat::Error> {
        match self {
            Placement::Memory => reader.decode_all(),
            Placement::Files { dir, .. } => {
                let path = dir.join(format!("level-{seeds}.scores"));
                let array = mapped::create(&path, reader.boards() as usize)?;
                // Read at random, by capture and by parent: see
                // `HugeArray::advise_random` for why before the first access.
                array.advise_random();
                let mut values = Values::from_array(array);
                reader.decode_into(&mut values)?;
                Ok(values)
            }
        }
    }

    /// The proof search's progress array for level `seeds` of `boards`
    /// boards: `None` in memory (the search makes its own).
    fn progress(
        &self,
        seeds: u32,
        boards: u64,
    ) -> Result<Option<HugeArray>, awari_dbformat::Error> {
        match self {
            Placement::Memory => Ok(None),
            Placement::Files { dir, .. } => {
                let path = dir.join(format!("progress-{seeds}"));
                let array = mapped::create(&path, boards as usize)?;
                array.advise_random();
                Ok(Some(array))
            }
        }
    }
}

/// Plans where the levels go within `budget`: in memory when
/// `in_memory` bytes ([`memory_needed`]) fit (and `on_disk` is not asked), else in
/// files of `work_dir`, when its file system has room for them and the
/// budget for the largest level file (mapped while it is decoded) beside
/// the rest of the process.
///
/// # Errors
/// What is needed and what there is, when neither fits.
fn plan(
    tb: &awari_probe::Tablebase,
    wanted: &[u32],
    top: u32,
    in_memory: u64,
    budget: u64,
    on_disk: bool,
    work_dir: PathBuf,
) -> Result<Placement, String> {
    if !on_disk && in_memory <= budget {
        return Ok(Placement::Memory);
    }
    let index = awari_dbformat::Index::for_pits(tb.rules().pits());
    let read = levels_read(wanted, top);
    let largest_file = read
        .iter()
        .map(|&n| level_file_bytes(tb, n))
        .max()
        .unwrap_or(0);
    // What stays mapped besides the files the watch gives back.
    let in_files = BASE_BYTES + largest_file;
    if in_files > ceiling(budget) {
        return Err(format!(
            "verifying up to level {top} needs about {} of memory in memory, or {} with the \
             levels in files (the largest level file, mapped while it is decoded, and room \
             for the rest); the budget is {} (--memory)",
            format_size(in_memory),
            format_size((in_files + FILE_PAGES_BYTES) * 16 / 15),
            format_size(budget)
        ));
    }
    let disk: u64 = read.iter().map(|&n| index.level_size(n)).sum::<u64>()
        + wanted
            .iter()
            .map(|&n| index.level_size(n))
            .max()
            .unwrap_or(0);
    if let Some(free) = memory::free_disk(&work_dir) {
        if free < disk {
            return Err(format!(
                "verifying up to level {top} in a budget of {} keeps the levels it reads in \
                 files (one byte per board) and needs about {} free in {}, but {} are free; \
                 free some space, choose another --work-dir, or give more --memory (in \
                 memory it needs about {})",
                format_size(budget),
                format_size(disk),
                work_dir.display(),
                format_size(free),
                format_size(in_memory)
            ));
        }
    }
    let made = work_dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(PathBuf::from)
        .collect();
    std::fs::create_dir_all(&work_dir).map_err(|e| {
        format!(
            "{}: {e} (the work directory for the levels in files; choose another with --work-dir)",
            work_dir.display()
        )
    })?;
    Ok(Placement::Files {
        dir: work_dir,
        made,
    })
}

/// The levels read to verify `wanted` up to `top`: the checked ones and
/// those their captures reach.
fn levels_read(wanted: &[u32], top: u32) -> Vec<u32> {
    (0..=top)
        .filter(|&n| wanted.contains(&n) || n + 2 <= top)
        .collect()
}

/// The size of level `n`'s file, 0 when it cannot be read.
fn level_file_bytes(tb: &awari_probe::Tablebase, n: u32) -> u64 {
    let path = file::level_path(tb.dir(), LevelId::new(tb.rules(), n));
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The memory verifying `wanted` (up to `top`) takes: one byte per board of
/// every level read (the checked ones and those their captures reach) and
/// its file (mapped while it is decoded), a progress byte per board of the
/// largest checked level, and two bytes per board of its certificate when
/// there is one. (Level 22 over levels 0..=21: planned 736 MiB, 688 MiB
/// measured.)
fn memory_needed(tb: &awari_probe::Tablebase, wanted: &[u32], top: u32) -> u64 {
    let index = awari_dbformat::Index::for_pits(tb.rules().pits());
    let read: u64 = levels_read(wanted, top)
        .into_iter()
        .map(|n| index.level_size(n) + level_file_bytes(tb, n))
        .sum();
    let largest = wanted
        .iter()
        .map(|&n| index.level_size(n))
        .max()
        .unwrap_or(0);
    let certified = wanted
        .iter()
        .any(|&n| file::certificate_path(tb.dir(), LevelId::new(tb.rules(), n)).exists());
    read + largest + if certified { 2 * largest } else { 0 } + BASE_BYTES
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

/// Which rank checks each of the levels `wanted` (of `pits` pits per side)
/// among `ranks`: the largest first, each to the rank with the fewest boards
/// so far (the same answer on every rank).
fn checkers(wanted: &[u32], pits: u8, ranks: usize) -> std::collections::BTreeMap<u32, usize> {
    let index = awari_dbformat::Index::for_pits(pits);
    let mut load = vec![0u64; ranks];
    let mut by_size = wanted.to_vec();
    by_size.sort_by_key(|&n| std::cmp::Reverse(index.level_size(n)));
    by_size
        .into_iter()
        .map(|n| {
            let r = (0..ranks).min_by_key(|&r| load[r]).expect("a rank");
            load[r] += index.level_size(n);
            (n, r)
        })
        .collect()
}

/// One level's result as the ranks exchange it: the check, whether the
/// checksums held, and the seconds it took.
type Checked = (LevelCheck, bool, f64);

/// Runs the verification; see [`Args`].
pub fn run(args: Args) -> CmdResult {
    let ranks = awari_dbformat::cluster::start()?;
    let root = ranks.is_root();
    let tb = args.database.open()?;
    let rules = tb.rules();
    let present = tb.levels();
    let wanted: Vec<u32> = match (&args.levels, args.start) {
        (Some(r), _) => r.clone().collect(),
        (None, Some(s)) => {
            let total = rules.board_pits() as u32 * s;
            (0..=total).filter(|&n| n + 1 != total).collect()
        }
        (None, None) => present.clone(),
    };
    if let Some(&missing) = wanted.iter().find(|n| !present.contains(n)) {
        return Err(ProbeError::MissingLevel {
            seeds: missing,
            rules,
            dir: args.database.db.clone(),
        }
        .into());
    }
    let top = *wanted.last().ok_or("no level to verify")?;
    // The budget, planned before any work. (Under MPI each rank has a work
    // directory of its own.)
    let budget = args.memory.unwrap_or_else(memory::default_budget);
    let work_dir = args
        .work_dir
        .clone()
        .unwrap_or_else(|| args.database.db.join("work").join("verify"));
    let work_dir = match ranks.size() {
        1 => work_dir,
        _ => work_dir.join(format!("rank-{}", ranks.rank())),
    };
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
    // What this process prints as it goes (with one rank; else rank 0 at the end).
    let talk = !args.json && ranks.size() == 1;
    let in_memory = matches!(placement, Placement::Memory);
    let _watch = (!in_memory).then(|| resident::Watch::new(ceiling(budget)));
    if talk && !in_memory {
        println!(
            "levels in files of the work directory (a budget of {}; in memory it would need about {})",
            format_size(budget),
            format_size(needed_in_memory)
        );
    }
    let started = Instant::now();
    let checker = checkers(&wanted, rules.pits(), ranks.size());
    let mut levels = Levels::default();
    let mut checks: Vec<Checked> = Vec::new();
    // Read every level up to the top one: the checked ones, and those below the
    // first that captures reach (taken as correct).
    for seeds in 0..=top {
        let needed_below = seeds + 2 <= top;
        // A level another rank checks is read here only for the levels above.
        let check = wanted.contains(&seeds) && checker[&seeds] == ranks.rank();
        if !check && !needed_below {
            continue;
        }
        if !check && !present.contains(&seeds) {
            return Err(ProbeError::MissingLevel {
                seeds,
                rules,
                dir: args.database.db.clone(),
            }
            .into());
        }
        // Opened here, not kept by the tablebase: the file is unmapped
        // once decoded.
        let id = LevelId::new(rules, seeds);
        let reader = LevelReader::open_expecting(&file::level_path(tb.dir(), id), id)?;
        // Captures reach every level below seeds - 1; one that could not be
        // read (reported above) leaves this level without its children.
        if let Some(unread) = (0..seeds.saturating_sub(1)).find(|&s| levels.get(s).is_none()) {
            let reason = format!("level {unread}, which its captures reach, could not be read");
            if !check {
                return Err(format!("level {seeds} is needed but {reason}").into());
            }
            eprintln!("awari-probe: level {seeds}: not checked: {reason}");
            checks.push((empty_check(seeds, reader.boards()), false, 0.0));
            continue;
        }
        let t = Instant::now();
        let checksums_ok = reader.verify_checksums().is_ok();
        // The certificate (one zstd frame, read by one thread) while the level
        // is decoded (in parallel).
        let (decoded, certificate) = rayon::join(
            || placement.decode(&reader, seeds),
            || (check && in_memory).then(|| read_certificate(tb.dir(), LevelId::new(rules, seeds))),
        );
        // The level file's pages, mapped while decoding, are not needed again.
        let (level_boards, stored) = (reader.boards(), reader.stored());
        drop(reader);
        // Lower bounds become scores through the captures (levels below,
        // already read): what is checked is the scores the file gives.
        let decoded = decoded.map(|mut v| {
            if stored == Stored::LowerBounds {
                let lower = |s| &levels.get(s).expect("the levels captures reach are read")[..];
                file::resolve_level_in(rules, seeds, 0, &mut v, lower, &[]);
            }
            v
        });
        let values = match decoded {
            Ok(v) => Arc::new(v),
            Err(e) if check => {
                eprintln!("awari-probe: level {seeds}: {e}");
                checks.push((empty_check(seeds, level_boards), false, 0.0));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if check {
            let certificate = certificate.flatten();
            let bar = progress_bar(!args.json && root, seeds, values.len() as u64);
            let aids = verify::Aids {
                certificate: certificate.as_deref(),
                progress: placement.progress(seeds, level_boards)?,
            };
            let result =
                verify::check_level_with(rules, seeds, &values, &levels, aids, args.limit, &|n| {
                    bar.inc(n)
                });
            bar.finish_and_clear();
            let secs = t.elapsed().as_secs_f64();
            if talk {
                print_level(&result, checksums_ok, secs);
            }
            checks.push((result, checksums_ok, secs));
        }
        levels.insert(seeds, values);
    }
    if ranks.size() > 1 {
        checks = gather_checks(ranks.as_ref(), &checks)?;
        if !root {
            let ok = checks.iter().all(|(c, sums, _)| c.ok() && *sums);
            return Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        if !args.json {
            for (c, sums, secs) in &checks {
                print_level(c, *sums, *secs);
            }
        }
    }
    let ok = checks.iter().all(|(c, sums, _)| c.ok() && *sums);
    let start = args.start.map(|s| start_report(rules, s, &levels));
    if args.json {
        let mut out = serde_json::json!({
            "ok": ok,
            "rules": rules.set().name(),
            "levels_in_files": !in_memory,
            // The resident set's peak, as `/usr/bin/time -v` reports it.
            "peak_memory_bytes": memory::peak_resident().unwrap_or(0),
            "pits": rules.pits(),
            "seconds": started.elapsed().as_secs_f64(),
            "levels": checks.iter().map(|(c, sums, secs)| serde_json::json!({
                "seeds": c.seeds, "boards": c.boards, "checksums": sums,
                "recurrence_errors": c.recurrence_errors, "unproven": c.unproven,
                "certified": c.certified,
                "seconds": secs,
            })).collect::<Vec<_>>(),
            "mismatches": checks.iter().flat_map(|(c, _, _)| c.mismatches.iter()).collect::<Vec<_>>(),
        });
        if let Some((value, verdict, moves)) = &start {
            out["value"] = (*value).into();
            out["verdict"] = verdict.clone().into();
            out["moves"] = moves
                .iter()
                .map(|(p, v)| serde_json::json!({"pit": p, "value": v}))
                .collect();
        }
        println!("{out}");
    } else {
        let boards: u64 = checks.iter().map(|(c, _, _)| c.boards).sum();
        println!(
            "{}: {} level(s), {boards} boards checked in {:.1} s",
            if ok { "OK" } else { "FAILED" },
            checks.len(),
            started.elapsed().as_secs_f64()
        );
        if let Some((value, verdict, moves)) = &start {
            let s = args.start.expect("start given");
            println!("start position with {s} seeds per pit ({rules}): value {value:+}: {verdict}");
            let line: Vec<String> = moves
                .iter()
                .map(|(p, v)| {
                    format!(
                        "{} {v:+}",
                        awari_dbformat::pit_label(*p as usize, rules.pits() as usize)
                    )
                })
                .collect();
            println!("first moves: {}", line.join("  "));
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every rank's checks, in order of levels, on every rank.
fn gather_checks(ranks: &dyn Ranks, mine: &[Checked]) -> Result<Vec<Checked>, String> {
    let bytes = serde_json::to_vec(mine).expect("serialisable");
    let mut all: Vec<Checked> = Vec::new();
    for (rank, theirs) in ranks.all_gather_bytes(&bytes).into_iter().enumerate() {
        let checked: Vec<Checked> = serde_json::from_slice(&theirs)
            .map_err(|e| format!("the checks of rank {rank} are garbled: {e}"))?;
        all.extend(checked);
    }
    all.sort_by_key(|(c, _, _)| c.seeds);
    Ok(all)
}

fn empty_check(seeds: u32, boards: u64) -> LevelCheck {
    LevelCheck {
        seeds,
        boards,
        recurrence_errors: 0,
        unproven: 0,
        certified: false,
        mismatches: Vec::new(),
    }
}

/// The certificate beside a level, when there is a sound one. A missing one is
/// normal (levels built without `--certificate`, imported levels); a corrupt one
/// is reported and set aside: the proof search does without it.
fn read_certificate(dir: &std::path::Path, id: LevelId) -> Option<Generations> {
    let path = file::certificate_path(dir, id);
    if !path.exists() {
        return None;
    }
    match file::read_certificate(&path, id) {
        Ok(generations) => Some(generations),
        Err(e) => {
            eprintln!(
                "awari-probe: warning: {e}; verifying level {} without it",
                id.seeds
            );
            None
        }
    }
}

/// The start position's value, the verdict, and every first move's value.
fn start_report(rules: Rules, per_pit: u32, levels: &Levels) -> (i8, String, Vec<(u8, i8)>) {
    let pits = vec![per_pit as u8; rules.board_pits()];
    let board = Board::new(&pits).expect("a start position is a valid board");
    let value = verify::value_of(rules, &board, levels).get();
    let moves = rules
        .legal_moves(&board)
        .iter()
        .map(|m| {
            (
                m.pit,
                m.value(verify::value_of(rules, &m.child, levels)).get(),
            )
        })
        .collect();
    let verdict = match value {
        0 => "draw".to_string(),
        v if v > 0 => format!("the first player wins by {v}"),
        v => format!("the second player wins by {}", -v),
    };
    (value, verdict, moves)
}

fn print_level(c: &LevelCheck, checksums_ok: bool, secs: f64) {
    println!(
        "level {:>2}: {:>12} boards  checksums {}  recurrence errors {}  unproven {} ({})  ({:.2} s)",
        c.seeds,
        c.boards,
        if checksums_ok { "ok" } else { "BAD" },
        c.recurrence_errors,
        c.unproven,
        if c.certified { "by certificate" } else { "by search" },
        secs
    );
    for m in &c.mismatches {
        println!(
            "  mismatch: level {} index {} board {} stored {} derived {} ({})",
            m.seeds,
            m.index,
            Board::new(&m.board)
                .map(|b| b.to_notation())
                .unwrap_or_default(),
            m.stored,
            m.derived,
            m.reason
        );
    }
}

fn progress_bar(show: bool, seeds: u32, boards: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(boards), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "verify level {prefix:>2} {bar:30} {percent:>3}% {per_sec:>14} ETA {eta}",
        )
        .expect("a valid template"),
    );
    bar.set_prefix(seeds.to_string());
    bar
}
