//! The JSON answers of `awari-probe score --json`, shared by `batch`,
//! `serve` and the Python package: a position's analysis from the
//! databases, or a search's answer above them.

use std::time::Duration;

use crate::bounds::{outcome, BoundsAnalysis, BoundsTablebase};
use crate::search::{Answer, Game, Limits, RepetitionRule, Searcher};
use crate::{Analysis, ProbeError, Pv, Tablebase};
use awari_dbformat::{Board, Bounds, Rules};

/// The JSON answer of a search: board, seeds, value, bound, captured, result,
/// result_proven, best, pv, depth, nodes, seconds, `"search": true`, and the
/// legal moves (pit, label, captured, best) with `"value": null` (a search
/// values the best move only).
pub fn search_json(
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
pub fn search_one_json(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    time: Duration,
) -> Result<serde_json::Value, ProbeError> {
    search_game_json(tb, board, captured, time, Game::default())
}

/// As [`search_one_json`], in `game` (its repetition rule and the
/// positions before the board; its captured seeds are `captured`), with
/// the rule in the JSON (`"repetition"`) unless it is the even split.
///
/// # Errors
/// A level file that cannot be read.
pub fn search_game_json(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    time: Duration,
    game: Game,
) -> Result<serde_json::Value, ProbeError> {
    let limits = Limits {
        time: Some(time),
        depth: None,
        hash_bytes: 16 << 20,
        threads: 1,
        ..Limits::default()
    };
    let rule = game.repetition;
    let answer = Searcher::new(tb, limits)
        .with_game(game)
        .answer(board, captured)?;
    let mut json = search_json(tb.rules(), board, captured, &answer);
    name_repetition(&mut json, rule);
    Ok(json)
}

/// Adds `"repetition"` to a search's JSON when `rule` is not the even
/// split (the databases' own rule, left unnamed as before the rules of
/// play existed).
pub fn name_repetition(json: &mut serde_json::Value, rule: RepetitionRule) {
    if rule != RepetitionRule::EvenSplit {
        json["repetition"] = rule.name().into();
    }
}

/// The whole JSON answer of `score --json` for `board` (also the answer of
/// `serve`'s `/api/position`): the analysis and a principal variation of at
/// most `pv_limit` moves, see [`to_json`].
///
/// # Errors
/// As [`Tablebase::analyse`]: a missing level, a board of another size, an
/// unreadable level file.
pub fn answer_json(
    tb: &Tablebase,
    board: &Board,
    captured: (u32, u32),
    pv_limit: usize,
) -> Result<serde_json::Value, ProbeError> {
    let analysis = tb.analyse(board)?;
    let pv = tb.principal_variation(board, pv_limit)?;
    Ok(to_json(&analysis, &pv, captured))
}

/// The JSON answer: seeds, value, result, moves, best, pv (pits), and more.
pub fn to_json(a: &Analysis, pv: &Pv, captured: (u32, u32)) -> serde_json::Value {
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
        "pv_end": pv.end.name(),
        "bound": "exact",
    })
}

/// `"lower"`, `"upper"` and `"exact"` (lower == upper) of `bounds`, the
/// fields that take the place of `"value"` under `--repetition any`.
pub fn bounds_fields(bounds: Bounds) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    out.insert("lower".into(), bounds.lower.get().into());
    out.insert("upper".into(), bounds.upper.get().into());
    out.insert("exact".into(), bounds.is_exact().into());
    out
}

/// The JSON answer of `score --repetition any --json` (also `serve`'s
/// `/api/position?repetition=any`): `"repetition": "any"`, board, seeds,
/// lower, upper, exact, and moves (pit, label, captured, lower, upper,
/// exact; no move is marked best); with `captured` given, also
/// `"captured"` and `"result"` (`win`, `draw`, `loss` or `depends`, see
/// [`crate::bounds::outcome`]).
pub fn bounds_to_json(a: &BoundsAnalysis, captured: Option<(u32, u32)>) -> serde_json::Value {
    let moves: Vec<_> = a
        .moves
        .iter()
        .map(|m| {
            let mut v = serde_json::json!({
                "pit": m.mov.pit,
                "label": m.mov.label().to_string(),
                "captured": m.mov.captured,
            });
            v.as_object_mut()
                .expect("an object")
                .extend(bounds_fields(m.bounds));
            v
        })
        .collect();
    let mut out = serde_json::json!({
        "repetition": "any",
        "board": a.board.pits(),
        "seeds": a.board.seeds(),
    });
    let fields = out.as_object_mut().expect("an object");
    fields.extend(bounds_fields(a.bounds));
    if let Some(c) = captured {
        fields.insert("captured".into(), serde_json::json!([c.0, c.1]));
        fields.insert("result".into(), outcome(a.bounds, c).name().into());
    }
    fields.insert("moves".into(), moves.into());
    out
}

/// [`bounds_to_json`] of `board`'s analysis in `tb`.
///
/// # Errors
/// As [`BoundsTablebase::analyse`]: a missing bound level, a board of
/// another size, an unreadable or inconsistent level file.
pub fn bounds_answer_json(
    tb: &BoundsTablebase,
    board: &Board,
    captured: Option<(u32, u32)>,
) -> Result<serde_json::Value, ProbeError> {
    Ok(bounds_to_json(&tb.analyse(board)?, captured))
}
