#!/usr/bin/env bash
# MPI builds against the one-process build: builds awari levels 0..=MAX
# (default 20) once with awari-solve alone and once per rank count under
# mpirun (each rank on one thread, oversubscribed when there are more ranks
# than cores), prints each level's md5 per build, then "identical" or the
# levels that differ (exit status 1). Then, for each MPI build, the figures
# of its top levels (from 18 on): seconds, updates and bytes sent between
# ranks per board, messages, and the seconds the ranks waited.
#
#   scripts/ranks-md5.sh [MAX]              # RANKS="1 2 3 4" by default
#
# Needs OpenMPI (scripts/test.sh installs it). BIN and MPI_BIN name the two
# awari-solve binaries (default: built here, the MPI one into
# target/mpi); KEEP=DIR keeps the databases under DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-20}
ranks=${RANKS:-"1 2 3 4"}
target=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
  cargo build --release -q --bin awari-solve
  BIN=$target/release/awari-solve
fi
if [ -z "${MPI_BIN:-}" ]; then
  cargo build --release -q -p awari-solver -p awari-probe \
    --features awari-solver/mpi,awari-probe/mpi --target-dir "$target/mpi"
  MPI_BIN=$target/mpi/release/awari-solve
fi
if [ -n "${KEEP:-}" ]; then
  root=$KEEP
  mkdir -p "$root"
else
  root=$(mktemp -d "${TMPDIR:-/tmp}/awari-ranks.XXXXXX")
  trap 'rm -rf "$root"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "machine: $(nproc) cores; awari levels 0..=$max; one process, then $ranks rank(s)"
start=$(date +%s.%N)
"$BIN" --db "$root/one" --max-seeds "$max" --json > "$root/one.json"
echo "one process: $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
builds=(one)
for r in $ranks; do
  start=$(date +%s.%N)
  mpirun -n "$r" --oversubscribe "$MPI_BIN" --db "$root/ranks$r" --max-seeds "$max" \
    --threads 1 --json > "$root/ranks$r.json"
  echo "$r rank(s): $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
  builds+=("ranks$r")
done
status=0
printf '%5s' seeds
for b in "${builds[@]}"; do printf '  %-12s' "$b"; done
echo
for ((n = 0; n <= max; n++)); do
  printf '%5d' "$n"
  first=""
  for b in "${builds[@]}"; do
    sum=$(md5sum "$root/$b"/awari-p6-n"$n".awl | cut -c1-12)
    printf '  %-12s' "$sum"
    if [ -z "$first" ]; then first=$sum; elif [ "$sum" != "$first" ]; then status=1; fi
  done
  echo
done
if [ $status -eq 0 ]; then echo identical; else echo "DIFFERENT: see the table"; fi
python3 - "$root" "${builds[@]}" <<'PY'
import json, os, sys
root, builds = sys.argv[1], sys.argv[2:]
print(f"{'build':<8} {'seeds':>5} {'seconds':>8} {'boards/s':>10} {'stages s':>9} "
      f"{'upd/board':>9} {'bytes/board':>11} {'messages':>9} {'waited s':>13}")
for b in builds:
    for line in open(os.path.join(root, b + ".json")):
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
        print(f"{b:<8} {l['seeds']:>5} {l['seconds']:>8.1f} {l['boards_per_second']:>10,.0f} "
              f"{stages:>9.1f} {updates / boards:>9.3f} {sent / boards:>11.2f} {messages:>9} {waited:>13}")
PY
exit $status
