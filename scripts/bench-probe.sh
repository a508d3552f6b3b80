#!/usr/bin/env bash
# Probe throughput: random stored positions per second through the library and
# through `awari-probe batch`, on a database directory.
#
#   scripts/bench-probe.sh DB [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: scripts/bench-probe.sh DB [COUNT]}
count=${2:-200000}
cargo build --release --bins --examples -q
boards=$(mktemp "${TMPDIR:-/tmp}/awari-boards.XXXXXX")
trap 'rm -f "$boards"' EXIT
./target/release/examples/bench_probe "$db" "$count" "$boards"
start=$(date +%s.%N)
./target/release/awari-probe batch --db "$db" < "$boards" > /dev/null
end=$(date +%s.%N)
python3 -c "import sys; c=int(sys.argv[1]); s=float(sys.argv[3])-float(sys.argv[2]); print(f'awari-probe batch: {c/s:12.0f} positions/s ({c} lines in {s:.2f} s, value + result per line)')" "$count" "$start" "$end"
