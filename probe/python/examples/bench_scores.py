"""Boards per second of Tablebase.scores on random boards.

    python bench_scores.py DB [COUNT] [--boards FILE] [--preload BYTES]

Draws COUNT (1,000,000) random stored boards as probe/examples/bench_probe.rs
does (uniform level among those present, uniform index in the level), or reads
them from FILE (one board a line: what bench_probe writes with BOARDS_OUT, so
that both time the same boards), then times Tablebase.scores over them: a
first pass (levels opened, pages read) and three more. RAYON_NUM_THREADS sets
the threads.
"""

import argparse
import os
import random
import time

import numpy as np

import awari


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("count", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--boards")
    ap.add_argument("--preload", type=int, default=0)
    args = ap.parse_args()
    tb = awari.Tablebase(args.db)
    tb.preload(args.preload)
    if args.boards:
        with open(args.boards) as f:
            rows = [line.replace("/", " ").split() for line in f if line.strip()]
        boards = np.array(rows, dtype=np.uint8)[: args.count]
    else:
        rng = random.Random(1)
        rules = tb.rules
        levels = tb.levels
        boards = np.array(
            [
                rules.board_at(n, rng.randrange(rules.level_size(n))).pits
                for n in (rng.choice(levels) for _ in range(args.count))
            ],
            dtype=np.uint8,
        )
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    print(f"database {args.db}: levels {tb.levels[0]}..={tb.levels[-1]}, {len(boards)} boards, {threads} threads")
    for run in range(4):
        t = time.perf_counter()
        values = tb.scores(boards)
        dt = time.perf_counter() - t
        label = "first" if run == 0 else f"again {run}"
        print(f"  scores ({label}): {len(boards) / dt:,.0f} boards/s ({dt:.3f} s), sum {int(values.sum(dtype=np.int64))}")


if __name__ == "__main__":
    main()
