#!/usr/bin/env bash
# Level file format benchmark: rewrites every level of a database directory
# with the options given and prints, per level, boards, bytes, bits per board
# on disk, the encoding chosen, write time and speed, random single-board
# lookup latency (cold: file evicted from the page cache; warm: file cached,
# fresh reader; hit: block already decoded) and bulk decode speed; then the
# bits per board over all boards. Every lookup is checked; nothing is asserted
# about time.
#
#   scripts/bench-format.sh DB_DIR [bench_format options...]
#   scripts/bench-format.sh /tmp/awari-db --max-seeds 24
#   scripts/bench-format.sh /tmp/awari-db --block-boards 2048 --encoding raw --zstd-level 19
#
# DB_DIR holds level files (*.awl) or published scores.N files. Options:
# --min-seeds N --max-seeds N (default 0..24), --block-boards B, --segment-boards S, --zstd-level L,
# --encoding auto|raw|rank1|rank2|rank3|ans1|ans2|ans3, --lookups K (default 2000).
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
db=$(cd "$1" && pwd)
shift
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p awari-dbformat --example bench_format
out=$(mktemp -d "${TMPDIR:-/tmp}/awari-bench-format.XXXXXX")
trap 'rm -rf "$out"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
"$target/release/examples/bench_format" --db "$db" --out "$out" "$@"
