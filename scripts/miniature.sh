#!/usr/bin/env bash
# Level 36 of the 36-seed game in miniature: level 24 of the 24-seed game (3 seeds
# per pit becomes 2) built out of core, with its lower levels in files larger than
# the page cache, as level 36 is on a 24 GiB machine, at 1/37 of the size (about
# 10 minutes).
#
#   sudo scripts/miniature.sh [BUDGET_MIB] [CACHE_MIB]
#
# The budget (default 420 MiB) holds level 24's split cells (255 MB of words, their
# byte a board in a file), or two partitions of 243 MiB of packed cells on disk;
# the cache (default 220 MiB, as level 36 has beside its 14G) is made by running
# the build in a memory control group limited to BUDGET + CACHE (cgroup v2, or v1's
# memory controller; root is needed to make one). Three builds: `split` (the
# default plan in that budget) and `disk` (`--cells packed --spare-disk`:
# partitions on disk, the scores given back while the stages run) in the group,
# and `memory` without a budget; the three level files must be equal, and the
# ratio of each to the in-memory rate is printed.
# Prints each build's time, boards per second, bytes read and written per board
# and peak resident memory. The directory goes to a temporary one, removed at the
# end; BIN=PATH measures another awari-solve binary.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-420}
cache=${2:-220}
if [ -z "${BIN:-}" ]; then
  cargo build --release --bins -q
  BIN=$PWD/target/release/awari-solve
fi
[ "$(id -u)" = 0 ] || { echo "miniature.sh makes a memory control group: run it as root" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/awari-miniature.XXXXXX")

# The control group, v2 where the unified hierarchy is mounted at the root.
limit=$(( (budget + cache) << 20 ))
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  group=/sys/fs/cgroup/awari-miniature-$$
  echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  mkdir "$group"
  echo "$limit" > "$group/memory.max"
elif [ -d /sys/fs/cgroup/memory ]; then
  group=/sys/fs/cgroup/memory/awari-miniature-$$
  mkdir "$group"
  echo "$limit" > "$group/memory.limit_in_bytes"
else
  echo "no memory control group here (/sys/fs/cgroup)" >&2
  exit 2
fi
trap 'rm -rf "$dir"; rmdir "$group" 2>/dev/null || true' EXIT

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "levels 0..=22 (the lower levels)"
"$BIN" --db "$dir/base" --max-seeds 22 --json > /dev/null

# build NAME IN_GROUP OPTIONS...: level 24 from a copy of levels 0..=22, from a
# cold page cache.
build() {
  local name=$1 in_group=$2
  shift 2
  cp -r "$dir/base" "$dir/$name"
  sync
  echo 3 > /proc/sys/vm/drop_caches
  local cmd=(/usr/bin/time -f "%M" -o "$dir/$name.peak" "$BIN" --db "$dir/$name" --start 2 --json "$@")
  if [ "$in_group" = yes ]; then
    sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$group" "${cmd[@]}" > "$dir/$name.jsonl"
  else
    "${cmd[@]}" > "$dir/$name.jsonl"
  fi
}
echo "level 24 in ${budget}M, page cache ${cache} MiB (the control group): split cells"
build split yes --memory "${budget}M"
echo "level 24 in ${budget}M, page cache ${cache} MiB (the control group): packed cells on disk"
build disk yes --memory "${budget}M" --spare-disk --cells packed
echo "level 24 in memory"
build memory no

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
print(f"{'build':>8} {'seconds':>8} {'initial':>8} {'stages':>8} {'writing':>8} {'M boards/s':>10} {'of memory':>9} {'read B/board':>12} {'written B/board':>15} {'peak MiB':>9} {'sorted':>6}")
memory = json.loads(open(f"{d}/memory.jsonl").read().splitlines()[-1])["seconds"]
for name in ["split", "disk", "memory"]:
    l = json.loads(open(f"{d}/{name}.jsonl").read().splitlines()[-1])
    assert l["seeds"] == 24
    b = l["boards"]
    stages = sum(s["seeding_seconds"] + s["propagation_seconds"] for s in l["stages"])
    peak = int(open(f"{d}/{name}.peak").read().split()[-1]) / 1024
    print(f"{name:>8} {l['seconds']:>8.1f} {l['init_seconds']:>8.1f} {stages:>8.1f} {l['write_seconds']:>8.1f} "
          f"{b / l['seconds'] / 1e6:>10.2f} {memory / l['seconds']:>9.2f} {l['disk_read_bytes'] / b:>12.1f} {l['disk_written_bytes'] / b:>15.1f} {peak:>9.0f} {str(l['sorted_lookups']):>6}")
PY
md5sum "$dir"/{split,disk,memory}/awari-p6-n24.awl
test "$(md5sum < "$dir/split/awari-p6-n24.awl")" = "$(md5sum < "$dir/memory/awari-p6-n24.awl")"
test "$(md5sum < "$dir/disk/awari-p6-n24.awl")" = "$(md5sum < "$dir/memory/awari-p6-n24.awl")"
echo "the three level files are equal"
