#!/usr/bin/env bash
# test_cli_version_gate.sh XQZ BINDIR: the coordinator's min_peer_version (issue 49, the
# version gate).
#   A malformed min_peer_version stops the start (exit 2) naming the setting.
#   With a minimum above this build's version, a worker and a trainer are refused: each
#   stops at once (exit 1, no retry) with an ERROR naming the version to install, and the
#   coordinator logs the refusal. With a minimum at or below it, both are admitted and
#   `xqz status` shows the worker's and the trainer's versions.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
TRAINER=$BIN/trainer/xqz-trainer
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT
export OPENBLAS_NUM_THREADS=1
read -r port < <(free_port)
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
mine=$("$XQZ" version | sed -E 's/^xqzero ([0-9.]+) .*/\1/')

"$COORD" --campaign "$dir/none" --min_peer_version abc >"$dir/bad.out" 2>&1; rc=$?
check "min_peer_version abc: exit 2" [ "$rc" = 2 ]
check "it names the setting and the form" grep -q "min_peer_version: 'abc' is not a version: give MAJOR.MINOR.PATCH" "$dir/bad.out"

# start LOG MIN: a coordinator with min_peer_version MIN, waited for.
start() {
  "$COORD" --campaign "$dir/camp" --router "$router" --pub "$pub" --http= --net_size tiny \
    --sims 8 --fast_sims 4 --max_plies 30 --games_per_job 2 --min_positions 10 \
    --min_peer_version "$2" >"$dir/$1" 2>&1 &
  coord=$!
  pids+=("$coord")
  wait_for 20 grep -qs listening "$dir/$1"
}
check "a coordinator admitting 99.0.0 and newer starts" start coord1.log 99.0.0
# run_peer LOG CMD...: runs a peer for at most 60 s; its exit status in $rc.
run_peer() { local log=$1; shift; timeout 60 "$@" >"$dir/$log" 2>&1; rc=$?; }
run_peer worker1.log "$WORKER" --coordinator "$router" --pub "$pub" --id gate-w1 --threads 1 \
  --cache "$dir/cache" --spool "$dir/spool"
check "the worker stops with exit 1 (no retry)" [ "$rc" = 1 ]
check "its ERROR says to install 99.0.0" \
  grep -q "ERROR.*admits only newer workers; stopping: install the version it names.*install xqzero 99.0.0 or newer" "$dir/worker1.log"
check "it names its own version" grep -q "this worker runs xqzero $mine" "$dir/worker1.log"
run_peer trainer1.log "$TRAINER" --coordinator "$router" --dir "$dir/tr" --batch 8 --size tiny
check "the trainer stops with exit 1 (no retry)" [ "$rc" = 1 ]
check "its ERROR says to install 99.0.0" \
  grep -q "ERROR.*admits only newer trainers.*install xqzero 99.0.0 or newer" "$dir/trainer1.log"
check "the coordinator logs both refusals" \
  [ "$(grep -c 'refused a peer older than min_peer_version' "$dir/coord1.log")" -ge 2 ]
kill "$coord"; wait "$coord"

check "a coordinator admitting $mine and newer starts" start coord2.log "$mine"
"$WORKER" --coordinator "$router" --pub "$pub" --id gate-w2 --threads 1 --games-per-thread 1 \
  --cache "$dir/cache" --spool "$dir/spool" >"$dir/worker2.log" 2>&1 &
pids+=("$!")
"$TRAINER" --coordinator "$router" --dir "$dir/tr" --batch 8 --size tiny >"$dir/trainer2.log" 2>&1 &
pids+=("$!")
versions() {
  "$XQZ" status --coordinator "$router" >"$dir/status.out" 2>&1 &&
    grep -q "gate-w2 .*xqzero $mine" "$dir/status.out" &&
    grep -q "^trainer .*xqzero $mine" "$dir/status.out"
}
check "xqz status shows the worker's and the trainer's versions" wait_for 60 versions
check "no refusal at $mine" sh -c "! grep -q 'refused a peer older' '$dir/coord2.log'"
finish
