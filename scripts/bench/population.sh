#!/usr/bin/env bash
# population.sh: does a population beat its own control? Starts a fresh campaign with a
# population of K trainers on this machine (campaign.ini population = K, slot 1 the control
# member that keeps the default settings and never copies), runs it for M minutes, stops it
# cleanly, then plays the best-rated member's latest net against the control member's
# latest net, N games on the ladder's paired openings with colours swapped, and writes a
# report: the match with its Elo interval, each member's settings over time (an SVG chart)
# and the lineage (who copied whom, when).
#
# usage: scripts/bench/population.sh [--minutes M] [--members K] [--games N] [--sims S]
#          [--interval STEPS] [--out DIR] [--port P] [--write-docs] [--report-only DIR]
#   --minutes M      campaign length (default 30)
#   --members K      trainers, control included (default 4; 2..16); 1: a single-trainer
#                    campaign with the same settings, the baseline (no final match)
#   --games N        games of the final match, even (default 400)
#   --sims S         simulations per move in the final match (default 200, no noise)
#   --interval S     pbt_interval_steps: trainer steps between two rounds (default 1200:
#                    153,600 samples at the batch of 128)
#   --out DIR        run directory (default bench-runs/population-YYYYmmdd-HHMMSS)
#   --write-docs     also add the report to docs/results.md and the chart to docs/img/
#   --report-only DIR  skip the campaign and the match: report an existing run directory
#   Environment: XQZ (the xqz binary; its build directory must hold the daemons too),
#   POP_COORD_ARGS, POP_TRAINER_ARGS, POP_WORKER_ARGS add settings to the daemons.
# On a 2-core box the members take CPU from self-play: the report prints the campaign's
# games and positions per minute so that a single-trainer run of the same length
# (scripts/bench/learning.sh --minutes M) shows the cost.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/lib/usage.sh
. scripts/lib/usage.sh
# shellcheck source=scripts/lib/openings.sh
. scripts/lib/openings.sh
minutes=30 members=4 games=400 sims=200 interval=1200 out="" port=5855 write_docs=0 report_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --members) members=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --sims) sims=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --write-docs) write_docs=1; shift ;;
    --report-only) report_only=$2; shift 2 ;;
    -h|--help) script_usage "$0"; exit 0 ;;
    *) echo "population.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for v in "$minutes" "$members" "$games" "$sims" "$interval" "$port"; do
  case "$v" in ''|*[!0-9]*) echo "population.sh: numbers must be whole numbers, not '$v'" >&2; exit 2 ;; esac
done
if [ "$members" -lt 1 ] || [ "$members" -gt 16 ]; then
  echo "population.sh: --members is 1 (the single-trainer baseline) to 16, not $members" >&2; exit 2
fi
if [ $((games % 2)) -ne 0 ] || [ "$games" -le 0 ]; then
  echo "population.sh: --games must be a positive even number (pairs), not $games" >&2; exit 2
fi
# The final match's openings: each of the 528 four-ply lines once a colour at most (below).
max_games=$(openings_games scripts/bench/openings-4ply.txt)
if [ "$games" -gt "$max_games" ]; then
  echo "population.sh: --games $games would repeat openings (nets play without noise, so a" \
       "repeated opening repeats its games); give at most $max_games" >&2; exit 2
fi
docs_flag=()
[ "$write_docs" = 1 ] && docs_flag=(--write-docs)
if [ -n "$report_only" ]; then
  exec python3 scripts/bench/population_report.py report "$report_only" "${docs_flag[@]}"
fi

# shellcheck source=scripts/lib/campaign.sh
. scripts/lib/campaign.sh
bench_xqz .
BUILD=$(dirname "$(dirname "$XQZ")")
out=${out:-bench-runs/population-$(date +%Y%m%d-%H%M%S)}
camp=$out/campaign
if [ -e "$camp/campaign.db" ]; then
  echo "population.sh: $camp already holds a campaign; give another --out" >&2; exit 2
fi
mkdir -p "$out"
read -r -a extra_coord <<<"${POP_COORD_ARGS:-}"
read -r -a extra_trainer <<<"${POP_TRAINER_ARGS:-}"
read -r -a extra_worker <<<"${POP_WORKER_ARGS:-}"
MEMBERS=$members
# One batch for the single trainer and the members' defaults (campaign.ini's batch_size):
# the control member must train as a single trainer does, or the A/B measures the batch.
batch=128
COORD_ARGS=(--population_control 1 --pbt_interval_steps "$interval" --batch_size "$batch"
            "${extra_coord[@]}")
TRAINER_ARGS=(--batch "$batch" --max-batch 512 --candidate-every 300 --checkpoint-every-s 60
              --log-every 50 "${extra_trainer[@]}")
WORKER_ARGS=(--threads "$(nproc)" --games-per-thread 16 --progress 30 "${extra_worker[@]}")
cat >"$out/run.json" <<EOF
{"minutes": $minutes, "members": $members, "games": $games, "sims": $sims,
 "interval": $interval, "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "cores": $(nproc),
 "coord_args": "${COORD_ARGS[*]}", "trainer_args": "${TRAINER_ARGS[*]}",
 "worker_args": "${WORKER_ARGS[*]}"}
EOF

if [ "$members" -eq 1 ]; then
  echo "== baseline campaign: one trainer for $minutes minutes in $camp"
else
  echo "== population campaign: $members trainers (member 1 the control) for $minutes minutes in $camp"
fi
trap 'kill -TERM "${CAMPAIGN_PIDS[@]}" 2>/dev/null' EXIT
campaign_start "$BUILD" "$camp" "$port" || exit 1
end=$((SECONDS + minutes * 60))
while [ $SECONDS -lt $end ]; do
  sleep 30 & wait $!
  if ! campaign_alive; then
    echo "population.sh: a process stopped unexpectedly; see the logs in $camp/" >&2
    campaign_stop
    exit 1
  fi
  campaign_progress "$camp"
  "$XQZ" population --coordinator "tcp://127.0.0.1:$port" 2>/dev/null | sed 's/^/   /' | head -20 || true
done
campaign_stop
trap - EXIT
campaign_summary "$camp" | tee "$out/summary.txt"
if [ "$members" -eq 1 ]; then
  echo "== one trainer: the baseline; its best net is $camp/nets/$(sqlite3 "$camp/campaign.db" \
    "select hex from nets where state = 'best'" 2>/dev/null || echo '?').xqzn"
  exit 0
fi

read -r control best best_slot < <(python3 scripts/bench/population_report.py pick "$camp")
if [ -z "$best" ] || [ "$best" = none ]; then
  echo "population.sh: no member was rated against the control in $minutes minutes (no round" \
       "finished): run longer, or lower --interval" >&2
  python3 scripts/bench/population_report.py report "$out" "${docs_flag[@]}"
  exit 1
fi
echo "== match: member $best_slot's net ${best:0:8} against the control's ${control:0:8}, $games games, $sims simulations"
half=$((games / 2))
[ $((half % 2)) -eq 0 ] || half=$((half + 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Two halves at once, on the two halves of the four-ply openings (528 lines): nets at fixed
# simulations play without noise, so a repeated opening repeats its games; the ladder's 88
# lines would hold only 176 distinct games.
openings_halves scripts/bench/openings-4ply.txt "$tmp"
for s in 1 2; do
  "$XQZ" arena "net:$camp/nets/$best.xqzn:$sims" "net:$camp/nets/$control.xqzn:$sims" \
    --games "$half" --seed "$((20 + s))" --openings "$tmp/open$s" \
    >"$tmp/$s.out" 2>"$tmp/$s.err" &
done
wait
for s in 1 2; do
  if ! tail -1 "$tmp/$s.out" | python3 -c 'import json,sys; json.loads(sys.stdin.read())' 2>/dev/null; then
    echo "population.sh: the match failed:" >&2; cat "$tmp/$s.err" >&2; exit 1
  fi
done
python3 - "$tmp/1.out" "$tmp/2.out" "$best" "$best_slot" "$control" >"$out/match.json" <<'PY'
import json, sys
a, b = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:3])
w, d, l = (a[k] + b[k] for k in ("wins", "draws", "losses"))
ptnml = [x + y for x, y in zip(a["ptnml"], b["ptnml"])]
print(json.dumps({"best_net": sys.argv[3], "best_slot": int(sys.argv[4]), "control_net": sys.argv[5],
                  "wins": w, "draws": d, "losses": l, "ptnml": ptnml}))
PY
python3 scripts/bench/population_report.py report "$out" "${docs_flag[@]}"
