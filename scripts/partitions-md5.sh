#!/usr/bin/env bash
# Partitioned builds against the in-memory build: builds awari levels
# 0..=MAX (default 22) once per mode, each in a directory of its own, and
# prints each level's md5 per mode, then "identical" or the levels that
# differ (exit status 1). Each mode also prints its level's time, partitions
# and whether it was on disk, from the JSON lines.
#
#   scripts/partitions-md5.sh [MAX] [MODE...]
#
# A MODE is a set of awari-solve options with commas for spaces, e.g.
# "--partitions,16" or "--on-disk,--partitions,3" or "--memory,300M"; the
# default modes are memory, 3/16/64 partitions in memory, 3 and 16 on disk.
# A MODE "mpirun:R" builds under `mpirun -n R` with the MPI build MPI_BIN,
# each rank on one thread (scripts/ranks-md5.sh). BIN names the awari-solve
# binary (default: target/release/awari-solve, built first); KEEP=DIR keeps
# the databases (DIR/modeI) and JSON lines (DIR/modeI.json) under DIR (else
# a temporary directory, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-22}
shift || true
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then
  modes=("" "--partitions,3" "--partitions,16" "--partitions,64" \
    "--on-disk,--partitions,3" "--on-disk,--partitions,16")
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --bin awari-solve >&2
  BIN=target/release/awari-solve
fi
if [ -n "${KEEP:-}" ]; then
  root=$KEEP
  mkdir -p "$root"
else
  root=$(mktemp -d "${TMPDIR:-/tmp}/awari-md5.XXXXXX")
  trap 'rm -rf "$root"' EXIT
fi
echo "machine: $(nproc) cores; awari levels 0..=$max; ${#modes[@]} mode(s)"
for i in "${!modes[@]}"; do
  mode=${modes[$i]}
  dir="$root/mode$i"
  mkdir -p "$dir"
  case "$mode" in
    mpirun:*)
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun -n "${mode#mpirun:}" --oversubscribe "$MPI_BIN" --db "$dir" --max-seeds "$max" \
        --threads 1 --json >"$dir.json"
      ;;
    *)
      # shellcheck disable=SC2046
      "$BIN" --db "$dir" --max-seeds "$max" --json $(echo "$mode" | tr ',' ' ') >"$dir.json"
      ;;
  esac
  python3 - "$dir.json" "${mode:-memory}" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
total = sum(l["seconds"] for l in lines)
last = lines[-1]
print(f"{sys.argv[2]:<32} levels 0..={last['seeds']} in {total:7.1f} s; level {last['seeds']}: "
      f"{last['seconds']:.1f} s, {last.get('partitions', 1)} partition(s), "
      f"on disk {last.get('on_disk', False)}, peak {last['peak_memory_bytes'] >> 20} MiB")
PY
done
status=0
printf '%5s' seeds
for i in "${!modes[@]}"; do printf '  %-12s' "mode$i"; done
echo
for ((n = 0; n <= max; n++)); do
  printf '%5d' "$n"
  first=""
  for i in "${!modes[@]}"; do
    sum=$(md5sum "$root/mode$i"/awari-p6-n"$n".awl | cut -c1-12)
    printf '  %-12s' "$sum"
    if [ -z "$first" ]; then first=$sum; elif [ "$sum" != "$first" ]; then status=1; fi
  done
  echo
done
if [ $status -eq 0 ]; then echo identical; else echo "DIFFERENT: see the table"; fi
exit $status
