#!/usr/bin/env bash
# confirm.sh: the goal verdicts of a learning run (scripts/bench/learning.sh) on more games
# than a ladder cell. A 20-game cell is +-20 points, too coarse to tell 85% from 90%; this
# plays the run's best net (its last promoted) N games against each goal opponent, with the
# ladder's simulations and no noise, on the ladder's paired openings with colours swapped
# and a seed of its own, and adds its results to RUN/confirm.jsonl (replacing earlier ones
# of the same net, opponent and search), whose records with the ladder's search
# learning_report.py uses for the goal verdicts (the table keeps the ladder's cells).
#
# usage: scripts/bench/confirm.sh RUN [--games N] [--sims S] [--search puct|gumbel]
#                                   [--opponents "SPEC ..."]
#   --games N        games per opponent, even (pairs; default 100; above 176 on the
#                    four-ply openings, so that no game repeats)
#   --sims S         simulations per move (default 200, as the ladder)
#   --search S       the net's root search: puct (`net:`, as the ladder, default) or gumbel
#                    (`gnet:`, as `xqz play` uses a net)
#   --opponents L    default "random greedy alphabeta:1" (the goal opponents of the
#                    learning issues); the matches run two at a time
#   Environment: XQZ, the xqz binary to use (default: a Release build in build-bench/).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/usage.sh
. scripts/lib/usage.sh
# shellcheck source=scripts/lib/openings.sh
. scripts/lib/openings.sh
[ $# -ge 1 ] || { script_usage "$0"; exit 2; }
run=$1
shift
games=100 sims=200 search=puct opponents="random greedy alphabeta:1"
while [ $# -gt 0 ]; do
  case "$1" in
    --games) games=$2; shift 2 ;;
    --sims) sims=$2; shift 2 ;;
    --search) search=$2; shift 2 ;;
    --opponents) opponents=$2; shift 2 ;;
    *) echo "confirm.sh: unknown option '$1' (see the top of $0)" >&2; exit 2 ;;
  esac
done
for v in "$games" "$sims"; do
  case "$v" in ''|*[!0-9]*) echo "confirm.sh: numbers must be whole numbers, not '$v'" >&2; exit 2 ;; esac
done
case "$search" in
  puct) player=net ;;
  gumbel) player=gnet ;;
  *) echo "confirm.sh: --search is puct or gumbel, not '$search'" >&2; exit 2 ;;
esac
if [ $((games % 2)) -ne 0 ] || [ "$games" -le 0 ]; then
  echo "confirm.sh: --games must be a positive even number (pairs), not $games" >&2; exit 2
fi
if [ ! -f "$run/run.json" ] || [ ! -f "$run/campaign/promotions.log" ]; then
  echo "confirm.sh: $run is not a learning run (no run.json or campaign/promotions.log)" >&2; exit 2
fi

# shellcheck source=scripts/lib/campaign.sh
. scripts/lib/campaign.sh
bench_xqz .
read -r net file minute < <(python3 scripts/bench/learning_report.py at "$run")
echo "== confirming net ${net:0:8} (promoted at $minute min): $games games per opponent, $sims simulations per move, $search root search"
# The ladder's 88 lines hold 176 distinct games (scripts/lib/openings.sh); above that, the
# four-ply set (528 lines, 1056 games).
openings=scripts/bench/openings-ladder.txt
if [ "$games" -gt "$(openings_games "$openings")" ]; then
  openings=scripts/bench/openings-4ply.txt
  echo "== $games games: the four-ply openings ($openings), so that no game repeats"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for opp in $opponents; do
  i=$((i + 1))
  "$XQZ" arena "$player:$file:$sims" "$opp" --games "$games" --seed 11 \
    --openings "$openings" >"$tmp/$i.out" 2>"$tmp/$i.err" &
  # Two matches at a time: the machine the benchmark is made for has two cores.
  if [ $((i % 2)) -eq 0 ]; then wait; fi
done
wait
: >"$tmp/confirm.jsonl"
i=0
for opp in $opponents; do
  i=$((i + 1))
  res=$(tail -1 "$tmp/$i.out")
  if ! python3 -c 'import json,sys; assert "score" in json.loads(sys.argv[1])' "$res" 2>/dev/null; then
    echo "confirm.sh: the match against $opp failed:" >&2
    cat "$tmp/$i.err" >&2
    exit 1
  fi
  printf '{"net":"%s","opponent":"%s","search":"%s","result":%s}\n' "$net" "$opp" "$search" "$res" >>"$tmp/confirm.jsonl"
  python3 -c 'import json,sys; r=json.loads(sys.argv[1])
print("   vs %-12s score %.3f (+%d =%d -%d)" % (sys.argv[2], r["score"], r["wins"], r["draws"], r["losses"]))' \
    "$res" "$opp"
done
# Merge: this call's records replace earlier ones for the same net, opponent and search;
# the others (another search, another opponent) stay.
python3 - "$run/confirm.jsonl" "$tmp/confirm.jsonl" <<'PY'
import json, os, sys
old_path, new_path = sys.argv[1:]
new = [l for l in open(new_path) if l.strip()]
key = lambda d: (d["net"], d["opponent"], d.get("search", "puct"))
fresh = {key(json.loads(l)) for l in new}
kept = []
if os.path.exists(old_path):
    kept = [l for l in open(old_path) if l.strip() and key(json.loads(l)) not in fresh]
with open(new_path, "w") as f:
    f.writelines(kept + new)
PY
mv "$tmp/confirm.jsonl" "$run/confirm.jsonl"
echo "== wrote $run/confirm.jsonl"
