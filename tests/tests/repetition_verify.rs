//! End-to-end: `awari-probe verify --repetition any` on the bound levels
//! that `awari-solve --repetition any` builds. Sound levels pass under
//! several rule sets and both board sizes; a lower bound raised by one, or
//! an upper bound lowered by one (the file written again, so its checksums
//! hold), fails naming that board; a ring of boards given better bounds
//! that still satisfy the recurrence fails as not forced; and bound files
//! that are missing or hold scores are refused with a clear error.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use awari_dbformat::file::{bound_path, write_level_as, LevelId, LevelReader, WriteOptions};
use awari_dbformat::{one_ply_bounds, Board, Bound, Bounds, Index, Levels, RuleSet, Rules, Score};
use awari_tests::{ok_stdout, run, scratch};
use serde_json::Value;

/// Builds levels `0..=max_seeds` of `rules` with `pits` pits per side with
/// `--repetition any` into a fresh scratch directory `name`, checking the
/// build's JSON lines.
fn build(name: &str, rules: &str, pits: u8, max_seeds: u32) -> PathBuf {
    let dir = scratch(name);
    let (p, n) = (pits.to_string(), max_seeds.to_string());
    let out = ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            dir.to_str().unwrap(),
            "--rules",
            rules,
            "--pits",
            &p,
            "--max-seeds",
            &n,
            "--repetition",
            "any",
            "--json",
        ],
    ));
    let levels = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|l| l["status"] == "built")
        .count();
    assert_eq!(levels as u32, max_seeds + 1, "{out}");
    for s in 0..=max_seeds {
        let id = LevelId::new(Rules::new(rules.parse().unwrap(), pits).unwrap(), s);
        for bound in Bound::BOTH {
            assert!(bound_path(&dir, id, bound).exists(), "level {s} {bound:?}");
        }
    }
    dir
}

/// `awari-probe verify --repetition any --json` on `dir` with `extra`
/// arguments: the exit code and the JSON report (`Null` when there is
/// none), and standard error.
fn verify(dir: &Path, pits: u8, extra: &[&str]) -> (Option<i32>, Value, String) {
    let p = pits.to_string();
    let mut args = vec![
        "verify",
        "--db",
        dir.to_str().unwrap(),
        "--pits",
        &p,
        "--repetition",
        "any",
        "--json",
    ];
    args.extend(extra);
    let out = run("awari-probe", &args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), v, stderr)
}

/// Builds, then verifies every level: all pass, each with its sweeps.
fn builds_and_verifies(rules: &str, pits: u8, max_seeds: u32) {
    let dir = build(&format!("rv-{rules}-p{pits}"), rules, pits, max_seeds);
    let (code, v, err) = verify(&dir, pits, &[]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["repetition"], "any");
    assert_eq!(v["rules"], rules);
    assert_eq!(v["failures"], 0);
    assert_eq!(v["mismatches"], serde_json::json!([]));
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len() as u32, max_seeds + 1);
    let index = Index::for_pits(pits);
    for (n, level) in levels.iter().enumerate() {
        assert_eq!(level["seeds"], n as u64);
        assert_eq!(level["boards"], index.level_size(n as u32));
        assert_eq!(level["failures"], 0, "{level}");
        assert!(level["sweeps"].as_u64().unwrap() >= 1, "{level}");
    }
    // Some bounds differ, or endless play never mattered.
    let exact: u64 = levels.iter().map(|l| l["exact"].as_u64().unwrap()).sum();
    assert!(exact < v["boards"].as_u64().unwrap(), "{v}");
    // The text report says so too.
    let text = ok_stdout(&run(
        "awari-probe",
        &[
            "verify",
            "--db",
            dir.to_str().unwrap(),
            "--pits",
            &pits.to_string(),
            "--repetition",
            "any",
        ],
    ));
    assert!(
        text.contains(&format!("OK: {} level(s)", max_seeds + 1)),
        "{text}"
    );
}

#[test]
fn awari_3_pits_verifies() {
    builds_and_verifies("awari", 3, 9);
}

#[test]
fn abapa_3_pits_verifies() {
    builds_and_verifies("abapa", 3, 9);
}

#[test]
fn grand_slam_replay_3_pits_verifies() {
    builds_and_verifies("grand-slam-replay", 3, 9);
}

#[test]
fn cross_wari_3_pits_verifies() {
    builds_and_verifies("cross-wari", 3, 9);
}

#[test]
fn awari_6_pits_verifies() {
    builds_and_verifies("awari", 6, 10);
}

#[test]
fn grand_slam_replay_6_pits_verifies() {
    builds_and_verifies("grand-slam-replay", 6, 10);
}

/// Levels 0..=9 of the 3-pit awari game, built once.
fn awari3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build("rv-awari3-shared", "awari", 3, 9))
}

fn awari3_rules() -> Rules {
    Rules::new(RuleSet::Awari, 3).unwrap()
}

/// A copy of `from` in a fresh scratch directory `name`.
fn copy(from: &Path, name: &str) -> PathBuf {
    let dir = scratch(name);
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

/// The values of level `seeds`'s `bound` in `dir`.
fn read_bound(dir: &Path, rules: Rules, seeds: u32, bound: Bound) -> Vec<i8> {
    let id = LevelId::new(rules, seeds);
    let reader = LevelReader::open_bound(&bound_path(dir, id, bound), id, bound).unwrap();
    reader.decode_all().unwrap().to_vec()
}

/// Writes level `seeds`'s `bound` in `dir` anew with `values`.
fn write_bound(dir: &Path, rules: Rules, seeds: u32, bound: Bound, values: &[i8]) {
    let id = LevelId::new(rules, seeds);
    let written = write_level_as(dir, id, values, bound.stored(), WriteOptions::default()).unwrap();
    assert_eq!(written, bound_path(dir, id, bound));
}

/// Changes one bound of one board of level 8 by one towards the other
/// bound, writes the file again, and checks that verify names the board.
fn a_changed_bound_is_named(bound: Bound) {
    let rules = awari3_rules();
    let n = 8;
    let dir = copy(awari3(), &format!("rv-changed-{}", bound.name()));
    let lower = read_bound(&dir, rules, n, Bound::Lower);
    let upper = read_bound(&dir, rules, n, Bound::Upper);
    // The first board whose bounds differ (so the change keeps lower <=
    // upper and both in range), a little way into the level.
    let i = (lower.len() / 3..lower.len())
        .find(|&i| lower[i] < upper[i])
        .expect("a board with bounds apart");
    let mut changed = match bound {
        Bound::Lower => lower.clone(),
        Bound::Upper => upper.clone(),
    };
    changed[i] += if bound == Bound::Lower { 1 } else { -1 };
    write_bound(&dir, rules, n, bound, &changed);

    // The levels below still pass; level 8 fails, naming the board.
    let (code, v, err) = verify(&dir, 3, &["--levels", "0..7"]);
    assert_eq!(code, Some(0), "{v} {err}");
    let (code, v, err) = verify(&dir, 3, &["--levels", "8", "--limit", "1000"]);
    assert_eq!(code, Some(1), "{v} {err}");
    assert_eq!(v["ok"], false);
    let level = &v["levels"][0];
    assert!(level["recurrence_errors"].as_u64().unwrap() >= 1, "{level}");
    assert!(level["unforced"].as_u64().unwrap() >= 1, "{level}");
    let board = Index::for_pits(3).unrank(n, i as u64).unwrap();
    let of_board: Vec<&Value> = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["index"] == i as u64 && m["bound"] == bound.name())
        .collect();
    let checks: Vec<&str> = of_board
        .iter()
        .map(|m| m["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"recurrence"), "{checks:?} {v}");
    assert!(checks.contains(&"forced"), "{checks:?} {v}");
    for m in &of_board {
        assert_eq!(m["seeds"], n);
        assert_eq!(m["notation"], board.to_notation());
        assert_eq!(m["stored"].as_i64().unwrap(), i64::from(changed[i]));
        assert_ne!(m["derived"], m["stored"]);
    }
    // The file claims more for its side than is forced: "only".
    let forced = of_board.iter().find(|m| m["check"] == "forced").unwrap();
    let reason = forced["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "{} bound {:+} stored but only",
            bound.name(),
            changed[i]
        )),
        "{reason}"
    );
    // The text report names the board in notation.
    let out = run(
        "awari-probe",
        &[
            "verify",
            "--db",
            dir.to_str().unwrap(),
            "--pits",
            "3",
            "--repetition",
            "any",
            "--levels",
            "8",
            "--limit",
            "1000",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&board.to_notation()), "{text}");
    assert!(text.contains("FAILED"), "{text}");
}

#[test]
fn a_raised_lower_bound_is_named() {
    a_changed_bound_is_named(Bound::Lower);
}

#[test]
fn a_lowered_upper_bound_is_named() {
    a_changed_bound_is_named(Bound::Upper);
}

/// The bounds of the levels of `dir` below `n`, for the captures.
fn levels_below(dir: &Path, rules: Rules, n: u32) -> (Levels, Levels) {
    let (mut lower, mut upper) = (Levels::new(rules.pits()), Levels::new(rules.pits()));
    for s in 0..n {
        for (bound, levels) in [(Bound::Lower, &mut lower), (Bound::Upper, &mut upper)] {
            let id = LevelId::new(rules, s);
            let reader = LevelReader::open_bound(&bound_path(dir, id, bound), id, bound).unwrap();
            levels.insert(s, Arc::new(reader.decode_all().unwrap()));
        }
    }
    (lower, upper)
}

/// The boards of level `n` whose bounds are trivial (`-n`, `+n`) and that
/// can take `-n + 1` and `n - 1` instead with the recurrence still holding
/// on the whole level: boards that only justify each other (a ring of
/// endless play). Found greedily from every trivial board, dropping boards
/// until the changed level satisfies the recurrence. Returns the ring and
/// the changed bounds.
fn ring(
    rules: Rules,
    n: u32,
    (lower, upper): (&[i8], &[i8]),
    below: &(Levels, Levels),
) -> (Vec<usize>, Vec<i8>, Vec<i8>) {
    let index = Index::for_pits(rules.pits());
    let boards: Vec<Board> = index.boards(n).collect();
    let m = n as i8;
    let mut inside: Vec<bool> = (0..boards.len())
        .map(|i| lower[i] == -m && upper[i] == m)
        .collect();
    loop {
        let (mut l, mut u) = (lower.to_vec(), upper.to_vec());
        for i in (0..boards.len()).filter(|&i| inside[i]) {
            (l[i], u[i]) = (-m + 1, m - 1);
        }
        let mut dropped = false;
        for (i, b) in boards.iter().enumerate() {
            let want = one_ply_bounds(rules, b, |c| {
                Ok::<_, ()>(if c.seeds() == n {
                    let j = index.rank(c).unwrap() as usize;
                    Bounds {
                        lower: Score::new(l[j]),
                        upper: Score::new(u[j]),
                    }
                } else {
                    Bounds {
                        lower: below.0.score(c),
                        upper: below.1.score(c),
                    }
                })
            })
            .unwrap();
            if (want.lower.get(), want.upper.get()) == (l[i], u[i]) {
                continue;
            }
            // A board of the ring drops out; one outside it drops the quiet
            // children that changed it.
            dropped = true;
            if inside[i] {
                inside[i] = false;
            } else {
                for mv in rules.legal_moves(b).iter().filter(|mv| mv.is_quiet()) {
                    inside[index.rank(&mv.child).unwrap() as usize] = false;
                }
            }
        }
        if !dropped {
            let ring = (0..boards.len()).filter(|&i| inside[i]).collect();
            return (ring, l, u);
        }
    }
}

#[test]
fn a_ring_that_satisfies_the_recurrence_is_not_forced() {
    // Level 3 of the 3-pit awari game has boards where neither side can
    // force an end (bounds -3..+3) that only move among themselves: given
    // -2..+2 instead, the recurrence still holds everywhere, but no finite
    // strategy forces those bounds.
    let rules = awari3_rules();
    let n = 3;
    let dir = copy(awari3(), "rv-ring");
    let lower = read_bound(&dir, rules, n, Bound::Lower);
    let upper = read_bound(&dir, rules, n, Bound::Upper);
    let below = levels_below(&dir, rules, n);
    let (ring, l, u) = ring(rules, n, (&lower, &upper), &below);
    assert!(!ring.is_empty(), "no ring on level {n}");
    write_bound(&dir, rules, n, Bound::Lower, &l);
    write_bound(&dir, rules, n, Bound::Upper, &u);

    let (code, v, err) = verify(&dir, 3, &["--levels", "3", "--limit", "1000"]);
    assert_eq!(code, Some(1), "{v} {err}");
    let level = &v["levels"][0];
    assert_eq!(level["recurrence_errors"], 0, "{level}");
    assert_eq!(level["crossed"], 0, "{level}");
    assert_eq!(level["out_of_range"], 0, "{level}");
    assert_eq!(level["unforced"], 2 * ring.len() as u64, "{level}");
    for &i in &ring {
        for (bound, stored, proven) in [("lower", -2, -3), ("upper", 2, 3)] {
            let m = v["mismatches"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["index"] == i as u64 && m["bound"] == bound)
                .unwrap_or_else(|| panic!("board {i} {bound} not named: {v}"));
            assert_eq!(m["check"], "forced");
            assert_eq!(
                (m["stored"].as_i64(), m["derived"].as_i64()),
                (Some(stored), Some(proven))
            );
            let reason = m["reason"].as_str().unwrap();
            assert!(
                reason.starts_with(&format!(
                    "{bound} bound {stored:+} stored but only {proven:+} proven"
                )),
                "{reason}"
            );
        }
    }
}

#[test]
fn bound_files_missing_or_holding_scores_are_refused() {
    // A directory of even-split levels only.
    let scores = scratch("rv-scores");
    ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            scores.to_str().unwrap(),
            "--pits",
            "3",
            "--max-seeds",
            "4",
        ],
    ));
    let (code, v, err) = verify(&scores, 3, &[]);
    assert_eq!((code, v), (Some(2), Value::Null));
    assert!(
        err.contains("no bound files") && err.contains("even-split scores"),
        "{err}"
    );
    // And the other way round: the default verify points at the bounds.
    let out = run(
        "awari-probe",
        &["verify", "--db", awari3().to_str().unwrap(), "--pits", "3"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--repetition any"), "{err}");

    // A file of scores under a bound's name.
    let rules = awari3_rules();
    let dir = copy(awari3(), "rv-misnamed");
    let id = LevelId::new(rules, 4);
    std::fs::copy(
        scores.join(id.file_name()),
        bound_path(&dir, id, Bound::Upper),
    )
    .unwrap();
    let (code, _, err) = verify(&dir, 3, &["--levels", "4"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("awari-p3-n4.upper.awl") && err.contains("even-split scores"),
        "{err}"
    );

    // A bound file missing.
    std::fs::remove_file(bound_path(&dir, id, Bound::Upper)).unwrap();
    let (code, _, err) = verify(&dir, 3, &["--levels", "4"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("upper bound file") && err.contains("missing"),
        "{err}"
    );
    // A level asked for with no file at all.
    let (code, _, err) = verify(&dir, 3, &["--levels", "12"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("level 10") || err.contains("level 12"),
        "{err}"
    );
}

#[test]
fn the_start_of_the_one_seed_game_gets_its_bounds() {
    // 3 pits, one seed per pit: levels 0..=6 but 5 are checked, then the
    // start position's bounds are the best of its first moves'.
    let (code, v, err) = verify(awari3(), 3, &["--start", "1"]);
    assert_eq!(code, Some(0), "{v} {err}");
    let seeds: Vec<u64> = v["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["seeds"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [0, 1, 2, 3, 4, 6]);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 3, "{v}");
    let best = |key: &str| moves.iter().map(|m| m[key].as_i64().unwrap()).max();
    assert_eq!(v["lower"].as_i64(), best("lower"), "{v}");
    assert_eq!(v["upper"].as_i64(), best("upper"), "{v}");
    assert!(v["lower"].as_i64() <= v["upper"].as_i64());
    assert_eq!(v["exact"], v["lower"] == v["upper"]);
    assert!(v["verdict"].as_str().is_some_and(|s| !s.is_empty()), "{v}");
}
