//! End-to-end: bound levels built by `awari-solve --repetition any`, then
//! questioned with `awari-probe score`, `batch`, `info`, `export` and
//! `serve` under `--repetition any`, and checked against the files
//! themselves and against the even-split build in the same directory.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use awari_dbformat::file::{bound_path, LevelId, LevelReader};
use awari_dbformat::{one_ply_bounds, Board, Bound, Bounds, Index, RuleSet, Rules};
use awari_tests::http::{encode, get};
use awari_tests::server::Server;
use awari_tests::{ok_stdout, run, run_with_input, scratch};
use serde_json::{json, Value};

/// The rule sets built, 3 pits per side, levels 0..=`TOP`.
const SETS: [RuleSet; 3] = [RuleSet::Awari, RuleSet::Abapa, RuleSet::GrandSlamReplay];
/// The highest level built.
const TOP: u32 = 8;

/// Builds levels 0..=`TOP` of `set` with 3 pits per side into `dir`: the
/// bound levels, and the even-split levels when `scores`.
fn build(dir: &Path, set: RuleSet, scores: bool) {
    let d = dir.to_str().unwrap();
    let top = TOP.to_string();
    let common = [
        "--db",
        d,
        "--rules",
        set.name(),
        "--pits",
        "3",
        "--max-seeds",
        &top,
        "--json",
    ];
    let mut any = common.to_vec();
    any.extend(["--repetition", "any"]);
    let out = ok_stdout(&run("awari-solve", &any));
    assert_eq!(out.lines().count(), TOP as usize + 1, "{out}");
    if scores {
        ok_stdout(&run("awari-solve", &common));
    }
}

/// Every rule set of [`SETS`], both kinds of levels, in one directory.
fn db() -> &'static PathBuf {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("repetition-probe-db");
        for set in SETS {
            build(&dir, set, true);
        }
        dir
    })
}

fn d() -> &'static str {
    db().to_str().unwrap()
}

fn probe(args: &[&str]) -> Output {
    run("awari-probe", args)
}

/// The bounds the files of one rule set hold, read without `awari-probe`.
struct FileBounds {
    rules: Rules,
    index: &'static Index,
    /// Lower and upper reader of each level.
    levels: Vec<[LevelReader; 2]>,
}

impl FileBounds {
    fn open(dir: &Path, set: RuleSet) -> FileBounds {
        let rules = Rules::new(set, 3).unwrap();
        let levels = (0..=TOP)
            .map(|n| {
                let id = LevelId::new(rules, n);
                Bound::BOTH
                    .map(|b| LevelReader::open_bound(&bound_path(dir, id, b), id, b).unwrap())
            })
            .collect();
        FileBounds {
            rules,
            index: Index::for_pits(3),
            levels,
        }
    }

    /// The bounds stored for a stored board.
    fn stored(&self, board: &Board) -> Bounds {
        let i = self.index.rank(board).expect("a stored board");
        let [lower, upper] = &self.levels[board.seeds() as usize];
        Bounds {
            lower: lower.get(i).unwrap(),
            upper: upper.get(i).unwrap(),
        }
    }

    /// The bounds of any board: stored, or by one ply from the files.
    fn any(&self, board: &Board) -> Bounds {
        if board.is_stored() {
            self.stored(board)
        } else {
            one_ply_bounds(self.rules, board, |c| Ok::<_, ()>(self.stored(c))).unwrap()
        }
    }
}

/// Every board of 3 pits per side with at most `TOP` seeds: the stored
/// ones in index order, then those with a full opponent row.
fn all_boards() -> Vec<Board> {
    let index = Index::for_pits(3);
    let mut out: Vec<Board> = (0..=TOP).flat_map(|n| index.boards(n)).collect();
    let top = TOP as u8;
    for a in 0..=top {
        for b in 0..=top - a {
            for c in 0..=top - a - b {
                let left = top - a - b - c;
                for x in 1..=left {
                    for y in 1..=left - x {
                        for z in 1..=left.saturating_sub(x + y) {
                            out.push(Board::new(&[a, b, c, x, y, z]).unwrap());
                        }
                    }
                }
            }
        }
    }
    out
}

/// The result the bounds decide for the seeds captured (the issue's rule).
fn expected_result(b: Bounds, captured: (u32, u32)) -> &'static str {
    let d = i64::from(captured.0) - i64::from(captured.1);
    let (low, high) = (d + i64::from(b.lower.get()), d + i64::from(b.upper.get()));
    if low > 0 {
        "win"
    } else if high < 0 {
        "loss"
    } else if low == 0 && high == 0 {
        "draw"
    } else {
        "depends"
    }
}

fn bounds_of(v: &Value) -> (i64, i64) {
    (v["lower"].as_i64().unwrap(), v["upper"].as_i64().unwrap())
}

/// Runs `batch` over `boards` (with captured seeds from a fixed sequence)
/// and returns the answers, one per board.
fn batch(set: RuleSet, boards: &[Board], extra: &[&str]) -> Vec<(Value, (u32, u32))> {
    let captured: Vec<(u32, u32)> = (0..boards.len() as u32)
        .map(|k| ((k * 7) % 5, (k * 3) % 4))
        .collect();
    let input: String = boards
        .iter()
        .zip(&captured)
        .map(|(b, c)| format!("{} ; {} {}\n", b.to_notation(), c.0, c.1))
        .collect();
    let mut args = vec!["batch", "--db", d(), "--rules", set.name(), "--pits", "3"];
    args.extend_from_slice(extra);
    let out = ok_stdout(&run_with_input("awari-probe", &args, &input));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), boards.len());
    lines.into_iter().zip(captured).collect()
}

#[test]
fn batch_bounds_are_the_files_and_one_ply_from_them() {
    let boards = all_boards();
    for set in SETS {
        let files = FileBounds::open(db(), set);
        let (mut exact, mut depends) = (0, 0);
        for (k, (line, captured)) in batch(set, &boards, &["--repetition", "any"])
            .into_iter()
            .enumerate()
        {
            let board = &boards[k];
            assert_eq!(line["line"], json!(k + 1), "{set} {board}: {line}");
            assert!(line.get("value").is_none(), "{line}");
            let want = files.any(board);
            let b = bounds_of(&line);
            assert_eq!(
                b,
                (i64::from(want.lower.get()), i64::from(want.upper.get())),
                "{set} {board}"
            );
            assert_eq!(line["exact"], json!(want.is_exact()), "{set} {board}");
            assert!(
                b.0 <= b.1 && -b.0 <= i64::from(board.seeds()) && b.1 <= i64::from(board.seeds())
            );
            // A stored board's bounds are also its moves' best, by one ply.
            if board.is_stored() {
                let by_moves =
                    one_ply_bounds(files.rules, board, |c| Ok::<_, ()>(files.stored(c))).unwrap();
                assert_eq!(by_moves, want, "{set} {board}");
            }
            assert_eq!(
                line["result"],
                json!(expected_result(want, captured)),
                "{set} {board}"
            );
            exact += usize::from(want.is_exact());
            depends += usize::from(line["result"] == json!("depends"));
        }
        // Both kinds occur, so the checks above can tell them apart.
        assert!(exact > 0 && exact < boards.len(), "{set}: {exact} exact");
        assert!(depends > 0, "{set}");
    }
}

#[test]
fn batch_moves_are_the_moves_bounds_for_the_mover() {
    let boards: Vec<Board> = all_boards().into_iter().step_by(7).collect();
    for set in SETS {
        let files = FileBounds::open(db(), set);
        for (k, (line, _)) in batch(set, &boards, &["--repetition", "any", "--moves"])
            .into_iter()
            .enumerate()
        {
            let board = &boards[k];
            let moves = line["moves"].as_array().unwrap();
            let legal = files.rules.legal_moves(board);
            assert_eq!(moves.len(), legal.len(), "{set} {board}");
            for (m, v) in legal.iter().zip(moves) {
                let want = Bounds::of_move(m.captured, m.turn, files.any(&m.child));
                assert_eq!(v["pit"], json!(m.pit));
                assert_eq!(
                    bounds_of(v),
                    (i64::from(want.lower.get()), i64::from(want.upper.get())),
                    "{set} {board} pit {}",
                    m.pit
                );
                assert_eq!(v["exact"], json!(want.is_exact()));
                assert!(v.get("best").is_none(), "no move is marked best: {v}");
            }
        }
    }
}

#[test]
fn even_split_scores_lie_within_the_bounds() {
    let boards = all_boards();
    for set in SETS {
        let bounds = batch(set, &boards, &["--repetition", "any"]);
        let scores = batch(set, &boards, &[]);
        let mut differ = 0;
        for ((b, _), (s, _)) in bounds.iter().zip(&scores) {
            let value = s["value"].as_i64().unwrap();
            let (lower, upper) = bounds_of(b);
            assert!(lower <= value && value <= upper, "{set} {b} {s}");
            differ += usize::from(lower != upper);
        }
        assert!(differ > 0, "{set}");
    }
}

/// A stored board of `set` whose bounds are exact, and one whose are not.
fn exact_and_not(set: RuleSet) -> (Board, Board) {
    let files = FileBounds::open(db(), set);
    let boards: Vec<Board> = Index::for_pits(3).boards(6).collect();
    let exact = *boards
        .iter()
        .find(|b| files.stored(b).is_exact() && !files.rules.legal_moves(b).is_empty())
        .unwrap();
    let not = *boards.iter().find(|b| !files.stored(b).is_exact()).unwrap();
    (exact, not)
}

#[test]
fn score_shows_both_bounds_and_what_they_decide() {
    for set in SETS {
        let files = FileBounds::open(db(), set);
        let (exact, not) = exact_and_not(set);
        for board in [exact, not, "1 1 1 / 1 1 1".parse().unwrap()] {
            let notation = board.to_notation();
            let base = [
                "score",
                notation.as_str(),
                "--db",
                d(),
                "--rules",
                set.name(),
                "--repetition",
                "any",
            ];
            let want = files.any(&board);
            // JSON without --captured: bounds, no result.
            let mut args = base.to_vec();
            args.push("--json");
            let a: Value = serde_json::from_str(&ok_stdout(&probe(&args))).unwrap();
            assert_eq!(a["repetition"], json!("any"));
            assert_eq!(
                bounds_of(&a),
                (i64::from(want.lower.get()), i64::from(want.upper.get())),
                "{set} {board}"
            );
            assert_eq!(a["exact"], json!(want.is_exact()));
            assert!(a.get("result").is_none() && a.get("value").is_none(), "{a}");
            for (m, v) in files
                .rules
                .legal_moves(&board)
                .iter()
                .zip(a["moves"].as_array().unwrap())
            {
                let mb = Bounds::of_move(m.captured, m.turn, files.any(&m.child));
                assert_eq!(
                    bounds_of(v),
                    (i64::from(mb.lower.get()), i64::from(mb.upper.get()))
                );
                assert_eq!(v["exact"], json!(mb.is_exact()));
            }
            // With --captured: the result, for a spread of captures.
            // (Also the captures that bring each bound to 0: the edges of a draw.)
            let edge = |v: i8| ((-v).max(0) as u32, v.max(0) as u32);
            let edges = [edge(want.lower.get()), edge(want.upper.get())];
            for captured in [(0, 0), (3, 0), (0, 3), (5, 1), (1, 5), (2, 2)]
                .into_iter()
                .chain(edges)
            {
                let c = format!("{},{}", captured.0, captured.1);
                let mut args = args.clone();
                args.extend(["--captured", &c]);
                let a: Value = serde_json::from_str(&ok_stdout(&probe(&args))).unwrap();
                assert_eq!(
                    a["result"],
                    json!(expected_result(want, captured)),
                    "{set} {board} {c}"
                );
                assert_eq!(a["captured"], json!([captured.0, captured.1]));
                // The text says the same.
                let mut text_args = base.to_vec();
                text_args.extend(["--captured", &c]);
                let text = ok_stdout(&probe(&text_args));
                let line = text
                    .lines()
                    .find(|l| l.starts_with("result with"))
                    .unwrap_or_else(|| panic!("no result line:\n{text}"));
                match expected_result(want, captured) {
                    "depends" => {
                        assert!(line.ends_with("depends on the repetition rule"), "{line}")
                    }
                    r => assert!(
                        line.contains(&format!("{r} for the mover under every repetition rule")),
                        "{line}"
                    ),
                }
            }
            // The text: both bounds, or the one value "the same under every
            // repetition rule".
            let text = ok_stdout(&probe(&base));
            let value_line = text.lines().nth(5).unwrap();
            if want.is_exact() {
                assert!(
                    value_line.starts_with(&format!(
                        "value {:+}: the same under every repetition rule",
                        want.lower.get()
                    )),
                    "{text}"
                );
            } else {
                assert!(
                    value_line.starts_with(&format!(
                        "lower bound {:+}, upper bound {:+}",
                        want.lower.get(),
                        want.upper.get()
                    )),
                    "{text}"
                );
            }
            assert!(
                !text.contains("result with"),
                "no result without --captured:\n{text}"
            );
            let move_lines = text
                .lines()
                .filter(|l| l.starts_with("  ") && l.contains("lower"))
                .count();
            assert_eq!(move_lines, files.rules.legal_moves(&board).len(), "{text}");
        }
    }
}

#[test]
fn even_split_stays_as_it_was() {
    for set in SETS {
        let (_, not) = exact_and_not(set);
        let notation = not.to_notation();
        for extra in [&[][..], &["--json"][..], &["--captured", "3,1"][..]] {
            let mut plain = vec![
                "score",
                notation.as_str(),
                "--db",
                d(),
                "--rules",
                set.name(),
            ];
            plain.extend_from_slice(extra);
            let mut named = plain.clone();
            named.extend(["--repetition", "even-split"]);
            let (a, b) = (ok_stdout(&probe(&plain)), ok_stdout(&probe(&named)));
            assert_eq!(a, b, "{set} {extra:?}");
            assert!(!a.contains("repetition rule"), "{a}");
        }
        let json: Value = serde_json::from_str(&ok_stdout(&probe(&[
            "score",
            &notation,
            "--db",
            d(),
            "--rules",
            set.name(),
            "--json",
        ])))
        .unwrap();
        assert!(
            json["value"].is_i64() && json["result"].is_string(),
            "{json}"
        );
        assert!(json.get("lower").is_none(), "{json}");
    }
}

#[test]
fn info_lists_the_bound_files() {
    let info: Value =
        serde_json::from_str(&ok_stdout(&probe(&["info", "--db", d(), "--json"]))).unwrap();
    assert_eq!(info["ok"], json!(true), "{info}");
    let levels = info["levels"].as_array().unwrap();
    let per_set = (TOP as usize + 1) * 3;
    assert_eq!(levels.len(), SETS.len() * per_set);
    for set in SETS {
        for n in 0..=TOP {
            let rows: Vec<&Value> = levels
                .iter()
                .filter(|l| l["rules"] == json!(set.name()) && l["seeds"] == json!(n))
                .collect();
            // The scores first (as before: no bound), then lower, then upper.
            assert_eq!(rows.len(), 3, "{set} {n}");
            assert!(rows[0].get("bound").is_none() && rows[0].get("repetition").is_none());
            assert!(rows[0]["path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("-n{n}.awl")));
            for (row, bound) in rows[1..].iter().zip(Bound::BOTH) {
                assert_eq!(row["bound"], json!(bound.name()), "{row}");
                assert_eq!(row["repetition"], json!("any"));
                assert_eq!(
                    row["stored"],
                    json!(format!("{} bounds under any repetition rule", bound.name()))
                );
                assert!(row["path"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("-n{n}.{}.awl", bound.name())));
                assert_eq!(row["boards"], rows[0]["boards"]);
            }
        }
    }
    let text = ok_stdout(&probe(&["info", "--db", d(), "--check"]));
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("lower bounds under any repetition rule") && l.ends_with(" ok"))
            .count(),
        SETS.len() * (TOP as usize + 1),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("upper bounds under any repetition rule"))
            .count(),
        SETS.len() * (TOP as usize + 1),
        "{text}"
    );
}

#[test]
fn export_writes_one_bound_as_bytes() {
    let out_dir = scratch("repetition-probe-export");
    for set in SETS {
        let files = FileBounds::open(db(), set);
        let n = 7u32;
        let mut exported = Vec::new();
        for bound in Bound::BOTH {
            let out = out_dir.join(format!("{set}.{}.{n}", bound.name()));
            let json: Value = serde_json::from_str(&ok_stdout(&probe(&[
                "export",
                out.to_str().unwrap(),
                "--db",
                d(),
                "--rules",
                set.name(),
                "--pits",
                "3",
                "--seeds",
                "7",
                "--repetition",
                "any",
                "--bound",
                bound.name(),
                "--json",
            ])))
            .unwrap();
            assert_eq!(json["bound"], json!(bound.name()));
            let bytes = std::fs::read(&out).unwrap();
            assert_eq!(json["bytes"], json!(bytes.len()));
            exported.push(bytes);
        }
        let scores_path = out_dir.join(format!("{set}.scores.{n}"));
        ok_stdout(&probe(&[
            "export",
            scores_path.to_str().unwrap(),
            "--db",
            d(),
            "--rules",
            set.name(),
            "--pits",
            "3",
            "--seeds",
            "7",
        ]));
        let scores = std::fs::read(&scores_path).unwrap();
        for (i, board) in Index::for_pits(3).boards(n).enumerate() {
            let want = files.stored(&board);
            let (lower, upper) = (exported[0][i] as i8, exported[1][i] as i8);
            assert_eq!(
                (lower, upper),
                (want.lower.get(), want.upper.get()),
                "{set} {board}"
            );
            assert!(
                lower <= scores[i] as i8 && scores[i] as i8 <= upper,
                "{set} {board}"
            );
        }
    }
    // --bound is needed with --repetition any, and only there.
    let out = out_dir.join("x");
    let o = out.to_str().unwrap();
    let no_bound = probe(&[
        "export",
        o,
        "--db",
        d(),
        "--rules",
        "awari",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--repetition",
        "any",
    ]);
    assert!(!no_bound.status.success());
    assert!(String::from_utf8_lossy(&no_bound.stderr).contains("needs --bound"));
    let stray = probe(&[
        "export",
        o,
        "--db",
        d(),
        "--rules",
        "awari",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--bound",
        "lower",
    ]);
    assert!(!stray.status.success());
    assert!(!out.exists());
}

#[test]
fn bad_values_and_missing_levels_are_clear_errors() {
    // An unknown rule name.
    for sub in ["score", "batch", "export"] {
        let mut args = vec![sub];
        if sub != "batch" {
            args.push("1 1 1 / 1 1 1");
        }
        args.extend(["--db", d(), "--repetition", "own-side"]);
        let out = probe(&args);
        assert!(!out.status.success(), "{sub}");
        let err = String::from_utf8_lossy(&out.stderr);
        // `score` also takes the rules of play its search knows.
        let expected = match sub {
            "score" => "expected even-split, any, own-rows or three-fold",
            _ => "expected even-split or any",
        };
        assert!(err.contains(expected), "{sub}: {err}");
    }
    // A directory with one file missing, and one with scores only.
    let dir = scratch("repetition-probe-missing");
    build(&dir, RuleSet::Abapa, false);
    std::fs::remove_file(dir.join("abapa-p3-n5.upper.awl")).unwrap();
    let m = dir.to_str().unwrap();
    let score = |board: &str| probe(&["score", board, "--db", m, "--repetition", "any"]);
    let out = score("2 1 1 / 1 0 0");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("abapa-p3-n5.upper.awl is missing"), "{err}");
    assert!(
        err.contains("awari-solve --db") && err.contains("--max-seeds 5 --repetition any"),
        "{err}"
    );
    let out = score("2 1 1 1 / 1 0 0 0");
    assert!(!out.status.success(), "4 pits: no such levels");
    // A move into the missing level: named too.
    let abapa = Rules::new(RuleSet::Abapa, 3).unwrap();
    let capturing_two = Index::for_pits(3)
        .boards(7)
        .find(|b| abapa.legal_moves(b).iter().any(|m| m.child.seeds() == 5))
        .unwrap();
    let out = score(&capturing_two.to_notation());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("abapa-p3-n5.upper.awl is missing"),
        "{capturing_two}: {err}"
    );
    // Above the levels built: no search, the level is named.
    let out = score("2 2 2 / 2 2 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("abapa-p3-n12.lower.awl is missing"),
        "{err}"
    );
    assert!(err.contains("never searched"), "{err}");
    // Batch: an error line, the batch goes on.
    let out = ok_stdout(&run_with_input(
        "awari-probe",
        &["batch", "--db", m, "--pits", "3", "--repetition", "any"],
        "2 1 1 / 1 0 0\n1 1 1 / 0 0 0\n",
    ));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines[0]["error"]
            .as_str()
            .unwrap()
            .contains("abapa-p3-n5.upper.awl"),
        "{out}"
    );
    assert!(lines[1]["lower"].is_i64(), "{out}");
    // Scores only: --repetition any says how to build the bounds.
    let scores_only = scratch("repetition-probe-scores-only");
    ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            scores_only.to_str().unwrap(),
            "--pits",
            "3",
            "--max-seeds",
            "4",
        ],
    ));
    let out = probe(&[
        "score",
        "1 1 1 / 0 0 0",
        "--db",
        scores_only.to_str().unwrap(),
        "--repetition",
        "any",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--repetition any"),
        "{err}"
    );
}

fn position(board: &str, query: &str) -> String {
    format!("/api/position?board={}{query}", encode(board))
}

#[test]
fn serve_answers_repetition_any_as_score_does() {
    let server = Server::start(db());
    let a = server.addr;
    for set in SETS {
        let (exact, not) = exact_and_not(set);
        for board in [exact, not, "1 1 1 / 1 1 1".parse().unwrap()] {
            let notation = board.to_notation();
            for captured in [None, Some("3,1")] {
                let mut query = format!("&rules={set}&repetition=any");
                let mut args = vec![
                    "score",
                    &notation,
                    "--db",
                    d(),
                    "--rules",
                    set.name(),
                    "--repetition",
                    "any",
                    "--json",
                ];
                if let Some(c) = captured {
                    query += &format!("&captured={c}");
                    args.extend(["--captured", c]);
                }
                let api = get(a, &position(&notation, &query));
                assert_eq!(api.status, 200, "{}", api.json());
                let cli: Value = serde_json::from_str(&ok_stdout(&probe(&args))).unwrap();
                assert_eq!(api.json(), cli, "{set} {board} {captured:?}");
            }
            // The default is the even split.
            let plain = get(a, &position(&notation, &format!("&rules={set}")));
            let named = get(
                a,
                &position(&notation, &format!("&rules={set}&repetition=even-split")),
            );
            assert_eq!(plain.status, 200);
            assert_eq!(plain.json(), named.json());
            assert!(plain.json()["value"].is_i64() && plain.json().get("lower").is_none());
        }
    }
    // A bad value, and a level not built: 400 with a message.
    let bad = get(
        a,
        &position("1 1 1 / 1 1 1", "&rules=awari&repetition=own-side"),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"]
        .as_str()
        .unwrap()
        .contains("expected even-split, any, own-rows or three-fold"));
    let above = get(a, &position("2 2 2 / 2 2 2", "&rules=awari&repetition=any"));
    assert_eq!(above.status, 400);
    let message = above.json()["error"].as_str().unwrap().to_string();
    assert!(
        message.contains("awari-p3-n12.lower.awl is missing"),
        "{message}"
    );
    assert_eq!(above.json()["missing_level"], json!(12));
    // /api/info lists the bound levels of each game.
    let info = get(a, "/api/info").json();
    for g in info["games"].as_array().unwrap() {
        assert_eq!(
            g["bound_levels"],
            json!((0..=TOP).collect::<Vec<_>>()),
            "{g}"
        );
        assert_eq!(g["bounds_complete_up_to"], json!(TOP));
    }
    // The page offers the choice.
    let page = String::from_utf8(get(a, "/").body).unwrap();
    assert!(page.contains(r#"<option value="any">any repetition rule</option>"#));
}

#[test]
fn serve_without_bound_levels_says_how_to_build_them() {
    let dir = scratch("repetition-probe-serve-scores");
    ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            dir.to_str().unwrap(),
            "--pits",
            "3",
            "--max-seeds",
            "4",
        ],
    ));
    let server = Server::start(&dir);
    let answer = get(server.addr, &position("1 1 1 / 0 0 0", "&repetition=any"));
    assert_eq!(answer.status, 400);
    let message = answer.json()["error"].as_str().unwrap().to_string();
    assert!(
        message.contains("awari-solve") && message.contains("--repetition any"),
        "{message}"
    );
    assert_eq!(get(server.addr, &position("1 1 1 / 0 0 0", "")).status, 200);
    // And a directory of bound levels only is served too.
    let bounds_only = scratch("repetition-probe-serve-bounds");
    build(&bounds_only, RuleSet::Awari, false);
    let server = Server::start(&bounds_only);
    let answer = get(
        server.addr,
        &position("1 1 1 / 0 0 0", "&repetition=any&captured=0,0"),
    );
    assert_eq!(answer.status, 200, "{}", answer.json());
    assert!(answer.json()["result"].is_string());
    assert_eq!(get(server.addr, &position("1 1 1 / 0 0 0", "")).status, 400);
}
