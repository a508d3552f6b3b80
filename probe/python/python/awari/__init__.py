"""Perfect-play Awari (Oware) databases from Python.

Boards and rules (``Board``, ``Rules``), the databases built by ``awari-solve``
or ``solve`` (``Tablebase``: values, every move's value, principal variations,
a search above the levels built, many boards at once with numpy), the bounds
that hold under every repetition rule (``solve(..., repetition="any")`` and
``BoundsTablebase``) and, in ``awari.openspiel``, OpenSpiel's ``oware`` game.
See docs/python.md.

>>> import awari
>>> tb = awari.Tablebase("db")
>>> tb.score("0 0 6 0 3 5 / 2 1 1 0 0 0")
-2
"""

from ._awari import (
    MAX_PITS,
    MAX_SEEDS,
    MIN_PITS,
    REPETITIONS,
    RULE_SETS,
    Board,
    BoundsTablebase,
    CorruptDatabase,
    MissingLevel,
    Move,
    Rules,
    Tablebase,
    __version__,
    solve,
)

__all__ = [
    "Board",
    "BoundsTablebase",
    "CorruptDatabase",
    "MAX_PITS",
    "MAX_SEEDS",
    "MIN_PITS",
    "MissingLevel",
    "Move",
    "REPETITIONS",
    "RULE_SETS",
    "Rules",
    "Tablebase",
    "__version__",
    "solve",
]
