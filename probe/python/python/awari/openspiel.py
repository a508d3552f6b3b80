"""OpenSpiel's ``oware`` game with the databases: positions and a bot.

OpenSpiel (``pip install open_spiel``) plays Oware under the ``abapa`` rules of
this project (a grand slam captures nothing, an empty row must be fed, a player
that cannot feed it takes the seeds left), with two differences in how a game
ends:

- it stops as soon as a player holds more than half of the seeds (this never
  changes who wins, so the databases' results stay exact), and
- it stops at the first repetition of a position since the last capture, each
  side then taking the seeds of its own row; the databases score endless play
  as an even split (0). So a position the databases value 0 through endless
  play may be won, drawn or lost in OpenSpiel depending on the seeds in each row
  when the repetition comes: the *even-split values are not exact for it*, and
  neither is the bot's play in such positions (the values of every other
  position, and the bot's moves there, are).

OpenSpiel's ending is one of the rules that the bounds of ``--repetition any``
cover (``awari.BoundsTablebase``, built by ``awari.solve(...,
repetition="any")``): from a position with nothing before it to repeat (the
start, or just after a capture) OpenSpiel's value lies between the board's
two bounds, and is exactly theirs where they meet. After quiet moves the
positions since the last capture can end the game early, and the board's
bounds alone can be wrong for the state: :func:`bounds_from_state` takes
that history into account.

Board and action numbering: an OpenSpiel action is the pit number from the
mover's left (0 for A), for either player; houses 0..P-1 are player 0's and
P..2P-1 player 1's, counterclockwise, which is this project's pit order seen
from player 0.

>>> import pyspiel, awari
>>> from awari.openspiel import TablebaseBot, board_from_state, bounds_from_state
>>> game = pyspiel.load_game("oware(num_seeds_per_house=1)")
>>> tb = awari.Tablebase("db-abapa", rules="abapa")   # levels 0..=12
>>> bot = TablebaseBot(tb, player_id=0)
>>> bounds = awari.BoundsTablebase("db-abapa", rules="abapa")
>>> bounds_from_state(bounds, game.new_initial_state()).result
'depends'
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple, Optional, Tuple

try:
    import pyspiel
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "awari.openspiel needs OpenSpiel: pip install open_spiel"
    ) from e

from ._awari import Board, BoundsTablebase, Tablebase

__all__ = [
    "board_from_state",
    "bounds_from_state",
    "StateBounds",
    "TablebaseBot",
    "OPENSPIEL_RULES",
]

#: The rule set of OpenSpiel's oware in this project's terms.
OPENSPIEL_RULES = "abapa"


def _layout(state: Any) -> Tuple[int, int]:
    """Pits per side and the total seeds of an oware state's game."""
    params = state.get_game().get_parameters()
    houses = int(params.get("num_houses_per_player", 6))
    per_house = int(params.get("num_seeds_per_house", 4))
    return houses, 2 * houses * per_house


def board_from_state(
    state: Any, player: Optional[int] = None
) -> Tuple[Board, Tuple[int, int]]:
    """The position of an OpenSpiel ``oware`` state: ``(board, (m, o))``.

    ``board`` is seen from ``player`` (by default the player to move): that
    player's houses first, from its left, then the opponent's; ``m`` and ``o``
    are the seeds already captured by that player and by the opponent. For a
    terminal state give ``player`` (no one is to move).

    Raises ValueError for a state of another game or a terminal state without
    ``player``.
    """
    if state.get_game().get_type().short_name != "oware":
        raise ValueError(
            f"not an oware state: {state.get_game().get_type().short_name}"
        )
    if player is None:
        player = state.current_player()
        if player < 0:
            raise ValueError(
                "the game is over, no one is to move: give player=0 or player=1"
            )
    if player not in (0, 1):
        raise ValueError(f"player {player}: oware has players 0 and 1")
    houses, total = _layout(state)
    values = state.observation_tensor(0)
    counts = [int(round(v * total)) for v in values]
    if len(counts) != 2 * houses + 2 or sum(counts) != total:
        raise ValueError(
            f"cannot read the oware state (expected {2 * houses} houses and {total} seeds): {state}"
        )
    seeds, scores = counts[: 2 * houses], counts[2 * houses :]
    if player == 0:
        pits = seeds
    else:
        pits = seeds[houses:] + seeds[:houses]
    return Board(pits), (scores[player], scores[1 - player])


class StateBounds(NamedTuple):
    """What the bounds of ``--repetition any`` say about an OpenSpiel
    ``oware`` state, for the player to move (:func:`bounds_from_state`).

    Values are final seed differences from here on: the seeds the player to
    move will still capture (its row's seeds when OpenSpiel ends the game)
    minus the opponent's.
    """

    #: The board's bounds (``BoundsTablebase.bounds``): they hold under every
    #: rule that ends endless play by sharing the seeds on the board, for play
    #: from this board with nothing before it to repeat.
    lower: int
    upper: int
    #: ``lower == upper``: the board's value is the same under every such rule.
    exact: bool
    #: Seeds already captured: by the player to move, by the opponent.
    captured: Tuple[int, int]
    #: True when no other position has been seen since the last capture (the
    #: start, or just after a capture): OpenSpiel's value then lies in
    #: ``[lower, upper]``.
    fresh: bool
    #: ``(low, high)``: bounds on OpenSpiel's value of this state, its
    #: history since the last capture included: ``(lower, upper)`` when
    #: ``fresh``, else found over the positions reachable without a capture
    #: (a repetition of an earlier one ends the game with each side taking its
    #: own row); ``None`` when those are more than the ``limit`` given.
    game: Optional[Tuple[int, int]]
    #: For the player to move, with ``captured``: ``"win"``, ``"draw"`` or
    #: ``"loss"`` when ``game`` decides OpenSpiel's result, ``"depends"``
    #: when it does not, ``"unknown"`` when ``game`` is None.
    result: str

    @property
    def decided(self) -> bool:
        """True when ``result`` is OpenSpiel's result with perfect play."""
        return self.result in ("win", "draw", "loss")

    @property
    def game_exact(self) -> bool:
        """True when ``game`` gives OpenSpiel's value of the state exactly."""
        return self.game is not None and self.game[0] == self.game[1]


def bounds_from_state(
    tablebase: BoundsTablebase, state: Any, limit: int = 100_000
) -> StateBounds:
    """The bounds of ``--repetition any`` for an OpenSpiel ``oware`` state,
    and whether they decide the game under OpenSpiel's own rule.

    ``tablebase`` is an ``awari.BoundsTablebase`` of the ``abapa`` rules and
    the game's size. OpenSpiel ends the game at the first repetition of a
    position since the last capture, each side taking the seeds of its own
    row: one of the rules the bounds cover, so from a position with nothing
    before it to repeat (``fresh``) OpenSpiel's value lies between the
    board's bounds. After quiet moves an earlier position can come round
    again and end the game sooner, and the board's bounds (even equal ones)
    can then be wrong for the state; so for such a state the bounds are
    found again over the positions reachable without a capture (at most
    ``limit`` of them): a move into an earlier position ends the game there,
    a capture or the end of the game is valued by the bounds of the position
    it leaves, and otherwise the same recurrence as the databases' (least
    lower bound, greatest upper bound). Those bounds hold for OpenSpiel's
    game whatever the history holds, and give ``result``.

    Raises ValueError for a terminal state or a state of another game,
    ``awari.MissingLevel`` when a bound level the answer needs is not built.
    """
    if not isinstance(tablebase, BoundsTablebase):
        raise TypeError(
            "bounds_from_state needs an awari.BoundsTablebase (levels built with repetition=\"any\"), "
            f"not {type(tablebase).__name__}"
        )
    if tablebase.rules.name != OPENSPIEL_RULES:
        raise ValueError(
            f"OpenSpiel's oware plays the {OPENSPIEL_RULES} rules; these bound levels are of {tablebase.rules.name}"
        )
    board, captured = board_from_state(state)
    if board.per_side != tablebase.rules.pits:
        raise ValueError(
            f"the game has {board.per_side} houses per player but the bound levels {tablebase.rules.pits}"
        )
    lower, upper = tablebase.bounds(board)
    mover = state.current_player()
    houses = board.per_side
    history = {
        (player, pits if player == 0 else pits[houses:] + pits[:houses])
        for player, pits in _positions_since_capture(state)
    }
    fresh = history == {(mover, board.pits)}
    if fresh:
        game: Optional[Tuple[int, int]] = (lower, upper)
    else:
        game = _bounds_with_history(tablebase, board, mover, history, limit)
    return StateBounds(
        lower=lower,
        upper=upper,
        exact=lower == upper,
        captured=captured,
        fresh=fresh,
        game=game,
        result="unknown" if game is None else _decided(game, captured),
    )


def _decided(bounds: Tuple[int, int], captured: Tuple[int, int]) -> str:
    """What ``bounds`` decide for the mover with ``captured`` seeds taken
    (as ``BoundsTablebase.result``)."""
    lead = captured[0] - captured[1]
    low, high = lead + bounds[0], lead + bounds[1]
    if low > 0:
        return "win"
    if high < 0:
        return "loss"
    if low == 0 and high == 0:
        return "draw"
    return "depends"


def _bounds_with_history(
    tablebase: BoundsTablebase,
    board: Board,
    mover: int,
    history: set,
    limit: int,
) -> Optional[Tuple[int, int]]:
    """Bounds on OpenSpiel's value of ``board`` (``mover`` to move) when the
    positions of ``history`` (``(player to move, pits seen from that
    player)``, ``board`` among them) have been seen since the last capture;
    None when more than ``limit`` positions are reachable without a capture.

    Over those positions: a move into a position of ``history`` ends the game
    (each side takes its own row: exact); a capture, or a move after which
    the next player cannot move, leaves a position with nothing before it to
    repeat, valued by its bounds in ``tablebase``; any other move leads to a
    position of the graph. From -n and +n (n the seeds on the board) the
    lower and upper bounds are raised and lowered by the databases'
    recurrence (lower from the children's upper bounds and the other way
    round) until nothing changes: the least lower and the greatest upper
    solution. A lower bound above -n is forced by a strategy whose positions
    never repeat (each step gets closer to a capture, the end or a
    repetition of the history), so positions repeated within the play itself
    never end it first, and the same for the upper bound; so they hold for
    OpenSpiel's game.
    """
    rules = tablebase.rules
    houses = rules.pits
    n = board.seeds
    index = {(mover, board.pits): 0}
    boards = [board]
    players = [mover]
    ends: list = []  # per position: (low, high) of its best move ending the play, or None
    kids: list = []  # per position: the positions its quiet moves lead to
    pending: list = []  # (position, captured, child board) valued by the levels
    i = 0
    while i < len(boards):
        b, player = boards[i], players[i]
        low = high = None
        children = []
        for m in rules.moves(b):
            child = m.child
            key = (1 - player, child.pits)
            if m.captured or m.game_over:
                pending.append((i, m.captured, child))
                continue
            if key in history:  # OpenSpiel ends the game: each side takes its own row
                value = sum(child.pits[houses:]) - sum(child.pits[:houses])
                low = value if low is None else max(low, value)
                high = value if high is None else max(high, value)
                continue
            j = index.get(key)
            if j is None:
                if len(boards) >= limit:
                    return None
                j = index[key] = len(boards)
                boards.append(child)
                players.append(1 - player)
            children.append(j)
        ends.append((low, high))
        kids.append(children)
        i += 1
    if pending:
        got = tablebase.bounds_array([c.pits for _, _, c in pending])
        for (i, captured, _), (lo, hi) in zip(pending, got.tolist()):
            low, high = ends[i]
            low = captured - hi if low is None else max(low, captured - hi)
            high = captured - lo if high is None else max(high, captured - lo)
            ends[i] = (low, high)
    count = len(boards)
    preds: list = [[] for _ in range(count)]
    for a in range(count):
        for c in kids[a]:
            preds[c].append(a)
    lower = [-n] * count
    upper = [n] * count
    queue = list(range(count - 1, -1, -1))
    queued = [True] * count
    while queue:
        a = queue.pop()
        queued[a] = False
        low, high = ends[a]
        for c in kids[a]:
            low = -upper[c] if low is None else max(low, -upper[c])
            high = -lower[c] if high is None else max(high, -lower[c])
        if low is None:  # no move (cannot be: every position here has one)
            continue
        if low != lower[a] or high != upper[a]:
            lower[a], upper[a] = low, high
            for p in preds[a]:
                if not queued[p]:
                    queued[p] = True
                    queue.append(p)
    return lower[0], upper[0]


class TablebaseBot(pyspiel.Bot):
    """A ``pyspiel.Bot`` for ``oware`` that plays perfectly where the levels reach.

    Where the levels of ``tablebase`` (an ``abapa`` database of the game's
    size) cover the position, it plays a best move of the databases; above
    them, the move of a search of ``time`` seconds (and at most ``depth``
    plies) with the levels at its leaves, as ``Tablebase.search``.

    OpenSpiel ends a game at the first repetition of a position since the
    last capture, each side taking its own row, where the databases count
    endless play as an even split. So the bot values a move that would repeat
    a position by that ending, and chooses by the result of the game (with
    the seeds already captured), then the value, then a move that does not
    repeat (a won position's best moves may go round in circles: the
    databases store values, not distances), then the larger capture, then at
    random with ``rng`` (else the first).

    Choosing among equal values at random can wander until every move left
    repeats a position (the 2 losses and 3 draws of 100 games against MCTS).
    So, where the levels answer and the position is won or drawn, the bot
    first looks for a *plan*: over the positions reachable without a capture
    (when the positions with the seeds on the board, either player to move,
    are at most ``plan_limit``: 7 seeds of 12 pits by default), with
    OpenSpiel's history since the last capture, a retrograde pass finds the
    moves that force, whatever the opponent replies, a capture or an end of
    the game keeping the position's value (by the databases' value of the
    move), or a repetition whose own-rows split keeps it, else keeping at
    least its result; the bot plays one needing the fewest moves of its own
    (ties as above). Such a line never repeats a position. Without a plan
    (none forces it, or too many seeds on the board) it chooses as above.
    The values after a capture, and of positions drawn by endless play, are
    still those of the databases, not exact for OpenSpiel's game.
    """

    def __init__(
        self,
        tablebase: Tablebase,
        player_id: Optional[int] = None,
        time: Optional[float] = 1.0,
        depth: Optional[int] = None,
        threads: Optional[int] = None,
        rng: Optional[random.Random] = None,
        plan_limit: int = 100_000,
    ) -> None:
        pyspiel.Bot.__init__(self)
        if tablebase.rules.name != OPENSPIEL_RULES:
            raise ValueError(
                f"OpenSpiel's oware plays the {OPENSPIEL_RULES} rules; this database is of {tablebase.rules.name}"
            )
        self.tablebase = tablebase
        self._player_id = player_id
        self.time = time
        self.depth = depth
        self.threads = threads
        self.rng = rng
        #: The last answer (the dict of Tablebase.analyse or .search).
        self.last_answer: Optional[dict] = None
        #: The moves weighed at the last step, best first: ``(key, pit)`` with
        #: key ``(result, value, not repeats, captured)`` as described above.
        self.last_scores: list = []
        #: The plan of the last step, or None: ``(target, {pit: moves})``, the
        #: final seed difference it keeps and the most moves of the bot each
        #: pit needs until the capture, the end or the repetition.
        self.last_plan: Optional[tuple] = None
        #: The bot plans only when the positions with the seeds on the board,
        #: either player to move, are at most this many (7 seeds of 12 pits).
        self.plan_limit = plan_limit

    def player_id(self) -> Optional[int]:
        return self._player_id

    def restart_at(self, state: Any) -> None:
        pass

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False

    def answer(self, state: Any) -> dict:
        """The databases' (or the search's) answer for the player to move."""
        board, captured = board_from_state(state)
        if board.per_side != self.tablebase.rules.pits:
            raise ValueError(
                f"the game has {board.per_side} houses per player but the database {self.tablebase.rules.pits}"
            )
        if self.tablebase.covers(board):
            return self.tablebase.analyse(board, captured=captured, pv_limit=0)
        return self.tablebase.search(
            board,
            captured=captured,
            time=self.time,
            depth=self.depth,
            threads=self.threads,
            pv_limit=0,
        )

    def step(self, state: Any) -> int:
        legal = state.legal_actions()
        if not legal:
            return pyspiel.INVALID_ACTION
        answer = self.answer(state)
        self.last_answer = answer
        board, (mine, theirs) = board_from_state(state)
        seen = _positions_since_capture(state)
        mover = state.current_player()
        houses = board.per_side
        rules = self.tablebase.rules
        best_value = answer["value"]
        scored = []
        for m in answer["moves"]:
            pit = m["pit"]
            if pit not in legal:
                continue
            played = rules.play(board, pit)
            child = list(played.child.pits)  # seen from the opponent
            key = (1 - mover, tuple(child[houses:] + child[:houses]) if mover == 0 else tuple(child))
            repeats = key in seen
            if repeats:
                # OpenSpiel ends the game here, each side taking its own row.
                value = played.captured + sum(child[houses:]) - sum(child[:houses])
            elif m["value"] is not None:
                value = m["value"]
            else:  # a search values its best move only
                value = best_value if pit in answer["best"] else best_value - 1
            result = _sign(mine - theirs + value)
            scored.append(((result, value, not repeats, played.captured), pit))
        scored.sort(key=lambda kp: kp[0], reverse=True)
        self.last_scores = scored
        self.last_plan = None
        lead = mine - theirs
        result = _sign(lead + best_value)
        level = 2 * rules.level_size(board.seeds)  # positions with these seeds, either to move
        if not answer.get("search") and result >= 0 and level <= self.plan_limit:
            # Keep the value, else at least the result (a win by 1, a draw).
            targets = sorted({lead + best_value, result}, reverse=True)
            self.last_plan = _forced_conversion(
                self.tablebase, board, (mine, theirs), mover, seen, targets
            )
        if self.last_plan is not None:
            plan = self.last_plan[1]
            fastest = min(plan.values())
            top = max(k for k, pit in scored if plan.get(pit) == fastest)
            best = [pit for k, pit in scored if k == top and plan.get(pit) == fastest]
        else:
            top = scored[0][0]
            best = [pit for k, pit in scored if k == top]
        if self.rng is not None and len(best) > 1:
            return self.rng.choice(best)
        return best[0]


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _forced_conversion(
    tablebase: Tablebase,
    board: Board,
    captured: Tuple[int, int],
    mover: int,
    seen: set,
    targets: list,
) -> Optional[tuple]:
    """The first of ``targets`` for which some moves of ``board`` (``mover``
    to move, ``captured`` = (its seeds, the opponent's)) force, under
    OpenSpiel's repetition rule, a *conversion* with a final seed difference
    of at least that target for the mover (its captures minus the
    opponent's, plus the value): a capture or the end of the game whose
    databases' value gives that, or a repetition whose own-rows split does.
    ``(target, {pit: n})``, n the most moves of the mover until it; None
    when no target is forced. The positions are explored once for all
    targets (the caller bounds their number: they keep the seeds on the
    board).

    The positions reachable without a capture are explored; those of ``seen``
    (OpenSpiel's history since the last capture) end the game when reached
    again. A capture by the opponent, or a position where it has no move, is
    never worse for the mover than the databases' value of the opponent's
    position, so the opponent's positions count when that value gives the
    target. Along a forced line the distance strictly decreases, so the line
    never repeats a position of its own: this is exact given the databases'
    values at the captures (endless play elsewhere is not assumed).
    """
    rules = tablebase.rules
    houses = rules.pits
    lead = captured[0] - captured[1]

    def key(b: Board, player: int) -> tuple:
        return (player, b.pits if player == 0 else b.swapped().pits)

    index = {key(board, mover): 0}
    nodes = [(True, board)]  # (the mover's turn, the board seen from whoever moves)
    edges: list = [[]]  # (pit, internal successor)
    exits: list = [[]]  # the mover's: (pit, result); the opponent's: [its worst result]
    i = 0
    while i < len(nodes):
        ours, b = nodes[i]
        player = mover if ours else 1 - mover
        if ours:
            values = {m["pit"]: m["value"] for m in tablebase.analyse(b, pv_limit=0)["moves"]}
        else:
            worst = lead - tablebase.score(b)
        for pit in rules.legal_moves(b):
            played = rules.play(b, pit)
            if played.captured or played.game_over:
                if ours:
                    exits[i].append((pit, lead + values[pit]))
                continue  # the opponent's: no worse than `worst`
            child = played.child
            k = key(child, 1 - player)
            if k in seen:  # OpenSpiel ends the game: each side takes its own row
                row_next, row_mover = sum(child.pits[:houses]), sum(child.pits[houses:])
                if ours:
                    exits[i].append((pit, lead + row_mover - row_next))
                else:
                    worst = min(worst, lead + row_next - row_mover)
                continue
            j = index.get(k)
            if j is None:
                j = index[k] = len(nodes)
                nodes.append((not ours, child))
                edges.append([])
                exits.append([])
            edges[i].append((pit, j))
        if not ours:
            exits[i] = [worst]
        i += 1
    for target in targets:
        plan = _plan(nodes, edges, exits, target)
        if plan:
            return target, plan
    return None


def _plan(nodes: list, edges: list, exits: list, target: int) -> dict:
    """The retrograde pass of :func:`_forced_conversion` over its explored
    positions for one ``target``: ``{pit: n}`` for the root's moves that
    force it, n the most moves of the mover until the conversion (empty when
    none forces it)."""
    # dist[i] = the mover's moves until the conversion.
    n = len(nodes)
    preds: list = [[] for _ in range(n)]
    for a in range(n):
        for _, c in edges[a]:
            preds[c].append(a)
    dist: list = [None] * n
    left = [len(edges[a]) for a in range(n)]
    buckets: dict = {}
    for a in range(n):
        ours = nodes[a][0]
        if ours and any(r >= target for _, r in exits[a]):
            dist[a] = 1
        elif not ours and exits[a][0] >= target and not edges[a]:
            dist[a] = 0
        if dist[a] is not None:
            buckets.setdefault(dist[a], []).append(a)
    d = 0
    while d <= max(buckets, default=-1):
        queue = buckets.get(d, [])
        q = 0
        while q < len(queue):
            c = queue[q]
            q += 1
            for a in preds[c]:
                if dist[a] is not None:
                    continue
                if nodes[a][0]:  # our move into an opponent position of distance d
                    dist[a] = d + 1
                    buckets.setdefault(d + 1, []).append(a)
                elif exits[a][0] >= target:
                    left[a] -= 1
                    if left[a] == 0:  # every reply reaches distance <= d
                        dist[a] = d
                        queue.append(a)
        d += 1
    if dist[0] is None:
        return {}
    plan = {pit: 1 for pit, r in exits[0] if r >= target}
    for pit, c in edges[0]:
        if dist[c] is not None and pit not in plan:
            plan[pit] = dist[c] + 1
    return plan


def _positions_since_capture(state: Any) -> set:
    """The positions (player to move, houses) since the last capture of the
    game of `state`, the current one included: what OpenSpiel's repetition
    rule looks at."""
    replay = state.get_game().new_initial_state()
    seen = set()

    def add(s):
        b, _ = board_from_state(s, player=0)
        seen.add((s.current_player(), b.pits))

    add(replay)
    for action in state.history():
        before = sum(board_from_state(replay, player=0)[0].pits)
        replay.apply_action(action)
        if replay.is_terminal():
            break
        if sum(board_from_state(replay, player=0)[0].pits) < before:
            seen.clear()
        add(replay)
    return seen
