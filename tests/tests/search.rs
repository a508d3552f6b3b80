//! The search above the levels built: every claim it makes (an exact value, a
//! proven bound, a proven result) holds against the full database, for
//! random positions of levels the search does not have.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use awari_dbformat::{Board, Index, Rules};
use awari_probe::search::{Bound, Limits, Searcher};
use awari_probe::Tablebase;
use awari_tests::{ok_stdout, run, run_with_input, scratch};
use serde_json::Value;

/// Levels 0..=`full` built, and a directory beside with levels 0..=`low` only.
fn databases(name: &str, full: u32, low: u32) -> (PathBuf, PathBuf) {
    databases_of(name, Rules::default(), full, low)
}

/// [`databases`] of `rules`.
fn databases_of(name: &str, rules: Rules, full: u32, low: u32) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let all = dir.join("full");
    let some = dir.join("low");
    ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            all.to_str().unwrap(),
            "--rules",
            rules.set().name(),
            "--pits",
            &rules.pits().to_string(),
            "--max-seeds",
            &full.to_string(),
        ],
    ));
    std::fs::create_dir_all(&some).unwrap();
    for entry in std::fs::read_dir(&all).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let seeds = name
            .strip_suffix(".awl")
            .and_then(|n| n.rsplit_once("-n"))
            .and_then(|(_, n)| n.parse::<u32>().ok());
        if seeds.is_some_and(|n| n <= low) {
            std::fs::copy(all.join(&name), some.join(&name)).unwrap();
        }
    }
    (all, some)
}

/// `count` boards of level `seeds` of `pits` per side, spread by a fixed
/// random walk.
fn sample(pits: u8, seeds: u32, count: usize, seed: u64) -> Vec<Board> {
    let index = Index::for_pits(pits);
    let size = index.level_size(seeds);
    let mut x = seed;
    (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            index.unrank(seeds, (x >> 11) % size).unwrap()
        })
        .collect()
}

fn open(dir: &Path) -> Tablebase {
    open_of(dir, Rules::default())
}

fn open_of(dir: &Path, rules: Rules) -> Tablebase {
    Tablebase::open(dir, rules).unwrap()
}

/// What the search claimed over a sample of one level.
#[derive(Debug, Default)]
struct Claims {
    seeds: u32,
    boards: usize,
    /// By bound: exact, lower, upper, estimate.
    bounds: [usize; 4],
    /// Results of the game proven, for a split of the captured seeds.
    outcomes_proven: usize,
    /// Seeds lost by the moves chosen against the best, in all.
    loss: i64,
}

/// Searches `per_level` random boards of each of `levels` with the levels of
/// `tb` at the leaves (`limits(k)` for the k-th board), and checks every
/// claim against `truth`, which has the levels searched: an exact value, a
/// proven bound, the move of an exact value, a proven result.
fn check_claims(
    truth: &Tablebase,
    tb: &Tablebase,
    levels: RangeInclusive<u32>,
    per_level: usize,
    limits: impl Fn(usize) -> Limits,
) -> Vec<Claims> {
    let mut all = Vec::new();
    for seeds in levels {
        let mut claims = Claims {
            seeds,
            ..Claims::default()
        };
        let pits = tb.rules().pits();
        for (k, board) in sample(pits, seeds, per_level, u64::from(seeds))
            .iter()
            .enumerate()
        {
            let searcher = Searcher::new(tb, limits(k));
            let found = searcher.search(board).unwrap();
            let analysis = truth.analyse(board).unwrap();
            let t = analysis.value;
            let v = found.value;
            match found.bound {
                Bound::Exact => assert_eq!(v, t, "{board}: claimed exact"),
                Bound::Lower => assert!(t >= v, "{board}: claimed at least {v}, is {t}"),
                Bound::Upper => assert!(t <= v, "{board}: claimed at most {v}, is {t}"),
                Bound::Estimate => {}
            }
            claims.boards += 1;
            claims.bounds[found.bound as usize] += 1;
            let Some(best) = found.best else {
                assert!(analysis.moves.is_empty(), "{board}: no move found");
                continue;
            };
            let chosen = analysis.moves.iter().find(|m| m.mov.pit == best);
            let chosen = chosen.unwrap_or_else(|| panic!("{board}: {best} is not legal"));
            if found.bound == Bound::Exact {
                assert_eq!(chosen.value, t, "{board}: the exact value's move");
            }
            claims.loss += i64::from(t.get() - chosen.value.get());
            // A split of the captured seeds near the threshold.
            let taken = 48 - seeds;
            let mover = (taken / 2 + k as u32 % 3).saturating_sub(1).min(taken);
            let captured = (mover, taken - mover);
            let proof = searcher
                .prove_outcome(board, captured, limits(k).time)
                .unwrap();
            if proof.proven {
                claims.outcomes_proven += 1;
                assert_eq!(
                    proof.outcome,
                    t.outcome(captured.0, captured.1),
                    "{board} with {captured:?} captured"
                );
            }
        }
        eprintln!("{claims:?}");
        all.push(claims);
    }
    all
}

#[test]
fn every_claim_of_the_search_holds() {
    let (full, low) = databases("search-claims", 13, 10);
    let claims = check_claims(&open(&full), &open(&low), 11..=13, 40, |k| Limits {
        time: None,
        depth: Some(6 + k as u32 % 9),
        hash_bytes: 1 << 20,
        threads: 1 + k % 2,
        ..Limits::default()
    });
    // Claims were made and checked, not only estimates.
    let exact: usize = claims.iter().map(|c| c.bounds[Bound::Exact as usize]).sum();
    let outcomes: usize = claims.iter().map(|c| c.outcomes_proven).sum();
    assert!(exact > 0 && outcomes > 0, "{claims:?}");
}

/// Checks the claims of fixed-depth searches (depths 6..=12, one or two
/// threads) on levels `checked` of `rules`, 30 boards each, with levels
/// 0..=`low` at the leaves, and asserts that some were exact.
fn claims_hold_at_fixed_depths(name: &str, rules: Rules, low: u32, checked: RangeInclusive<u32>) {
    let (full, low) = databases_of(name, rules, *checked.end(), low);
    let (truth, tb) = (open_of(&full, rules), open_of(&low, rules));
    let claims = check_claims(&truth, &tb, checked, 30, |k| Limits {
        time: None,
        depth: Some(6 + k as u32 % 7),
        hash_bytes: 1 << 20,
        threads: 1 + k % 2,
        ..Limits::default()
    });
    let exact: usize = claims.iter().map(|c| c.bounds[Bound::Exact as usize]).sum();
    assert!(exact > 0, "{claims:?}");
}

/// The same for another board size and a rule set whose grand slams keep
/// the turn (a child seen from the same player).
#[test]
fn every_claim_holds_under_grand_slam_replay_on_4_pits() {
    let rules = Rules::new(awari_dbformat::RuleSet::GrandSlamReplay, 4).unwrap();
    claims_hold_at_fixed_depths("search-claims-gsr4", rules, 9, 10..=14);
}

/// The same under cross-wari, where a game's end is worth 0 and odd sowings
/// go clockwise: the 6-pit game, levels 11..=13 over levels 0..=9.
#[test]
fn every_claim_holds_under_cross_wari() {
    let rules = Rules::new(awari_dbformat::RuleSet::CrossWari, 6).unwrap();
    claims_hold_at_fixed_depths("search-claims-cross", rules, 9, 11..=13);
}

/// The same on levels 20..=22 with levels 0..=18 at the leaves, one second
/// a board: `AWARI_DB=DIR` (levels 0..=22) `cargo test --release -p
/// awari-tests --test search -- --ignored --nocapture`.
#[test]
#[ignore = "needs levels 0..=22 in AWARI_DB"]
fn every_claim_holds_on_levels_20_to_22() {
    let full = PathBuf::from(std::env::var("AWARI_DB").expect("AWARI_DB: levels 0..=22"));
    let low = scratch("search-claims-22");
    for seeds in 0..=18 {
        let file = format!("awari-p6-n{seeds}.awl");
        std::fs::copy(full.join(&file), low.join(&file)).unwrap();
    }
    let claims = check_claims(&open(&full), &open(&low), 20..=22, 30, |_| Limits {
        time: Some(std::time::Duration::from_secs(1)),
        ..Limits::default()
    });
    for c in &claims {
        println!(
            "level {}: {} boards, exact {}, lower {}, upper {}, results proven {}, mean loss {:.2} seeds",
            c.seeds,
            c.boards,
            c.bounds[0],
            c.bounds[1],
            c.bounds[2],
            c.outcomes_proven,
            c.loss as f64 / c.boards as f64
        );
    }
}

#[test]
fn score_answers_above_the_levels_by_search() {
    let (_, low) = databases("search-score", 12, 10);
    let out = ok_stdout(&run(
        "awari-probe",
        &[
            "score",
            "3 1 0 2 1 0 / 1 0 1 0 0 2",
            "--db",
            low.to_str().unwrap(),
            "--depth",
            "6",
            "--json",
        ],
    ));
    let json: Value = serde_json::from_str(&out).unwrap();
    for key in ["value", "bound", "depth", "nodes", "best", "pv", "seconds"] {
        assert!(json.get(key).is_some(), "{key} in {json}");
    }
    assert!(json["depth"].as_u64().unwrap() >= 1);
    // A position whose level is present keeps the database's answer.
    let out = ok_stdout(&run(
        "awari-probe",
        &[
            "score",
            "2 0 0 1 1 0 / 1 0 0 0 0 2",
            "--db",
            low.to_str().unwrap(),
            "--json",
        ],
    ));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["bound"], "exact");
    assert!(json["moves"].is_array());
    // `batch --search` answers such lines the same way, in order.
    let out = ok_stdout(&run_with_input(
        "awari-probe",
        &["batch", "--db", low.to_str().unwrap(), "--search", "50ms"],
        "3 1 0 2 1 0 / 1 0 1 0 0 2 ; 20 17\n2 0 0 1 1 0 / 1 0 0 0 0 2\n",
    ));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["line"], 1);
    assert_eq!(lines[0]["captured"], serde_json::json!([20, 17]));
    assert!(lines[0]["bound"].is_string() && lines[0]["depth"].as_u64().unwrap() >= 1);
    // (The level of line 2 is present: the databases' answer.)
    assert!(
        lines[1]["bound"].is_null() && lines[1]["value"].is_i64(),
        "{out}"
    );
    // Bad limits are refused with a message.
    let bad = run(
        "awari-probe",
        &[
            "score",
            "2 0 0 1 1 0 / 1 0 1 0 0 2",
            "--db",
            low.to_str().unwrap(),
            "--time",
            "2 parsecs",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("duration"));
}
