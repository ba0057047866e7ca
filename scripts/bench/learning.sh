#!/usr/bin/env bash
# learning.sh: proof that it learns. Starts a fresh campaign with the default settings on
# this machine (coordinator, trainer and one worker with a search thread per core, all
# sharing the cores), runs it for M minutes, stops it cleanly, then plays promoted nets against a
# ladder of fixed opponents on paired openings with colours swapped, and writes a table
# and a chart (scripts/bench/learning_report.py).
#
# usage: scripts/bench/learning.sh [--minutes M] [--games N] [--sims S] [--max-nets K]
#          [--ladder "SPEC ..."] [--out DIR] [--port P] [--write-docs]
#          [--confirm N] [--search puct|gumbel] [--ladder-only DIR]
#   --minutes M    campaign length (default 120)
#   --games N      ladder games per net and opponent (default 20: 10 pairs)
#   --sims S       simulations per move of the nets in the ladder (default 200, no noise)
#   --search S     the nets' root search in the ladder and the confirmation: puct (default;
#                  the ladders in docs/experiments/) or gumbel (as `xqz play` uses a net)
#   --max-nets K   ladder at most K nets: net 1, the last promoted, and evenly spaced ones
#                  in between (default 8)
#   --ladder L     opponents (default: random greedy alphabeta:1 alphabeta:2 alphabeta:3
#                  uci:/usr/games/fairy-stockfish:depth=1)
#   --confirm N    then play the best net N more games against random, greedy and
#                  alphabeta:1 (scripts/bench/confirm.sh), which decide the goal verdicts
#                  (default 100; 0: the ladder's cells decide)
#   --out DIR      run directory (default bench-runs/learning-YYYYmmdd-HHMMSS)
#   --write-docs   also write the table into docs/results.md and the chart to docs/
#   --ladder-only DIR   skip the campaign: ladder and report an existing run directory
#   Environment: LEARN_COORD_ARGS, LEARN_TRAINER_ARGS, LEARN_WORKER_ARGS add settings to
#   the daemons (e.g. LEARN_COORD_ARGS="--net_size default") for before/after runs; the
#   report records them. LEARN_BUILD names a Release build to use as it is (no install,
#   no build step; scripts/bench/precision_learning.sh runs two learning runs on one).
set -euo pipefail
cd "$(dirname "$0")/../.."

minutes=120 games=20 sims=200 max_nets=8 confirm=100 out="" port=5755 write_docs=0 ladder_only=""
search=puct
ladder="random greedy alphabeta:1 alphabeta:2 alphabeta:3 uci:/usr/games/fairy-stockfish:depth=1"
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --sims) sims=$2; shift 2 ;;
    --max-nets) max_nets=$2; shift 2 ;;
    --confirm) confirm=$2; shift 2 ;;
    --ladder) ladder=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --write-docs) write_docs=1; shift ;;
    --ladder-only) ladder_only=$2; shift 2 ;;
    --search) search=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "learning.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for v in "$minutes" "$games" "$sims" "$max_nets" "$confirm" "$port"; do
  case "$v" in ''|*[!0-9]*) echo "learning.sh: numbers must be whole numbers, not '$v'" >&2; exit 2 ;; esac
done
case "$search" in
  puct) player=net ;;
  gumbel) player=gnet ;;
  *) echo "learning.sh: --search is puct or gumbel, not '$search'" >&2; exit 2 ;;
esac

. scripts/lib/campaign.sh
if [ -n "${LEARN_BUILD:-}" ]; then   # built already (two runs side by side share one build)
  BUILD=$LEARN_BUILD
  [ -x "$BUILD/tools/xqz" ] || { echo "learning.sh: LEARN_BUILD=$BUILD holds no tools/xqz" >&2; exit 2; }
else
  scripts/bootstrap.sh
  BUILD="build-bench"
  echo "== building xqzero (Release) in $BUILD/"
  xqz_build_release "$BUILD"
fi
XQZ=$BUILD/tools/xqz

read -r -a COORD_ARGS <<<"${LEARN_COORD_ARGS:-}"
read -r -a TRAINER_ARGS <<<"${LEARN_TRAINER_ARGS:-}"
read -r -a WORKER_ARGS <<<"${LEARN_WORKER_ARGS:-}"
# A search thread per core: with one, a trainer paced by R left most of a core idle (the
# trainer used about a fifth of one; measured with top in a 2-core run).
WORKER_ARGS=(--threads "$(nproc)" --progress 60 "${WORKER_ARGS[@]}")

if [ -n "$ladder_only" ]; then
  out=$ladder_only
  [ -f "$out/run.json" ] || { echo "learning.sh: $out/run.json missing: not a learning run" >&2; exit 2; }
else
  out=${out:-bench-runs/learning-$(date +%Y%m%d-%H%M%S)}
  if [ -e "$out/campaign" ]; then
    echo "learning.sh: $out/campaign exists; a learning run starts from zero (use --ladder-only $out to redo the ladder)" >&2
    exit 2
  fi
  mkdir -p "$out"
  camp=$out/campaign
  set +e +o pipefail
  trap 'campaign_stop; exit 130' INT TERM
  trap 'kill -TERM "${CAMPAIGN_PIDS[@]}" 2>/dev/null' EXIT
  t0=$(date +%s)
  python3 - "$out/run.json" "$t0" "$minutes" "$(nproc)" "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" \
    "${LEARN_COORD_ARGS:-}" "${LEARN_TRAINER_ARGS:-}" "${WORKER_ARGS[*]}" "$($XQZ version 2>/dev/null || true)" <<'PY'
import json, sys
path, t0, minutes, cores, cpu, coord, trainer, worker, version = sys.argv[1:]
json.dump({"t0": int(t0), "minutes": int(minutes), "cores": int(cores), "cpu": cpu,
           "coordinator_args": coord, "trainer_args": trainer, "worker_args": worker,
           "version": version}, open(path, "w"), indent=1)
PY
  echo "== fresh campaign in $camp/ for $minutes minutes (logs there; Ctrl-C stops)"
  campaign_start "$BUILD" "$camp" "$port" || exit 1
  end=$((SECONDS + minutes * 60))
  while [ $SECONDS -lt $end ]; do
    sleep 30 & wait $!
    if ! campaign_alive; then
      echo "learning.sh: a process stopped unexpectedly; see the logs in $camp/" >&2
      campaign_stop
      exit 1
    fi
    campaign_progress "$camp"
  done
  echo "== stopping the campaign"
  campaign_stop
  trap - INT TERM EXIT
  python3 - "$out/run.json" <<'PY'
import json, sys, time
d = json.load(open(sys.argv[1])); d["t1"] = int(time.time())
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
  set -e -o pipefail
fi

# The ladder: every selected net against every opponent, two matches at a time (the
# campaign is stopped, so both cores are free). Results are JSON lines in ladder.jsonl;
# run.json records the search the nets used there.
camp=$out/campaign
python3 - "$out/run.json" "$search" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["ladder_search"] = sys.argv[2]
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
python3 scripts/bench/learning_report.py select "$out" --max-nets "$max_nets" >"$out/nets.txt"
echo "== ladder: $(wc -l <"$out/nets.txt") nets x $(wc -w <<<"$ladder") opponents x $games games, $sims simulations per move, $search root search"
: >"$out/ladder.jsonl"
jobs_file=$out/ladder.jobs
: >"$jobs_file"
while read -r net file; do
  for opp in $ladder; do printf '%s\t%s\t%s\n' "$net" "$file" "$opp" >>"$jobs_file"; done
done <"$out/nets.txt"
run_one() {  # net file opponent
  local res
  res=$("$XQZ" arena "$player:$2:$sims" "$3" --games "$games" --seed 7 \
        --openings scripts/bench/openings-ladder.txt 2>/dev/null | tail -1)
  printf '{"net":"%s","opponent":"%s","result":%s}\n' "$1" "$3" "${res:-null}"
}
export -f run_one
export XQZ sims games player
n=0 total=$(wc -l <"$jobs_file")
while IFS=$'\t' read -r net file opp; do
  printf '%s\0%s\0%s\0' "$net" "$file" "$opp"
done <"$jobs_file" | xargs -0 -n 3 -P 2 bash -c 'run_one "$@"' _ | while read -r line; do
  n=$((n + 1))
  echo "$line" >>"$out/ladder.jsonl"
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); r=d["result"] or {}
print("   [%s/%s] net %s vs %-40s %s" % (sys.argv[2], sys.argv[3], d["net"][:8], d["opponent"],
      "score %.3f (+%d =%d -%d)" % (r["score"], r["wins"], r["draws"], r["losses"]) if r else "FAILED"))' \
    "$line" "$n" "$total"
done

if [ "$confirm" -gt 0 ]; then
  rm -f "$out/confirm.jsonl"
  XQZ=$XQZ scripts/bench/confirm.sh "$out" --games "$confirm" --sims "$sims" --search "$search"
fi
args=("$out")
[ "$write_docs" -eq 1 ] && args+=(--write-docs)
python3 scripts/bench/learning_report.py report "${args[@]}"
echo "== report: $out/report.md, chart: $out/learning.svg"
