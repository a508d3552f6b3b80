"""Board and Rules: notation, equality, errors, and the moves against a
seed-by-seed transcription of docs/rules.md on 100,000 random positions."""

import copy
import pickle
import random

import pytest

import awari
from reference_rules import RULE_SETS, moves as reference_moves

LINCKE = "0 0 6 0 3 5 / 2 1 1 0 0 0"


def test_board_from_text_and_ints():
    b = awari.Board("1 1 1 1 1 2 / 4 2 3 0 0 0")
    assert str(b) == "1 1 1 1 1 2 / 4 2 3 0 0 0"
    assert b == awari.Board([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])
    assert b == awari.Board((1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0))
    assert b == awari.Board("[1,1,1,1,1,2,4,2,3,0,0,0]")
    assert b == awari.Board(b)
    assert b.seeds == 16
    assert b.pits == (1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0)
    assert list(b) == list(b.pits) and len(b) == 12 and b[-1] == 0 and b[6] == 4
    assert b.per_side == 6 and b.is_stored
    assert b.index == 588_953  # docs/rules.md
    assert awari.Rules().board_at(16, 588_953) == b
    assert repr(b) == "Board('1 1 1 1 1 2 / 4 2 3 0 0 0')"
    assert b.swapped() == awari.Board("4 2 3 0 0 0 / 1 1 1 1 1 2")
    assert "to move" in b.drawing()
    assert awari.Board("4 4 4 4 4 4 / 4 4 4 4 4 4").index is None


def test_board_eq_hash_pickle():
    a = awari.Board(LINCKE)
    b = awari.Board([0, 0, 6, 0, 3, 5, 2, 1, 1, 0, 0, 0])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != awari.Board("1 1 1 1 1 2 / 4 2 3 0 0 0")
    assert a != str(a)
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a
    with pytest.raises(AttributeError):
        a.seeds = 3


@pytest.mark.parametrize(
    "bad, words",
    [
        ([1, 2, 3, 4, 5], "5 pits given"),
        ([0] * 13, "13 pits given"),
        ([0] * 18, "18 pits given"),
        ([1, 1, 1, 1, 1, -2, 4, 2, 3, 0, 0, 0], "negative"),
        ([1, 1, 1, 1, 1, 49, 0, 0, 0, 0, 0, 0], "at most 48"),
        ([1, 1, 1, 1, 1, 1000, 0, 0, 0, 0, 0, 0], "at most 48"),
        ([40, 40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "80 seeds"),
        ("1 1 1 1 1 2 / 4 2 3 0 0", "rows have 6 and 5"),
        ("1 1 1 1 1 -2 / 4 2 3 0 0 0", "negative"),
        ("1 1 x 1 1 2 / 4 2 3 0 0 0", "not a number"),
        ("", "no pits"),
    ],
)
def test_bad_boards_raise_value_error(bad, words):
    with pytest.raises(ValueError, match=words):
        awari.Board(bad)


def test_bad_board_types():
    with pytest.raises(TypeError, match="a board is"):
        awari.Board(3)
    with pytest.raises(TypeError, match="a board is"):
        awari.Board([1.5] * 12)


def test_rules():
    r = awari.Rules()
    assert r == awari.Rules("awari", 6) and r.name == "awari" and r.pits == 6
    assert str(awari.Rules("abapa", 4)) and repr(r) == "Rules('awari', pits=6)"
    assert awari.RULE_SETS == RULE_SETS
    with pytest.raises(ValueError, match="unknown rule set"):
        awari.Rules("oware")
    with pytest.raises(ValueError, match="not supported"):
        awari.Rules("awari", 9)
    with pytest.raises(ValueError, match="not supported"):
        awari.Rules("awari", -1)
    assert r.start() == awari.Board([4] * 12)
    assert r.level_size(16) == 12_685_179


def test_play_published_positions():
    r = awari.Rules()
    assert r.legal_moves(LINCKE) == [4, 5]  # C would take the whole row
    child, captured, over = r.play(LINCKE, 4)
    assert captured == 5 and not over
    m = r.play("1 1 1 1 1 2 / 4 2 3 0 0 0", 5)
    assert m.captured == 3 and m.label == "F" and m.pit == 5 and m.turn_passes
    assert m.child.seeds == 13
    assert [x.pit for x in r.moves(LINCKE)] == [4, 5]
    # abapa: the grand slam C is legal and captures nothing.
    c = awari.Rules("abapa").play(LINCKE, 2)
    assert c.captured == 0 and c.child.seeds == 18
    # The opponent left without seeds cannot move: the game is over.
    end = awari.Rules().play("0 0 0 0 0 1 / 0 0 0 0 0 0", 5)
    assert not end.game_over and end.child == awari.Board("1 0 0 0 0 0 / 0 0 0 0 0 0")
    # The forced grand slam: F takes a's 2 seeds, the opponent cannot move.
    over = awari.Rules().play("0 0 0 0 0 1 / 1 0 0 0 0 0", 5)
    assert over.game_over and over.captured == 2 and over.child.seeds == 0


@pytest.mark.parametrize(
    "board, pit, words",
    [
        (LINCKE, 0, "the pit is empty"),
        (LINCKE, 2, "leave the opponent without seeds"),
        (LINCKE, 6, "not a pit of the mover"),
        (LINCKE, -1, "not a pit of the mover"),
    ],
)
def test_illegal_moves(board, pit, words):
    with pytest.raises(ValueError, match=words):
        awari.Rules().play(board, pit)


def test_board_of_another_size():
    with pytest.raises(ValueError, match="4 pits per side but the rules have 6"):
        awari.Rules().legal_moves("1 1 1 1 / 1 1 1 1")


def random_position(rng, pits):
    """A random board with every kind of position: empty rows, big pits."""
    style = rng.random()
    out = []
    for k in range(2 * pits):
        if style < 0.25 and k >= pits:
            out.append(0 if rng.random() < 0.8 else rng.randint(1, 3))  # starving rows
        elif rng.random() < 0.35:
            out.append(0)
        elif rng.random() < 0.9:
            out.append(rng.randint(1, 4))
        else:
            out.append(rng.randint(5, 25))
    while sum(out) > 64:
        out[rng.randrange(2 * pits)] //= 2
    return out


def test_moves_equal_the_reference_rules_on_100000_positions():
    rng = random.Random(47)
    rules = {(r, p): awari.Rules(r, p) for r in RULE_SETS for p in range(2, 9)}
    checked = 0
    for i in range(100_000):
        name = RULE_SETS[i % len(RULE_SETS)]
        pits = 6 if i % 2 == 0 else rng.randint(2, 8)
        board = random_position(rng, pits)
        r = rules[(name, pits)]
        want = reference_moves(board, name)
        assert r.legal_moves(board) == [m[0] for m in want], (name, board)
        for pit, captured, child, passes in want:
            m = r.play(board, pit)
            assert (m.pit, m.captured, list(m.child.pits), m.turn_passes) == (
                pit, captured, child, passes,
            ), (name, board, pit)
            assert m.game_over == (not any(child[:pits])), (name, board, pit)
            checked += 1
    assert checked > 200_000
