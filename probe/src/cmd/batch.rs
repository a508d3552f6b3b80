//! `awari-probe batch`: many positions, one JSON line each.

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use awari_dbformat::Board;
use awari_probe::Tablebase;
use rayon::prelude::*;

use super::CmdResult;

/// Score positions read from stdin, one per line; write one JSON object per line.
///
/// A line is a board, optionally followed by `;` and the seeds captured by the
/// mover and the opponent: `1 1 1 1 1 2 / 4 2 3 0 0 0 ; 10 22`. Empty lines and
/// lines starting with `#` are skipped. A bad line gives an object with "error"
/// and the batch goes on. Output keeps the input order.
///
/// Example: printf '1 1 1 1 1 2 / 4 2 3 0 0 0\n' | awari-probe batch --db db
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    database: super::Database,
    /// Also give every move's value (slower).
    #[arg(long)]
    moves: bool,
    /// Memory for levels decoded whole, e.g. 2G; 0 (the default) looks each
    /// board up in its file. Decoding a level whole pays only for very many
    /// positions when files hold lower bounds (the default), since every
    /// board of the level and of those below is then resolved first; for
    /// files of scores (`awari-solve --exact`) it pays sooner. The answers
    /// are the same either way.
    #[arg(long, default_value = "0", value_parser = awari_dbformat::cli::parse_size)]
    preload: u64,
    /// Search a position above the levels built for this long (e.g. 200ms,
    /// one thread per line, lines in parallel) and answer as `score --json`
    /// does; without it such a line gets an error naming the missing level.
    #[arg(long, value_parser = super::score::parse_duration)]
    search: Option<Duration>,
}

/// Answers one line (by a search of `search` when its level is missing).
fn answer(
    tb: &Tablebase,
    line_no: usize,
    line: &str,
    with_moves: bool,
    search: Option<Duration>,
) -> serde_json::Value {
    let (board_text, captured_text) = match line.split_once(';') {
        Some((b, c)) => (b, Some(c)),
        None => (line, None),
    };
    let result = (|| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        let board: Board = board_text.parse()?;
        let captured = match captured_text {
            Some(c) => super::score::parse_captured(c.trim())?,
            None => (0, 0),
        };
        if let Some(time) = search.filter(|_| !tb.covers(&board)) {
            let mut out = awari_probe::json::search_one_json(tb, &board, captured, time)?;
            out["line"] = line_no.into();
            return Ok(out);
        }
        let mut out =
            serde_json::json!({ "line": line_no, "board": board.pits(), "seeds": board.seeds() });
        if with_moves {
            let a = tb.analyse(&board)?;
            out["value"] = a.value.get().into();
            out["result"] = a.value.outcome(captured.0, captured.1).name().into();
            out["best"] = serde_json::json!(a.best);
            out["moves"] = a
                .moves
                .iter()
                .map(|m| serde_json::json!({"pit": m.mov.pit, "value": m.value.get(), "captured": m.mov.captured, "best": m.best}))
                .collect();
        } else {
            let v = tb.score(&board)?;
            out["value"] = v.get().into();
            out["result"] = v.outcome(captured.0, captured.1).name().into();
        }
        Ok(out)
    })();
    result.unwrap_or_else(
        |e| serde_json::json!({ "line": line_no, "input": line, "error": e.to_string() }),
    )
}

/// Runs the batch; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let tb = args.database.open()?;
    tb.preload(args.preload);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    let mut out = BufWriter::new(stdout);
    let mut lines = stdin.lines().enumerate();
    // Chunks keep the output in input order while the work runs in parallel.
    loop {
        let mut chunk = Vec::with_capacity(1 << 14);
        for (no, line) in lines.by_ref() {
            let line = line?;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            chunk.push((no + 1, t.to_string()));
            if chunk.len() == chunk.capacity() {
                break;
            }
        }
        if chunk.is_empty() {
            break;
        }
        let answers: Vec<String> = chunk
            .par_iter()
            .map(|(no, line)| answer(&tb, *no, line, args.moves, args.search).to_string())
            .collect();
        for a in answers {
            writeln!(out, "{a}")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
