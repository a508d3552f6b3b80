#!/usr/bin/env bash
# Load on `awari-probe serve`: CONNECTIONS clients (200) asking /api/position
# for random positions for SECONDS (30), with Debian's wrk. Prints the requests
# per second, the errors (connection, timeout, non-2xx) and the median and
# 99th-percentile latencies.
#
#   scripts/bench-serve.sh DB [SEEDS] [SECONDS] [CONNECTIONS]
#
# Positions are boards of the 6-pit game with 0..SEEDS seeds scattered at
# random (default: every level the database holds complete) and random
# captured seeds; each answer carries the analysis and a principal variation.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: scripts/bench-serve.sh DB [SEEDS] [SECONDS] [CONNECTIONS]}
seconds=${3:-30}
connections=${4:-200}
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
cargo build --release -p awari-probe -q
work=$(mktemp -d "${TMPDIR:-/tmp}/awari-bench-serve.XXXXXX")
./target/release/awari-probe serve --db "$db" --addr 127.0.0.1:0 > "$work/log" &
server=$!
trap 'kill $server 2> /dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q http "$work/log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/log")
seeds=${2:-$(curl -s "$url/api/info" | python3 -c '
import json, sys
games = [g for g in json.load(sys.stdin)["games"] if g["pits"] == 6 and g["rules"] == "awari"]
print(games[0]["complete_up_to"] if games else "")')}
[ -n "$seeds" ] || { echo "$db holds no complete 6-pit awari game; give SEEDS" >&2; exit 1; }
cat > "$work/random.lua" <<LUA
-- A random 6-pit board of 0..$seeds seeds per request.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + id)
end
function request()
  local pits = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
  for _ = 1, math.random(0, $seeds) do
    local k = math.random(1, 12)
    pits[k] = pits[k] + 1
  end
  local captured = math.random(0, 24) .. "," .. math.random(0, 24)
  return wrk.format("GET", "/api/position?board=" .. table.concat(pits, "+") .. "&captured=" .. captured)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("requests: %d in %.1f s (%.0f/s)\n", summary.requests,
    summary.duration / 1e6, summary.requests / (summary.duration / 1e6)))
  io.write(string.format("errors: connect %d, read %d, write %d, timeout %d, non-2xx %d\n",
    e.connect, e.read, e.write, e.timeout, e.status))
  io.write(string.format("latency: median %.2f ms, 99th percentile %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
LUA
echo "awari-probe serve on $db, boards of 0..$seeds seeds, $connections clients for $seconds s ($(nproc) cores)"
wrk -t 2 -c "$connections" -d "${seconds}s" --timeout 10s -s "$work/random.lua" "$url" | sed -n '/^requests:/,$p'
