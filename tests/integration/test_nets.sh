#!/usr/bin/env bash
# test_nets.sh BINDIR: a live campaign's nets/ stays readable. A coordinator with a
#   threshold gate that promotes only a candidate winning every game (threshold_score 1,
#   so most are rejected), a trainer uploading candidates and a worker playing the matches:
#   after decisions of both kinds, every rejected candidate is in nets/rejected/ and no
#   longer in nets/, every promoted net is in nets/, nets/best.xqzn links to the last
#   promoted net (net 1 while none is), and xqz play --campaign finds that file.
set -u
. "$(dirname "$0")/../cli/lib.sh"
BIN=$(cd "$1" && pwd)
COORD=$BIN/coordinator/xqz-coordinator TRAINER=$BIN/trainer/xqz-trainer WORKER=$BIN/worker/xqz-worker
XQZ=$BIN/tools/xqz
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
export OPENBLAS_NUM_THREADS=1
camp=$dir/camp
port=$(free_port)
router=tcp://127.0.0.1:$port
"$COORD" --campaign "$camp" --router "$router" --pub "tcp://127.0.0.1:$((port + 1))" --http "" --net_size tiny \
  --min_positions 100 --sims 8 --fast_sims 2 --max_plies 60 --games_per_job 2 --fsync_ms 50 \
  --gating threshold --threshold_games 2 --threshold_score 1 --gating_sims 4 --batch_size 16 \
  >"$dir/coord.log" 2>&1 &
pids+=($!)
check "the coordinator listens" wait_for 20 grep -q "listening" "$dir/coord.log"
check "nets/best.xqzn links to net 1 from the start" \
  bash -c "[ \"\$(readlink '$camp/nets/best.xqzn')\" = \"\$(grep -o '\"net\":\"[0-9a-f]*' '$camp/promotions.log' | head -1 | cut -d'\"' -f4).xqzn\" ]"
"$TRAINER" --coordinator "$router" --dir "$dir/trainer" --size tiny --batch 16 \
  --candidate-every 10 --checkpoint-every-s 60 --log-every 5 >"$dir/trainer.log" 2>&1 &
pids+=($!)
"$WORKER" --coordinator "$router" --id nets-w1 --games-per-thread 2 --cache "$dir/w.cache" \
  --spool "$dir/w.spool" --timeout 3000 >"$dir/worker.log" 2>&1 &
pids+=($!)
check "candidates are rejected" wait_for 120 bash -c "[ \$(grep -c '\"promoted\":false' '$camp/promotions.log') -ge 2 ]"
kill -TERM "${pids[@]:1}" 2>/dev/null  # trainer and worker: no new decisions from here on
sleep 1
ids() { grep "\"promoted\":$1" "$camp/promotions.log" | sed 's/.*"net":"\([0-9a-f]*\)".*/\1/'; }
files_filed() {
  local n
  for n in $(ids false); do
    [ -f "$camp/nets/rejected/$n.xqzn" ] && [ ! -e "$camp/nets/$n.xqzn" ] || return 1
  done
  for n in $(ids true); do [ -f "$camp/nets/$n.xqzn" ] || return 1; done
}
check "rejected candidates are in nets/rejected/, promoted nets in nets/" wait_for 10 files_filed
check "nets/best.xqzn links to the last promoted net" \
  bash -c "[ \"\$(readlink '$camp/nets/best.xqzn')\" = '$(ids true | tail -1).xqzn' ]"
echo quit | "$XQZ" play --campaign "$camp" --sims 2 >"$dir/play.log" 2>&1
check "xqz play --campaign plays that net" \
  grep -q "The best net of campaign $camp: .*/nets/$(ids true | tail -1).xqzn" "$dir/play.log"
finish
