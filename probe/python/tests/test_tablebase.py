"""Tablebase: the answers of awari-probe (batch, score --json), many boards
at once with numpy, the search above the levels, and errors."""

import json
import os
import shutil
import threading

import numpy as np
import pytest

import awari
from conftest import TOP, random_boards, run

#: Boards compared with `score --json`, one process each: all 10,000 (about
#: 30 s per rule set on 2 cores), 300 with AWARI_QUICK=1 (all are compared
#: with batch in any case).
SCORE_JSON_BOARDS = 300 if os.environ.get("AWARI_QUICK") else 10_000


def test_published_values(db_awari):
    tb = awari.Tablebase(db_awari)
    assert tb.levels == list(range(TOP + 1)) and tb.complete_up_to == TOP
    assert tb.rules == awari.Rules() and "awari" in repr(tb)
    assert tb.score("1 1 1 1 1 2 / 4 2 3 0 0 0") == 0  # the 2024 publication
    a = tb.analyse("1 1 1 1 1 2 / 4 2 3 0 0 0")
    assert a["value"] == 0
    assert [m["value"] for m in a["moves"]] == [-1, -1, -2, -2, -2, 0]
    assert tb.result("1 1 1 1 1 2 / 4 2 3 0 0 0", captured=(17, 15)) == "win"
    assert tb.result("1 1 1 1 1 2 / 4 2 3 0 0 0", captured=(16, 16)) == "draw"
    assert tb.result("1 1 1 1 1 2 / 4 2 3 0 0 0", captured=(15, 17)) == "loss"
    assert tb.score(awari.Rules().start(1)) == 0  # unstored: one ply


def test_score_and_analyse_equal_the_cli(cli, database):
    rules, path = database
    tb = awari.Tablebase(path, rules=rules)
    boards = random_boards(10_000, seed=hash(rules) % 1000)
    captured = [(i % 7, (i * 3) % 5) for i in range(len(boards))]
    text = "".join(f"{b} ; {m} {o}\n" for b, (m, o) in zip(boards, captured))
    lines = run([cli["probe"], "batch", "--db", path, "--rules", rules, "--moves"], stdin=text)
    answers = [json.loads(line) for line in lines.splitlines()]
    assert len(answers) == len(boards)
    for board, cap, want in zip(boards, captured, answers):
        assert "error" not in want, want
        assert tb.score(board) == want["value"], board
        got = tb.analyse(board, captured=cap)
        assert got["value"] == want["value"] and got["result"] == want["result"], board
        assert got["best"] == want["best"], board
        assert [(m["pit"], m["value"], m["captured"], m["best"]) for m in got["moves"]] == [
            (m["pit"], m["value"], m["captured"], m["best"]) for m in want["moves"]
        ], board
    # The whole dict, as `score --json` prints it.
    for board, cap in list(zip(boards, captured))[:SCORE_JSON_BOARDS]:
        want = json.loads(
            run([cli["probe"], "score", str(board), "--json", "--db", path, "--rules", rules,
                 "--captured", f"{cap[0]},{cap[1]}"])
        )
        assert tb.analyse(board, captured=cap) == want, board


def test_scores_equal_per_board_answers(db_awari):
    tb = awari.Tablebase(db_awari)
    rules = awari.Rules()
    rng = np.random.default_rng(7)
    # 1,000,000 boards: 10,000 random boards of the levels, repeated and shuffled.
    distinct = np.array([b.pits for b in random_boards(10_000, seed=3)], dtype=np.uint8)
    boards = distinct[rng.integers(0, len(distinct), size=1_000_000)]
    got = tb.scores(boards)
    assert got.dtype == np.int8 and got.shape == (1_000_000,)
    one = np.array([tb.score(b) for b in distinct.tolist()], dtype=np.int8)
    index = {tuple(row): v for row, v in zip(distinct.tolist(), one.tolist())}
    want = np.array([index[tuple(row)] for row in boards.tolist()], dtype=np.int8)
    assert np.array_equal(got, want)
    # Any integer type, lists, views: the same answers.
    assert np.array_equal(tb.scores(boards[:1000].astype(np.int64)), want[:1000])
    assert np.array_equal(tb.scores(boards[:1000].tolist()), want[:1000])
    assert np.array_equal(tb.scores(np.asfortranarray(boards[:1000])), want[:1000])
    assert np.array_equal(tb.scores(boards[::-3][:500]), want[::-3][:500])
    assert tb.scores(np.zeros((0, 12), dtype=np.uint8)).shape == (0,)
    assert rules.level_size(0) == 1


def test_scores_releases_the_gil(db_awari):
    tb = awari.Tablebase(db_awari)
    boards = np.array([b.pits for b in random_boards(2_000, seed=5)], dtype=np.uint8)
    boards = np.tile(boards, (200, 1))
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        tb.scores(boards)
    finally:
        done.set()
        t.join()
    assert len(ticks) > 3  # the other thread ran meanwhile


def test_bad_input(db_awari, tmp_path):
    tb = awari.Tablebase(db_awari)
    with pytest.raises(ValueError, match="5 pits given"):
        tb.score([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="negative"):
        tb.score([1, 1, 1, 1, 1, -2, 4, 2, 3, 0, 0, 0])
    with pytest.raises(ValueError, match="4 pits per side but the database has 6"):
        tb.score("1 1 1 1 / 1 1 1 1")
    with pytest.raises(ValueError, match="captured seeds"):
        tb.analyse("1 1 1 1 1 2 / 4 2 3 0 0 0", captured=(-1, 0))
    # Arrays: the row at fault is named.
    good = np.array([[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]] * 3)
    bad = good.copy()
    bad[2, 5] = -1
    bad[1, 4] = -3
    with pytest.raises(ValueError, match="row 1: .*-3 is negative"):
        tb.scores(bad)
    bad = good.copy()
    bad[1, 0] = 60
    bad[2, 0] = 60
    with pytest.raises(ValueError, match="row 1: .*at most 48"):
        tb.scores(bad.astype(np.uint8))
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        tb.scores(good[:, :11])
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        tb.scores(good[0])
    with pytest.raises(TypeError, match="integers"):
        tb.scores(good.astype(float))
    # A level that is not there: the CLI's message, a FileNotFoundError.
    above = awari.Board([3, 3, 3, 3, 3, 3, 1, 0, 0, 0, 0, 0])
    with pytest.raises(awari.MissingLevel, match=f"level 19 .*awari-solve --db"):
        tb.score(above)
    with pytest.raises(FileNotFoundError, match="level 19"):
        tb.analyse(above)
    with pytest.raises(FileNotFoundError, match="row 1: level 19"):
        tb.scores(np.array([good[0], above.pits, above.pits]))
    # No database at all.
    with pytest.raises(FileNotFoundError, match="no such database directory"):
        awari.Tablebase(tmp_path / "nowhere")
    with pytest.raises(awari.MissingLevel, match="no level files"):
        awari.Tablebase(tmp_path)
    with pytest.raises(awari.MissingLevel, match="no level files"):
        awari.Tablebase(db_awari, rules="cross-wari")
    with pytest.raises(ValueError, match="unknown rule set"):
        awari.Tablebase(db_awari, rules="wari")


def test_corrupt_database(db_awari, tmp_path):
    bad = tmp_path / "corrupt"
    shutil.copytree(db_awari, bad)
    files = [p for p in bad.iterdir() if p.suffix == ".awl" and int(p.stem.split("-n")[1]) >= 10]
    assert len(files) == TOP - 9, list(bad.iterdir())
    for f in files:  # flip the bytes of the second half of every level file from 10 up
        data = bytearray(f.read_bytes())
        for k in range(len(data) // 2, len(data)):
            data[k] ^= 0x5A
        f.write_bytes(bytes(data))
    tb = awari.Tablebase(bad)
    rules = awari.Rules()
    for f in files:
        seeds = int(f.stem.split("-n")[1])
        last = rules.board_at(seeds, rules.level_size(seeds) - 1)
        with pytest.raises(awari.CorruptDatabase, match="corrupt"):
            tb.score(last)
            tb.scores(np.array([last.pits] * 10))


def test_search_above_the_levels_equals_the_cli(cli, db_awari):
    tb = awari.Tablebase(db_awari)
    board = "0 2 4 0 2 1 / 3 0 2 1 2 3"  # 20 seeds: above levels 0..=16
    assert awari.Board(board).seeds == TOP + 4 and not tb.covers(board)
    got = tb.search(board, captured=(10, 18), time=None, depth=7, threads=1)
    want = json.loads(
        run([cli["probe"], "score", board, "--json", "--db", db_awari, "--captured", "10,18",
             "--time", "1000s", "--depth", "7", "--threads", "1"])
    )
    for d in (got, want):
        assert d.pop("seconds") >= 0
    assert got == want
    assert got["search"] is True and got["depth"] == 7 and got["best"]
    # Within the levels, the search gives the levels' answer.
    assert tb.search("1 1 1 1 1 2 / 4 2 3 0 0 0", time=0.1) == tb.analyse("1 1 1 1 1 2 / 4 2 3 0 0 0")
    quick = tb.search(board, time=0.2)
    assert quick["bound"] in ("exact", "lower", "upper", "estimate")
    with pytest.raises(ValueError, match="time or a depth"):
        tb.search(board, time=None)


def test_solve_equals_awari_solve(cli, tmp_path):
    a = tmp_path / "py"
    b = tmp_path / "cli"
    reports = awari.solve(a, max_seeds=8, rules="grand-slam-replay", pits=5, progress=False)
    assert [r["seeds"] for r in reports] == list(range(9))
    assert {r["status"] for r in reports} == {"built"}
    run([cli["solve"], "--db", b, "--max-seeds", 8, "--rules", "grand-slam-replay", "--pits", 5])
    levels = sorted(p.name for p in a.iterdir() if p.suffix == ".awl")
    assert levels == sorted(p.name for p in b.iterdir() if p.suffix == ".awl")
    for name in levels:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    again = awari.solve(a, max_seeds=8, rules="grand-slam-replay", pits=5, progress=False)
    assert {r["status"] for r in again} == {"present"}
    with pytest.raises(ValueError, match="not a size"):
        awari.solve(a, max_seeds=3, memory="lots")
    with pytest.raises(ValueError, match="not both"):
        awari.solve(a, max_seeds=3, start=1)
