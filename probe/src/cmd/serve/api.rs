//! The JSON API: `/api/position`, `/api/play` and `/api/info`.
//!
//! Every answer is JSON. A request the server cannot make sense of gets 400 and
//! `{"error": "..."}` saying what is wrong. A position above the levels built
//! is answered by a search (`time=`, 1 s by default, at most 10 s), as
//! `awari-probe score --json` answers it, with `"search": true`. With
//! `repetition=any` a position is answered from the bound levels, as
//! `awari-probe score --repetition any --json` answers it (no search: a
//! missing bound level is a 400 naming its file).

use std::sync::Arc;

use awari_dbformat::{parse_pit, Board, RuleSet, Rules, Turn};
use awari_probe::ProbeError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::games::Games;
use crate::cmd::score::{
    parse_captured, parse_duration, parse_history, RepetitionChoice, PV_LIMIT,
};
use awari_probe::json::{answer_json, bounds_answer_json, search_game_json, search_one_json};
use awari_probe::search::{Game, RepetitionRule};
use std::time::Duration;

/// The longest query string accepted, in bytes.
pub(crate) const MAX_QUERY: usize = 16 << 10;
/// The largest request body accepted, in bytes.
pub(crate) const MAX_BODY: usize = 1024;
/// The longest principal variation a request may ask for.
pub(crate) const MAX_PV_LIMIT: usize = 1000;
/// The search time of a position above the levels built, unless asked.
pub(crate) const SEARCH_TIME: Duration = Duration::from_secs(1);
/// The longest search time a request may ask for.
pub(crate) const MAX_SEARCH_TIME: Duration = Duration::from_secs(10);

/// What the handlers share: the games of the database.
pub(crate) type Shared = Arc<Games>;

/// A request that cannot be answered: its HTTP status and what went wrong.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
    /// The level a position needs that the database does not hold.
    missing_level: Option<u32>,
}

impl ApiError {
    /// A malformed request (400).
    pub(crate) fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            missing_level: None,
        }
    }

    /// A path that names nothing (404).
    pub(crate) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            missing_level: None,
        }
    }
}

impl From<ProbeError> for ApiError {
    /// A missing level is 404 (the position is fine, the database lacks it;
    /// a search answers above the levels built), a missing bound level or a
    /// board the database cannot hold is 400, a damaged file 500.
    fn from(err: ProbeError) -> ApiError {
        let (status, missing_level) = match &err {
            ProbeError::MissingLevel { seeds, .. } => (StatusCode::NOT_FOUND, Some(*seeds)),
            // Bounds are never searched: a missing bound level is a request
            // this database cannot take.
            ProbeError::MissingBoundLevel { seeds, .. } => (StatusCode::BAD_REQUEST, Some(*seeds)),
            ProbeError::WrongSize { .. } | ProbeError::Database { .. } | ProbeError::Input(_) => {
                (StatusCode::BAD_REQUEST, None)
            }
            ProbeError::Db(awari_dbformat::Error::Notation { .. })
            | ProbeError::Db(awari_dbformat::Error::IllegalMove { .. })
            | ProbeError::Db(awari_dbformat::Error::Rules(_)) => (StatusCode::BAD_REQUEST, None),
            ProbeError::Db(_) => (StatusCode::INTERNAL_SERVER_ERROR, None),
        };
        ApiError {
            status,
            message: err.to_string(),
            missing_level,
        }
    }
}

impl From<awari_dbformat::Error> for ApiError {
    fn from(err: awari_dbformat::Error) -> ApiError {
        ProbeError::Db(err).into()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.message });
        if let Some(level) = self.missing_level {
            body["missing_level"] = json!(level);
        }
        (self.status, axum::Json(body)).into_response()
    }
}

/// The query of `/api/position`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionQuery {
    board: String,
    captured: Option<String>,
    rules: Option<String>,
    pv_limit: Option<usize>,
    time: Option<String>,
    repetition: Option<String>,
    history: Option<String>,
}

/// Reads a rule set name, if one is given.
fn parse_rules(rules: Option<&str>) -> Result<Option<RuleSet>, ApiError> {
    rules
        .filter(|r| !r.is_empty())
        .map(|r| r.parse::<RuleSet>().map_err(ApiError::from))
        .transpose()
}

/// `GET /api/position?board=...&captured=M,O&rules=R[&pv_limit=N][&repetition=R][&history=B;B]`:
/// the JSON object `awari-probe score --json` prints for the position (with
/// `repetition=any`, the one `score --repetition any --json` prints: bounds,
/// and a result only when `captured` is given; with `own-rows` or
/// `three-fold` and the positions played since the last capture in
/// `history`, the search's answer under that rule).
pub(crate) async fn position(State(games): State<Shared>, uri: Uri) -> Result<Response, ApiError> {
    let query = uri.query().unwrap_or("");
    if query.len() > MAX_QUERY {
        return Err(ApiError::bad(format!(
            "the query is {} bytes; at most {MAX_QUERY} are accepted",
            query.len()
        )));
    }
    let Query(q) = Query::<PositionQuery>::try_from_uri(&uri).map_err(|e| {
        ApiError::bad(format!(
            "{}; expected board=...&captured=M,O&rules=R",
            e.body_text()
        ))
    })?;
    let board: Board = q.board.parse()?;
    let given = match q.captured.as_deref() {
        None | Some("") => None,
        Some(text) => Some(parse_captured(text).map_err(ApiError::bad)?),
    };
    let captured = given.unwrap_or((0, 0));
    let rules = parse_rules(q.rules.as_deref())?;
    let repetition = match q.repetition.as_deref() {
        None | Some("") => RepetitionChoice::Rule(RepetitionRule::EvenSplit),
        Some(text) => text
            .parse::<RepetitionChoice>()
            .map_err(|e| ApiError::bad(format!("repetition={text}: {e}")))?,
    };
    let history = match q.history.as_deref() {
        None | Some("") => None,
        Some(text) => Some(parse_history(text).map_err(ApiError::bad)?),
    };
    let game = match repetition {
        RepetitionChoice::Rule(rule) if rule != RepetitionRule::EvenSplit => Some(Game {
            repetition: rule,
            history: history.unwrap_or_default(),
            ..Game::default()
        }),
        _ if history.is_some() => return Err(ApiError::bad(
            "history needs repetition=own-rows or three-fold (other values do not depend on it)",
        )),
        _ => None,
    };
    let pv_limit = q.pv_limit.unwrap_or(PV_LIMIT);
    if pv_limit > MAX_PV_LIMIT {
        return Err(ApiError::bad(format!(
            "pv_limit {pv_limit} is over {MAX_PV_LIMIT}"
        )));
    }
    let time = match q.time.as_deref() {
        None | Some("") => SEARCH_TIME,
        Some(text) => parse_duration(text).map_err(ApiError::bad)?,
    };
    if time > MAX_SEARCH_TIME {
        return Err(ApiError::bad(format!(
            "time {text:?} is over {MAX_SEARCH_TIME:?}",
            text = q.time.unwrap_or_default()
        )));
    }
    let answer = tokio::task::spawn_blocking(move || {
        if repetition == RepetitionChoice::Any {
            let tb = games.get_bounds(rules, board.per_side())?;
            return Ok(bounds_answer_json(tb, &board, given)?);
        }
        let tb = games.get(rules, board.per_side())?;
        if let Some(game) = game {
            // A rule of play: always searched, the levels as estimates.
            return Ok(search_game_json(tb, &board, captured, time, game)?);
        }
        if !tb.covers(&board) {
            // Above the levels built: a search, one thread (the server
            // answers many requests at once).
            return Ok(search_one_json(tb, &board, captured, time)?);
        }
        answer_json(tb, &board, captured, pv_limit).map_err(ApiError::from)
    })
    .await
    .map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("the lookup failed: {e}"),
        missing_level: None,
    })??;
    Ok(axum::Json(answer).into_response())
}

/// A board given as notation ("1 1 1 / 0 0 0") or as an array of counts.
#[derive(Deserialize)]
#[serde(untagged)]
enum BoardField {
    Text(String),
    Pits(Vec<u8>),
}

/// A pit given as a number `0..P` or as a letter `A..` / 1-based number in a string.
#[derive(Deserialize)]
#[serde(untagged)]
enum PitField {
    Index(u64),
    Text(String),
}

/// The body of `POST /api/play`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    board: BoardField,
    #[serde(default)]
    captured: (u32, u32),
    pit: PitField,
    rules: Option<String>,
}

/// `POST /api/play` with `{"board": ..., "captured": [M, O], "pit": ..., "rules": R}`:
/// the position after the move, seen from the player who moves next, with
/// the seeds captured and the pits the seeds were sown into, in order.
pub(crate) async fn play(
    State(games): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::bad(format!("the request body is over {MAX_BODY} bytes"))
        } else {
            ApiError::bad(e.body_text())
        }
    })?;
    let req: PlayRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad(format!(
            "{e}; expected {{\"board\": \"...\", \"captured\": [M, O], \"pit\": \"A\", \"rules\": \"awari\"}}"
        ))
    })?;
    let board = match req.board {
        BoardField::Text(text) => text.parse()?,
        BoardField::Pits(pits) => Board::new(&pits)?,
    };
    let rules = parse_rules(req.rules.as_deref())?;
    let rules = games.get(rules, board.per_side())?.rules();
    let pit = match req.pit {
        PitField::Index(i) => usize::try_from(i).unwrap_or(usize::MAX),
        PitField::Text(text) => parse_pit(&text, board.per_side())?,
    };
    let m = rules.play(&board, pit)?;
    let (mover, opponent) = req.captured;
    let mover = mover.saturating_add(u32::from(m.captured));
    let captured = match m.turn {
        Turn::Passes => [opponent, mover],
        Turn::Stays => [mover, opponent],
    };
    Ok(axum::Json(json!({
        "pit": m.pit,
        "label": m.label().to_string(),
        "seeds_captured": m.captured,
        "sown": sowing_path(rules, &board, pit),
        "turn": match m.turn { Turn::Passes => "passes", Turn::Stays => "stays" },
        "board": m.child.pits(),
        "captured": captured,
    }))
    .into_response())
}

/// The pits, in the mover's pit order, that sowing `pit` drops its seeds into,
/// one entry per seed, skipping the emptied pit: counterclockwise, or
/// clockwise for an odd count under `cross-wari`.
pub(crate) fn sowing_path(rules: Rules, board: &Board, pit: usize) -> Vec<usize> {
    let n = board.len();
    let seeds = board.pit(pit);
    let step = if rules.set().sows_odd_clockwise() && seeds % 2 == 1 {
        n - 1
    } else {
        1
    };
    let mut path = Vec::with_capacity(usize::from(seeds));
    let mut at = pit;
    for _ in 0..seeds {
        at = (at + step) % n;
        if at == pit {
            at = (at + step) % n;
        }
        path.push(at);
    }
    path
}

/// `GET /api/info`: the rule sets, board sizes and levels present.
pub(crate) async fn info(State(games): State<Shared>) -> Response {
    axum::Json(games.info_json()).into_response()
}

/// Any other path: 404 with a JSON error.
pub(crate) async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!(
        "no such page: {}; the API is /api/position, /api/play and /api/info",
        uri.path()
    ))
}

/// A path used with another method than its own: 405 with a JSON error.
pub(crate) async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> ApiError {
    ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: format!(
            "{method} is not answered at {}: /api/play takes POST, the others GET",
            uri.path()
        ),
        missing_level: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropping one seed into every pit of the path, after emptying the
    /// sown pit, gives the board after the move before any capture.
    #[test]
    fn the_sowing_path_makes_the_played_board() {
        for text in [
            "1 1 1 1 1 2 / 4 2 3 0 0 0",
            "0 0 13 0 0 0 / 1 0 0 0 0 0",
            "4 4 4 4 4 4 / 4 4 4 4 4 4",
        ] {
            let board: Board = text.parse().unwrap();
            for set in RuleSet::ALL {
                let rules = Rules::new(set, 6).unwrap();
                for m in rules.legal_moves(&board).iter() {
                    let pit = usize::from(m.pit);
                    let mut pits = board.pits().to_vec();
                    pits[pit] = 0;
                    for &to in &sowing_path(rules, &board, pit) {
                        pits[to] += 1;
                    }
                    assert_eq!(pits[pit], 0, "{text} pit {pit}");
                    // Captures only take seeds from the opponent's row.
                    let child = match m.turn {
                        Turn::Passes => m.child.swapped(),
                        Turn::Stays => m.child,
                    };
                    assert_eq!(&pits[..6], child.mover_row(), "{text} pit {pit}");
                    let taken: u32 = pits[6..]
                        .iter()
                        .zip(child.opponent_row())
                        .map(|(&a, &b)| u32::from(a - b))
                        .sum();
                    assert_eq!(taken, u32::from(m.captured), "{text} pit {pit}");
                }
            }
        }
    }
}
