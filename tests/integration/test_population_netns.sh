#!/usr/bin/env bash
# test_population_netns.sh BINDIR: a population of four trainers on two hosts, in two
# network namespaces joined by a veth pair (netns_lib.sh): the coordinator (population 4,
# no control member) and members 1 and 2 on 10.77.0.1, members 3 and 4 and a worker on
# 10.77.0.2. Every member gets its own slot; `xqz population` lists all four with their
# hosts; a round
# robin rates them; the worst copies the best (population.log and the copying member's log
# say so, and it continues from the donor's checkpoint); member 3, killed and started again,
# gets its slot back with its current settings; everything stops cleanly. Needs root (ip
# netns); exit 77 = skipped (a failure under CI=true).
set -u
. "$(dirname "$0")/../cli/lib.sh"
BIN=$(cd "$1" && pwd)
COORD=$BIN/coordinator/xqz-coordinator TRAINER=$BIN/trainer/xqz-trainer WORKER=$BIN/worker/xqz-worker
XQZ=$BIN/tools/xqz
. "$(dirname "$0")/netns_lib.sh"
netns_start
camp=$dir/camp addr=tcp://10.77.0.1:5555

ip netns exec "$nsA" "$COORD" --campaign "$camp" --router "$addr" --pub tcp://10.77.0.1:5556 \
  --trainer_addresses 10.77.0.1,10.77.0.2 --net_size tiny --sims 8 --fast_sims 4 --max_plies 40 \
  --games_per_job 2 --min_positions 100 --batch_size 32 --gating none --gating_sims 4 \
  --anchor_games 0 --fsync_ms 50 --status_ms 300 --worker_timeout_ms 3000 \
  --population 4 --population_control 0 --pbt_interval_steps 30 --pbt_round_games 2 \
  --pbt_share 0.5 --pbt_quantile 0.34 >"$dir/coord.log" 2>&1 &
coord=$!; pids+=("$coord")
check "the coordinator listens on its veth address" wait_for 10 grep -qs "listening router=$addr" "$dir/coord.log"
# member NS I: starts member I's trainer in namespace NS (its own directory).
declare -A member_pid
member() {
  OPENBLAS_NUM_THREADS=1 ip netns exec "$1" "$TRAINER" --coordinator "$addr" --dir "$dir/member-$2" \
    --size tiny --batch 32 --candidate-every 20 --log-every 5 --timeout-ms 2000 --threads 1 \
    >>"$dir/member-$2.log" 2>&1 &
  member_pid[$2]=$!; pids+=($!)
}
member "$nsA" 1
member "$nsA" 2
member "$nsB" 3
member "$nsB" 4
OPENBLAS_NUM_THREADS=1 ip netns exec "$nsB" "$WORKER" --coordinator "$addr" --id lab-w1 --threads 2 \
  --games-per-thread 2 --progress 2 --timeout 2000 --cache "$dir/cache" --spool "$dir/spool" \
  >"$dir/worker.log" 2>&1 &
pids+=($!); worker=$!

population_json() {
  ip netns exec "$nsA" "$XQZ" population --coordinator "$addr" --json >"$dir/pop.json" 2>"$dir/pop.err"
}
four_members() {
  population_json && python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
alive = [m for m in p["members"] if m.get("alive")]
sys.exit(0 if len(alive) == 4 and {m["host"].split(":")[0] for m in alive} >= {"10.77.0.1", "10.77.0.2"} else 1)' "$dir/pop.json"
}
check "four members hold four slots, on both hosts" wait_for 30 four_members
four_members || cat "$dir/pop.json"
slot_of() { sed -n 's/.*member slot=\([0-9]*\).*/\1/p' "$dir/member-$1.log" | tail -1; }
s1=$(slot_of 1) s2=$(slot_of 2) s3=$(slot_of 3) s4=$(slot_of 4)
echo "slots: member 1 -> ${s1:-?}, member 2 -> ${s2:-?}, member 3 -> ${s3:-?}, member 4 -> ${s4:-?}"
check "each member was told a different slot" bash -c "[ -n '$s1$s2$s3$s4' ] && [ \$(printf '%s\n' '$s1' '$s2' '$s3' '$s4' | sort -u | wc -l) -eq 4 ]"
ip netns exec "$nsA" "$XQZ" population --coordinator "$addr" >"$dir/pop.txt" 2>&1
check "xqz population prints the table" grep -q "10.77.0.2" "$dir/pop.txt"

check "a round robin rates the members (population.log)" \
  wait_for 120 grep -qs '"type":"rating"' "$camp/population.log"
check "the worst member copies a better one (population.log)" \
  wait_for 20 grep -qs '"type":"exploit"' "$camp/population.log"
copier=$(sed -n 's/.*"type":"exploit".*"member":\([0-9]*\).*/\1/p' "$camp/population.log" | head -1)
copied_in_log() { grep -qs "member copied" "$dir"/member-*.log; }
check "the copying member (slot ${copier:-?}) continues from the donor's checkpoint" wait_for 30 copied_in_log

# Member 3 dies and comes back: the same slot, with its settings.
kill -KILL "${member_pid[3]}"; wait "${member_pid[3]}" 2>/dev/null
mark=$(wc -l <"$dir/member-3.log")
member "$nsB" 3
back_in_slot() { tail -n +$((mark + 1)) "$dir/member-3.log" | grep -q "member slot=$s3 "; }
check "member 3, restarted, gets its slot ($s3) back" wait_for 20 back_in_slot

kill -TERM "$worker"; wait "$worker"
for i in 1 2 3 4; do kill -TERM "${member_pid[$i]}"; done
for i in 1 2 3 4; do
  wait "${member_pid[$i]}"; rc=$?
  check "member $i stops cleanly" test "$rc" -eq 0
done
kill -TERM "$coord"; wait "$coord"; rc=$?
check "the coordinator stops cleanly" test "$rc" -eq 0
pids=()
check "members.txt holds the four slots' lineage" grep -q "^slot 3 " "$camp/members.txt"
finish
