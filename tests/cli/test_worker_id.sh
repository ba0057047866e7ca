#!/usr/bin/env bash
# test_worker_id.sh BINDIR: a worker's default id is stable across restarts and it gets
# that id back from the coordinator.
#   Without --id the worker stores "<host>-<8 hex>" in its spool (worker_id) at the first
#   start and reads it back after a kill -9; the coordinator, whose view of the old
#   connection is still alive, lets the restarted worker (same IP address) take its id
#   over: one worker row, not two, and games go on under it. A second spool is a second
#   id. With CURVE the id belongs to the key: the restarted worker with the same key gets
#   it back; another allowed key with a copy of the spool's worker_id is refused (Error 10).
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$1" && pwd)
XQZ=$BIN/tools/xqz COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
export OPENBLAS_NUM_THREADS=1
small=(--http "" --net_size tiny --sims 4 --fast_sims 2 --max_plies 20 --games_per_job 2
       --fsync_ms 50)

# start_worker LOG SPOOL [ARGS...]: a worker on $router with its own cache; pid in $w.
start_worker() {
  local log=$1 spool=$2; shift 2
  "$WORKER" --coordinator "$router" --games-per-thread 2 --timeout 2000 --spool "$spool" \
    --cache "$dir/cache" "$@" >>"$dir/$log.log" 2>&1 &
  w=$!; pids+=("$w")
}
# workers_named ID [STATUS ARGS...]: the rows of `xqz status --json` with that worker id.
workers_named() {
  local id=$1; shift
  "$XQZ" status --coordinator "$router" --json "$@" 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for w in json.load(sys.stdin)["worker_list"] if w["worker_id"] == sys.argv[1]))' "$id"
}
games_of() {
  local id=$1; shift
  "$XQZ" status --coordinator "$router" --json "$@" 2>/dev/null | python3 -c '
import json, sys
print(sum(w["games"] for w in json.load(sys.stdin)["worker_list"] if w["worker_id"] == sys.argv[1]))' "$id"
}
more_games() { [ "$(games_of "$1")" -gt "$2" ] 2>/dev/null; }
welcomed_twice() { [ "$(grep -c 'connected coordinator=' "$dir/$1.log")" -ge 2 ]; }

port=$(free_port)
router=tcp://127.0.0.1:$port
"$COORD" --campaign "$dir/plain" --router "$router" --pub "tcp://127.0.0.1:$((port + 1))" \
  "${small[@]}" >"$dir/coord.log" 2>&1 &
pids+=($!)
check "the coordinator listens" wait_for 20 grep -q "listening" "$dir/coord.log"
start_worker w1 "$dir/s1"
check "the worker is welcomed" wait_for 30 grep -q "connected coordinator=" "$dir/w1.log"
id=$(cat "$dir/s1/worker_id" 2>/dev/null)
check "its default id is stored in the spool as HOST-RANDOM" \
  grep -Eqx "$(hostname | tr -c 'A-Za-z0-9.\n-' _)-[0-9a-f]{8}" "$dir/s1/worker_id"
check "and used" grep -q "started worker=$id " "$dir/w1.log"
check "its games arrive under that id" wait_for 30 more_games "$id" 0
kill -9 "$w"; wait "$w" 2>/dev/null
before=$(games_of "$id")
start_worker w1 "$dir/s1"
check "restarted, it keeps its id" wait_for 10 bash -c "[ \$(grep -c 'started worker=$id ' '$dir/w1.log') -eq 2 ]"
check "the coordinator lets it take its id back (same address, old connection alive)" \
  wait_for 30 welcomed_twice w1
check "games go on under the same id" wait_for 30 more_games "$id" "$before"
check "one worker row for it, not two" test "$(workers_named "$id")" = 1
start_worker w2 "$dir/s2"
check "another spool gets another id" wait_for 20 bash -c \
  "[ -s '$dir/s2/worker_id' ] && ! cmp -s '$dir/s1/worker_id' '$dir/s2/worker_id'"
kill -9 "$w"; wait "$w" 2>/dev/null
printf 'bad id\n' >"$dir/s2/worker_id"
"$WORKER" --coordinator "$router" --spool "$dir/s2" --cache "$dir/cache" >"$dir/bad.log" 2>&1
check "a spool with a broken worker_id stops the worker, naming the file" \
  grep -q "s2/worker_id holds no valid worker id .* delete it for a new id" "$dir/bad.log"

# With CURVE: the id belongs to the key.
keys=$dir/keys
mkdir -p "$keys/allow"
for k in coordinator lab rogue; do "$XQZ" keygen --dir "$keys" "$k" >/dev/null; done
cp "$keys/lab.pub" "$keys/rogue.pub" "$keys/allow/"
cport=$(free_port)
router=tcp://127.0.0.1:$cport
"$COORD" --campaign "$dir/curve" --router "$router" --pub "tcp://127.0.0.1:$((cport + 1))" \
  "${small[@]}" --curve_secret_key "$keys/coordinator.secret" --curve_allow_dir "$keys/allow" \
  >"$dir/ccoord.log" 2>&1 &
pids+=($!)
check "the CURVE coordinator listens" wait_for 20 grep -q "listening" "$dir/ccoord.log"
lab=(--server-key "$keys/coordinator.pub" --key "$keys/lab.secret")
start_worker c1 "$dir/c1" "${lab[@]}"
check "the CURVE worker is welcomed" wait_for 30 grep -q "connected coordinator=" "$dir/c1.log"
cid=$(cat "$dir/c1/worker_id" 2>/dev/null)
kill -9 "$w"; wait "$w" 2>/dev/null
start_worker c1 "$dir/c1" "${lab[@]}"
check "restarted with the same key, it gets its id back" wait_for 30 welcomed_twice c1
kill -9 "$w"; wait "$w" 2>/dev/null
mkdir -p "$dir/c3" && cp "$dir/c1/worker_id" "$dir/c3/"
start_worker c3 "$dir/c3" --server-key "$keys/coordinator.pub" --key "$keys/rogue.secret"
check "another key with a copy of the id is refused it" \
  wait_for 30 grep -q "coordinator error code=10 message=\"worker id $cid belongs to another key" "$dir/c3.log"
check "and is not welcomed" bash -c "! grep -q 'connected coordinator=' '$dir/c3.log'"
finish
