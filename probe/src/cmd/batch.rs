//! `awari-probe batch`: many positions, one JSON line each.

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use awari_dbformat::{Board, Repetition};
use awari_probe::json::bounds_fields;
use awari_probe::{BoundsTablebase, Tablebase};
use rayon::prelude::*;

use super::CmdResult;

/// Score positions read from stdin, one per line; write one JSON object per line.
///
/// A line is a board, optionally followed by `;` and the seeds captured by the
/// mover and the opponent: `1 1 1 1 1 2 / 4 2 3 0 0 0 ; 10 22`. Empty lines and
/// lines starting with `#` are skipped. A bad line gives an object with "error"
/// and the batch goes on. Output keeps the input order.
///
/// With --repetition any (levels built by `awari-solve --repetition any`)
/// each line gives "lower", "upper" and "exact" in place of "value", and
/// "result" is "depends" when the bounds do not decide it; moves are not
/// marked best, and nothing is searched above the levels.
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
    /// How endless play is valued: even-split (one score per board) or any
    /// (bounds that hold under every repetition rule; --preload and --search
    /// do not apply).
    #[arg(long, default_value = "even-split")]
    repetition: Repetition,
}

/// The levels a batch reads: scores, or bounds under `--repetition any`.
enum Levels {
    Scores(Tablebase),
    Bounds(BoundsTablebase),
}

/// Reads one line: the board and the seeds captured (0, 0 when not given).
fn parse_line(line: &str) -> Result<(Board, (u32, u32)), Box<dyn std::error::Error>> {
    let (board_text, captured_text) = match line.split_once(';') {
        Some((b, c)) => (b, Some(c)),
        None => (line, None),
    };
    let board: Board = board_text.parse()?;
    let captured = match captured_text {
        Some(c) => super::score::parse_captured(c.trim())?,
        None => (0, 0),
    };
    Ok((board, captured))
}

/// Answers one line from the bound levels.
fn answer_bounds(
    tb: &BoundsTablebase,
    line_no: usize,
    line: &str,
    with_moves: bool,
) -> serde_json::Value {
    let result = (|| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        let (board, captured) = parse_line(line)?;
        let mut out =
            serde_json::json!({ "line": line_no, "board": board.pits(), "seeds": board.seeds() });
        let bounds = if with_moves {
            let a = tb.analyse(&board)?;
            out["moves"] = a
                .moves
                .iter()
                .map(|m| {
                    let mut v = serde_json::json!({"pit": m.mov.pit, "captured": m.mov.captured});
                    v.as_object_mut()
                        .expect("an object")
                        .extend(bounds_fields(m.bounds));
                    v
                })
                .collect();
            a.bounds
        } else {
            tb.bounds(&board)?
        };
        let fields = out.as_object_mut().expect("an object");
        fields.extend(bounds_fields(bounds));
        fields.insert(
            "result".into(),
            awari_probe::bounds::outcome(bounds, captured).name().into(),
        );
        Ok(out)
    })();
    result.unwrap_or_else(
        |e| serde_json::json!({ "line": line_no, "input": line, "error": e.to_string() }),
    )
}

/// Answers one line (by a search of `search` when its level is missing).
fn answer(
    tb: &Tablebase,
    line_no: usize,
    line: &str,
    with_moves: bool,
    search: Option<Duration>,
) -> serde_json::Value {
    let result = (|| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        let (board, captured) = parse_line(line)?;
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
    let levels = match args.repetition {
        Repetition::EvenSplit => {
            let tb = args.database.open()?;
            tb.preload(args.preload);
            Levels::Scores(tb)
        }
        Repetition::Any => {
            if args.search.is_some() {
                return Err("--search does not apply with --repetition any: bounds are read from the levels only".into());
            }
            let d = &args.database;
            Levels::Bounds(BoundsTablebase::open_for(&d.db, d.rules, d.pits)?)
        }
    };
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
            .map(|(no, line)| match &levels {
                Levels::Scores(tb) => answer(tb, *no, line, args.moves, args.search),
                Levels::Bounds(tb) => answer_bounds(tb, *no, line, args.moves),
            })
            .map(|a| a.to_string())
            .collect();
        for a in answers {
            writeln!(out, "{a}")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
