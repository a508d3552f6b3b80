"""Type stubs of the extension module awari._awari (re-exported by awari)."""

import os
import pathlib
from typing import Any, Iterator, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
RULE_SETS: list[str]
REPETITIONS: list[str]
MIN_PITS: int
MAX_PITS: int
MAX_SEEDS: int

BoardLike = Union["Board", str, Sequence[int]]
RuleSetName = Literal["awari", "abapa", "grand-slam-captures", "grand-slam-replay", "cross-wari"]
Result = Literal["win", "draw", "loss"]
BoundsResult = Literal["win", "draw", "loss", "depends"]
RepetitionName = Literal["even-split", "any"]

class CorruptDatabase(Exception):
    """A level file that cannot be trusted (truncated, corrupted, other version or level)."""

class MissingLevel(FileNotFoundError):
    """A level the question needs is not in the database directory."""

@final
class Board:
    """A board seen from the player to move: the mover's pits A.. first, then the opponent's a.. ."""

    def __init__(self, pits: BoardLike) -> None: ...
    def __str__(self) -> str: ...
    def __repr__(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> int: ...
    @property
    def pits(self) -> Tuple[int, ...]:
        """The pit counts in pit order, the mover's row first."""
    @property
    def seeds(self) -> int:
        """The seeds on the board."""
    @property
    def per_side(self) -> int:
        """Pits per side."""
    @property
    def is_stored(self) -> bool:
        """True when a level stores the board (its opponent row has an empty pit)."""
    @property
    def index(self) -> Optional[int]:
        """The board's index in its level, or None when no level stores it."""
    def swapped(self) -> Board:
        """The same pits seen from the other player."""
    def drawing(self) -> str:
        """The two-row drawing of the command line."""

@final
class Move:
    """A move played by Rules.play; unpacks as (child, captured, game_over)."""

    @property
    def pit(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def child(self) -> Board:
        """The position after the move, seen from the next mover."""
    @property
    def captured(self) -> int: ...
    @property
    def game_over(self) -> bool:
        """True when the next mover has no legal move."""
    @property
    def turn_passes(self) -> bool:
        """False only after a grand slam under grand-slam-replay (the capturer moves again)."""
    def __iter__(self) -> Iterator[Any]: ...

@final
class Rules:
    """A rule set and a board size."""

    def __init__(self, rules: RuleSetName | str = "awari", pits: int = 6) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def pits(self) -> int: ...
    def legal_moves(self, board: BoardLike) -> list[int]:
        """The pits (0 for A) of the legal moves, ascending."""
    def moves(self, board: BoardLike) -> list[Move]:
        """Every legal move, played."""
    def play(self, board: BoardLike, pit: int) -> Move:
        """Plays the mover's pit (0 for A); ValueError when illegal."""
    def start(self, seeds: int = 4) -> Board:
        """The start position with `seeds` in every pit."""
    def level_size(self, seeds: int) -> int:
        """How many boards level `seeds` stores."""
    def board_at(self, seeds: int, index: int) -> Board:
        """The board of index `index` in level `seeds`."""

@final
class Tablebase:
    """The level files of one rule set and size in a directory."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        rules: Optional[RuleSetName | str] = "awari",
        pits: int = 6,
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def repetition(self) -> Literal["even-split"]:
        """How the levels value endless play (BoundsTablebase: "any")."""
    @property
    def levels(self) -> list[int]:
        """The levels present, ascending."""
    @property
    def complete_up_to(self) -> Optional[int]:
        """The largest n with levels 0..=n all present."""
    def covers(self, board: BoardLike) -> bool:
        """True when the levels alone answer the board."""
    def preload(self, bytes: int) -> None:
        """Memory for levels decoded whole (batch --preload)."""
    def score(self, board: BoardLike) -> int:
        """The value for the mover: seeds it will still capture minus the opponent's."""
    def result(self, board: BoardLike, captured: Tuple[int, int] = (0, 0)) -> Result:
        """Win, draw or loss for the mover with `captured` seeds already taken."""
    def analyse(
        self, board: BoardLike, captured: Tuple[int, int] = (0, 0), pv_limit: int = 200
    ) -> dict[str, Any]:
        """The dict of `awari-probe score --json`."""
    def scores(self, boards: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Values of an (N, 2P) integer array of boards, in parallel without the GIL."""
    def search(
        self,
        board: BoardLike,
        captured: Tuple[int, int] = (0, 0),
        time: Optional[float] = 2.0,
        depth: Optional[int] = None,
        hash: int = 64 << 20,
        threads: Optional[int] = None,
        pv_limit: int = 200,
    ) -> dict[str, Any]:
        """The dict of `awari-probe score --json --time T` (a search above the levels)."""

@final
class BoundsTablebase:
    """The bound levels of --repetition any of one rule set and size in a directory:
    per board a lower and an upper bound that hold under every repetition rule."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        rules: Optional[RuleSetName | str] = "awari",
        pits: int = 6,
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def repetition(self) -> Literal["any"]:
        """How the levels value endless play (Tablebase: "even-split")."""
    @property
    def levels(self) -> list[int]:
        """The levels with both bound files present, ascending."""
    @property
    def complete_up_to(self) -> Optional[int]:
        """The largest n with levels 0..=n all present."""
    def covers(self, board: BoardLike) -> bool:
        """True when the levels present answer the board (nothing is searched)."""
    def bounds(self, board: BoardLike) -> Tuple[int, int]:
        """(lower, upper) for the mover under every repetition rule."""
    def is_exact(self, board: BoardLike) -> bool:
        """True when the bounds meet: the same value under every repetition rule."""
    def result(self, board: BoardLike, captured: Tuple[int, int] = (0, 0)) -> BoundsResult:
        """Win, draw or loss when the bounds decide it with `captured` taken, else "depends"."""
    def analyse(
        self, board: BoardLike, captured: Optional[Tuple[int, int]] = (0, 0)
    ) -> dict[str, Any]:
        """The dict of `awari-probe score --repetition any --json` (no result when captured is None)."""
    def bounds_array(self, boards: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """(N, 2) lower and upper bounds of an (N, 2P) integer array of boards, in parallel without the GIL."""
    def level_bounds(
        self, seeds: int
    ) -> Tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
        """(lower, upper): the whole level's bounds in index order."""

def solve(
    path: Union[str, os.PathLike[str]],
    max_seeds: Optional[int] = None,
    rules: RuleSetName | str = "awari",
    pits: int = 6,
    memory: Union[int, str, None] = None,
    start: Optional[int] = None,
    exact: bool = False,
    certificate: bool = False,
    progress: bool = True,
    repetition: RepetitionName | str = "even-split",
    count_all: bool = False,
) -> list[dict[str, Any]]:
    """Builds the missing levels as awari-solve does (repetition="any": the bound
    levels of --repetition any); one dict per level. count_all=True also counts
    every board, stored or not, into "counts_all" (awari-solve --count-all)."""
