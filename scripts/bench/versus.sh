#!/usr/bin/env bash
# versus.sh: a before/after comparison of two learning runs (scripts/bench/learning.sh) by
# playing their best nets against each other: the net each run had promoted by the same
# wall-clock minute, with the ladder's simulations and no noise, on the ladder's paired
# openings with colours swapped. Head to head is a sharper test of a setting than two
# ladders against fixed opponents (a 20-game ladder cell is +-20 points).
#
# usage: scripts/bench/versus.sh RUN_A RUN_B [--minute M] [--games N] [--sims S]
#          [--search-a puct|gumbel|gumbel_tree] [--search-b puct|gumbel|gumbel_tree]
#   RUN_A, RUN_B   learning run directories, or a weights file (.xqzn: nets/xqzero.xqzn,
#                  say), which plays as itself whatever --minute or --step pick
#   --minute M   compare the nets promoted by minute M of each run (default: each run's last)
#   --step S     compare instead the last nets of at most S training steps: learning per
#                step, where --minute gives learning per minute
#   --games N    games, a multiple of 4 (two halves of pairs in parallel, on alternate
#                openings of the ladder's; default 100)
#   --sims S     simulations per move (default 200, as the ladder)
#   --search-a, --search-b   the search each side plays with (default puct; gumbel: the
#                gnet: player, a Gumbel root; gumbel_tree: gtnet:, the same root with the
#                deterministic selection below it). RUN_A may equal RUN_B to compare two
#                searches on one net.
#   Environment: XQZ, the xqz binary to use (default: a Release build in build-bench/).
# Prints the nets compared and the score of A's net, with its Elo and 95% interval.
set -euo pipefail
cd "$(dirname "$0")/../.."

[ $# -ge 2 ] || { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
run_a=$1 run_b=$2
shift 2
minute="" step="" games=100 sims=200 kind_a=net kind_b=net
while [ $# -gt 0 ]; do
  case "$1" in
    --minute) minute=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --search-a|--search-b)
      case "$2" in puct) k=net ;; gumbel) k=gnet ;; gumbel_tree) k=gtnet ;;
        *) echo "versus.sh: $1 takes puct, gumbel or gumbel_tree, not '$2'" >&2; exit 2 ;; esac
      if [ "$1" = --search-a ]; then kind_a=$k; else kind_b=$k; fi
      shift 2 ;;
    --games) games=$2; shift 2 ;;
    --sims) sims=$2; shift 2 ;;
    *) echo "versus.sh: unknown option '$1' (see the top of $0)" >&2; exit 2 ;;
  esac
done
if [ -n "$minute" ] && [ -n "$step" ]; then
  echo "versus.sh: --minute and --step pick the nets two ways; give one" >&2; exit 2
fi
for v in "$games" "$sims" ${minute:+"$minute"} ${step:+"$step"}; do
  case "$v" in ''|*[!0-9]*) echo "versus.sh: numbers must be whole numbers, not '$v'" >&2; exit 2 ;; esac
done
if [ $((games % 4)) -ne 0 ] || [ "$games" -le 0 ]; then
  echo "versus.sh: --games must be a positive multiple of 4, not $games" >&2; exit 2
fi
for r in "$run_a" "$run_b"; do
  [ -f "$r" ] && continue # a weights file; xqz net info checks it below
  if [ ! -f "$r/run.json" ] || [ ! -f "$r/campaign/promotions.log" ]; then
    echo "versus.sh: $r is not a learning run (no run.json or campaign/promotions.log)" \
      "nor a weights file" >&2
    exit 2
  fi
done

# shellcheck source=scripts/lib/campaign.sh
. scripts/lib/campaign.sh
# shellcheck source=scripts/lib/openings.sh
. scripts/lib/openings.sh
bench_xqz .
pick=(${minute:+"$minute"} ${step:+--step "$step"})
# pick_net RUN: "ID FILE WHEN" of the net RUN stands for.
pick_net() {
  if [ -f "$1" ]; then
    local info id
    info=$("$XQZ" net info "$1" 2>&1) || { echo "versus.sh: $info" >&2; return 1; }
    id=$(awk '/^net id:/ {print $3}' <<<"$info")
    echo "$id $1 file"
  else
    python3 scripts/bench/learning_report.py at "$1" "${pick[@]}"
  fi
}
describe() { # describe RUN ID WHEN
  if [ "$3" = file ]; then echo "$1 (net ${2:0:8}, a weights file)"
  else echo "$1 net ${2:0:8} (promoted at $3 min)"; fi
}
picked=$(pick_net "$run_a") || exit 2
read -r net_a file_a min_a <<<"$picked"
picked=$(pick_net "$run_b") || exit 2
read -r net_b file_b min_b <<<"$picked"
echo "== A: $(describe "$run_a" "$net_a" "$min_a")"
echo "== B: $(describe "$run_b" "$net_b" "$min_b")"
echo "== $games games, $sims simulations per move, no noise, two halves in parallel"
echo "== A plays $kind_a:, B plays $kind_b: (net: PUCT, gnet: a Gumbel root, gtnet: the same below it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The halves take alternate openings, so no pair is played twice (the nets play without
# noise: a repeated opening would repeat its games).
openings_halves scripts/bench/openings-ladder.txt "$tmp"
for half in 1 2; do
  "$XQZ" arena "$kind_a:$file_a:$sims" "$kind_b:$file_b:$sims" --games $((games / 2)) --seed 7 \
    --openings "$tmp/open$half" >"$tmp/half$half.out" 2>"$tmp/half$half.err" &
done
fail=0
wait %1 || fail=1
wait %2 || fail=1
if [ "$fail" -ne 0 ]; then
  echo "versus.sh: an arena failed:" >&2
  cat "$tmp"/half*.err >&2
  exit 1
fi
python3 - "$tmp/half1.out" "$tmp/half2.out" <<'PY'
import json, math, sys
w = d = l = 0
for path in sys.argv[1:]:
    with open(path) as f:
        r = json.loads(f.read().strip().splitlines()[-1])
    w, d, l = w + r["wins"], d + r["draws"], l + r["losses"]
n = w + d + l
s = (w + 0.5 * d) / n
# Trinomial standard error of the score, mapped to logistic Elo.
var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l * (0 - s) ** 2) / n
se = math.sqrt(var / n)
def elo(x):
    x = min(max(x, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / x - 1)
lo, hi = elo(s - 1.96 * se), elo(s + 1.96 * se)
print("A scores %.1f%% (+%d =%d -%d): Elo %+.0f, 95%% interval [%+.0f, %+.0f]"
      % (100 * s, w, d, l, elo(s), lo, hi))
print(json.dumps({"games": n, "wins": w, "draws": d, "losses": l, "score": round(s, 4),
                  "elo": round(elo(s), 1), "elo_lo": round(lo, 1), "elo_hi": round(hi, 1)}))
PY
