//! `awari-probe uci`: an engine that speaks the UCI-like protocol of
//! Samurai's Oware engines (Aalina, Auale's engine), keeping its
//! transposition table and the game's moves from one move to the next.

mod position;
mod session;

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::{self, ScopedJoinHandle};
use std::time::Duration;

use awari_dbformat::RuleSet;
use awari_probe::search::{Game, Iteration, Limits, RepetitionRule, Searcher, MAX_CONTEMPT};
use awari_probe::{ProbeError, Tablebase};

use super::CmdResult;
use position::Position;

/// Plays a game move by move as an engine, on standard input and output.
///
/// The protocol is the UCI-like one of Samurai's Oware engines (Aalina):
/// `uci`, `isready`, `ucinewgame`, `position startpos|fen F [moves M]`,
/// `go movetime MS | depth N | wtime MS btime MS [winc MS binc MS] | infinite`,
/// `stop`, `setoption name N value V`, `quit`. Moves are letters: `A`..`F`
/// South's houses from South's left, `a`..`f` North's from North's left
/// (`moves FbAc`). The engine answers `info depth D score cp C ... pv ...`
/// (C: the margin in hundredths of a seed) and `bestmove X`.
///
/// Example: awari-probe uci --db db --rules abapa
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The database directory: its levels are the search's leaves.
    #[arg(long, default_value = "db")]
    pub db: PathBuf,
    /// The rule set [default: the only one present in the directory].
    #[arg(long)]
    pub rules: Option<RuleSet>,
    /// How the game ends a repetition: own-rows (the first repetition since
    /// the last capture ends the game, each side taking its own row, as
    /// OpenSpiel and Aalina play), three-fold, or even-split (the
    /// databases' rule: endless play shares the seeds).
    #[arg(long, default_value = "own-rows")]
    pub repetition: RepetitionRule,
    /// The transposition table, e.g. 64M, 1G (option `Hash`, in MB).
    #[arg(long, value_parser = awari_dbformat::cli::parse_size, default_value = "64M")]
    pub hash: u64,
    /// Search threads (option `Threads`).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Seeds a draw is worth less than the result it ties, to the engine
    /// (option `Contempt`; -10..=10).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub contempt: i16,
}

/// Seeds per house at the start.
const START_SEEDS: u8 = 4;

/// Reads commands until `quit` or the end of the input.
pub(crate) fn run(args: Args) -> CmdResult {
    let tb = Tablebase::open_for(&args.db, args.rules, 6)?;
    let settings = Settings {
        repetition: args.repetition,
        hash_bytes: usize::try_from(args.hash).unwrap_or(usize::MAX),
        threads: args.threads.max(1),
        contempt: args.contempt.clamp(-MAX_CONTEMPT, MAX_CONTEMPT),
    };
    let shared = Shared {
        searcher: Mutex::new(Searcher::new(&tb, settings.limits(None, None))),
        abort: Arc::new(AtomicBool::new(false)),
    };
    let session = Session {
        position: Position::start(tb.rules(), START_SEEDS),
        settings,
    };
    serve(&shared, session, io::stdin().lock())?;
    Ok(ExitCode::SUCCESS)
}

/// What the options set.
#[derive(Clone, Copy, Debug)]
struct Settings {
    repetition: RepetitionRule,
    hash_bytes: usize,
    threads: usize,
    contempt: i16,
}

impl Settings {
    /// The limits of a search of `time` or `depth`.
    fn limits(&self, time: Option<Duration>, depth: Option<u32>) -> Limits {
        Limits {
            time,
            depth,
            hash_bytes: self.hash_bytes,
            threads: self.threads,
            ..Limits::default()
        }
    }
}

/// What the reading thread and a search share: the searcher (its table
/// kept across moves) and the flag that stops a search.
struct Shared<'a> {
    searcher: Mutex<Searcher<'a>>,
    abort: Arc<AtomicBool>,
}

/// The reading thread's state: the game and the options.
struct Session {
    position: Position,
    settings: Settings,
}

/// One search to run: the game, and how long.
struct Job {
    position: Position,
    game: Game,
    limits: Limits,
}

/// Prints one line of the protocol and flushes it.
fn say(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Reports an input the engine cannot take, on both streams, and goes on.
fn complain(err: &ProbeError) {
    eprintln!("awari-probe uci: {err}");
    say(&format!("info string error: {err}"));
}

/// Answers the commands of `input` until `quit` or its end; a search runs
/// on a thread of its own while commands are read.
fn serve(shared: &Shared<'_>, mut session: Session, input: impl BufRead) -> io::Result<()> {
    thread::scope(|scope| {
        let mut thinking: Option<ScopedJoinHandle<'_, ()>> = None;
        for line in input.lines() {
            let line = line?;
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some((&command, rest)) = words.split_first() else {
                continue;
            };
            match command {
                "isready" => say("readyok"),
                "stop" | "quit" => {
                    shared.abort.store(true, Relaxed);
                    wait(&mut thinking);
                    if command == "quit" {
                        return Ok(());
                    }
                }
                "debug" | "ponderhit" => {}
                _ => {
                    // Every other command waits for the search under way.
                    wait(&mut thinking);
                    let done = match command {
                        "go" => session.job(rest).map(|job| {
                            shared.abort.store(false, Relaxed);
                            thinking = Some(scope.spawn(move || think(shared, job)));
                        }),
                        _ => session.command(shared, command, rest),
                    };
                    if let Err(e) = done {
                        complain(&e);
                    }
                }
            }
        }
        shared.abort.store(true, Relaxed);
        wait(&mut thinking);
        Ok(())
    })
}

/// Waits for the search under way, if any.
fn wait(thinking: &mut Option<ScopedJoinHandle<'_, ()>>) {
    if let Some(handle) = thinking.take() {
        let _ = handle.join();
    }
}

/// Runs `job`: `info` after each completed iteration, then `bestmove`
/// (`0000` when the game is over).
fn think(shared: &Shared<'_>, job: Job) {
    let Job {
        position,
        game,
        limits,
    } = job;
    if let Some(why) = position.over(game.repetition) {
        say(&format!("info string the game is over: {why}"));
        say("bestmove 0000");
        return;
    }
    let board = *position.board();
    let mut searcher = shared.searcher.lock().expect("a search panicked");
    searcher.set_game(game);
    searcher.set_limits(limits);
    let info = |it: &Iteration| say(&info_line(&position, it));
    let found = searcher.think(&board, shared.abort.clone(), info);
    let pit = match found {
        Ok(Some(it)) => it.pv[0],
        Ok(None) => first_move(&position),
        Err(e) => {
            complain(&e);
            first_move(&position)
        }
    };
    say(&format!(
        "bestmove {}",
        position.letter(pit, position.south_to_move())
    ));
}

/// The first legal move (the game is not over).
fn first_move(position: &Position) -> u8 {
    let moves = position.rules().legal_moves(position.board());
    let first = moves.iter().next().map_or(0, |m| m.pit);
    first
}

/// An iteration as an `info` line: depth, score (the margin in hundredths
/// of a seed), nodes, time, speed, principal variation; and a second line
/// when the result is proven.
fn info_line(position: &Position, it: &Iteration) -> String {
    let ms = (it.seconds * 1000.0) as u64;
    let nps = (it.nodes as f64 / it.seconds.max(1e-6)) as u64;
    let line = format!(
        "info depth {} score cp {} nodes {} time {ms} nps {nps} pv {}",
        it.depth,
        i32::from(it.margin) * 100,
        it.nodes,
        position.letters(&it.pv)
    );
    match it.result {
        None => line,
        Some(result) => {
            let word = match result {
                1 => "win",
                0 => "draw",
                _ => "loss",
            };
            format!("{line}\ninfo string proven {word} for the player to move")
        }
    }
}
