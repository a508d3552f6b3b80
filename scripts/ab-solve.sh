#!/usr/bin/env bash
# Side-by-side solver comparison: builds one level again and again with two
# (or more) awari-solve binaries in turn, on a copy of the levels below it,
# and prints each run's phases (initial pass, seeding, propagation, writing)
# and the file's md5. This machine's speed drifts by 10-25% within an hour,
# so a change is judged on alternating runs, never on runs hours apart.
#
#   scripts/ab-solve.sh LOWER_DIR LEVEL ROUNDS BIN_A BIN_B [BIN...]
#
# LOWER_DIR holds levels 0..LEVEL-1 (e.g. a KEEP= directory of
# scripts/bench-solve.sh); it is copied once to a temporary directory, so it
# is never changed. Extra awari-solve options go in AB_OPTIONS.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
lower=$1 level=$2 rounds=$3
shift 3
for bin in "$@"; do
  [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/awari-ab.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for ((n = 0; n < level; n++)); do
  cp "$lower"/awari-*-n"$n".* "$dir"/ 2>/dev/null || { echo "level $n is missing in $lower" >&2; exit 2; }
done
echo "machine: $(nproc) cores; level $level on a copy of $lower; $rounds round(s)"
printf '%-28s %8s %8s %8s %8s %8s  %s\n' binary total init seeding propag. writing md5
for ((r = 1; r <= rounds; r++)); do
  for bin in "$@"; do
    rm -f "$dir"/awari-*-n"$level".*
    # shellcheck disable=SC2086
    "$bin" --db "$dir" --max-seeds "$level" --json ${AB_OPTIONS:-} 2>/dev/null | tail -1 >"$dir/run.json"
    md5=$(md5sum "$dir"/awari-*-n"$level".awl | cut -c1-12)
    python3 - "$dir/run.json" "$bin" "$md5" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stages"]
seeding = sum(x["seeding_seconds"] for x in s)
propagation = sum(x["propagation_seconds"] for x in s)
name = sys.argv[2][-28:]
print(f"{name:<28} {d['seconds']:8.2f} {d['init_seconds']:8.2f} {seeding:8.2f} "
      f"{propagation:8.2f} {d['write_seconds']:8.2f}  {sys.argv[3]}")
PY
  done
done
