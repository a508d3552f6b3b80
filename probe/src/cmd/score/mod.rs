//! `awari-probe score`: the perfect-play value of a position, its moves and a
//! principal variation.

mod text;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use awari_dbformat::{Board, RuleSet};
use awari_probe::search::{Game, Limits, RepetitionRule, Searcher};
use awari_probe::{BoundsTablebase, Tablebase};

use super::CmdResult;
use awari_probe::json::{answer_json, bounds_answer_json, name_repetition, search_json};
use text::{print_bounds, print_human, print_search};

/// Print a position's value, every move with its value, and a principal variation.
///
/// The value is what the mover will still capture minus what the opponent will
/// still capture, with perfect play; with --captured it also says who wins.
///
/// With --repetition any (levels built by `awari-solve --repetition any`) it
/// prints the lower and upper bounds that hold under every rule ending
/// endless play, for the position and each move, and whether they decide the
/// result; there is no search above the levels and no principal variation.
/// With --repetition own-rows or three-fold (a repetition ends the game, each
/// side taking its own row) the position is searched under that rule, with
/// --history the positions played since the last capture.
///
/// Example: awari-probe score "1 1 1 1 1 2 / 4 2 3 0 0 0" --captured 10,22
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The board: 2P numbers, the mover's pits first, e.g. "1 1 1 1 1 2 / 4 2 3 0 0 0".
    pub board: Board,
    /// Seeds already captured by the mover and by the opponent, e.g. 10,22 [default: 0,0].
    #[arg(long, value_parser = parse_captured)]
    pub captured: Option<(u32, u32)>,
    /// How endless play is valued: even-split (one score per board), any
    /// (bounds that hold under every repetition rule), or the rule of a game
    /// played: own-rows (the first repetition since the last capture ends
    /// the game, each side taking its own row) or three-fold; those two are
    /// searched.
    #[arg(long, default_value = "even-split")]
    pub repetition: RepetitionChoice,
    /// With own-rows or three-fold: the positions played since the last
    /// capture, oldest first, each seen from its mover and separated by
    /// `;` (the last is the board's parent), e.g. "4 4 4 4 4 4 / 4 4 4 4 4 4;5 5 5 5 4 4 / 4 4 4 4 4 0".
    #[arg(long, value_parser = parse_history)]
    pub history: Option<History>,
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
    #[arg(long, value_parser = awari_dbformat::cli::parse_size, default_value = "64M")]
    pub hash: u64,
    /// Search threads [default: one per core].
    #[arg(long)]
    pub threads: Option<usize>,
}

/// What `--repetition` asks for: the bounds of `any`, or one of the
/// search's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RepetitionChoice {
    /// The bounds of the `any` levels.
    Any,
    /// Scores under a rule: even-split (the databases'), own-rows, three-fold.
    Rule(RepetitionRule),
}

impl std::str::FromStr for RepetitionChoice {
    type Err = String;

    /// `any`, `even-split`, `own-rows` or `three-fold`.
    fn from_str(text: &str) -> Result<RepetitionChoice, String> {
        if text == "any" {
            return Ok(RepetitionChoice::Any);
        }
        text.parse()
            .map(RepetitionChoice::Rule)
            .map_err(|_| format!("{text:?}: expected even-split, any, own-rows or three-fold"))
    }
}

/// Positions played before a board (`--history`), oldest first.
pub(crate) type History = Vec<Board>;

/// Reads boards separated by `;` (an empty text: none).
pub(crate) fn parse_history(text: &str) -> Result<History, String> {
    text.split(';')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| b.parse::<Board>().map_err(|e| format!("history: {e}")))
        .collect()
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
    let rule = match args.repetition {
        RepetitionChoice::Any => return run_bounds(&args),
        RepetitionChoice::Rule(rule) => rule,
    };
    if args.history.is_some() && rule == RepetitionRule::EvenSplit {
        return Err("--history needs --repetition own-rows or three-fold (the even split's values do not depend on the history)".into());
    }
    let tb = Tablebase::open_for(&args.db, args.rules, args.board.per_side())?;
    if !tb.covers(&args.board) || rule != RepetitionRule::EvenSplit {
        return run_search(&tb, &args, rule);
    }
    let captured = args.captured.unwrap_or((0, 0));
    if args.json {
        println!(
            "{}",
            answer_json(&tb, &args.board, captured, args.pv_limit)?
        );
    } else {
        let analysis = tb.analyse(&args.board)?;
        let pv = tb.principal_variation(&args.board, args.pv_limit)?;
        print_human(&tb, &analysis, &pv, captured);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--repetition any`: the bounds of the position and its moves.
fn run_bounds(args: &Args) -> CmdResult {
    let tb = BoundsTablebase::open_for(&args.db, args.rules, args.board.per_side())?;
    if args.json {
        println!("{}", bounds_answer_json(&tb, &args.board, args.captured)?);
    } else {
        print_bounds(&tb, &tb.analyse(&args.board)?, args.captured);
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

/// Above the levels built: the search's answer.
fn run_search(tb: &Tablebase, args: &Args, rule: RepetitionRule) -> CmdResult {
    let board = &args.board;
    let captured = args.captured.unwrap_or((0, 0));
    let game = Game {
        repetition: rule,
        history: args.history.clone().unwrap_or_default(),
        ..Game::default()
    };
    let answer = Searcher::new(tb, limits(args))
        .with_game(game)
        .answer(board, captured)?;
    if args.json {
        let mut json = search_json(tb.rules(), board, captured, &answer);
        name_repetition(&mut json, rule);
        println!("{json}");
    } else {
        print_search(tb, board, captured, &answer, rule);
    }
    Ok(ExitCode::SUCCESS)
}
