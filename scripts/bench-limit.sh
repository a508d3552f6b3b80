#!/usr/bin/env bash
# The solve against the machine's memory-bound limit: measures the limit
# (random byte read-modify-writes over 4 GiB in huge pages, every core:
# dbformat/examples/limit.rs), builds levels 0..=MAX (default 22) of the
# 6-pit game from scratch in memory, measures the limit again, and prints
# boards per second, the limit, and their ratio to a tenth of the limit
# (a board costs about ten random accesses; docs/algorithm.md).
#
#   scripts/bench-limit.sh [MAX] [RUNS]       (defaults 22 and 1)
#
# The machines here are shared and their speed drifts: the limit is taken
# just before and just after each build, and the ratio uses their mean.
# BIN names another awari-solve binary to measure (an older build).
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-22}
runs=${2:-1}
cargo build --release -q -p awari-dbformat --example limit
limit=./target/release/examples/limit
if [ -z "${BIN:-}" ]; then
  cargo build --release -q --bin awari-solve
  BIN=./target/release/awari-solve
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '%4s %14s %12s %12s %12s %7s\n' run 'boards/s' 'limit M/s' 'limit/10' 'seconds' ratio
for ((r = 1; r <= runs; r++)); do
  dir=$(mktemp -d "${TMPDIR:-/tmp}/awari-limit.XXXXXX")
  before=$("$limit")
  "$BIN" --db "$dir" --max-seeds "$max" --json > "$dir/levels.jsonl"
  after=$("$limit")
  python3 - "$dir/levels.jsonl" "$before" "$after" "$r" <<'PY'
import json, sys
levels = [json.loads(l) for l in open(sys.argv[1])]
boards = sum(l["boards"] for l in levels)
seconds = sum(l["seconds"] for l in levels)
limit = (float(sys.argv[2]) + float(sys.argv[3])) / 2
rate = boards / seconds
print(f"{sys.argv[4]:>4} {rate:>14,.0f} {limit:>12.1f} {limit / 10 * 1e6:>12,.0f} {seconds:>12.1f} "
      f"{rate / (limit / 10 * 1e6):>7.2f}   (limit {sys.argv[2]} before, {sys.argv[3]} after)")
PY
  rm -rf "$dir"
done
