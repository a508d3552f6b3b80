#!/usr/bin/env bash
# The search above the levels built: the 48-seed start searched for 1, 10 and
# 60 seconds (move, value, depth, positions per second), then matches at equal
# time per move between the search with the databases, the same search without
# them and a plain minimax (probe/examples/match.rs).
#
#   scripts/bench-search.sh DB [MS_PER_MOVE] [OPENINGS]
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: scripts/bench-search.sh DB [MS_PER_MOVE] [OPENINGS]}
ms=${2:-100}
openings=${3:-6}
cargo build --release --bins --examples -q
for t in 1s 10s 60s; do
  ./target/release/awari-probe score "4 4 4 4 4 4 / 4 4 4 4 4 4" --db "$db" --time "$t" --json |
    python3 -c "import json,sys; j=json.load(sys.stdin); print(f\"$t: move {'ABCDEF'[j['best'][0]]}, value {j['value']} ({j['bound']}), depth {j['depth']}, {j['nodes']} positions, {j['nodes']/j['seconds']/1e6:.2f} M/s, pv {''.join('ABCDEF'[p] if i%2==0 else 'abcdef'[p] for i,p in enumerate(j['pv']))}\")"
done
./target/release/examples/match "$db" "$ms" "$openings"
