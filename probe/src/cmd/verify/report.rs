//! What `verify` prints: a line per level, the summary (text or JSON), the
//! start position's report, and the progress bar.

use std::time::Instant;

use awari_dbformat::memory;
use awari_dbformat::Levels;
use awari_dbformat::{Board, Rules};
use awari_probe::verify::LevelCheck;

use super::shares::Held;
use super::Checked;

/// The start position's value, the verdict, and every first move's value
/// (pit, value).
pub(super) type StartReport = (i8, String, Vec<(u8, i8)>);

/// The start position's value, the verdict, and every first move's value.
pub(super) fn start_report(rules: Rules, per_pit: u32, levels: &Levels) -> StartReport {
    let pits = vec![per_pit as u8; rules.board_pits()];
    let board = Board::new(&pits).expect("a start position is a valid board");
    let value = levels.value_of(rules, &board).get();
    let moves = rules
        .legal_moves(&board)
        .iter()
        .map(|m| (m.pit, m.value(levels.value_of(rules, &m.child)).get()))
        .collect();
    (value, verdict(value), moves)
}

/// What a start position's `value` means: a draw, or who wins by how much.
pub(super) fn verdict(value: i8) -> String {
    match value {
        0 => "draw".to_string(),
        v if v > 0 => format!("the first player wins by {v}"),
        v => format!("the second player wins by {}", -v),
    }
}

/// What `verify` reports at the end.
pub(super) struct Summary<'a> {
    /// The rules of the levels checked.
    pub(super) rules: Rules,
    /// Every level's result, in order of levels.
    pub(super) checks: &'a [Checked],
    /// The levels read were kept in files.
    pub(super) levels_in_files: bool,
    /// When the work started.
    pub(super) started: Instant,
    /// With `--start`: the seeds per pit, and the report of the start position.
    pub(super) start: Option<(u32, StartReport)>,
    /// Under `mpirun`, checked by shares: by rank, the bytes of the
    /// shares it held and its peak resident memory.
    pub(super) ranks: Option<Held>,
}

impl Summary<'_> {
    /// True when every level checked out, checksums included.
    pub(super) fn ok(&self) -> bool {
        all_ok(self.checks)
    }

    /// Prints the one JSON object of `--json`.
    pub(super) fn print_json(&self) {
        let (rules, checks) = (self.rules, self.checks);
        let mut out = serde_json::json!({
            "ok": self.ok(),
            "rules": rules.set().name(),
            "levels_in_files": self.levels_in_files,
            // The resident set's peak, as `/usr/bin/time -v` reports it.
            "peak_memory_bytes": memory::peak_resident().unwrap_or(0),
            "pits": rules.pits(),
            "seconds": self.started.elapsed().as_secs_f64(),
            "levels": checks.iter().map(|(c, sums, secs)| serde_json::json!({
                "seeds": c.seeds, "boards": c.boards, "checksums": sums,
                "recurrence_errors": c.recurrence_errors, "unproven": c.unproven,
                "certified": c.certified,
                "seconds": secs,
            })).collect::<Vec<_>>(),
            "mismatches": checks.iter().flat_map(|(c, _, _)| c.mismatches.iter()).collect::<Vec<_>>(),
        });
        if let Some(held) = &self.ranks {
            out["ranks"] = held
                .iter()
                .enumerate()
                .map(|(r, [boards, bytes, peak])| {
                    serde_json::json!({
                        "rank": r, "share_boards": boards, "share_bytes": bytes,
                        "peak_resident_bytes": peak,
                    })
                })
                .collect();
        }
        if let Some((_, (value, verdict, moves))) = &self.start {
            out["value"] = (*value).into();
            out["verdict"] = verdict.clone().into();
            out["moves"] = moves
                .iter()
                .map(|(p, v)| serde_json::json!({"pit": p, "value": v}))
                .collect();
        }
        println!("{out}");
    }

    /// Prints the summary for people: the verdict, and the start position.
    pub(super) fn print_text(&self) {
        let (rules, checks) = (self.rules, self.checks);
        let boards: u64 = checks.iter().map(|(c, _, _)| c.boards).sum();
        println!(
            "{}: {} level(s), {boards} boards checked in {:.1} s",
            if self.ok() { "OK" } else { "FAILED" },
            checks.len(),
            self.started.elapsed().as_secs_f64()
        );
        if let Some((s, (value, verdict, moves))) = &self.start {
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
}

/// True when every level of `checks` checked out, checksums included.
pub(super) fn all_ok(checks: &[Checked]) -> bool {
    checks.iter().all(|(c, sums, _)| c.ok() && *sums)
}

/// Prints the line of one level, and its mismatches.
pub(super) fn print_level(c: &LevelCheck, checksums_ok: bool, secs: f64) {
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
