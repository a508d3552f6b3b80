#!/usr/bin/env bash
# Memory per rank: awari levels 0..=MAX (default 21) built once by one
# process (on all cores) and once under `mpirun -n R` for each R (each rank
# on one thread, oversubscribed when there are more ranks than cores), each
# process under /usr/bin/time: its wall seconds and peak resident memory,
# the peak as a share of one process's, and whether the level files are
# identical (exit status 1 when not).
#
#   scripts/ranks-memory.sh [MAX]           # RANKS="2 4" by default
#
# Needs OpenMPI (scripts/test.sh installs it). BIN and MPI_BIN name the two
# awari-solve binaries (default: built here, the MPI one into target/mpi).
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-21}
target=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p awari-solver
  BIN=$target/release/awari-solve
fi
if [ -z "${MPI_BIN:-}" ]; then
  cargo build --release -q -p awari-solver --features awari-solver/mpi --target-dir "$target/mpi"
  MPI_BIN=$target/mpi/release/awari-solve
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/awari-ranks-memory.XXXXXX")
trap 'rm -rf "$root"' EXIT
format="%e %M"
/usr/bin/time -f "$format" -o "$root/one.time" "$BIN" --db "$root/one" --max-seeds "$max" \
  --json > /dev/null
read -r one_s one_kib < "$root/one.time"
(cd "$root/one" && md5sum ./*.awl) > "$root/one.md5"
printf '%-10s %8s %10s %8s\n' build seconds "peak MiB" "of one"
printf '%-10s %8s %10d %8s\n' "1 process" "$one_s" $((one_kib / 1024)) 1.00
status=0
for r in ${RANKS:-2 4}; do
  mpirun -n "$r" --oversubscribe bash -c \
    '/usr/bin/time -f "$0" -o "$1.$OMPI_COMM_WORLD_RANK" "$2" --db "$3" --max-seeds "$4" --threads 1 --json > /dev/null' \
    "$format" "$root/r$r.time" "$MPI_BIN" "$root/r$r" "$max"
  for t in "$root"/r"$r".time.*; do
    read -r s kib < "$t"
    printf '%-10s %8s %10d %8.2f\n' "rank ${t##*.}/$r" "$s" $((kib / 1024)) \
      "$(echo "$kib / $one_kib" | bc -l)"
  done
  if (cd "$root/r$r" && md5sum ./*.awl) | diff -q - "$root/one.md5" > /dev/null; then
    echo "$r ranks: level files identical to one process's"
  else
    echo "$r ranks: LEVEL FILES DIFFER"
    status=1
  fi
done
exit $status
