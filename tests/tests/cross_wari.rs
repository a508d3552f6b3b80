//! End-to-end: the Cross-Wari rule set through both binaries, as a user
//! would run it. No solution of Cross-Wari is published, so what is checked
//! here is that every tool takes `--rules cross-wari`, that the independent
//! verifier agrees with the solver, that a changed value is found, and that
//! a few hand-counted positions have the values worked out below.

use std::path::PathBuf;
use std::sync::OnceLock;

use awari_tests::{ok_stdout, run, scratch};
use serde_json::Value;

/// Levels 0..=14 of the 6-pit cross-wari game and the JSON lines of the build.
fn db() -> &'static (PathBuf, Vec<Value>) {
    static DB: OnceLock<(PathBuf, Vec<Value>)> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("cross-wari-db");
        let out = ok_stdout(&run(
            "awari-solve",
            &[
                "--db",
                dir.to_str().unwrap(),
                "--rules",
                "cross-wari",
                "--max-seeds",
                "14",
                "--json",
            ],
        ));
        let lines = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        (dir, lines)
    })
}

fn d() -> &'static str {
    db().0.to_str().unwrap()
}

fn score(board: &str) -> Value {
    let args = ["score", board, "--db", d(), "--json"];
    serde_json::from_str(&ok_stdout(&run("awari-probe", &args))).unwrap()
}

#[test]
fn the_build_names_its_rules_and_info_lists_them() {
    let lines = &db().1;
    assert_eq!(lines.len(), 15);
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["rules"], "cross-wari", "{line}");
        assert_eq!(line["seeds"], n as u64);
    }
    let info: Value = serde_json::from_str(&ok_stdout(&run(
        "awari-probe",
        &["info", "--db", d(), "--json"],
    )))
    .unwrap();
    let text = info.to_string();
    assert!(text.contains("cross-wari"), "{text}");
    // Asked for another rule set, the directory has nothing to answer with.
    let out = run(
        "awari-probe",
        &[
            "score",
            "1 0 0 0 0 0 / 0 0 0 0 1 1",
            "--db",
            d(),
            "--rules",
            "awari",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Values counted by hand under cross-wari (docs/rules.md, "Cross-Wari").
#[test]
fn hand_counted_positions() {
    // No move: the seeds go to no one (under awari the mover would lose 6).
    let v = score("0 0 0 0 0 0 / 1 2 0 0 0 3");
    assert_eq!(v["value"], 0, "{v}");
    assert_eq!(v["moves"].as_array().unwrap().len(), 0, "{v}");
    // E and F each sow one seed clockwise, into their own row: neither
    // feeds the empty row, so both are played and the game ends at 0.
    let v = score("0 0 0 0 1 1 / 0 0 0 0 0 0");
    assert_eq!(v["value"], 0, "{v}");
    let labels: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["E", "F"]);
    // A sows its one seed clockwise into f, making 2, and takes it; the
    // opponent's E (one seed, clockwise into D) cannot feed: 2 + 0.
    let v = score("1 0 0 0 0 0 / 0 0 0 0 1 1");
    assert_eq!(v["value"], 2, "{v}");
    assert_eq!(v["moves"][0]["captured"], 2, "{v}");
    // B (3 seeds) goes clockwise to A, f, e and takes e (3) and f (2), not
    // d (2) on the other side: 5 seeds, and d's 2 seeds are left to the
    // opponent, to move with "0 0 0 2 0 0" against "1 0 0 0 0 0".
    let v = score("0 3 0 0 0 0 / 0 0 0 2 2 1");
    let b = &v["moves"][0];
    assert_eq!(
        (b["label"].as_str(), b["captured"].as_u64()),
        (Some("B"), Some(5)),
        "{v}"
    );
    let child = score("0 0 0 2 0 0 / 1 0 0 0 0 0");
    assert_eq!(
        b["value"].as_i64().unwrap(),
        5 - child["value"].as_i64().unwrap(),
        "{v} {child}"
    );
}

#[test]
fn verify_passes_then_finds_a_changed_value() {
    let out = ok_stdout(&run(
        "awari-probe",
        &["verify", "--db", d(), "--rules", "cross-wari", "--json"],
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["rules"], "cross-wari", "{v}");

    // Export level 11 (the one-byte layout), change one value, import it
    // back under cross-wari, and verify again.
    let dir = scratch("cross-wari-changed");
    for entry in std::fs::read_dir(&db().0).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let changed = dir.to_str().unwrap();
    let raw = dir.join("scores.11");
    let level = ["--db", changed, "--rules", "cross-wari", "--seeds", "11"];
    let mut args = vec!["export"];
    args.extend(level);
    args.push(raw.to_str().unwrap());
    ok_stdout(&run("awari-probe", &args));
    let mut bytes = std::fs::read(&raw).unwrap();
    let target = 123_456usize;
    bytes[target] = if bytes[target] == 0 { 3 } else { 0 };
    std::fs::write(&raw, &bytes).unwrap();
    args[0] = "import";
    ok_stdout(&run("awari-probe", &args));

    let out = run(
        "awari-probe",
        &["verify", "--db", changed, "--levels", "11", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["index"] == target as u64)
        .unwrap_or_else(|| panic!("board {target} not reported: {v}"));
    assert_eq!(
        found["stored"].as_i64(),
        Some(i64::from(bytes[target] as i8))
    );
    assert_ne!(found["derived"], found["stored"]);
}

/// A game built from its start (`--start 1`: levels 0..=10 and 12, level 11
/// never arising) answers its start position from the databases, as verify
/// settles it. Under cross-wari, A's one seed goes clockwise into f and
/// takes it, so the start has a capture to level 10.
#[test]
fn the_start_of_the_one_seed_game_is_answered_exactly() {
    let dir = scratch("cross-wari-start1");
    let d = dir.to_str().unwrap();
    ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--rules", "cross-wari", "--start", "1"],
    ));
    assert!(!dir.join("cross-wari-p6-n11.awl").exists());
    let start = "1 1 1 1 1 1 / 1 1 1 1 1 1";
    let score: Value = serde_json::from_str(&ok_stdout(&run(
        "awari-probe",
        &["score", start, "--db", d, "--json"],
    )))
    .unwrap();
    assert_eq!(score["bound"], "exact", "{score}");
    assert!(score.get("search").is_none(), "{score}");
    assert_eq!(score["moves"][0]["captured"], 2, "{score}");
    let verify: Value = serde_json::from_str(&ok_stdout(&run(
        "awari-probe",
        &["verify", "--db", d, "--start", "1", "--json"],
    )))
    .unwrap();
    assert_eq!(verify["ok"], true, "{verify}");
    assert_eq!(verify["value"], score["value"]);
    let values = |v: &Value| -> Vec<i64> {
        v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["value"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(values(&verify), values(&score), "{verify} {score}");
}
