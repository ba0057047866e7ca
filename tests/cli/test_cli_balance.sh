#!/usr/bin/env bash
# test_cli_balance.sh XQZ BINDIR: the balance of self-play against training in `xqz status`
# (--json and the screen) and /metrics, against a live coordinator with short balance
# settings (a 3 s span, trainer-bound after 2 s). `xqz bench coordinator` plays a worker
# streaming games and a trainer: first a trainer throttled to 2 batches of 16 a second, far
# below R = 4 per position, until the status says trainer-bound (one warning in the log),
# then a trainer that asks as fast as it is served, so the state clears (one line in the
# log) and the pacing makes it wait: worker-bound. When it stops asking, no-trainer.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.err' EXIT
port=$(free_port) pubport=$(free_port) hport=$(free_port)
router=tcp://127.0.0.1:$port

"$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$pubport" \
  --http "127.0.0.1:$hport" --min_positions 100 --window 5000 --reuse 4 --fsync_ms 50 \
  --balance_window_s 3 --balance_warn_s 2 --worker_timeout_ms 3000 --status_ms 60000 \
  >"$dir/coord.log" 2>&1 &
pids+=("$!")

# field EXPR: evaluates a Python expression over s = the Status JSON and b = s["balance"].
field() {
  "$XQZ" status --coordinator "$router" --json >"$dir/status.json" 2>/dev/null &&
    python3 - "$dir/status.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
b = s["balance"]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}
state_is() { field "b['state'] == '$1'"; }
warnings() { grep -c "WARN  balance campaign is trainer-bound" "$dir/coord.log"; }
cleared() { grep -c "INFO  balance no longer trainer-bound" "$dir/coord.log"; }

check "an empty campaign is filling" wait_for 10 state_is filling
check "the filling state says when training starts" field "'min_positions' in b['advice']"

# A pool that covers the run: the coordinator refuses a game already in the window.
bench() { # bench NAME ARGS...: a simulated worker and trainer in the background
  local name=$1; shift
  "$XQZ" bench coordinator --endpoint "$router" --workers 1 --inflight 1 --pool 1500 --trainer \
    --seconds 60 "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  bench_pid=$!
  pids+=("$bench_pid")
}

bench slow --trainer-rate 2 --batch 16
check "a throttled trainer makes the campaign trainer-bound" wait_for 30 state_is trainer-bound
check "its reuse is below R/2 and the span and rates are there" \
  field "b['reuse'] < 2 and b['reuse_target'] == 4 and b['positions_per_s'] > 0 and
         b['samples_per_s'] > 0 and 0 < b['span_s'] <= 3.5 and b['turnover_s'] > 0"
check "the trainer is measured busy (it was never told to wait)" \
  field "b['trainer_busy'] is not None and b['trainer_busy'] > 0.5 and b['paced_requests'] == 0"
check "the advice names the trainer's threads" field "'xqz-trainer --threads' in b['advice']"
"$XQZ" status --coordinator "$router" >"$dir/screen.out" 2>&1
check "the screen shows the state and the advice" bash -c \
  "grep -q '^balance    trainer-bound' '$dir/screen.out' && grep -q 'xqz-trainer --threads' '$dir/screen.out'"
metrics_show() {
  python3 - "$hport" <<'PY' >"$dir/metrics.txt" 2>/dev/null &&
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode())
PY
    grep -q '^xqz_balance_state{state="trainer-bound"} 1$' "$dir/metrics.txt" &&
    grep -q '^xqz_balance_reuse_target 4$' "$dir/metrics.txt" &&
    grep -q '^xqz_window_turnover_seconds ' "$dir/metrics.txt" &&
    grep -q '^xqz_trainer_busy_ratio ' "$dir/metrics.txt"
}
check "/metrics shows the state, reuse, turnover and busy share" metrics_show
sleep 2
check "the coordinator warned once, not every tick" test "$(warnings)" -eq 1
check "and has not cleared it" test "$(cleared)" -eq 0

kill "$bench_pid" 2>/dev/null
wait "$bench_pid" 2>/dev/null
bench fast --batch 256
check "a trainer that keeps up clears trainer-bound" wait_for 30 field "b['state'] != 'trainer-bound'"
check "the log says it cleared" wait_for 5 test "$(cleared)" -eq 1
check "the pacing holds the fast trainer back: worker-bound" wait_for 30 state_is worker-bound
check "worker-bound: batch requests were paced, the trainer waited" \
  field "b['paced_requests'] > 0 and b['trainer_busy'] < 1"
check "the worker-bound advice says what to do" field "'more workers' in b['advice']"
check "still one trainer-bound warning" test "$(warnings)" -eq 1

kill "$bench_pid" 2>/dev/null
wait "$bench_pid" 2>/dev/null
check "a trainer silent for worker_timeout_ms: no-trainer" wait_for 20 state_is no-trainer
finish
