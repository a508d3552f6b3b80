//! `awari-probe verify --repetition any`: both bound files of each level
//! checked without trusting the solver (the recurrence on both, and every
//! bound short of the trivial one forced by a finite strategy; see
//! [`awari_probe::verify::bounds`]). The levels are held in memory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::file::{self, LevelId, LevelReader};
use awari_dbformat::memory::{self, format_size, PROCESS_BYTES};
use awari_dbformat::{capture_reaches, levels_captures_reach, Bound, Index, RuleSet, Rules};
use awari_probe::verify::bounds::{check_bound_level, BoundCheck, BoundLevels, Progress};

use super::bounds_report::{print_level, start_report, Summary};
use super::{exit_code, Args};
use crate::cmd::CmdResult;

/// One level's result: the check, whether both files decoded with sound
/// checksums, and the seconds it took.
pub(super) type Checked = (BoundCheck, bool, f64);

/// Runs `verify --repetition any`; see [`Args`].
pub(super) fn run(args: Args) -> CmdResult {
    if args.on_disk || args.work_dir.is_some() {
        return Err(
            "--on-disk and --work-dir are for levels of scores; with --repetition any \
                    the levels are checked in memory (see --memory)"
                .into(),
        );
    }
    let ranks = awari_dbformat::cluster::start()?;
    if ranks.size() > 1 {
        return Err("verify --repetition any runs as one process, not under mpirun".into());
    }
    let db = &args.database;
    let (rules, present) = present_levels(&db.db, db.rules, db.pits)?;
    let wanted = wanted_levels(&args, rules, &present)?;
    let top = *wanted.last().ok_or("no level to verify")?;
    let read: Vec<u32> = (0..=top)
        .filter(|&n| wanted.contains(&n) || capture_reaches(top, n))
        .collect();
    if let Some(&missing) = read.iter().find(|n| !present.contains(n)) {
        return Err(missing_level(&db.db, rules, missing).into());
    }
    let budget = args.memory.unwrap_or_else(memory::default_budget);
    let needed = memory_needed(&db.db, rules, &wanted, &read);
    if needed > budget {
        return Err(format!(
            "verifying the bounds up to level {top} needs about {} of memory (both bounds of \
             every level read, and the proven bounds of the largest level checked); the budget \
             is {} (--memory)",
            format_size(needed),
            format_size(budget)
        )
        .into());
    }
    let started = Instant::now();
    let job = Job {
        dir: &db.db,
        rules,
        wanted: &wanted,
        limit: args.limit,
        bars: !args.json,
        talk: !args.json,
    };
    let mut levels = BoundLevels::new(rules.pits());
    let mut checks = Vec::new();
    for &seeds in &read {
        job.level(seeds, &mut levels, &mut checks)?;
    }
    let summary = Summary {
        rules,
        checks: &checks,
        started,
        start: args.start.map(|s| (s, start_report(rules, s, &levels))),
    };
    if args.json {
        summary.print_json();
    } else {
        summary.print_text();
    }
    Ok(exit_code(summary.ok()))
}

/// What reading and checking the levels needs to know.
struct Job<'a> {
    /// The database directory.
    dir: &'a Path,
    /// The rules of its levels.
    rules: Rules,
    /// The levels to check.
    wanted: &'a [u32],
    /// The most mismatching bounds kept per level.
    limit: usize,
    /// Show a progress bar for each level checked.
    bars: bool,
    /// Print each level's line as it is checked.
    talk: bool,
}

impl Job<'_> {
    /// Reads both bounds of level `seeds` into `levels`, and checks them
    /// (pushing onto `checks`) when the level is wanted. A wanted level that
    /// cannot be decoded (or whose captures reach one that could not) is
    /// reported and counted as failed.
    ///
    /// # Errors
    /// A file that cannot be opened, holds another level or other values
    /// (scores, the other bound); a level only read that cannot be decoded.
    fn level(
        &self,
        seeds: u32,
        levels: &mut BoundLevels,
        checks: &mut Vec<Checked>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let id = LevelId::new(self.rules, seeds);
        let check = self.wanted.contains(&seeds);
        let readers = [
            open_bound(self.dir, id, Bound::Lower)?,
            open_bound(self.dir, id, Bound::Upper)?,
        ];
        if let Some(unread) = levels_captures_reach(seeds).find(|&s| !levels.has(s)) {
            let reason = format!("level {unread}, which its captures reach, could not be read");
            if !check {
                return Err(format!("level {seeds} is needed but {reason}").into());
            }
            eprintln!("awari-probe: level {seeds}: not checked: {reason}");
            checks.push((empty_check(seeds, id.boards()), false, 0.0));
            return Ok(());
        }
        let t = Instant::now();
        let decode = |r: &LevelReader| r.verify_checksums().and_then(|()| r.decode_all());
        let decoded = decode(&readers[0]).and_then(|lower| Ok((lower, decode(&readers[1])?)));
        let (lower, upper) = match decoded {
            Ok(both) => both,
            Err(e) if check => {
                eprintln!("awari-probe: level {seeds}: {e}");
                checks.push((empty_check(seeds, id.boards()), false, 0.0));
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        drop(readers);
        if check {
            let bar = Bar::new(self.bars, seeds, id.boards());
            let result =
                check_bound_level(self.rules, seeds, &lower, &upper, levels, self.limit, &bar);
            bar.bar.finish_and_clear();
            let secs = t.elapsed().as_secs_f64();
            if self.talk {
                print_level(&result, true, secs);
            }
            checks.push((result, true, secs));
        }
        levels.insert(seeds, Arc::new(lower), Arc::new(upper));
        Ok(())
    }
}

/// Opens the file of level `id`'s `bound` in `dir`.
///
/// # Errors
/// When it is missing (saying how to build it), holds even-split scores
/// (saying so) or another level or bound, or cannot be read.
fn open_bound(dir: &Path, id: LevelId, bound: Bound) -> Result<LevelReader, String> {
    let path = file::bound_path(dir, id, bound);
    if !path.exists() {
        return Err(format!(
            "level {} ({}): its {} bound file {} is missing: build it with `awari-solve --db {} \
             --rules {} --pits {} --max-seeds {} --repetition any`",
            id.seeds,
            id.rules,
            bound.name(),
            path.display(),
            dir.display(),
            id.rules.set(),
            id.rules.pits(),
            id.seeds
        ));
    }
    LevelReader::open_bound(&path, id, bound).map_err(|e| {
        match LevelReader::open(&path).map(|r| r.stored()) {
            Ok(stored) if !stored.is_repetition_bound() => format!(
                "{}: holds even-split scores, not the {} bound of --repetition any \
                 (verify even-split levels, named {}, without --repetition any)",
                path.display(),
                bound.name(),
                id.file_name()
            ),
            _ => e.to_string(),
        }
    })
}

/// The progress bar of one level: the recurrence pass, then a level's
/// worth of boards more for each sweep.
struct Bar {
    bar: indicatif::ProgressBar,
    boards: u64,
}

impl Bar {
    fn new(show: bool, seeds: u32, boards: u64) -> Bar {
        let bar = awari_dbformat::cli::level_bar(show, "verify level", seeds, boards);
        bar.set_message("recurrence");
        Bar { bar, boards }
    }
}

impl Progress for Bar {
    fn boards(&self, n: u64) {
        self.bar.inc(n);
    }

    fn sweep(&self, k: u32) {
        self.bar.inc_length(self.boards);
        self.bar.set_message(format!("sweep {k}"));
    }
}

/// The check of a level that could not be read: no count, failed.
fn empty_check(seeds: u32, boards: u64) -> BoundCheck {
    BoundCheck {
        seeds,
        boards,
        out_of_range: 0,
        crossed: 0,
        recurrence_errors: 0,
        unforced: 0,
        sweeps: 0,
        exact: 0,
        mismatches: Vec::new(),
    }
}

/// The rules of the bound files in `dir` for `pits` pits per side (`set`
/// if given, else the one rule set present), and the levels with a bound
/// file.
///
/// # Errors
/// When the directory cannot be listed, holds no bound file for the size
/// (saying so when it holds files of even-split scores), or several rule
/// sets and none was chosen.
fn present_levels(
    dir: &Path,
    set: Option<RuleSet>,
    pits: u8,
) -> Result<(Rules, BTreeSet<u32>), Box<dyn std::error::Error>> {
    let found: Vec<LevelId> = bound_files(dir)?
        .into_iter()
        .filter(|id| id.rules.pits() == pits && set.is_none_or(|s| id.rules.set() == s))
        .collect();
    let mut sets: Vec<RuleSet> = found.iter().map(|id| id.rules.set()).collect();
    sets.sort();
    sets.dedup();
    let set = match (set, sets.as_slice()) {
        (_, [one]) => *one,
        (_, []) => {
            let wanted = match set {
                Some(s) => format!("{}", Rules::new(s, pits)?),
                None => format!("{pits} pits per side"),
            };
            let scores = file::scan_dir(dir)?
                .iter()
                .any(|(id, _)| id.rules.pits() == pits && set.is_none_or(|s| id.rules.set() == s));
            let hint = if scores {
                "; it holds level files of even-split scores: verify them without --repetition \
                 any, or build bounds with awari-solve --repetition any"
            } else {
                "; build them with awari-solve --repetition any"
            };
            return Err(format!(
                "{}: no bound files (--repetition any) for {wanted}{hint}",
                dir.display()
            )
            .into());
        }
        (_, many) => {
            let names: Vec<&str> = many.iter().map(|r| r.name()).collect();
            return Err(format!(
                "{}: holds bound files of several rule sets ({}); choose one with --rules",
                dir.display(),
                names.join(", ")
            )
            .into());
        }
    };
    let rules = Rules::new(set, pits)?;
    let present = found
        .iter()
        .filter(|id| id.rules == rules)
        .map(|id| id.seeds)
        .collect();
    Ok((rules, present))
}

/// The levels with a bound file (either bound) in `dir`, identified by
/// name (`<rules>-p<P>-n<N>.lower.awl` or `.upper.awl`).
///
/// # Errors
/// When the directory cannot be listed.
pub(super) fn bound_files(dir: &Path) -> Result<Vec<LevelId>, Box<dyn std::error::Error>> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        for bound in Bound::BOTH {
            let suffix = format!(".{}.{}", bound.name(), file::EXTENSION);
            if let Some(stem) = name.strip_suffix(&suffix) {
                let plain = format!("{stem}.{}", file::EXTENSION);
                if let Some(id) = LevelId::from_file_name(&plain) {
                    out.push(id);
                }
            }
        }
    }
    out.sort_by_key(|id| (id.rules.set(), id.rules.pits(), id.seeds));
    out.dedup();
    Ok(out)
}

/// The levels to check: those of `--levels`, those a game of `--start`
/// seeds per pit needs, or every level `present`.
///
/// # Errors
/// A level to check whose bound files are not present.
fn wanted_levels(args: &Args, rules: Rules, present: &BTreeSet<u32>) -> Result<Vec<u32>, String> {
    let wanted: Vec<u32> = match (&args.levels, args.start) {
        (Some(r), _) => r.clone().collect(),
        (None, Some(s)) => {
            let total = rules.board_pits() as u32 * s;
            (0..=total).filter(|&n| n + 1 != total).collect()
        }
        (None, None) => present.iter().copied().collect(),
    };
    match wanted.iter().find(|n| !present.contains(n)) {
        Some(&missing) => Err(missing_level(&args.database.db, rules, missing)),
        None => Ok(wanted),
    }
}

/// The error of level `seeds`'s bound files missing from `dir`.
fn missing_level(dir: &Path, rules: Rules, seeds: u32) -> String {
    let id = LevelId::new(rules, seeds);
    let path: PathBuf = file::bound_path(dir, id, Bound::Lower);
    format!(
        "level {seeds} ({rules}) has no bound files in {} ({} and its .upper twin): build it \
         with `awari-solve --db {} --rules {} --pits {} --max-seeds {seeds} --repetition any`",
        dir.display(),
        path.file_name().unwrap_or_default().to_string_lossy(),
        dir.display(),
        rules.set(),
        rules.pits()
    )
}

/// The memory the check takes: both bounds of every level `read`, the
/// proven bounds of the largest level `wanted`, its two files (mapped while
/// they are decoded), and the rest of the process.
fn memory_needed(dir: &Path, rules: Rules, wanted: &[u32], read: &[u32]) -> u64 {
    let index = Index::for_pits(rules.pits());
    let held: u64 = read.iter().map(|&n| 2 * index.level_size(n)).sum();
    let file_bytes = |n: u32| -> u64 {
        Bound::BOTH
            .iter()
            .map(|&b| {
                let path = file::bound_path(dir, LevelId::new(rules, n), b);
                std::fs::metadata(path).map_or(0, |m| m.len())
            })
            .sum()
    };
    let largest = wanted
        .iter()
        .map(|&n| 2 * index.level_size(n) + file_bytes(n))
        .max()
        .unwrap_or(0);
    held + largest + PROCESS_BYTES
}
