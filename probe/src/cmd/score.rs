//! `awari-probe score`: the perfect-play value of a position, its moves and a
//! principal variation.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use awari_dbformat::{pit_label, Board, Move, RuleSet, Rules, Turn};
use awari_probe::search::{Answer, Bound, Limits, Searcher};
use awari_probe::{Analysis, ProbeError, Pv, PvEnd, Tablebase};

use super::CmdResult;

/// Print a position's value, every move with its value, and a principal variation.
///
/// The value is what the mover will still capture minus what the opponent will
/// still capture, with perfect play; with --captured it also says who wins.
///
/// Example: awari-probe score "1 1 1 1 1 2 / 4 2 3 0 0 0" --captured 10,22
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The board: 2P numbers, the mover's pits first, e.g. "1 1 1 1 1 2 / 4 2 3 0 0 0".
    pub board: Board,
    /// Seeds already captured by the mover and by the opponent, e.g. 10,22.
    #[arg(long, value_parser = parse_captured, default_value = "0,0")]
    pub captured: (u32, u32),
    /// The database directory.
    #[arg(long, default_value = "db")]
    pub db: PathBuf,
    /// The rule set [default: the only one present in the directory].
    #[arg(long)]
    pub rules: Option<RuleSet>,
    /// The most moves of principal variation to show.
    #[arg(long, default_value_t = PV_LIMIT)]
    pub pv_limit: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Above the levels built, search for this long, e.g. 500ms, 2s, 10s, 1m.
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    pub time: Duration,
    /// Above the levels built, search at most this many plies deep.
    #[arg(long)]
    pub depth: Option<u32>,
    /// The search's transposition table, e.g. 64M, 1G.
    #[arg(long, value_parser = super::parse_bytes, default_value = "64M")]
    pub hash: u64,
    /// Search threads [default: one per core].
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Reads a duration: a number with `ms`, `s` or `m` (`2s`, `500ms`, `1m`).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?}: a duration is a number with ms, s or m, e.g. 500ms, 2s, 1m");
    let t = text.trim();
    let (number, unit) = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((t, "s"), |at| t.split_at(at));
    let n: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "ms" => n / 1000.0,
        "s" => n,
        "m" | "min" => n * 60.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

/// The default length limit of the principal variation.
pub(crate) const PV_LIMIT: usize = 200;

/// Reads "M,O" (or "M O"): seeds captured by the mover and by the opponent.
pub(crate) fn parse_captured(text: &str) -> Result<(u32, u32), String> {
    let parts: Vec<&str> = text.split([',', ' ']).filter(|s| !s.is_empty()).collect();
    let bad = || {
        format!(
            "{text:?}: captured seeds are two numbers, the mover's and the opponent's, e.g. 10,22"
        )
    };
    match parts.as_slice() {
        [m, o] => Ok((m.parse().map_err(|_| bad())?, o.parse().map_err(|_| bad())?)),
        _ => Err(bad()),
    }
}

/// Prints the answer; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let tb = Tablebase::open_for(&args.db, args.rules, args.board.per_side())?;
    if !tb.covers(&args.board) {
        return run_search(&tb, &args);
    }
    if args.json {
        println!(
            "{}",
            answer_json(&tb, &args.board, args.captured, args.pv_limit)?
        );
    } else {
        let analysis = tb.analyse(&args.board)?;
        let pv = tb.principal_variation(&args.board, args.pv_limit)?;
        print_human(&tb, &analysis, &pv, args.captured);
    }
    Ok(ExitCode::SUCCESS)
}

/// The search limits of `args`.
fn limits(args: &Args) -> Limits {
    Limits {
        time: Some(args.time),
        depth: args.depth,
        hash_bytes: usize::try_from(args.hash).unwrap_or(usize::MAX),
        threads: args.threads.unwrap_or(Limits::default().threads),
        ..Limits::default()
    }
}

/// The JSON answer of a search: board, seeds, value, bound, captured, result,
/// result_proven, best, pv, depth, nodes, seconds, `"search": true`, and the
/// legal moves (pit, label, captured, best) with `"value": null` (a search
/// values the best move only).
pub(crate) fn search_json(
    rules: Rules,
    board: &Board,
    captured: (u32, u32),
    answer: &Answer,
) -> serde_json::Value {
    let found = &answer.search;
    let moves: Vec<_> = rules
        .legal_moves(board)
        .iter()
        .map(|m| {
            serde_json::json!({
                "pit": m.pit,
                "label": m.label().to_string(),
                "value": null,
                "captured": m.captured,
                "best": Some(m.pit) == found.best,
            })
        })
        .collect();
    serde_json::json!({
        "search": true,
        "moves": moves,
        "pv_end": "search",
        "board": board.pits(),
        "seeds": board.seeds(),
        "value": found.value.get(),
        "bound": found.bound.name(),
        "captured": [captured.0, captured.1],
        "result": answer.outcome.name(),
        "result_proven": answer.outcome_proven,
        // (A list, as for positions in the databases: here the one move found.)
        "best": found.best.into_iter().collect::<Vec<_>>(),
        "pv": found.pv,
        "depth": found.depth,
        "nodes": found.nodes,
        "seconds": found.seconds,
    })
}

/// The search's answer for one of many positions answered at once (a line
/// of `batch`, a request of `serve`): one thread and a small table each, for
/// `time`; the JSON of [`search_json`].
///
/// # Errors
/// A level file that cannot be read.
pub(crate) fn search_one_json(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    time: Duration,
) -> Result<serde_json::Value, ProbeError> {
    let limits = Limits {
        time: Some(time),
        depth: None,
        hash_bytes: 16 << 20,
        threads: 1,
        ..Limits::default()
    };
    let answer = Searcher::new(tb, limits).answer(board, captured)?;
    Ok(search_json(tb.rules(), board, captured, &answer))
}

/// A line of moves for people: the mover's in upper case, the opponent's in
/// lower case, a capture after an `x` (`A b Cx3`); `-` when there is none.
fn line_text<'m>(moves: impl IntoIterator<Item = &'m Move>, per_side: usize) -> String {
    let mut line = Vec::new();
    let mut root = true;
    for m in moves {
        let label = pit_label(m.pit as usize, per_side);
        let who = if root {
            label.to_ascii_uppercase()
        } else {
            label.to_ascii_lowercase()
        };
        line.push(if m.captured > 0 {
            format!("{who}x{}", m.captured)
        } else {
            who.to_string()
        });
        if m.turn == Turn::Passes {
            root = !root;
        }
    }
    if line.is_empty() {
        "-".to_string()
    } else {
        line.join(" ")
    }
}

/// Above the levels built: the search's answer.
fn run_search(tb: &Tablebase, args: &Args) -> CmdResult {
    let board = &args.board;
    let answer = Searcher::new(tb, limits(args)).answer(board, args.captured)?;
    if args.json {
        println!("{}", search_json(tb.rules(), board, args.captured, &answer));
        return Ok(ExitCode::SUCCESS);
    }
    let found = &answer.search;
    let (result, result_proven) = (answer.outcome, answer.outcome_proven);
    let p = board.per_side() as usize;
    println!("{}", board.drawing());
    println!(
        "{} with {} seeds on the board ({}, {} pits per side): above the levels built ({}), searched",
        board.to_notation(),
        board.seeds(),
        tb.rules().set(),
        p,
        tb.complete_up_to()
            .map_or("none".to_string(), |n| format!("0..={n}"))
    );
    let meaning = match found.bound {
        Bound::Exact => "exact: proven with exact leaves",
        Bound::Lower => "at least this much: proven",
        Bound::Upper => "at most this much: proven",
        Bound::Estimate => "an estimate: not proven",
    };
    println!("value {} ({meaning})", found.value);
    println!(
        "result with {}-{} already captured: {} for the mover ({})",
        args.captured.0,
        args.captured.1,
        result,
        if result_proven {
            "proven"
        } else {
            "not proven"
        }
    );
    let label = |pit: u8| pit_label(pit as usize, p);
    match found.best {
        Some(pit) => println!("best move {}", label(pit)),
        None => println!("no legal move: the game is over"),
    }
    // The line played out, for its captures and turns.
    let mut moves = Vec::new();
    let mut at = *board;
    for &pit in &found.pv {
        let Ok(m) = tb.rules().play(&at, pit as usize) else {
            break;
        };
        at = m.child;
        moves.push(m);
    }
    println!(
        "principal variation (upper case: the mover, lower case: the opponent): {}",
        line_text(&moves, p)
    );
    println!(
        "depth {}, {} positions in {:.2} s ({:.0} per second)",
        found.depth,
        found.nodes,
        found.seconds,
        found.nodes as f64 / found.seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// The whole JSON answer of `score --json` for `board` (also the answer of
/// `serve`'s `/api/position`): the analysis and a principal variation of at
/// most `pv_limit` moves, see [`to_json`].
///
/// # Errors
/// As [`Tablebase::analyse`]: a missing level, a board of another size, an
/// unreadable level file.
pub(crate) fn answer_json(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    pv_limit: usize,
) -> Result<serde_json::Value, ProbeError> {
    let analysis = tb.analyse(board)?;
    let pv = tb.principal_variation(board, pv_limit)?;
    Ok(to_json(&analysis, &pv, captured))
}

fn pv_end_name(end: PvEnd) -> &'static str {
    match end {
        PvEnd::GameOver => "game over",
        PvEnd::Repetition => "repetition",
        PvEnd::Limit => "limit",
    }
}

/// The JSON answer: seeds, value, result, moves, best, pv (pits), and more.
pub(crate) fn to_json(a: &Analysis, pv: &Pv, captured: (u32, u32)) -> serde_json::Value {
    let moves: Vec<_> = a
        .moves
        .iter()
        .map(|m| {
            serde_json::json!({
                "pit": m.mov.pit,
                "label": m.mov.label().to_string(),
                "value": m.value.get(),
                "captured": m.mov.captured,
                "best": m.best,
            })
        })
        .collect();
    serde_json::json!({
        "board": a.board.pits(),
        "seeds": a.board.seeds(),
        "value": a.value.get(),
        "captured": [captured.0, captured.1],
        "result": a.value.outcome(captured.0, captured.1).name(),
        "moves": moves,
        "best": a.best,
        "pv": pv.steps.iter().map(|s| s.mov.pit).collect::<Vec<_>>(),
        "pv_end": pv_end_name(pv.end),
        "bound": "exact",
    })
}

fn print_human(tb: &Tablebase, a: &Analysis, pv: &Pv, captured: (u32, u32)) {
    let p = a.board.per_side() as usize;
    println!("{}", a.board.drawing());
    println!(
        "{} with {} seeds on the board ({}, {} pits per side)",
        a.board.to_notation(),
        a.board.seeds(),
        tb.rules().set(),
        p
    );
    let result = a.value.outcome(captured.0, captured.1);
    println!(
        "value {}: with perfect play the mover gains {} seeds more than the opponent from here",
        a.value,
        a.value.get()
    );
    println!(
        "result with {}-{} already captured: {} for the mover (final {}-{})",
        captured.0,
        captured.1,
        result,
        (captured.0 as i64 * 2 + a.board.seeds() as i64 + a.value.get() as i64) / 2,
        (captured.1 as i64 * 2 + a.board.seeds() as i64 - a.value.get() as i64) / 2,
    );
    if a.moves.is_empty() {
        println!("no legal move: the game is over, the opponent takes the remaining seeds");
    }
    for m in &a.moves {
        let capture = if m.mov.captured > 0 {
            format!("captures {}", m.mov.captured)
        } else {
            String::new()
        };
        println!(
            "  {}  {:>4}  {:<12} {}",
            m.mov.label(),
            m.value.to_string(),
            capture,
            if m.best { "best" } else { "" }
        );
    }
    println!(
        "principal variation ({} moves, {}; upper case: the mover, lower case: the opponent):",
        pv.steps.len(),
        pv_end_name(pv.end)
    );
    println!("  {}", line_text(pv.steps.iter().map(|s| &s.mov), p));
}
