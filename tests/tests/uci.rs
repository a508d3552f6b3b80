//! End-to-end: `awari-probe uci`, the engine protocol (issue 49), spoken
//! through standard input and output as a GUI or a match harness would.

use std::path::PathBuf;
use std::sync::OnceLock;

use awari_tests::{ok_stdout, run, run_with_input, scratch};

/// Abapa levels 0..=10, built once.
fn db() -> &'static PathBuf {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("uci-abapa");
        let dir_s = dir.to_str().unwrap();
        ok_stdout(&run(
            "awari-solve",
            &["--db", dir_s, "--rules", "abapa", "--max-seeds", "10"],
        ));
        dir
    })
}

/// The engine's answer to `input` (the lines it printed), and its stderr.
fn engine(input: &str) -> (Vec<String>, String) {
    let dir = db().to_str().unwrap().to_string();
    let out = run_with_input(
        "awari-probe",
        &["uci", "--db", &dir, "--rules", "abapa"],
        input,
    );
    assert!(out.status.success(), "{out:?}");
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (lines, String::from_utf8(out.stderr).unwrap())
}

/// The moves of `bestmove` lines, in order.
fn best_moves(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("bestmove "))
        .map(|m| m.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn the_dialogue_of_a_game() {
    let (lines, _) = engine(
        "uci\nisready\nucinewgame\nposition startpos moves FbA\ngo depth 5\nposition startpos moves FbAd\ngo movetime 50\nquit\n",
    );
    assert!(lines.iter().any(|l| l.starts_with("id name awari-probe")));
    for option in ["Hash", "Threads", "Repetition", "Contempt"] {
        let want = format!("option name {option} type");
        assert!(
            lines.iter().any(|l| l.starts_with(&want)),
            "{option}: {lines:?}"
        );
    }
    let uciok = lines.iter().position(|l| l == "uciok").expect("uciok");
    let readyok = lines.iter().position(|l| l == "readyok").expect("readyok");
    assert!(uciok < readyok);
    // Depths 1 to 5, each with a score and a line starting with the move
    // then chosen; North (lower case) to move after F b A.
    let infos: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .collect();
    let depths: Vec<u32> = infos
        .iter()
        .take_while(|l| !l.contains("pv A") && !l.contains("pv B"))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(&depths[..5], &[1, 2, 3, 4, 5], "{infos:?}");
    assert!(infos
        .iter()
        .all(|l| l.contains(" score cp ") && l.contains(" pv ")));
    let moves = best_moves(&lines);
    assert_eq!(moves.len(), 2, "{lines:?}");
    assert!(moves[0].len() == 1 && ('a'..='f').contains(&moves[0].chars().next().unwrap()));
    assert!(moves[1].len() == 1 && ('A'..='F').contains(&moves[1].chars().next().unwrap()));
}

/// Below the levels built, under the databases' own rule, the engine plays
/// a move the databases call best, from either side of the board.
#[test]
fn the_engine_plays_what_the_databases_call_best() {
    let dir = db().to_str().unwrap().to_string();
    // South's houses first (A..F), then North's (a..f), stores, mover.
    for (fen, mover_first) in [
        (
            "0-1-0-2-0-3-1-0-2-0-1-0-20-18-S",
            "0 1 0 2 0 3 / 1 0 2 0 1 0",
        ),
        (
            "1-0-2-0-1-0-0-1-0-2-0-3-18-20-N",
            "0 1 0 2 0 3 / 1 0 2 0 1 0",
        ),
    ] {
        let (lines, _) = engine(&format!(
            "setoption name Repetition value even-split\nposition fen {fen}\ngo depth 2\n"
        ));
        let answer = ok_stdout(&run(
            "awari-probe",
            &[
                "score",
                "--db",
                &dir,
                "--rules",
                "abapa",
                mover_first,
                "--json",
            ],
        ));
        let json: serde_json::Value = serde_json::from_str(&answer).unwrap();
        let best: Vec<u8> = json["best"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_u64().unwrap() as u8)
            .collect();
        let base = if fen.ends_with('S') { b'A' } else { b'a' };
        let letters: Vec<String> = best
            .iter()
            .map(|&p| char::from(base + p).to_string())
            .collect();
        let played = best_moves(&lines);
        assert_eq!(played.len(), 1, "{lines:?}");
        assert!(
            letters.contains(&played[0]),
            "{fen}: played {played:?}, best {letters:?}"
        );
    }
}

#[test]
fn a_game_over_answers_no_move() {
    // South has captured 25: the game is over.
    let (lines, _) = engine("position fen 0-1-0-2-0-3-1-0-2-0-1-0-25-13-N\ngo movetime 100\n");
    assert_eq!(best_moves(&lines), ["0000"], "{lines:?}");
    // So is a position without a move for the player to move (North's row
    // is empty and it is North's turn).
    let (lines, _) = engine("position fen 0-1-0-2-0-3-0-0-0-0-0-0-20-22-N\ngo depth 3\n");
    assert_eq!(best_moves(&lines), ["0000"], "{lines:?}");
    // (A repetition ending the game is checked on the game model,
    // `cmd::uci::position`'s tests.)
}

#[test]
fn bad_input_is_reported_and_the_engine_goes_on() {
    let (lines, stderr) = engine(
        "position startpos moves FF\nsetoption name Bogus value 1\nsetoption name Hash value lots\nfrobnicate\nposition fen 4-4-S\ngo depth x\nposition startpos\ngo depth 2\n",
    );
    let errors: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info string error:"))
        .collect();
    assert_eq!(errors.len(), 6, "{lines:?}");
    for (line, says) in errors.iter().zip([
        "not a house of North",
        "unknown option \"Bogus\"",
        "not a number",
        "unknown command \"frobnicate\"",
        "fen",
        "not a number",
    ]) {
        assert!(line.contains(says), "{line} should say {says}");
    }
    assert_eq!(stderr.lines().count(), 6, "{stderr}");
    // Still answering: South moves from the start.
    let moves = best_moves(&lines);
    assert_eq!(moves.len(), 1);
    assert!(('A'..='F').contains(&moves[0].chars().next().unwrap()));
}

#[test]
fn stop_ends_an_infinite_search_with_a_move() {
    // The input ends after `stop`: the engine answers, then quits.
    let (lines, _) = engine("position startpos\ngo infinite\nstop\n");
    assert_eq!(best_moves(&lines).len(), 1, "{lines:?}");
}
