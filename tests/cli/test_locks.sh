#!/usr/bin/env bash
# test_locks.sh BINDIR: one process per state directory. A second coordinator on a campaign
# directory, a second worker on a spool and a second trainer on a state directory are each
# refused while the first runs, with the first one's pid and host in the message; after
# kill -9 of the holder the directory can be used again (the lock is never stale).
set -u
. "$(dirname "$0")/lib.sh"
BIN=$1
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
TRAINER=$BIN/trainer/xqz-trainer
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
host=$(hostname)
ports() { local a b; a=$(free_port) b=$(free_port); while [ "$a" = "$b" ]; do b=$(free_port); done; echo "$a $b"; }
read -r port pubport < <(ports)
router=tcp://127.0.0.1:$port

"$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$pubport" --http= \
  --net_size tiny >"$dir/coord.log" 2>&1 &
coord=$!
pids+=("$coord")
check "the first coordinator starts" wait_for 20 grep -qs "listening" "$dir/coord.log"
check "the lock file names it" grep -q "^pid=$coord host=$host program=xqz-coordinator " "$dir/camp/xqz.lock"
read -r p2 q2 < <(ports)
"$COORD" --campaign "$dir/camp" --router "tcp://127.0.0.1:$p2" --pub "tcp://127.0.0.1:$q2" \
  --http= >"$dir/coord2.log" 2>&1; rc=$?
check "a second coordinator on the campaign exits 2" test "$rc" -eq 2
check "its refusal names the holder's pid and host" \
  grep -q "camp is in use by another process (pid=$coord host=$host program=xqz-coordinator" "$dir/coord2.log"
check "and what to do" grep -q "stop that one first" "$dir/coord2.log"
check "the first coordinator still runs" kill -0 "$coord"

"$WORKER" --coordinator "$router" --pub "tcp://127.0.0.1:$pubport" --id w1 --threads 1 \
  --games-per-thread 1 --cache "$dir/cache" --spool "$dir/spool" >"$dir/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
check "the first worker starts" wait_for 20 grep -qs "started worker" "$dir/worker.log"
"$WORKER" --coordinator "$router" --pub "tcp://127.0.0.1:$pubport" --id w2 --threads 1 \
  --cache "$dir/cache2" --spool "$dir/spool" >"$dir/worker2.log" 2>&1; rc=$?
check "a second worker on the spool exits 1" test "$rc" -eq 1
check "its refusal names the holder's pid and host" \
  grep -q "spool is in use by another process (pid=$worker host=$host program=xqz-worker" "$dir/worker2.log"

"$TRAINER" --coordinator "$router" --dir "$dir/tr" --batch 8 >"$dir/trainer.log" 2>&1 &
trainer=$!
pids+=("$trainer")
check "the first trainer holds its directory" wait_for 20 grep -qs "^pid=$trainer " "$dir/tr/xqz.lock"
"$TRAINER" --coordinator "$router" --dir "$dir/tr" --batch 8 >"$dir/trainer2.log" 2>&1; rc=$?
check "a second trainer on the directory exits 1" test "$rc" -eq 1
check "its refusal names the holder's pid and host" \
  grep -q "tr is in use by another process (pid=$trainer host=$host program=xqz-trainer" "$dir/trainer2.log"

kill -9 "$coord" "$worker" "$trainer"
wait "$coord" "$worker" "$trainer" 2>/dev/null
"$COORD" --campaign "$dir/camp" --router "tcp://127.0.0.1:$p2" --pub "tcp://127.0.0.1:$q2" \
  --http= >"$dir/coord3.log" 2>&1 &
pids+=("$!")
check "after kill -9 of the holder the campaign opens again" wait_for 20 grep -qs "listening" "$dir/coord3.log"
check "the lock file names the new holder" grep -q "^pid=$! " "$dir/camp/xqz.lock"
finish
