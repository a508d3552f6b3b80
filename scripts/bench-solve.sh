#!/usr/bin/env bash
# Solver benchmark: builds levels 0..=MAX (default 24) of the 6-pit game from
# scratch and prints boards per second per level and overall, the peak memory
# per board of the largest level, and the machine's core count.
#
#   scripts/bench-solve.sh [MAX] [extra awari-solve options...]
#
# The database goes to a temporary directory, removed at the end; with
# KEEP=DIR it goes to DIR (which must not exist yet) and is kept. With
# BIN=PATH another awari-solve binary is measured (an older build, to
# compare side by side) instead of this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-24}
shift || true
if [ -z "${BIN:-}" ]; then
  cargo build --release --bins -q
  BIN=./target/release/awari-solve
fi
if [ -n "${KEEP:-}" ]; then
  [ -e "$KEEP" ] && { echo "KEEP=$KEEP exists; name a new directory" >&2; exit 2; }
  mkdir -p "$KEEP"
  dir=$KEEP
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/awari-bench.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "command: $BIN --db $dir --max-seeds $max --json $*"
start=$(date +%s.%N)
"$BIN" --db "$dir" --max-seeds "$max" --json "$@" > "$dir/levels.jsonl"
end=$(date +%s.%N)
python3 - "$dir/levels.jsonl" "$start" "$end" <<'PY'
import json, sys
levels = [json.loads(l) for l in open(sys.argv[1])]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{'seeds':>5} {'boards':>13} {'seconds':>8} {'boards/s':>12} {'bits/board':>10}")
for l in levels:
    print(f"{l['seeds']:>5} {l['boards']:>13,} {l['seconds']:>8.2f} {l['boards_per_second']:>12,.0f} {8*l['file_bytes']/max(1,l['boards']):>10.2f}")
boards = sum(l['boards'] for l in levels)
secs = sum(l['seconds'] for l in levels)
disk = sum(l['file_bytes'] for l in levels)
top = levels[-1]
print(f"overall: {boards:,} boards in {secs:.1f} s of level work ({wall:.1f} s wall): {boards/secs:,.0f} boards/s")
print(f"disk: {disk:,} bytes, {8*disk/boards:.2f} bits/board over all levels")
peak, lower = top['peak_memory_bytes'], top.get('lower_levels_bytes', 0)
print(f"largest level {top['seeds']}: {top['boards']:,} boards, peak resident memory {peak/2**20:,.0f} MiB "
      f"= {peak/top['boards']:.2f} bytes/board")
print(f"  of which lower levels {lower/2**20:,.0f} MiB; the level itself {(peak-lower)/2**20:,.0f} MiB = {(peak-lower)/top['boards']:.2f} bytes/board "
      f"(solver state at most {top['state_bytes_per_board']:.3f} bytes/board: the cells of solver::cells and the frontier lists)")
PY
