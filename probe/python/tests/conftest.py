"""Shared fixtures: the command-line tools to compare with, and small
databases built once per session (levels 0..=16 of two rule sets, their
even-split values and their bounds under any repetition rule).

The tools are looked for in $AWARI_BIN, else $CARGO_TARGET_DIR/release, else
target/release of the repository; scripts/test-python.sh builds them and sets
AWARI_BIN, and then a missing tool is an error rather than a skip.
"""

import os
import pathlib
import random
import subprocess

import pytest

import awari

ROOT = pathlib.Path(__file__).resolve().parents[3]
#: The levels the tests build (0..=TOP) for each rule set.
TOP = 16


def _bin_dir() -> pathlib.Path:
    if os.environ.get("AWARI_BIN"):
        return pathlib.Path(os.environ["AWARI_BIN"])
    target = os.environ.get("CARGO_TARGET_DIR")
    return pathlib.Path(target) / "release" if target else ROOT / "target" / "release"


@pytest.fixture(scope="session")
def cli():
    """Paths of awari-solve and awari-probe."""
    d = _bin_dir()
    tools = {"solve": d / "awari-solve", "probe": d / "awari-probe"}
    missing = [str(p) for p in tools.values() if not p.exists()]
    if missing:
        message = f"the command-line tools are not built ({', '.join(missing)}): cargo build --release"
        if os.environ.get("AWARI_BIN"):
            pytest.fail(message)
        pytest.skip(message)
    return tools


def run(args, stdin=None):
    """Runs a tool; its stdout."""
    done = subprocess.run(
        [str(a) for a in args], input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{args} exited with {done.returncode}: {done.stderr}")
    return done.stdout


@pytest.fixture(scope="session")
def db_dir(tmp_path_factory):
    """A directory for the session's databases ($AWARI_TEST_DB keeps them between runs)."""
    keep = os.environ.get("AWARI_TEST_DB")
    if keep:
        path = pathlib.Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("db")


@pytest.fixture(scope="session")
def db_awari(db_dir):
    """Levels 0..=TOP of awari, built by awari.solve."""
    path = db_dir / "awari"
    awari.solve(path, max_seeds=TOP, rules="awari", progress=False)
    return path


@pytest.fixture(scope="session")
def db_abapa(db_dir, cli):
    """Levels 0..=TOP of abapa, built by awari-solve."""
    path = db_dir / "abapa"
    run([cli["solve"], "--db", path, "--rules", "abapa", "--max-seeds", TOP, "--json"])
    return path


@pytest.fixture(scope="session", params=["awari", "abapa"])
def database(request):
    """(rule set, directory) for each of the two rule sets."""
    fixture = {"awari": "db_awari", "abapa": "db_abapa"}[request.param]
    return request.param, request.getfixturevalue(fixture)


@pytest.fixture(scope="session")
def db_awari_any(db_dir):
    """The bound levels (--repetition any) 0..=TOP of awari, built by awari.solve."""
    path = db_dir / "awari-any"
    awari.solve(path, max_seeds=TOP, rules="awari", repetition="any", progress=False)
    return path


@pytest.fixture(scope="session")
def db_abapa_any(db_dir, cli):
    """The bound levels 0..=TOP of abapa, built by awari-solve --repetition any."""
    path = db_dir / "abapa-any"
    run([cli["solve"], "--db", path, "--rules", "abapa", "--max-seeds", TOP,
         "--repetition", "any", "--json"])
    return path


@pytest.fixture(scope="session", params=["awari", "abapa"])
def bounds_database(request):
    """(rule set, directory of its bound levels, directory of its even-split
    levels) for each of the two rule sets."""
    name = request.param
    return (
        name,
        request.getfixturevalue(f"db_{name}_any"),
        request.getfixturevalue(f"db_{name}"),
    )


def random_boards(count, top=TOP, pits=6, seed=1, rules=None):
    """`count` random boards of levels 0..=top: mostly stored boards (uniform
    level, uniform index), and one in twenty whose opponent row is full."""
    rng = random.Random(seed)
    rules = rules or awari.Rules("awari", pits)
    out = []
    while len(out) < count:
        n = rng.randint(0, top)
        if rng.random() < 0.05:
            if n < pits:
                continue
            opp = [1] * pits
            for _ in range(n - pits):
                opp[rng.randrange(pits)] += 1
            # Share the seeds between the rows at random.
            mine = [0] * pits
            for _ in range(sum(opp) - pits):
                if rng.random() < 0.5:
                    k = rng.randrange(pits)
                    j = rng.randrange(pits)
                    if opp[j] > 1:
                        opp[j] -= 1
                        mine[k] += 1
            out.append(awari.Board(mine + opp))
        else:
            out.append(rules.board_at(n, rng.randrange(rules.level_size(n))))
    return out
