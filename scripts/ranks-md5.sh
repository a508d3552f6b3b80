#!/usr/bin/env bash
# MPI builds against the one-process build: scripts/partitions-md5.sh with
# one mode per rank count (awari levels 0..=MAX, default 20, once by
# awari-solve alone and once under `mpirun -n R` for each R, each rank on one
# thread, oversubscribed when there are more ranks than cores): each level's
# md5 per build, then "identical" or the levels that differ (exit status 1).
# Then, for each MPI build, the figures of its top levels (from 18 on):
# seconds, updates and bytes sent between ranks per board, messages, and the
# seconds the ranks waited.
#
#   scripts/ranks-md5.sh [MAX]              # RANKS="1 2 3 4" by default
#
# Needs OpenMPI (scripts/test.sh installs it). BIN and MPI_BIN name the two
# awari-solve binaries (default: built here, the MPI one into target/mpi);
# KEEP=DIR keeps the databases under DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-20}
target=${CARGO_TARGET_DIR:-target}
if [ -z "${MPI_BIN:-}" ]; then
  cargo build --release -q -p awari-solver -p awari-probe \
    --features awari-solver/mpi,awari-probe/mpi --target-dir "$target/mpi"
  MPI_BIN=$target/mpi/release/awari-solve
fi
export MPI_BIN
if [ -n "${KEEP:-}" ]; then
  root=$KEEP
else
  root=$(mktemp -d "${TMPDIR:-/tmp}/awari-ranks.XXXXXX")
  trap 'rm -rf "$root"' EXIT
fi
modes=("")
for r in ${RANKS:-1 2 3 4}; do modes+=("mpirun:$r"); done
status=0
KEEP=$root scripts/partitions-md5.sh "$max" "${modes[@]}" || status=$?
python3 - "$root" "${modes[@]}" <<'PY'
import json, os, sys
root, modes = sys.argv[1], sys.argv[2:]
print(f"{'build':<10} {'seeds':>5} {'seconds':>8} {'boards/s':>10} {'stages s':>9} "
      f"{'upd/board':>9} {'bytes/board':>11} {'messages':>9} {'waited s':>13}")
for i, mode in enumerate(modes):
    for line in open(os.path.join(root, f"mode{i}.json")):
        l = json.loads(line)
        if l["seeds"] < 18:
            continue
        ranks = l.get("ranks", [])
        boards = max(1, l["boards"])
        updates = sum(r["updates_sent"] for r in ranks)
        sent = sum(r["bytes_sent"] for r in ranks)
        messages = sum(r["messages_sent"] for r in ranks)
        waited = "/".join(f"{r['seconds_waiting']:.1f}" for r in ranks) or "-"
        stages = sum(s["seeding_seconds"] + s["propagation_seconds"] for s in l["stages"])
        print(f"{mode or 'one':<10} {l['seeds']:>5} {l['seconds']:>8.1f} {l['boards_per_second']:>10,.0f} "
              f"{stages:>9.1f} {updates / boards:>9.3f} {sent / boards:>11.2f} {messages:>9} {waited:>13}")
PY
exit $status
