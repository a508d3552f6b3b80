#!/usr/bin/env bash
# A disk that fills in the middle of a level: the build stops with a clear
# error and loses nothing; once space is freed, the same command resumes from
# the level's last checkpoint and writes the file an in-memory build writes.
#
#   sudo scripts/disk-full.sh [LEVEL]       (LEVEL: 19 by default)
#
# With BIN=PATH another awari-solve binary is run instead of this tree's.
# Needs root, for a small tmpfs as the work directory. Levels below LEVEL are
# built in memory first; LEVEL is built on disk in 4 partitions, and as soon as
# its first checkpoint is written the tmpfs is filled up, so that the next
# checkpoint meets a full disk.
set -euo pipefail
cd "$(dirname "$0")/.."
level=${1:-19}
if [ -z "${BIN:-}" ]; then
  cargo build --release --bins -q
  BIN=./target/release/awari-solve
fi
solve=$(realpath "$BIN")
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/awari-disk-full.XXXXXX")
small=$tmp/small
mkdir -p "$small"
cleanup() {
  umount "$small" 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$solve" --db "$tmp/reference" --max-seeds "$level" > /dev/null 2>&1
"$solve" --db "$tmp/db" --max-seeds $((level - 1)) > /dev/null 2>&1
# Room for the lower levels' scores and two copies of the level's cells (the
# files and their checkpoint).
boards=$("$solve" --db "$tmp/db" --max-seeds "$level" --plan --json 2> /dev/null \
  | python3 -c "import json,sys; print([l for l in map(json.loads, sys.stdin) if l.get('seeds') == $level][0]['boards'])")
size_mib=$((boards * 2 * 4 / 3 / 1048576 + 3 * boards / 1048576 / 2 + 64))
mount -t tmpfs -o "size=${size_mib}M" tmpfs "$small"
work=$small/work
run() {
  "$solve" --db "$tmp/db" --max-seeds "$level" --on-disk --partitions 4 \
    --work-dir "$work" --checkpoint-seconds 0 --json
}
echo "level $level ($boards boards) on disk in a ${size_mib} MiB tmpfs; filled after its first checkpoint"
set +e
run > /dev/null 2> "$tmp/err" &
pid=$!
manifest=$work/$(basename "$(ls "$tmp/reference/"*"-n$level.awl")" .awl).work/manifest.json
while kill -0 $pid 2> /dev/null && [ ! -e "$manifest" ]; do sleep 0.02; done
# (Filled by writing until the disk refuses: the build writes meanwhile.)
cat /dev/zero > "$small/filler" 2> /dev/null || true
wait $pid
code=$?
set -e
echo "first run: exit $code: $(tail -1 "$tmp/err")"
[ $code -ne 0 ] || { echo "error: the build did not meet the full disk" >&2; exit 1; }
rm "$small/filler"
line=$(run 2> "$tmp/err" | tail -1) || { echo "second run failed: $(tail -3 "$tmp/err")" >&2; exit 1; }
echo "second run: $(echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); print('level', d['seeds'], d['status'], 'resumed_from_stage', d['resumed_from_stage'])")"
name=$(basename "$(ls "$tmp/reference/"*"-n$level.awl")")
if cmp -s "$tmp/db/$name" "$tmp/reference/$name"; then
  echo "OK: $name is identical to the in-memory build's ($(md5sum < "$tmp/db/$name" | cut -c1-12))"
else
  echo "FAILED: $name differs from the in-memory build's" >&2
  exit 1
fi
