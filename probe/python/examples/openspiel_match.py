"""TablebaseBot against OpenSpiel's random and MCTS bots.

    python openspiel_match.py [--db DIR] [--games 100] [--game "oware(num_seeds_per_house=1)"]
                              [--simulations 1000] [--time 1.0]

Plays GAMES games against each opponent, TablebaseBot taking each colour in
half of them, and prints wins, draws and losses (of TablebaseBot) and the
mean seed difference. The abapa levels the game needs (0..=12 for one seed per
house) are built into DIR first when missing (awari.solve). Above the levels
(e.g. the 48-seed game with levels 0..=20) the bot searches for --time seconds.
"""

import argparse
import random
import sys
import time

import pyspiel

import awari
from awari.openspiel import TablebaseBot, board_from_state


def play(game, bots, seed):
    state = game.new_initial_state()
    for b in bots:
        b.restart_at(state)
    while not state.is_terminal():
        action = bots[state.current_player()].step(state)
        state.apply_action(action)
    _, (s0, s1) = board_from_state(state, player=0)
    return state.returns(), s0 - s1, len(state.history())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="db-openspiel")
    ap.add_argument("--game", default="oware(num_seeds_per_house=1)")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--time", type=float, default=1.0)
    ap.add_argument("--max-seeds", type=int, default=None)
    args = ap.parse_args()
    game = pyspiel.load_game(args.game)
    params = game.get_parameters()
    houses, per_house = params["num_houses_per_player"], params["num_seeds_per_house"]
    top = args.max_seeds if args.max_seeds is not None else 2 * houses * per_house
    awari.solve(args.db, max_seeds=top, rules="abapa", pits=houses, progress=False)
    tb = awari.Tablebase(args.db, rules="abapa", pits=houses)
    print(f"{args.game}: TablebaseBot with abapa levels 0..={tb.complete_up_to}, {args.games} games per opponent")
    opponents = {
        "random": lambda player, seed: pyspiel.make_uniform_random_bot(player, seed),
        f"mcts({args.simulations})": lambda player, seed: pyspiel.MCTSBot(
            game, pyspiel.RandomRolloutEvaluator(1, seed), 2.0, args.simulations, 1000, False, seed, False
        ),
    }
    for name, make in opponents.items():
        tally = {1.0: 0, 0.0: 0, -1.0: 0}
        diff = 0
        plies = 0
        started = time.time()
        for g in range(args.games):
            me = g % 2
            bots = [None, None]
            bots[me] = TablebaseBot(tb, player_id=me, time=args.time, rng=random.Random(g))
            bots[1 - me] = make(1 - me, 1000 + g)
            returns, d, n = play(game, bots, g)
            tally[returns[me]] += 1
            diff += d if me == 0 else -d
            plies += n
        print(
            f"  vs {name}: {tally[1.0]} won, {tally[0.0]} drawn, {tally[-1.0]} lost; "
            f"mean seed difference {diff / args.games:+.2f}, {plies / args.games:.0f} plies a game, "
            f"{time.time() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
