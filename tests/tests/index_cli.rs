//! `awari-probe count`, `index` and `board`: the index of docs/rules.md through the CLI.

use awari_tests::{ok_stdout, run};

#[test]
fn count_gives_the_romein_bal_total() {
    // docs/rules.md: levels 0..=46 and 48 plus the start position: 889,063,398,406.
    let out = ok_stdout(&run(
        "awari-probe",
        &["count", "--pits", "6", "--max-seeds", "48"],
    ));
    assert!(out.contains("889,063,398,406"), "{out}");
    let json = ok_stdout(&run("awari-probe", &["count", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["total"], 889_063_398_406u64);
    let levels = v["levels"].as_array().unwrap();
    assert!(levels.iter().all(|l| l["seeds"] != 47));
    assert_eq!(levels.last().unwrap()["boards"], 203_648_015_935u64);
}

#[test]
fn index_and_board_are_inverse_with_json() {
    let out = ok_stdout(&run(
        "awari-probe",
        &["index", "1 1 1 1 1 2 / 4 2 3 0 0 0", "--json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seeds"], 16);
    assert_eq!(v["index"], 588_953);
    assert_eq!(v["boards"], 12_685_179);
    assert_eq!(
        v["pits"],
        serde_json::json!([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])
    );

    let out = ok_stdout(&run(
        "awari-probe",
        &["board", "--seeds", "48", "--index", "30844431882", "--json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["pits"],
        serde_json::json!([5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 0])
    );
    assert_eq!(v["boards"], 203_648_015_935u64);
}

#[test]
fn bad_boards_are_clear_errors() {
    let cases: [(&[&str], &str); 5] = [
        (&["index", "1 1 1 1 1 1 / 1 1 1 1 1 1"], "not stored"),
        (&["index", "1 2 3"], "3 pits given"),
        (&["index", "1 1 x 1 1 1 / 0 0 0 0 0 0"], "not a number"),
        (&["index", "49 0 0 0 0 0 / 0 0 0 0 0 0"], "at most 48"),
        (
            &["board", "--seeds", "1", "--index", "12"],
            "outside level 1",
        ),
    ];
    for (args, needle) in cases {
        let out = run("awari-probe", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
