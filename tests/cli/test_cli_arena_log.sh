#!/usr/bin/env bash
# test_cli_arena_log.sh XQZ BINDIR: a worker playing arena pairs (an anchor match: the best
# net against greedy, 2 games a pair) logs them as one summary line with counts at most once
# a minute, and the rest at its stop, instead of one INFO line per pair (issue 49: 249 of
# 476 lines in 70 s were "arena pair done").
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
export OPENBLAS_NUM_THREADS=1
read -r port < <(free_port)
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
"$COORD" --campaign "$dir/camp" --router "$router" --pub "$pub" --http= --net_size tiny \
  --sims 4 --fast_sims 2 --max_plies 20 --games_per_job 1 --anchors greedy --anchor_games 8 \
  --gating_sims 2 >"$dir/coord.log" 2>&1 &
pids+=("$!")
check "the coordinator starts" wait_for 20 grep -qs listening "$dir/coord.log"
"$WORKER" --coordinator "$router" --pub "$pub" --id arena-w1 --threads 1 --cache "$dir/cache" \
  --spool "$dir/spool" >"$dir/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
decided() {
  "$XQZ" status --coordinator "$router" --json 2>/dev/null |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["anchor_history"] else 1)'
}
check "the anchor match (4 pairs) is played" wait_for 60 decided
kill "$worker"; wait "$worker"
# pairs in the summary lines, and how many such lines
total=$(grep -o 'arena pairs done pairs=[0-9]*' "$dir/worker.log" | awk -F= '{s += $2} END {print s + 0}')
lines=$(grep -c 'arena pairs done pairs=' "$dir/worker.log")
check "no INFO line per pair" sh -c "! grep -q 'INFO  worker arena pair done' '$dir/worker.log'"
check "the summaries count all 4 pairs (got $total)" [ "$total" -ge 4 ]
check "in at most 2 lines within a minute (got $lines)" [ "$lines" -le 2 ]
check "with wins, draws and losses" grep -q 'arena pairs done pairs=[0-9]* a_wins=[0-9]* draws=[0-9]* a_losses=[0-9]* last_match=' "$dir/worker.log"
finish
