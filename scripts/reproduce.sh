#!/usr/bin/env bash
# Builds, verifies and prints the verdicts of small Awari games from their start:
# the 6-pit game with 1 and 2 seeds per pit and the 4-pit game with 1, 2 and 3
# seeds per pit, under every rule set, each with the values of the first moves
# (A, B, ... from the start) and its build and verification time.
#
#   scripts/reproduce.sh [DIR]        # databases go to DIR (default db-reproduce)
#   RULES="awari abapa" scripts/reproduce.sh   # only some rule sets ("" skips the scores)
#   GAMES="6x1 4x3" scripts/reproduce.sh         # only some games (pits x seeds per pit)
#   ANY_RULES=abapa scripts/reproduce.sh   # then the bounds under any repetition rule
#                                          # for these rule sets (default abapa; "" skips)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-db-reproduce}
rules=${RULES-"awari abapa grand-slam-captures grand-slam-replay cross-wari"}
games=${GAMES:-"6x1 6x2 4x1 4x2 4x3"}
cargo build --release --bins -q
solve=./target/release/awari-solve
probe=./target/release/awari-probe
echo "# $(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '| %-19s | %4s | %5s | %6s | %-28s | %-29s | %8s | %9s |\n' rules pits seeds value verdict "first moves" "build s" "verify s"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------------------  ------ ------- -------- ------------------------------------ ------------------------------- ---------- -----------
for r in $rules; do
  for game in $games; do
    pits=${game%x*} per=${game#*x}
    dir="$root/$r-p$pits"
    t0=$(date +%s.%N)
    "$solve" --db "$dir" --rules "$r" --pits "$pits" --start "$per" --certificate --json > /dev/null
    t1=$(date +%s.%N)
    out=$("$probe" verify --db "$dir" --rules "$r" --pits "$pits" --start "$per" --json)
    t2=$(date +%s.%N)
    start=$(python3 -c "print(' '.join(['$per'] * $pits) + ' / ' + ' '.join(['$per'] * $pits))")
    moves=$("$probe" score --db "$dir" --rules "$r" --json "$start")
    python3 - "$out" "$moves" "$r" "$pits" "$per" "$t0" "$t1" "$t2" <<'PY'
import json, sys
v = json.loads(sys.argv[1]); moves = json.loads(sys.argv[2])["moves"]
r, pits, per = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
t0, t1, t2 = map(float, sys.argv[6:9])
ok = "" if v["ok"] else " (VERIFY FAILED)"
first = " ".join(f"{m['label']} {m['value']:+d}" for m in moves)
print(f"| {r:<19} | {pits:>4} | {2*pits*per:>5} | {v['value']:>+6} | {v['verdict'] + ok:<28} | {first:<29} | {t1-t0:>8.1f} | {t2-t1:>9.1f} |")
PY
  done
done

# The same games under any repetition rule (issue 48): the bounds of the start and of
# each first move, which hold whatever ends endless play (own-side seeds at a
# repetition, as OpenSpiel plays abapa, or a deadlock shared), and what they decide.
#   ANY_RULES="abapa awari" scripts/reproduce.sh   # rule sets for this part (default abapa; "" skips it)
any_rules=${ANY_RULES-abapa}
[ -z "$any_rules" ] && exit 0
echo
printf '| %-19s | %4s | %5s | %-10s | %-38s | %-41s | %8s | %9s |\n' rules pits seeds bounds "under every repetition rule" "first moves" "build s" "verify s"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------------------  ------ ------- ------------ ---------------------------------------- ------------------------------------------- ---------- -----------
for r in $any_rules; do
  for game in $games; do
    pits=${game%x*} per=${game#*x}
    dir="$root/$r-p$pits"
    t0=$(date +%s.%N)
    "$solve" --db "$dir" --rules "$r" --pits "$pits" --start "$per" --repetition any --json > /dev/null
    t1=$(date +%s.%N)
    verified=ok
    "$probe" verify --db "$dir" --rules "$r" --pits "$pits" --start "$per" --repetition any --json > /dev/null || verified=FAILED
    t2=$(date +%s.%N)
    start=$(python3 -c "print(' '.join(['$per'] * $pits) + ' / ' + ' '.join(['$per'] * $pits))")
    moves=$("$probe" score --db "$dir" --rules "$r" --repetition any --captured 0,0 --json "$start")
    python3 - "$moves" "$r" "$pits" "$per" "$t0" "$t1" "$t2" "$verified" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
r, pits, per = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t0, t1, t2 = map(float, sys.argv[5:8])
def b(x):
    return f"{x['lower']:+d}" if x["lower"] == x["upper"] else f"{x['lower']:+d}..{x['upper']:+d}"
what = {"win": "the first player wins", "loss": "the second player wins",
        "draw": "a draw", "depends": "depends on the rule"}[s["result"]]
if sys.argv[8] != "ok":
    what += " (VERIFY FAILED)"
first = " ".join(f"{m['label']} {b(m)}" for m in s["moves"])
print(f"| {r:<19} | {pits:>4} | {2*pits*per:>5} | {b(s):<10} | {what:<38} | {first:<41} | {t1-t0:>8.1f} | {t2-t1:>9.1f} |")
PY
  done
done
