"""TablebaseBot against OpenSpiel's random and MCTS bots.

    python openspiel_match.py [--db DIR] [--games 100] [--game "oware(num_seeds_per_house=1)"]
                              [--simulations 1000] [--time 1.0] [--seed 0]
                              [--records] [--only SEED] [--opponent random|mcts]

Plays GAMES games against each opponent, TablebaseBot taking each colour in
half of them, and prints wins, draws and losses (of TablebaseBot) and the
mean seed difference. The abapa levels the game needs (0..=12 for one seed per
house) are built into DIR first when missing (awari.solve). Above the levels
(e.g. the 48-seed game with levels 0..=20) the bot searches for --time seconds.

The match is reproducible: game g has the seed s = SEED + g; TablebaseBot
plays player s % 2 with random.Random(s) for its ties, and the opponent is
seeded with 1000 + s (the random bot's choices, MCTS's rollouts and ties).
With --records, the record of every game the bot does not win is printed:
each move, and at each of the bot's moves the position (seen from the bot,
its own row first), the seeds captured so far, the databases' value of the
position and the result it implies with those captures, and the moves the
bot weighed; then how the game ended (more than half captured, a repetition
of a position with the own-rows split, or a player without a move). --only S
plays the game of seed S alone (with its record), against --opponent.
"""

import argparse
import random
import sys
import time

import pyspiel

import awari
from awari.openspiel import TablebaseBot, board_from_state

RESULT = {1: "win", 0: "draw", -1: "loss"}


def sign(x):
    return (x > 0) - (x < 0)


def play(game, bots, me, tb):
    """Plays one game; its returns, the bot's seed difference and its record
    (a list of lines)."""
    rules = tb.rules
    houses = rules.pits
    state = game.new_initial_state()
    for b in bots:
        b.restart_at(state)
    record = []
    seen = {(0, board_from_state(state, player=0)[0].pits)}  # OpenSpiel's repetition set
    ending = None
    while not state.is_terminal():
        mover = state.current_player()
        board, (mine, theirs) = board_from_state(state)
        action = bots[mover].step(state)
        ply = len(state.history()) + 1
        label = chr((ord("A") if mover == 0 else ord("a")) + action)
        if mover == me:
            answer = bots[me].last_answer
            v = answer["value"]
            weighed = " ".join(
                f"{chr(ord('A') + pit)}:{RESULT[k[0]]}/{k[1]:+d}{'' if k[2] else '(repeats)'}"
                for k, pit in bots[me].last_scores
            )
            plan = bots[me].last_plan
            if plan is None:
                planned = "no plan"
            else:
                planned = f"forces {plan[0]:+d} in " + " ".join(
                    f"{chr(ord('A') + pit)}:{n}" for pit, n in sorted(plan[1].items())
                )
            record.append(
                f"  {ply:3d} bot  {label}  {board}  captured {mine}-{theirs}  value {v:+d} "
                f"-> {RESULT[sign(mine - theirs + v)]} ({mine - theirs + v:+d})  weighed {weighed}; {planned}"
            )
        else:
            record.append(f"  {ply:3d} opp  {label}")
        played = rules.play(board, action)
        state.apply_action(action)
        if played.captured:
            seen.clear()
        child = list(played.child.pits)  # seen from the next player
        key = (1 - mover, tuple(child[houses:] + child[:houses]) if mover == 0 else tuple(child))
        repeated = key in seen
        seen.add(key)
        if state.is_terminal():
            half = (mine + theirs + board.seeds) // 2
            if repeated:  # OpenSpiel looks at this first (never after a capture)
                own_next, own_mover = sum(child[:houses]), sum(child[houses:])
                b_row, o_row = (own_mover, own_next) if mover == me else (own_next, own_mover)
                ending = (
                    f"ended by repetition after the {'bot' if mover == me else 'opponent'}'s move: "
                    f"own rows bot {b_row} opponent {o_row} (the databases would split {b_row + o_row} evenly)"
                )
            elif mine + played.captured > half or mine + played.captured == theirs == half:
                ending = f"ended: the {'bot' if mover == me else 'opponent'} captured more than half (or half each)"
            else:
                ending = "ended: the player to move has no move, each side takes its own row"
    _, (s0, s1) = board_from_state(state, player=0)
    mine, theirs = (s0, s1) if me == 0 else (s1, s0)
    record.append(f"  {ending}; final bot {mine} opponent {theirs}")
    return state.returns(), mine - theirs, record


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="db-openspiel")
    ap.add_argument("--game", default="oware(num_seeds_per_house=1)")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--time", type=float, default=1.0)
    ap.add_argument("--max-seeds", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0, help="game g has the seed SEED + g")
    ap.add_argument("--records", action="store_true", help="print the record of every game not won")
    ap.add_argument("--only", type=int, default=None, help="play the game of this seed alone")
    ap.add_argument("--opponent", choices=["random", "mcts"], default=None)
    args = ap.parse_args()
    game = pyspiel.load_game(args.game)
    params = game.get_parameters()
    houses, per_house = params["num_houses_per_player"], params["num_seeds_per_house"]
    top = args.max_seeds if args.max_seeds is not None else 2 * houses * per_house
    awari.solve(args.db, max_seeds=top, rules="abapa", pits=houses, progress=False)
    tb = awari.Tablebase(args.db, rules="abapa", pits=houses)
    seeds = [args.only] if args.only is not None else [args.seed + g for g in range(args.games)]
    print(f"{args.game}: TablebaseBot with abapa levels 0..={tb.complete_up_to}, {len(seeds)} games per opponent")
    opponents = {
        "random": lambda player, seed: pyspiel.make_uniform_random_bot(player, seed),
        "mcts": lambda player, seed: pyspiel.MCTSBot(
            game, pyspiel.RandomRolloutEvaluator(1, seed), 2.0, args.simulations, 1000, False, seed, False
        ),
    }
    for name, make in opponents.items():
        if args.opponent is not None and name != args.opponent:
            continue
        tally = {1.0: 0, 0.0: 0, -1.0: 0}
        diff = 0
        plies = 0
        started = time.time()
        for s in seeds:
            me = s % 2
            bots = [None, None]
            bots[me] = TablebaseBot(tb, player_id=me, time=args.time, rng=random.Random(s))
            bots[1 - me] = make(1 - me, 1000 + s)
            returns, d, record = play(game, bots, me, tb)
            tally[returns[me]] += 1
            diff += d
            plies += len(record) - 1
            if args.records and returns[me] < 1 or args.only is not None:
                outcome = {0.0: "drawn", -1.0: "lost", 1.0: "won"}[returns[me]]
                print(f"vs {name}, seed {s}: bot is player {me}, {outcome} {d:+d}")
                print("\n".join(record), flush=True)
        label = f"mcts({args.simulations})" if name == "mcts" else name
        print(
            f"  vs {label}: {tally[1.0]} won, {tally[0.0]} drawn, {tally[-1.0]} lost; "
            f"mean seed difference {diff / len(seeds):+.2f}, {plies / len(seeds):.0f} plies a game, "
            f"{time.time() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
