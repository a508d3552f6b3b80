//! Matches between players at equal time per move, from varied openings:
//! the search with the databases at its leaves, the same search without
//! them, a plain minimax (no pruning, no table) deepened until its time is
//! up, and the search with the databases under other evaluations than the
//! default (`search::Evaluation`). A game is decided by the databases as soon as it reaches
//! a level they hold (perfect play from there), or split as it stands after
//! 400 moves. Each opening is played twice, colours swapped.
//!
//! ```sh
//! cargo run --release -p awari-probe --example match -- DB [MS_PER_MOVE] [OPENINGS] [evaluation]
//! ```
//! (`scripts/bench-search.sh` runs it.)

use std::time::{Duration, Instant};

use awari_dbformat::{Board, Rules, Score, Turn};
use awari_probe::search::{Evaluation, Limits, Searcher};
use awari_probe::Tablebase;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Player {
    /// The search with the databases.
    Databases,
    /// The same search without them.
    Search,
    /// Plain minimax, iteratively deepened.
    Minimax,
    /// The search with the databases and another evaluation than the
    /// default.
    Evaluated(Evaluation),
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let db = args
        .get(1)
        .ok_or("usage: match DB [MS_PER_MOVE] [OPENINGS]")?;
    let ms: u64 = args.get(2).map_or(Ok(100), |a| a.parse())?;
    let openings: usize = args.get(3).map_or(Ok(6), |a| a.parse())?;
    // `evaluation`: only the evaluations against the default.
    let evaluations_only = args.get(4).is_some_and(|a| a == "evaluation");
    let rules = Rules::default();
    let tb = Tablebase::open(db, rules)?;
    let time = Duration::from_millis(ms);
    let starts: Vec<Board> = (0..openings as u64).map(|k| opening(rules, k)).collect();
    println!(
        "{} ms per move, {} openings x 2 colours, levels 0..={} adjudicate",
        ms,
        openings,
        tb.complete_up_to().unwrap_or(0)
    );
    let evaluations = [
        (Player::Evaluated(Evaluation::Captured), Player::Databases),
        (
            Player::Evaluated(Evaluation::SeedsOnSide(2)),
            Player::Databases,
        ),
        (
            Player::Evaluated(Evaluation::SeedsOnSide(8)),
            Player::Databases,
        ),
    ];
    let others = [
        (Player::Databases, Player::Search),
        (Player::Databases, Player::Minimax),
        (Player::Search, Player::Minimax),
    ];
    let pairs = if evaluations_only {
        evaluations.to_vec()
    } else {
        others.iter().chain(&evaluations).copied().collect()
    };
    for (a, b) in pairs {
        let (mut points, mut games) = (0.0, 0);
        let mut seeds = 0i64;
        for start in &starts {
            for a_first in [true, false] {
                let diff = play(rules, &tb, *start, a, b, a_first, time)?;
                points += match diff.signum() {
                    1 => 1.0,
                    0 => 0.5,
                    _ => 0.0,
                };
                seeds += diff;
                games += 1;
            }
        }
        println!(
            "{a:?} against {b:?}: {points} of {games} points, {:+.1} seeds per game",
            seeds as f64 / games as f64
        );
    }
    Ok(())
}

/// The start position after 4 moves chosen by `k` (pit `(k >> 3i) % 6`, the
/// next legal one when that is empty).
fn opening(rules: Rules, k: u64) -> Board {
    let mut board: Board = "4 4 4 4 4 4 / 4 4 4 4 4 4".parse().expect("the start");
    for i in 0..4 {
        let moves = rules.legal_moves(&board);
        let list: Vec<_> = moves.iter().collect();
        let m = list[((k * 2654435761) >> (3 * i)) as usize % list.len()];
        board = m.child;
    }
    board
}

/// One game from `start` (captures so far taken as even), `a` moving first
/// when `a_first`: the seeds `a` ends with minus `b`'s.
fn play(
    rules: Rules,
    tb: &Tablebase,
    start: Board,
    a: Player,
    b: Player,
    a_first: bool,
    time: Duration,
) -> Result<i64, Box<dyn std::error::Error>> {
    let mut board = start;
    let mut a_to_move = a_first;
    // Seeds captured by a, by b.
    let (mut by_a, mut by_b) = (0i64, 0i64);
    for _ in 0..400 {
        if tb.complete_up_to().is_some_and(|n| board.seeds() <= n) {
            // Perfect play from here.
            let v = i64::from(tb.score(&board)?.get());
            let rest = i64::from(board.seeds());
            let (mover, other) = ((rest + v) / 2, (rest - v) / 2);
            return Ok(if a_to_move {
                by_a + mover - by_b - other
            } else {
                by_a + other - by_b - mover
            });
        }
        if let Some(v) = rules.terminal_value(&board) {
            let v = i64::from(v.get());
            return Ok(by_a - by_b + if a_to_move { v } else { -v });
        }
        let player = if a_to_move { a } else { b };
        let pit = choose(rules, tb, &board, player, time)?;
        let m = rules.play(&board, pit as usize)?;
        if a_to_move {
            by_a += i64::from(m.captured);
        } else {
            by_b += i64::from(m.captured);
        }
        if m.turn == Turn::Passes {
            a_to_move = !a_to_move;
        }
        board = m.child;
    }
    Ok(by_a - by_b)
}

/// The move `player` chooses in `time`.
fn choose(
    rules: Rules,
    tb: &Tablebase,
    board: &Board,
    player: Player,
    time: Duration,
) -> Result<u8, Box<dyn std::error::Error>> {
    let mut limits = Limits {
        time: Some(time),
        depth: None,
        hash_bytes: 16 << 20,
        threads: 1,
        ..Limits::default()
    };
    let found = match player {
        Player::Databases => Searcher::new(tb, limits).search(board)?,
        Player::Evaluated(evaluation) => {
            limits.evaluation = evaluation;
            Searcher::new(tb, limits).search(board)?
        }
        Player::Search => Searcher::without_levels(rules, limits).search(board)?,
        Player::Minimax => return Ok(minimax(rules, board, time)),
    };
    Ok(found.best.ok_or("a position with a move")?)
}

/// Plain minimax to increasing depths until `time` is up: the best move of
/// the last depth completed (leaves: the seeds captured on the way; game
/// ends exact).
fn minimax(rules: Rules, board: &Board, time: Duration) -> u8 {
    let deadline = Instant::now() + time;
    let moves = rules.legal_moves(board);
    let mut best = moves.iter().next().expect("a move").pit;
    for depth in 1..64 {
        let mut round_best = None;
        for m in moves.iter() {
            let Some(child) = value(rules, &m.child, depth - 1, deadline) else {
                return best;
            };
            let v = m.value(child);
            if round_best.is_none_or(|(b, _)| v > b) {
                round_best = Some((v, m.pit));
            }
        }
        best = round_best.expect("a move").1;
    }
    best
}

/// The minimax value of `board` to `depth`; `None` past the deadline.
fn value(rules: Rules, board: &Board, depth: u32, deadline: Instant) -> Option<Score> {
    if let Some(v) = rules.terminal_value(board) {
        return Some(v);
    }
    if depth == 0 {
        return (Instant::now() < deadline).then_some(Score::DRAW);
    }
    let mut best = None;
    for m in rules.legal_moves(board).iter() {
        let v = m.value(value(rules, &m.child, depth - 1, deadline)?);
        best = best.max(Some(v));
    }
    best
}
