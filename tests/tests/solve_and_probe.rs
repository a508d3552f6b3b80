//! End-to-end: build a database with `awari-solve`, then question and verify it
//! with `awari-probe`, as a user would.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use awari_dbformat::{Board, Rules};
use awari_tests::{binary, json_lines, ok_stdout, run, run_with_input, scratch};
use serde_json::Value;

/// The build every test shares: levels 0..=18 of the 6-pit game, awari rules,
/// and the JSON lines `awari-solve --json` printed.
fn db18() -> &'static (PathBuf, Vec<Value>) {
    static DB: OnceLock<(PathBuf, Vec<Value>)> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("db18");
        let out = ok_stdout(&run(
            "awari-solve",
            &[
                "--db",
                dir.to_str().unwrap(),
                "--max-seeds",
                "18",
                "--count-all",
                "--json",
            ],
        ));
        (dir, json_lines(&out))
    })
}

fn db() -> &'static str {
    db18().0.to_str().unwrap()
}

fn score_json(board: &str, extra: &[&str]) -> Value {
    let mut args = vec!["score", board, "--db", db(), "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok_stdout(&run("awari-probe", &args))).unwrap()
}

/// The level files (`*.awl`) of a directory, by file name.
fn level_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "awl"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn build_prints_one_json_line_per_level_matching_lincke() {
    // Lincke 2002, Appendix B (tests/data/lincke_counts.txt): counts over all boards.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/lincke_counts.txt"
    ))
    .expect("tests/data/lincke_counts.txt in the repository");
    let lines = &db18().1;
    assert_eq!(lines.len(), 19);
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["seeds"], n);
        for field in ["boards", "seconds", "counts_stored", "counts_all"] {
            assert!(!line[field].is_null(), "level {n} lacks {field}");
        }
    }
    for row in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut words = row.split_whitespace();
        let n: usize = words.next().unwrap().parse().unwrap();
        let want: BTreeMap<String, u64> = words
            .map(|w| {
                let (v, c) = w.split_once(':').unwrap();
                (v.to_string(), c.parse().unwrap())
            })
            .collect();
        let got: BTreeMap<String, u64> =
            serde_json::from_value(lines[n]["counts_all"].clone()).unwrap();
        assert_eq!(got, want, "level {n}");
    }
}

#[test]
fn the_counts_over_all_boards_are_made_when_asked_even_for_levels_present() {
    // Without --count-all only the stored boards are counted, and the
    // files are the same; asked later, the levels present are counted and
    // their statistics kept: the counts are those counted while building.
    let dir = scratch("count-all-later");
    let d = dir.to_str().unwrap();
    let args = ["--db", d, "--max-seeds", "14", "--json"];
    let built = json_lines(&ok_stdout(&run("awari-solve", &args)));
    let (reference, counted) = (&db18().1, level_files(&db18().0));
    for (n, line) in built.iter().enumerate() {
        assert_eq!(line["counts_stored"], reference[n]["counts_stored"], "{n}");
        assert!(line.get("counts_all").is_none(), "{line}");
        assert_eq!(line["unstored_captures_in_initial_pass"], false, "{line}");
    }
    for (name, bytes) in level_files(&dir) {
        assert!(counted[&name] == bytes, "{name} differs");
    }
    let asked = json_lines(&ok_stdout(&run(
        "awari-solve",
        &[&args[..], &["--count-all"]].concat(),
    )));
    for (n, line) in asked.iter().enumerate() {
        assert_eq!(line["status"], "present", "{line}");
        assert_eq!(line["counts_all"], reference[n]["counts_all"], "{n}");
        assert_eq!(
            line["seconds"], built[n]["seconds"],
            "{n}: its figures kept"
        );
    }
    // (Written into the statistics files: a third run reads them.)
    let again = json_lines(&ok_stdout(&run("awari-solve", &args)));
    assert_eq!(again[14]["counts_all"], reference[14]["counts_all"]);
}

#[test]
fn published_positions_through_score() {
    // README of the 2024 Romein–Bal database publication.
    let v = score_json("1 1 1 1 1 2 / 4 2 3 0 0 0", &[]);
    assert_eq!(v["seeds"], 16);
    assert_eq!(v["value"], 0);
    assert_eq!(v["result"], "draw");
    let values: Vec<i64> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["value"].as_i64().unwrap())
        .collect();
    assert_eq!(values, [-1, -1, -2, -2, -2, 0]);
    let f = &v["moves"][5];
    assert_eq!(
        (
            f["pit"].as_u64(),
            f["captured"].as_u64(),
            f["best"].as_bool()
        ),
        (Some(5), Some(3), Some(true))
    );
    assert_eq!(v["best"], serde_json::json!([5]));

    // Lincke, Fig. A.2: value -2; E captures 5 (worth -2), F is worth -6; C is illegal.
    let v = score_json("0 0 6 0 3 5 / 2 1 1 0 0 0", &["--captured", "13,17"]);
    assert_eq!(v["value"], -2);
    let moves: Vec<(u64, u64, i64)> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["pit"].as_u64().unwrap(),
                m["captured"].as_u64().unwrap(),
                m["value"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(moves, [(4, 5, -2), (5, 0, -6)]);
    // 13 - 17 - 2 < 0: a loss; with 17-13 already captured it would be a win.
    assert_eq!(v["result"], "loss");
    assert_eq!(
        score_json("0 0 6 0 3 5 / 2 1 1 0 0 0", &["--captured", "17,13"])["result"],
        "win"
    );
}

#[test]
fn principal_variations_are_legal_and_keep_the_value() {
    let rules = Rules::default();
    let boards = [
        "1 1 1 1 1 2 / 4 2 3 0 0 0",
        "0 0 6 0 3 5 / 2 1 1 0 0 0",
        "1 1 1 1 1 1 / 1 1 1 1 1 1",
        "3 0 2 4 1 0 / 0 2 1 3 0 2",
        "0 5 0 0 6 1 / 1 0 0 2 0 0",
    ];
    for text in boards {
        let root = score_json(text, &[]);
        let mut board: Board = text.parse().unwrap();
        let (mut mine, mut theirs, mut root_to_move) = (0i64, 0i64, true);
        for pit in root["pv"].as_array().unwrap() {
            let m = rules
                .play(&board, pit.as_u64().unwrap() as usize)
                .expect("a legal move in the pv");
            if root_to_move {
                mine += i64::from(m.captured);
            } else {
                theirs += i64::from(m.captured);
            }
            if m.turn == awari_dbformat::Turn::Passes {
                root_to_move = !root_to_move;
            }
            board = m.child;
        }
        let last = score_json(&board.to_notation(), &[])["value"]
            .as_i64()
            .unwrap();
        let last_for_root = if root_to_move { last } else { -last };
        assert_eq!(
            root["value"].as_i64().unwrap(),
            mine - theirs + last_for_root,
            "{text}: pv {} ends at {board} ({})",
            root["pv"],
            root["pv_end"]
        );
    }
}

#[test]
fn batch_answers_in_order_and_survives_a_bad_line() {
    let input = "1 1 1 1 1 2 / 4 2 3 0 0 0\n# a comment\n1 2 x\n0 0 6 0 3 5 / 2 1 1 0 0 0 ; 13 17\n1 1 1 1 1 1 / 1 1 1 1 1 1\n";
    let out = ok_stdout(&run_with_input(
        "awari-probe",
        &["batch", "--db", db()],
        input,
    ));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["value"], 0);
    assert_eq!(lines[0]["line"], 1);
    assert!(lines[1]["error"].as_str().unwrap().contains("not a number"));
    assert_eq!(lines[1]["line"], 3);
    assert_eq!(lines[2]["value"], -2);
    assert_eq!(lines[2]["result"], "loss");
    assert!(
        lines[3]["value"].is_i64(),
        "a start position is valued by one ply"
    );
}

#[test]
fn a_board_beyond_the_database_is_searched_or_names_the_missing_level() {
    // `score` searches down to the levels present.
    let json = score_json("4 4 4 4 4 0 / 0 0 0 0 0 0", &["--depth", "3"]);
    assert_eq!(json["seeds"], 20);
    assert_eq!(json["depth"], 3);
    assert!(
        json["bound"].is_string() && json["best"][0].is_u64(),
        "{json}"
    );
    // `batch` reads the databases only, and says which level is missing.
    let out = ok_stdout(&run_with_input(
        "awari-probe",
        &["batch", "--db", db()],
        "4 4 4 4 4 0 / 0 0 0 0 0 0\n",
    ));
    assert!(
        out.contains("level 20") && out.contains("awari-solve"),
        "{out}"
    );
}

#[test]
fn verify_refuses_up_front_a_budget_too_small() {
    let out = run("awari-probe", &["verify", "--db", db(), "--memory", "20M"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs about") && err.contains("--memory"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no level checked before the refusal");
}

/// What two verifications must agree on: everything but the time taken and
/// where the levels were kept.
fn verdict(mut report: Value) -> Value {
    let fields = report.as_object_mut().unwrap();
    fields.remove("seconds");
    fields.remove("levels_in_files");
    fields.remove("peak_memory_bytes");
    for level in fields["levels"].as_array_mut().unwrap() {
        level.as_object_mut().unwrap().remove("seconds");
        // (A certificate is not read when the levels are in files.)
        level.as_object_mut().unwrap().remove("certified");
    }
    report
}

/// `awari-probe verify ARGS --json` twice, in memory and with the levels in
/// files of a work directory: the same verdict, the work directory gone
/// after; returns the exit code and the report.
fn verify_both_ways(args: &[&str]) -> (Option<i32>, Value) {
    let json =
        |out: &std::process::Output| -> Value { serde_json::from_slice(&out.stdout).unwrap() };
    let mut in_memory = vec!["verify", "--json"];
    in_memory.extend(args);
    let memory = run("awari-probe", &in_memory);
    let work = scratch("verify-work").join("files");
    let mut in_files = in_memory.clone();
    in_files.extend([
        "--on-disk",
        "--memory",
        "200M",
        "--work-dir",
        work.to_str().unwrap(),
    ]);
    let files = run("awari-probe", &in_files);
    assert_eq!(
        memory.status.code(),
        files.status.code(),
        "{}",
        String::from_utf8_lossy(&files.stderr)
    );
    let code = memory.status.code();
    let (memory, files) = (json(&memory), json(&files));
    assert_eq!(memory["levels_in_files"], false);
    assert_eq!(files["levels_in_files"], true);
    assert!(files["peak_memory_bytes"].as_u64().is_some_and(|b| b > 0));
    assert_eq!(verdict(memory.clone()), verdict(files));
    assert!(!work.exists(), "the work directory is removed");
    (code, memory)
}

#[test]
fn verify_passes_then_finds_a_corrupted_value() {
    let (code, v) = verify_both_ways(&["--db", db(), "--levels", "0..14"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["ok"], true);
    assert_eq!(v["mismatches"], serde_json::json!([]));

    // Copy the levels, change one value of level 12 through export / edit / import
    // (so every checksum is right), and verify again.
    let dir = scratch("corrupt");
    for (name, bytes) in level_files(&db18().0) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let d = dir.to_str().unwrap();
    let raw = dir.join("scores.12");
    ok_stdout(&run(
        "awari-probe",
        &["export", "--db", d, "--seeds", "12", raw.to_str().unwrap()],
    ));
    let mut bytes = std::fs::read(&raw).unwrap();
    let target = 777_777usize;
    bytes[target] = if bytes[target] == 0 { 2 } else { 0 };
    std::fs::write(&raw, &bytes).unwrap();
    ok_stdout(&run(
        "awari-probe",
        &["import", "--db", d, "--seeds", "12", raw.to_str().unwrap()],
    ));

    // In memory and with the levels in files: the same report.
    let (code, v) = verify_both_ways(&["--db", d, "--levels", "12"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["ok"], false);
    let bad: Vec<(u64, u64)> = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["seeds"].as_u64().unwrap(), m["index"].as_u64().unwrap()))
        .collect();
    // The changed board is reported first; its parents may disagree with it too.
    assert!(bad.contains(&(12, target as u64)), "{bad:?}");
    let m = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["index"] == target)
        .unwrap();
    assert_eq!(
        m["stored"].as_i64().unwrap(),
        i64::from(bytes[target] as i8)
    );
    assert_ne!(m["derived"], m["stored"]);
}

#[test]
fn verify_settles_the_one_seed_game() {
    let out = ok_stdout(&run(
        "awari-probe",
        &["verify", "--db", db(), "--start", "1", "--json"],
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert!(v["value"].is_i64());
    assert!(["draw", "the first player wins", "the second player wins"]
        .iter()
        .any(|w| v["verdict"].as_str().unwrap().starts_with(w)));
    assert_eq!(v["moves"].as_array().unwrap().len(), 6);
}

#[test]
fn one_and_two_threads_write_identical_files() {
    // (The one-thread build also writes certificates: they change no level file,
    // and verify proves each level with its certificate.)
    let dir = scratch("threads1");
    ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            dir.to_str().unwrap(),
            "--max-seeds",
            "14",
            "--threads",
            "1",
            "--certificate",
            "--json",
        ],
    ));
    let one = level_files(&dir);
    let two = level_files(&db18().0);
    assert_eq!(one.len(), 15);
    for (name, bytes) in &one {
        assert!(
            two[name] == *bytes,
            "{name} differs between 1 and 2 threads"
        );
    }

    let d = dir.to_str().unwrap();
    let verify = |dir: &str| -> Value {
        let out = ok_stdout(&run("awari-probe", &["verify", "--db", dir, "--json"]));
        serde_json::from_str(&out).unwrap()
    };
    let v = verify(d);
    assert_eq!(v["ok"], true);
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 15);
    // Every level, the tiny ones included, is proven by its certificate.
    assert!(levels.iter().all(|l| l["certified"] == true), "{v}");

    // A damaged certificate is set aside with a warning: same verdict, by search.
    let cert = dir.join("awari-p6-n14.cert");
    let mut bytes = std::fs::read(&cert).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&cert, bytes).unwrap();
    let out = run(
        "awari-probe",
        &["verify", "--db", d, "--levels", "14", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("awari-p6-n14.cert"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["levels"][0]["certified"], false);
}

#[test]
fn a_level_that_does_not_fit_is_refused_up_front() {
    let dir = scratch("memory");
    let out = run(
        "awari-solve",
        &[
            "--db",
            dir.to_str().unwrap(),
            "--max-seeds",
            "14",
            "--memory",
            "1M",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs about") && err.contains("--memory"),
        "{err}"
    );
}

#[test]
fn a_killed_build_resumes_to_identical_files() {
    let dir = scratch("resume");
    let d = dir.to_str().unwrap();
    let mut child = std::process::Command::new(binary("awari-solve"))
        .args(["--db", d, "--max-seeds", "16", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until level 15 is complete, then kill -9 in the middle of level 16.
    let started = Instant::now();
    let level15_stats = || {
        std::fs::read_dir(&dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .contains("n15.stats.json")
        })
    };
    while !level15_stats() {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "level 15 never appeared"
        );
        assert!(child.try_wait().unwrap().is_none(), "the build ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = level_files(&dir);
    assert!(
        partial.keys().all(|name| !name.contains("n16")),
        "no partial level may stand as a level"
    );

    ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "16", "--json"],
    ));
    let resumed = level_files(&dir);
    let reference = level_files(&db18().0);
    assert_eq!(resumed.len(), 17);
    for (name, bytes) in &resumed {
        assert!(reference[name] == *bytes, "{name} differs after resuming");
    }
}

#[test]
fn exact_files_and_lower_bounds_give_the_same_scores() {
    // The shared build stores lower bounds (the default); build levels
    // 0..=12 again storing every score, and compare the two as a user can.
    let dir = scratch("exact");
    let d = dir.to_str().unwrap();
    ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "12", "--exact", "--json"],
    ));
    let info = |db: &str| -> Value {
        serde_json::from_str(&ok_stdout(&run(
            "awari-probe",
            &["info", "--db", db, "--json"],
        )))
        .unwrap()
    };
    let level12 = |v: &Value| -> Value {
        v["levels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["seeds"] == 12)
            .unwrap()
            .clone()
    };
    let (exact, bounds) = (level12(&info(d)), level12(&info(db())));
    assert_eq!(exact["stored"], "scores");
    assert_eq!(bounds["stored"], "lower bounds");
    assert!(
        bounds["bytes"].as_u64().unwrap() < exact["bytes"].as_u64().unwrap(),
        "{bounds} {exact}"
    );
    for (seeds, db) in [("12", d), ("11", d), ("12", db()), ("11", db())] {
        let out = dir.join(format!(
            "scores.{seeds}.{}",
            if db == d { "exact" } else { "bounds" }
        ));
        ok_stdout(&run(
            "awari-probe",
            &[
                "export",
                "--db",
                db,
                "--seeds",
                seeds,
                out.to_str().unwrap(),
            ],
        ));
    }
    for seeds in ["11", "12"] {
        let read = |kind: &str| std::fs::read(dir.join(format!("scores.{seeds}.{kind}"))).unwrap();
        assert!(
            read("exact") == read("bounds"),
            "level {seeds} exports differ"
        );
    }
    // Single lookups agree too.
    for board in ["1 1 0 1 1 2 / 1 2 3 0 0 0", "0 0 0 0 2 1 / 3 1 2 1 1 1"] {
        let exact = ok_stdout(&run("awari-probe", &["score", board, "--db", d, "--json"]));
        let exact: Value = serde_json::from_str(&exact).unwrap();
        assert_eq!(score_json(board, &[])["moves"], exact["moves"], "{board}");
    }
}

#[test]
fn verify_reports_a_level_whose_captures_reach_a_damaged_one() {
    // Levels 0..=12 of the shared build, level 8 damaged inside a block: level
    // 8 fails its checks, and levels 10..=12, whose captures reach it, cannot
    // be checked; each is reported, and verify exits 1 (no panic).
    let dir = scratch("damaged-middle");
    for (name, bytes) in level_files(&db18().0) {
        let seeds: u32 = name
            .trim_start_matches("awari-p6-n")
            .trim_end_matches(".awl")
            .parse()
            .unwrap();
        if seeds <= 12 {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    let damaged = dir.join("awari-p6-n8.awl");
    let mut bytes = std::fs::read(&damaged).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 0x40;
    std::fs::write(&damaged, &bytes).unwrap();
    let out = run(
        "awari-probe",
        &[
            "verify",
            "--db",
            dir.to_str().unwrap(),
            "--levels",
            "0..12",
            "--json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(stderr.contains("level 8"), "{stderr}");
    assert!(
        stderr.contains(
            "level 10: not checked: level 8, which its captures reach, could not be read"
        ),
        "{stderr}"
    );
}
