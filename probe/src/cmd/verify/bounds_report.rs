//! What `verify --repetition any` prints: a line per level with its first
//! mismatching bounds, the summary (text or JSON), and the start position's
//! bounds.

use std::time::Instant;

use awari_dbformat::memory;
use awari_dbformat::{Board, Bounds, Rules};
use awari_probe::verify::bounds::{BoundCheck, BoundLevels};

use super::bounds::Checked;

/// The start position's bounds, the verdict, and every first move's bounds
/// (pit, bounds).
pub(super) type StartReport = (Bounds, String, Vec<(u8, Bounds)>);

/// The bounds of the start position with `per_pit` seeds per pit and of
/// every first move, and what they decide; `None` when a level they need is
/// not held (one that could not be read, reported already).
pub(super) fn start_report(
    rules: Rules,
    per_pit: u32,
    levels: &BoundLevels,
) -> Option<StartReport> {
    let total = rules.board_pits() as u32 * per_pit;
    if (0..=total).any(|n| n + 1 != total && !levels.has(n)) {
        return None;
    }
    let pits = vec![per_pit as u8; rules.board_pits()];
    let board = Board::new(&pits).ok()?;
    let bounds = levels.bounds_of(rules, &board);
    let moves = rules
        .legal_moves(&board)
        .iter()
        .map(|m| {
            let child = levels.bounds_of(rules, &m.child);
            (m.pit, Bounds::of_move(m.captured, m.turn, child))
        })
        .collect();
    Some((bounds, verdict(bounds), moves))
}

/// What `bounds` decide for the first player.
fn verdict(bounds: Bounds) -> String {
    let (l, u) = (bounds.lower.get(), bounds.upper.get());
    let every = "under every repetition rule";
    match (l, u) {
        (0, 0) => format!("a draw {every}"),
        _ if bounds.is_exact() && l > 0 => format!("the first player wins by {l} {every}"),
        _ if bounds.is_exact() => format!("the second player wins by {} {every}", -l),
        _ if l > 0 => format!("the first player wins, by {l} to {u}, {every}"),
        _ if u < 0 => format!("the second player wins, by {} to {}, {every}", -u, -l),
        _ => format!("the result depends on the repetition rule (between {l:+} and {u:+})"),
    }
}

/// What `verify --repetition any` reports at the end.
pub(super) struct Summary<'a> {
    /// The rules of the levels checked.
    pub(super) rules: Rules,
    /// Every level's result, in order of levels.
    pub(super) checks: &'a [Checked],
    /// When the work started.
    pub(super) started: Instant,
    /// With `--start`: the seeds per pit, and the report of the start
    /// position when its levels could be read.
    pub(super) start: Option<(u32, Option<StartReport>)>,
}

impl Summary<'_> {
    /// True when every level checked out, its files included.
    pub(super) fn ok(&self) -> bool {
        self.checks.iter().all(|(c, read, _)| c.ok() && *read)
    }

    /// Prints the one JSON object of `--json`.
    pub(super) fn print_json(&self) {
        let (rules, checks) = (self.rules, self.checks);
        let mut out = serde_json::json!({
            "ok": self.ok(),
            "repetition": "any",
            "rules": rules.set().name(),
            "pits": rules.pits(),
            "seconds": self.started.elapsed().as_secs_f64(),
            // The resident set's peak, as `/usr/bin/time -v` reports it.
            "peak_memory_bytes": memory::peak_resident().unwrap_or(0),
            "boards": checks.iter().map(|(c, _, _)| c.boards).sum::<u64>(),
            "failures": checks.iter().map(|(c, _, _)| c.failures()).sum::<u64>(),
            "levels": checks.iter().map(|(c, read, secs)| serde_json::json!({
                "seeds": c.seeds, "boards": c.boards, "checksums": read,
                "out_of_range": c.out_of_range, "crossed": c.crossed,
                "recurrence_errors": c.recurrence_errors, "unforced": c.unforced,
                "failures": c.failures(), "exact": c.exact, "sweeps": c.sweeps,
                "seconds": secs,
            })).collect::<Vec<_>>(),
            "mismatches": checks.iter().flat_map(|(c, _, _)| c.mismatches.iter()).collect::<Vec<_>>(),
        });
        if let Some((_, Some((bounds, verdict, moves)))) = &self.start {
            out["lower"] = bounds.lower.get().into();
            out["upper"] = bounds.upper.get().into();
            out["exact"] = bounds.is_exact().into();
            out["verdict"] = verdict.clone().into();
            out["moves"] = moves
                .iter()
                .map(|(p, b)| {
                    serde_json::json!({
                        "pit": p, "lower": b.lower.get(), "upper": b.upper.get(),
                        "exact": b.is_exact(),
                    })
                })
                .collect();
        }
        println!("{out}");
    }

    /// Prints the summary for people: the verdict, and the start position.
    pub(super) fn print_text(&self) {
        let (rules, checks) = (self.rules, self.checks);
        let boards: u64 = checks.iter().map(|(c, _, _)| c.boards).sum();
        let failures: u64 = checks.iter().map(|(c, _, _)| c.failures()).sum();
        println!(
            "{}: {} level(s), {boards} boards (both bounds) checked in {:.1} s, {failures} failure(s)",
            if self.ok() { "OK" } else { "FAILED" },
            checks.len(),
            self.started.elapsed().as_secs_f64()
        );
        match &self.start {
            Some((s, Some((bounds, verdict, moves)))) => {
                println!("start position with {s} seeds per pit ({rules}): {bounds}: {verdict}");
                let line: Vec<String> = moves
                    .iter()
                    .map(|(p, b)| {
                        let pit = awari_dbformat::pit_label(*p as usize, rules.pits() as usize);
                        format!("{pit} {b}")
                    })
                    .collect();
                println!("first moves: {}", line.join("  "));
            }
            Some((s, None)) => {
                println!("start position with {s} seeds per pit: not settled (a level could not be read)");
            }
            None => {}
        }
    }
}

/// Prints the line of one level, and its first mismatching bounds.
pub(super) fn print_level(c: &BoundCheck, read: bool, secs: f64) {
    let share = if c.boards == 0 {
        0.0
    } else {
        100.0 * c.exact as f64 / c.boards as f64
    };
    println!(
        "level {:>2}: {:>12} boards  files {}  recurrence errors {}  not forced {}  \
         crossed {}  out of range {}  sweeps {}  exact {} ({share:.1}%)  ({secs:.2} s)",
        c.seeds,
        c.boards,
        if read { "ok" } else { "BAD" },
        c.recurrence_errors,
        c.unforced,
        c.crossed,
        c.out_of_range,
        c.sweeps,
        c.exact,
    );
    for m in &c.mismatches {
        println!(
            "  {}: level {} index {} board {}: {}",
            m.check.name(),
            m.seeds,
            m.index,
            m.notation,
            m.reason
        );
    }
}
