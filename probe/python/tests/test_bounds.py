"""BoundsTablebase and solve(repetition="any"): the bounds under any
repetition rule against awari-probe (batch and score with --repetition any)
and awari-solve --repetition any, the even-split values inside them, whole
levels and many boards at once with numpy, and errors."""

import json
import os
import shutil

import numpy as np
import pytest

import awari
from conftest import TOP, random_boards, run

#: Boards compared with `score --repetition any --json`, one process each.
SCORE_JSON_BOARDS = 30 if os.environ.get("AWARI_QUICK") else 300

#: The report fields of a level that depend on the run, not on the level.
TIMING = {
    "seconds", "boards_per_second", "init_seconds", "stage_seconds", "write_seconds",
    "peak_memory_bytes", "status",
}


def test_published_bounds(db_abapa_any):
    """The README's bounds of the 6-pit game with 1 seed per pit under abapa."""
    tb = awari.BoundsTablebase(db_abapa_any, rules="abapa")
    assert tb.levels == list(range(TOP + 1)) and tb.complete_up_to == TOP
    assert tb.rules == awari.Rules("abapa") and tb.repetition == "any"
    assert repr(tb) == f"BoundsTablebase('{db_abapa_any}', rules='abapa', pits=6)"
    start = awari.Rules("abapa").start(1)
    assert tb.bounds(start) == (-4, 4) and not tb.is_exact(start)
    assert tb.result(start) == "depends"
    assert tb.result(start, captured=(5, 0)) == "win"
    assert tb.result(start, captured=(0, 5)) == "loss"
    a = tb.analyse(start)
    assert (a["lower"], a["upper"], a["exact"], a["result"]) == (-4, 4, False, "depends")
    assert a["repetition"] == "any" and a["captured"] == [0, 0]
    # README: A -4..+4, B -8, C -4..+4, D -8..+4, E -6..+4, F -4..+4.
    assert [(m["label"], m["lower"], m["upper"]) for m in a["moves"]] == [
        ("A", -4, 4), ("B", -8, -8), ("C", -4, 4), ("D", -8, 4), ("E", -6, 4), ("F", -4, 4),
    ]
    assert [m["exact"] for m in a["moves"]] == [False, True, False, False, False, False]
    assert "best" not in a and all("best" not in m for m in a["moves"])
    # Without captured seeds: no result, as `score --repetition any --json`.
    bare = tb.analyse(start, captured=None)
    assert "result" not in bare and "captured" not in bare
    assert tb.covers(start) and tb.covers("1 1 1 1 1 2 / 4 2 3 0 0 0")


def test_bounds_equal_the_cli(cli, bounds_database):
    rules, path, _ = bounds_database
    tb = awari.BoundsTablebase(path, rules=rules)
    boards = random_boards(10_000, seed=(hash(rules) % 1000) + 1)
    captured = [(i % 7, (i * 3) % 5) for i in range(len(boards))]
    text = "".join(f"{b} ; {m} {o}\n" for b, (m, o) in zip(boards, captured))
    lines = run([cli["probe"], "batch", "--db", path, "--rules", rules, "--moves",
                 "--repetition", "any"], stdin=text)
    answers = [json.loads(line) for line in lines.splitlines()]
    assert len(answers) == len(boards)
    exact = decided = unstored = 0
    for board, cap, want in zip(boards, captured, answers):
        assert "error" not in want, want
        assert tb.bounds(board) == (want["lower"], want["upper"]), board
        assert tb.is_exact(board) == want["exact"] == (want["lower"] == want["upper"])
        assert tb.result(board, captured=cap) == want["result"], board
        got = tb.analyse(board, captured=cap)
        assert (got["lower"], got["upper"], got["exact"], got["result"]) == (
            want["lower"], want["upper"], want["exact"], want["result"]), board
        assert [(m["pit"], m["captured"], m["lower"], m["upper"], m["exact"]) for m in got["moves"]] == [
            (m["pit"], m["captured"], m["lower"], m["upper"], m["exact"]) for m in want["moves"]
        ], board
        exact += want["exact"]
        decided += want["result"] != "depends"
        unstored += not board.is_stored
    # Both kinds of answer are compared, and boards valued by one ply.
    assert 0 < exact < len(boards) and 0 < decided < len(boards) and unstored > 100
    # The whole dict, as `score --repetition any --json` prints it.
    for board, cap in list(zip(boards, captured))[:SCORE_JSON_BOARDS]:
        args = [cli["probe"], "score", str(board), "--json", "--db", path, "--rules", rules,
                "--repetition", "any"]
        want = json.loads(run(args + ["--captured", f"{cap[0]},{cap[1]}"]))
        assert tb.analyse(board, captured=cap) == want, board
        assert tb.analyse(board, captured=None) == json.loads(run(args)), board


def test_even_split_values_lie_within_the_bounds(bounds_database):
    rules, path, even_split = bounds_database
    tb = awari.BoundsTablebase(path, rules=rules)
    scores = awari.Tablebase(even_split, rules=rules)
    r = awari.Rules(rules)
    # Whole levels 0..=10, in index order (every board of them), ...
    for n in range(11):
        lower, upper = tb.level_bounds(n)
        assert lower.dtype == np.int8 and lower.shape == upper.shape == (r.level_size(n),)
        boards = np.array([r.board_at(n, i).pits for i in range(r.level_size(n))], dtype=np.uint8)
        value = scores.scores(boards)
        assert np.all(lower <= value) and np.all(value <= upper), n
        assert np.all(-n <= lower) and np.all(upper <= n), n
        both = tb.bounds_array(boards)
        assert np.array_equal(both[:, 0], lower) and np.array_equal(both[:, 1], upper), n
        if n >= 2:
            assert np.any(lower < upper), n  # some boards depend on the rule
        # A board whose bounds meet has the even-split value.
        assert np.all(value[lower == upper] == lower[lower == upper]), n
    # ... and random boards of levels 0..=TOP, stored or not.
    boards = np.array([b.pits for b in random_boards(20_000, seed=11)], dtype=np.uint8)
    value = scores.scores(boards)
    both = tb.bounds_array(boards)
    assert np.all(both[:, 0] <= value) and np.all(value <= both[:, 1])
    # The result the bounds decide is the even split's too.
    for b, v in list(zip(boards.tolist(), value.tolist()))[:2000]:
        for cap in ((0, 0), (3, 1), (1, 4)):
            decided = tb.result(b, captured=cap)
            if decided != "depends":
                assert decided == scores.result(b, captured=cap), (b, cap)


def test_bounds_array_equals_per_board_answers(db_awari_any):
    tb = awari.BoundsTablebase(db_awari_any)
    rng = np.random.default_rng(9)
    distinct = np.array([b.pits for b in random_boards(5_000, seed=13)], dtype=np.uint8)
    boards = distinct[rng.integers(0, len(distinct), size=200_000)]
    got = tb.bounds_array(boards)
    assert got.dtype == np.int8 and got.shape == (200_000, 2)
    index = {tuple(row): tb.bounds(row) for row in distinct.tolist()}
    want = np.array([index[tuple(row)] for row in boards.tolist()], dtype=np.int8)
    assert np.array_equal(got, want)
    assert np.array_equal(tb.bounds_array(boards[:500].astype(np.int64)), want[:500])
    assert np.array_equal(tb.bounds_array(boards[:500].tolist()), want[:500])
    assert np.array_equal(tb.bounds_array(boards[::-3][:200]), want[::-3][:200])
    assert tb.bounds_array(np.zeros((0, 12), dtype=np.uint8)).shape == (0, 2)


def test_bad_input_and_missing_levels(db_awari_any, db_awari, tmp_path):
    tb = awari.BoundsTablebase(db_awari_any)
    with pytest.raises(ValueError, match="5 pits given"):
        tb.bounds([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="4 pits per side but the database has 6"):
        tb.bounds("1 1 1 1 / 1 1 1 1")
    with pytest.raises(ValueError, match="captured seeds"):
        tb.result("1 1 1 1 1 2 / 4 2 3 0 0 0", captured=(0, -2))
    good = np.array([[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]] * 3)
    bad = good.copy()
    bad[2, 3] = -1
    with pytest.raises(ValueError, match="row 2: .*-1 is negative"):
        tb.bounds_array(bad)
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        tb.bounds_array(good[:, :6])
    with pytest.raises(TypeError, match="integers"):
        tb.bounds_array(good.astype(float))
    # Above the levels built: the missing file and the commands that build it.
    above = awari.Board([3, 3, 3, 3, 3, 3, 1, 0, 0, 0, 0, 0])
    assert not tb.covers(above)
    for call in (lambda: tb.bounds(above), lambda: tb.analyse(above), lambda: tb.result(above),
                 lambda: tb.level_bounds(19)):
        with pytest.raises(awari.MissingLevel) as e:
            call()
        message = str(e.value)
        assert "awari-p6-n19.lower.awl is missing" in message, message
        assert f"awari-solve --db {db_awari_any} --rules awari --pits 6 --max-seeds 19 --repetition any" in message
        assert f'awari.solve("{db_awari_any}", max_seeds=19, rules="awari", pits=6, repetition="any")' in message
        assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError, match="row 1: level 19"):
        tb.bounds_array(np.array([good[0], above.pits]))
    # One file of a level gone: that file is named.
    partial = tmp_path / "partial"
    shutil.copytree(db_awari_any, partial)
    (partial / "awari-p6-n9.upper.awl").unlink()
    cut = awari.BoundsTablebase(partial)
    assert cut.complete_up_to == 8 and 9 not in cut.levels
    nine = awari.Rules().board_at(9, 100)
    with pytest.raises(awari.MissingLevel, match="awari-p6-n9.upper.awl is missing"):
        cut.bounds(nine)
    assert not cut.covers(nine) and cut.covers(awari.Rules().board_at(8, 100))
    # A file of the other bound under a bound's name: refused as corrupt.
    shutil.copy(partial / "awari-p6-n9.lower.awl", partial / "awari-p6-n9.upper.awl")
    with pytest.raises(awari.CorruptDatabase, match="upper"):
        awari.BoundsTablebase(partial).bounds(nine)
    # Directories without bound levels; even-split levels point to Tablebase
    # and the other way round.
    with pytest.raises(FileNotFoundError, match="no such database directory"):
        awari.BoundsTablebase(tmp_path / "nowhere")
    with pytest.raises(awari.MissingLevel, match="no bound levels .*--repetition any"):
        awari.BoundsTablebase(tmp_path)
    with pytest.raises(awari.MissingLevel, match="open them with awari.Tablebase"):
        awari.BoundsTablebase(db_awari)
    with pytest.raises(awari.MissingLevel, match="open them with awari.BoundsTablebase"):
        awari.Tablebase(db_awari_any)
    with pytest.raises(awari.MissingLevel, match="no bound levels"):
        awari.BoundsTablebase(db_awari_any, rules="abapa")
    with pytest.raises(ValueError, match="unknown rule set"):
        awari.BoundsTablebase(db_awari_any, rules="wari")
    assert awari.Tablebase(db_awari).repetition == "even-split"
    assert awari.REPETITIONS == ["even-split", "any"]


def test_solve_any_equals_awari_solve(cli, tmp_path):
    a = tmp_path / "py"
    b = tmp_path / "cli"
    reports = awari.solve(a, max_seeds=9, rules="grand-slam-replay", pits=5,
                          repetition="any", progress=False)
    assert [r["seeds"] for r in reports] == list(range(10))
    assert {r["status"] for r in reports} == {"built"} and {r["repetition"] for r in reports} == {"any"}
    lines = run([cli["solve"], "--db", b, "--max-seeds", 9, "--rules", "grand-slam-replay",
                 "--pits", 5, "--repetition", "any", "--json"])
    want = [json.loads(line) for line in lines.splitlines()]
    strip = lambda r: {k: v for k, v in r.items() if k not in TIMING}  # noqa: E731
    assert [strip(r) for r in reports] == [strip(r) for r in want]
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert "grand-slam-replay-p5-n9.lower.awl" in names and "grand-slam-replay-p5-n9.upper.awl" in names
    for name in names:
        if name.endswith(".awl"):
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    again = awari.solve(a, max_seeds=9, rules="grand-slam-replay", pits=5, repetition="any",
                        progress=False)
    assert {r["status"] for r in again} == {"present"}
    # Both kinds of levels in one directory, each read by its own class.
    awari.solve(a, max_seeds=9, rules="grand-slam-replay", pits=5, progress=False)
    values = awari.Tablebase(a, rules="grand-slam-replay", pits=5)
    bounds = awari.BoundsTablebase(a, rules="grand-slam-replay", pits=5)
    rules = awari.Rules("grand-slam-replay", 5)
    for n in range(10):
        lower, upper = bounds.level_bounds(n)
        for i in range(0, rules.level_size(n), 97):
            board = rules.board_at(n, i)
            assert lower[i] <= values.score(board) <= upper[i], board
            assert bounds.bounds(board) == (lower[i], upper[i])
    with pytest.raises(ValueError, match='unknown repetition rule "own-side": expected "even-split" .* or "any"'):
        awari.solve(a, max_seeds=3, repetition="own-side")
    with pytest.raises(ValueError, match="certificate=True is for even-split levels"):
        awari.solve(a, max_seeds=3, repetition="any", certificate=True)
