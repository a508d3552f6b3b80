#!/usr/bin/env python3
"""Play an Oware (Abapa) match between two UCI-like engines, refereed by OpenSpiel.

Engine A plays engine B from N distinct openings (`--plies` random legal moves
from the start, drawn with `--seed`), each opening twice with the colours
swapped, so 2N games. An engine is a shell command that speaks the UCI-like
dialect of Aalina (the Samurai framework's Oware engine), or one of OpenSpiel's
bots: `openspiel:random` or `openspiel:mcts[:SIMULATIONS]` (default 1000).

The dialect: houses `A`-`F` are South's, left to right as South sees them,
`a`-`f` North's, left to right as North sees them; South moves first. Per
engine: `uci` -> `uciok`, `setoption name N value V` for each --option,
`isready` -> `readyok`; per game `ucinewgame` + `isready`; per move
`position startpos moves <all moves so far, concatenated: FbAc>` and
`go movetime MS`, answered by `bestmove X`. Engines keep running across moves
and games.

The referee is pyspiel's `oware` game: every move must be legal there, the game
ends when OpenSpiel says so (a store above 24; no legal move or a repeated
position since the last capture: each player takes the seeds of its own row;
OpenSpiel also gives each player its own row when a store passes 24), and its
final scores give the result and the seeds. A game reaching OpenSpiel's
maximum length (1000 plies) is adjudicated as if each took its own row. An
illegal move, a crash, or no `bestmove` within 5 x movetime + 2 s loses the
game for that engine (the engine is restarted for the next game).

Summary for engine A: wins, draws, losses, score (draw = 1/2), the mean seed
margin (A's seeds minus B's, over the games that ended on the board), and a 95%
confidence interval for the score: Wilson's score interval over the games,
with a draw counted as half a win (conservative with draws; sensible at 0% or
100%, where a normal approximation collapses).

Needs only pyspiel (`pip install open_spiel`); scripts/match.sh sets that up.
"""

import argparse
import json
import math
import queue
import random
import subprocess
import sys
import threading
import time

import pyspiel

GAME = pyspiel.load_game("oware")


def letter(player, action):
    """Aalina's notation of OpenSpiel's action: A-F for South (0), a-f for North (1)."""
    return ("ABCDEF" if player == 0 else "abcdef")[action]


def seeds(state):
    """OpenSpiel's scores [South, North] (the stores, rows collected at the end)."""
    return [round(x * 48) for x in state.observation_tensor(0)[12:14]]


class EngineError(Exception):
    """The engine crashed, timed out or said something unusable."""


class UciEngine:
    """A UCI-like engine in a subprocess, read by a thread so reads can time out."""

    def __init__(self, command, options, log=None):
        self.command, self.options, self.log = command, options, log
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            command_argv(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.process, self.lines), daemon=True).start()
        self.send("uci")
        self.wait_for("uciok", 60)
        for option in self.options:
            name, _, value = option.partition("=")
            self.send(f"setoption name {name.strip()} value {value.strip()}")
        self.send("isready")
        self.wait_for("readyok", 60)

    @staticmethod
    def _read(process, lines):
        for line in process.stdout:
            lines.put(line.strip())
        lines.put(None)  # end of output: the engine exited

    def send(self, line):
        if self.log:
            self.log(f">> {line}")
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise EngineError(f"cannot write to the engine: {e}")

    def wait_for(self, keyword, timeout):
        """Lines read until one starting with `keyword` (returned, with the last `info`)."""
        deadline = time.monotonic() + timeout
        info = None
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise EngineError(f"timeout waiting for {keyword}")
            if line is None:
                raise EngineError(f"engine exited (code {self.process.wait()})")
            if self.log:
                self.log(f"<< {line}")
            if line.split()[:1] == [keyword]:
                return line, info
            if line.startswith("info") and "string" not in line.split()[:2]:
                info = line

    def new_game(self):
        self.send("ucinewgame")
        self.send("isready")
        self.wait_for("readyok", 30)

    def move(self, state, moves, movetime_ms):
        self.send("position startpos" + (f" moves {moves}" if moves else ""))
        self.send(f"go movetime {movetime_ms}")
        line, info = self.wait_for("bestmove", 5 * movetime_ms / 1000 + 2)
        words = line.split()
        return (words[1] if len(words) > 1 else ""), info

    def restart(self):
        self.close()
        self.start()

    def close(self):
        if self.process and self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=2)
            except (EngineError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class OpenSpielBot:
    """openspiel:random or openspiel:mcts[:SIMULATIONS] (pyspiel's C++ MCTS, random rollouts)."""

    def __init__(self, spec, seed):
        kind, _, arg = spec.partition(":")[2].partition(":")
        self.rng = random.Random(seed)
        if kind == "random":
            self.bot = None
        elif kind == "mcts":
            simulations = int(arg or 1000)
            evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
            self.bot = pyspiel.MCTSBot(GAME, evaluator, 2.0, simulations, 1000, True, seed, False)
        else:
            raise SystemExit(f"unknown OpenSpiel bot: {spec}")

    def new_game(self):
        pass

    def move(self, state, moves, movetime_ms):
        action = self.bot.step(state) if self.bot else self.rng.choice(state.legal_actions())
        return letter(state.current_player(), action), None

    def restart(self):
        pass

    def close(self):
        pass


def command_argv(command):
    return ["/bin/sh", "-c", "exec " + command]


def make_player(spec, options, seed, log):
    if spec.startswith("openspiel:"):
        return OpenSpielBot(spec, seed)
    return UciEngine(spec, options, log)


def openings(count, plies, seed):
    """`count` distinct sequences of `plies` random legal moves (Aalina notation)."""
    rng, found = random.Random(seed), []
    for _ in range(1000 * count):
        if len(found) == count:
            break
        state, line = GAME.new_initial_state(), ""
        while len(line) < plies and not state.is_terminal():
            action = rng.choice(state.legal_actions())
            line += letter(state.current_player(), action)
            state.apply_action(action)
        if len(line) == plies and not state.is_terminal() and line not in found:
            found.append(line)
    if len(found) < count:
        raise SystemExit(f"only {len(found)} distinct openings of {plies} plies")
    return found


def play_game(players, a_is_south, opening, movetime_ms):
    """One game. players = {"A": ..., "B": ...}. Returns the game's record (a dict)."""
    south, north = ("A", "B") if a_is_south else ("B", "A")
    record = {"opening": opening, "south": south, "north": north, "a_side": "South" if a_is_south else "North",
              "moves": "", "plies": [], "end": "board", "forfeit": None}
    state = GAME.new_initial_state()
    for ch in opening:
        state.apply_action("ABCDEFabcdef".index(ch) % 6)
        record["moves"] += ch
    for name in ("A", "B"):
        try:
            players[name].new_game()
        except EngineError as e:
            return finish_forfeit(record, players, name, f"new game: {e}")
    while not state.is_terminal():
        if len(record["moves"]) >= GAME.max_game_length():
            record["end"] = "max length: rows collected"
            break
        player = state.current_player()
        name = south if player == 0 else north
        legal = {letter(player, a): a for a in state.legal_actions()}
        started = time.monotonic()
        try:
            move, info = players[name].move(state, record["moves"], movetime_ms)
        except EngineError as e:
            return finish_forfeit(record, players, name, str(e))
        ms = round(1000 * (time.monotonic() - started))
        record["plies"].append({"move": move, "by": name, "ms": ms,
                                "info": info.split(" pv ")[0][5:] if info else None})
        if move not in legal:
            return finish_forfeit(record, players, name, f"illegal move {move!r} (legal: {''.join(legal)})")
        state.apply_action(legal[move])
        record["moves"] += move
    board = seeds(state)
    if not state.is_terminal():  # adjudicated at the maximum length: each takes its own row
        houses = [round(x * 48) for x in state.observation_tensor(0)[:12]]
        board = [board[0] + sum(houses[:6]), board[1] + sum(houses[6:])]
    record["seeds"] = {south: board[0], north: board[1]}
    a, b = record["seeds"]["A"], record["seeds"]["B"]
    record["score_a"] = 1.0 if a > b else 0.0 if a < b else 0.5
    return record


def finish_forfeit(record, players, loser, reason):
    record["end"] = "forfeit"
    record["forfeit"] = {"engine": loser, "reason": reason}
    record["score_a"] = 0.0 if loser == "A" else 1.0
    record["seeds"] = None
    players[loser].restart()
    return record


def summary(records, movetime_ms):
    n = len(records)
    wins = sum(r["score_a"] == 1.0 for r in records)
    draws = sum(r["score_a"] == 0.5 for r in records)
    losses = n - wins - draws
    score = sum(r["score_a"] for r in records) / n
    z = 1.96  # Wilson score interval
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n))
    margins = [r["seeds"]["A"] - r["seeds"]["B"] for r in records if r["seeds"]]
    overhead = {}
    for name in ("A", "B"):
        ms = [p["ms"] for r in records for p in r["plies"] if p["by"] == name]
        if ms:
            overhead[name] = {"moves": len(ms), "mean_ms": round(sum(ms) / len(ms), 1), "max_ms": max(ms)}
    return {"games": n, "wins": wins, "draws": draws, "losses": losses, "score": score,
            "ci95": [centre - half, centre + half],
            "mean_seed_margin": sum(margins) / len(margins) if margins else None,
            "games_on_board": len(margins),
            "forfeits": {name: sum(1 for r in records if r["forfeit"] and r["forfeit"]["engine"] == name)
                         for name in ("A", "B")},
            "time_per_move": overhead, "movetime_ms": movetime_ms}


def game_line(i, r):
    result = {1.0: "A wins", 0.5: "draw", 0.0: "B wins"}[r["score_a"]]
    if r["seeds"]:
        detail = f"{r['seeds'][r['south']]}-{r['seeds'][r['north']]} (South-North), {len(r['moves'])} plies"
    else:
        detail = f"forfeit by {r['forfeit']['engine']}: {r['forfeit']['reason']}"
    if r["end"].startswith("max"):
        detail += ", adjudicated at the maximum length"
    return f"game {i + 1:3}: {r['opening']} South={r['south']} North={r['north']}: {result}, {detail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine-a", required=True, help="shell command of engine A (or openspiel:random|mcts[:N])")
    parser.add_argument("--engine-b", required=True, help="shell command of engine B (or openspiel:random|mcts[:N])")
    parser.add_argument("--option-a", action="append", default=[], metavar="NAME=VALUE", help="setoption for A (repeatable)")
    parser.add_argument("--option-b", action="append", default=[], metavar="NAME=VALUE", help="setoption for B (repeatable)")
    parser.add_argument("--movetime", type=int, default=1000, metavar="MS", help="time per move (default 1000)")
    parser.add_argument("--openings", type=int, default=20, metavar="N", help="distinct openings, each played twice (default 20)")
    parser.add_argument("--plies", type=int, default=2, help="random moves per opening (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the openings and of OpenSpiel's bots (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="games played at once, each job with its own engines (default 1)")
    parser.add_argument("--json", metavar="FILE", help="write every game and the summary to FILE")
    parser.add_argument("--verbose", action="store_true", help="print the engines' dialogue to stderr")
    args = parser.parse_args()

    lines = openings(args.openings, args.plies, args.seed)
    schedule = [(opening, a_is_south) for opening in lines for a_is_south in (True, False)]
    records = [None] * len(schedule)
    todo = queue.Queue()
    for i in range(len(schedule)):
        todo.put(i)
    print_lock = threading.Lock()

    def log(prefix):
        return (lambda line: print(f"{prefix} {line}", file=sys.stderr, flush=True)) if args.verbose else None

    def worker(job):
        players = {"A": make_player(args.engine_a, args.option_a, args.seed + job, log(f"[{job}A]")),
                   "B": make_player(args.engine_b, args.option_b, args.seed + 1000 + job, log(f"[{job}B]"))}
        try:
            while True:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                opening, a_is_south = schedule[i]
                records[i] = play_game(players, a_is_south, opening, args.movetime)
                with print_lock:
                    print(game_line(i, records[i]), flush=True)
        finally:
            for p in players.values():
                p.close()

    threads = [threading.Thread(target=worker, args=(job,)) for job in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if any(r is None for r in records):
        raise SystemExit("some games were not played (an engine failed to start?)")

    s = summary(records, args.movetime)
    margin = "n/a" if s["mean_seed_margin"] is None else f"{s['mean_seed_margin']:+.2f}"
    print()
    print(f"A: {args.engine_a}{' ' + ' '.join(args.option_a) if args.option_a else ''}")
    print(f"B: {args.engine_b}{' ' + ' '.join(args.option_b) if args.option_b else ''}")
    print(f"{'games':>6} {'wins':>5} {'draws':>5} {'losses':>6} {'score':>7} {'95% CI':>15} {'seeds A-B':>9}")
    print(f"{s['games']:>6} {s['wins']:>5} {s['draws']:>5} {s['losses']:>6} {100 * s['score']:>6.1f}% "
          f"{100 * s['ci95'][0]:>6.1f}-{100 * s['ci95'][1]:.1f}% {margin:>9}")
    print(f"forfeits: A {s['forfeits']['A']}, B {s['forfeits']['B']}; seed margin over {s['games_on_board']} games ended on the board")
    for name, t in s["time_per_move"].items():
        print(f"time per move {name}: mean {t['mean_ms']} ms, max {t['max_ms']} ms over {t['moves']} moves (movetime {args.movetime})")
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k not in ("json", "verbose")}
        settings["openings_list"] = lines
        with open(args.json, "w") as f:
            json.dump({"settings": settings, "summary": s, "games": records}, f, indent=1)


if __name__ == "__main__":
    main()
