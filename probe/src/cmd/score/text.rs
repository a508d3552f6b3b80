//! The answers of `score` for people: the board, the value, every move and
//! a line of play.

use awari_dbformat::{pit_label, Board, Move, Turn};
use awari_probe::bounds::{outcome, BoundsOutcome};
use awari_probe::search::{Answer, Bound, RepetitionRule};
use awari_probe::{Analysis, BoundsAnalysis, BoundsTablebase, Pv, Tablebase};

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

/// Prints a search's `answer` for `board` with `captured` seeds already
/// taken (above the levels built, or under a `rule` that ends the game at
/// a repetition).
pub(super) fn print_search(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    answer: &Answer,
    rule: RepetitionRule,
) {
    let found = &answer.search;
    let (result, result_proven) = (answer.outcome, answer.outcome_proven);
    let p = board.per_side() as usize;
    let levels = tb
        .complete_up_to()
        .map_or("none".to_string(), |n| format!("0..={n}"));
    let why = if rule == RepetitionRule::EvenSplit {
        format!("above the levels built ({levels}), searched")
    } else {
        format!("searched under --repetition {rule} (levels {levels} as estimates)")
    };
    println!("{}", board.drawing());
    println!(
        "{} with {} seeds on the board ({}, {} pits per side): {why}",
        board.to_notation(),
        board.seeds(),
        tb.rules().set(),
        p,
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
        captured.0,
        captured.1,
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
}

/// Prints the analysis `a` from the databases and its principal variation.
pub(super) fn print_human(tb: &Tablebase, a: &Analysis, pv: &Pv, captured: (u32, u32)) {
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
        pv.end.name()
    );
    println!("  {}", line_text(pv.steps.iter().map(|s| &s.mov), p));
}

/// What all bounds hold for, said once.
const EVERY_RULE: &str = "the same under every repetition rule";

/// Prints the bounds analysis `a` (`--repetition any`), with the result when
/// `captured` is given.
pub(super) fn print_bounds(tb: &BoundsTablebase, a: &BoundsAnalysis, captured: Option<(u32, u32)>) {
    let p = a.board.per_side() as usize;
    println!("{}", a.board.drawing());
    println!(
        "{} with {} seeds on the board ({}, {} pits per side), any repetition rule",
        a.board.to_notation(),
        a.board.seeds(),
        tb.rules().set(),
        p
    );
    let (lower, upper) = (a.bounds.lower, a.bounds.upper);
    if a.bounds.is_exact() {
        println!(
            "value {lower}: {EVERY_RULE}; with perfect play the mover gains {} seeds more than the opponent from here",
            lower.get()
        );
    } else {
        println!(
            "lower bound {lower}, upper bound {upper}: with perfect play the mover gains at least {} and at most {} seeds more than the opponent from here, whatever rule ends endless play",
            lower.get(),
            upper.get()
        );
    }
    if let Some((mine, theirs)) = captured {
        let result = match outcome(a.bounds, (mine, theirs)) {
            BoundsOutcome::Decided(o) => format!("{o} for the mover under every repetition rule"),
            BoundsOutcome::Depends => "depends on the repetition rule".to_string(),
        };
        println!("result with {mine}-{theirs} already captured: {result}");
    }
    if a.moves.is_empty() {
        println!("no legal move: the game is over, the opponent takes the remaining seeds");
    }
    for m in &a.moves {
        let capture = if m.mov.captured > 0 {
            format!("captures {}", m.mov.captured)
        } else {
            String::new()
        };
        let line = format!(
            "  {}  lower {:>3}  upper {:>3}  {:<12} {}",
            m.mov.label(),
            m.bounds.lower.to_string(),
            m.bounds.upper.to_string(),
            capture,
            if m.bounds.is_exact() { EVERY_RULE } else { "" }
        );
        println!("{}", line.trim_end());
    }
}
