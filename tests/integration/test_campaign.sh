#!/usr/bin/env bash
# test_campaign.sh BINDIR: the whole loop on loopback, then its faults.
#   coordinator + trainer + two workers (tiny net, few simulations, gating that decides
#   fast): games flow and are acked, the trainer steps, a candidate is gated and promoted,
#   the promotion reaches both workers, promotions.log and the database agree, net 1 is
#   measured against the anchors (greedy, alphabeta:1) on the workers. Then:
#   kill -9 a worker (the other goes on), kill -9 the coordinator and restart it (same
#   best net, window rebuilt from what was acked, workers reconnect), kill -9 the trainer
#   and restart it (resumes at its checkpoint step), a torn last segment record (dropped,
#   the rest loads).
set -u
. "$(dirname "$0")/../cli/lib.sh"
BIN=$1
COORD=$BIN/coordinator/xqz-coordinator TRAINER=$BIN/trainer/xqz-trainer WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
port=$((20000 + RANDOM % 12000)) # below Linux's ephemeral ports (32768-60999)
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
camp=$dir/camp
coord_args=(--campaign "$camp" --router "$router" --pub "$pub" --http= --net_size tiny --min_positions 150
            --sims 16 --fast_sims 4 --max_plies 80 --games_per_job 4 --fsync_ms 50
            --status_ms 500 --gating threshold --threshold_games 4 --threshold_score 0
            --gating_sims 8 --batch_size 32 --anchor_games 2)
start_coord() { "$COORD" "${coord_args[@]}" >>"$dir/coord.log" 2>&1 & coord=$!; pids+=("$coord"); }
start_trainer() {
  "$TRAINER" --coordinator "$router" --dir "$dir/trainer" --size tiny --batch 32 \
    --candidate-every 25 --checkpoint-every-s 1 --log-every 5 >>"$dir/trainer.log" 2>&1 &
  trainer=$!; pids+=("$trainer")
}
start_worker() { # start_worker NAME
  "$WORKER" --coordinator "$router" --id "$1" --games-per-thread 4 --progress 1 \
    --cache "$dir/$1.cache" --spool "$dir/$1.spool" --timeout 3000 >>"$dir/$1.log" 2>&1 &
  eval "$1=$!"; pids+=("$!")
}
last_status() { grep " status " "$dir/coord.log" | tail -1; }
status_field() { last_status | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
promoted_count() { grep -c '"promoted":true' "$camp/promotions.log" 2>/dev/null || echo 0; }

start_coord
wait_for 10 test -f "$camp/promotions.log"
check "coordinator creates the campaign" test -f "$camp/campaign.db"
start_trainer
start_worker w1
start_worker w2
check "games flow and are acknowledged" wait_for 60 bash -c "[ \"\$(grep ' status ' '$dir/coord.log' | tail -1 | sed -n 's/.* games=\([0-9]*\).*/\1/p')\" -ge 8 ] 2>/dev/null"
check "the trainer steps" wait_for 90 grep -q "training step=" "$dir/trainer.log"
check "a candidate is promoted" wait_for 120 bash -c "[ \$(grep -c '\"promoted\":true' '$camp/promotions.log') -ge 2 ]"
check "the workers measure net 1 against greedy and alphabeta:1" wait_for 120 bash -c \
  "grep -q '\"anchor\":\"greedy\"' '$camp/anchors.log' && grep -q '\"anchor\":\"alphabeta:1\"' '$camp/anchors.log'"
check "the status line shows the strength against the anchors" wait_for 20 bash -c \
  "grep ' status ' '$dir/coord.log' | tail -1 | grep -q 'anchors=\"[0-9]*% vs greedy, [0-9]*% vs alphabeta:1\"'"
# A worker switches at game boundaries to the newest net, so it may skip some promotions:
# each must end up playing with one of the promoted nets (not the first).
plays_promoted() { # plays_promoted WORKER_LOG
  local n
  for n in $(grep '"promoted":true' "$camp/promotions.log" | grep -v '"first":true' |
             sed 's/.*"net":"\([0-9a-f]*\)".*/\1/'); do
    grep -q "playing with net net=$n" "$1" && return 0
  done
  return 1
}
check "the promotion reaches worker 1" wait_for 60 plays_promoted "$dir/w1.log"
check "the promotion reaches worker 2" wait_for 60 plays_promoted "$dir/w2.log"
db_promotions=$(sqlite3 "$camp/campaign.db" "select count(*) from promotions")
check "promotions.log and the database agree" test "$db_promotions" = "$(promoted_count)"
# nets/best.xqzn follows the promotions (read until the log and the link agree: a
# promotion may land between the two reads).
best_link_follows() {
  local last
  last=$(grep '"promoted":true' "$camp/promotions.log" | tail -1 | sed 's/.*"net":"\([0-9a-f]*\)".*/\1/')
  [ "$(readlink "$camp/nets/best.xqzn")" = "$last.xqzn" ]
}
check "nets/best.xqzn links to the last promoted net" wait_for 10 best_link_follows
check "no game was rejected" test "$(status_field rejected)" = "0"

# Faults. A worker killed mid-game: the other goes on.
kill -9 "$w2"
g0=$(status_field games)
check "worker 1 goes on after worker 2 is killed" wait_for 60 bash -c "[ \"\$(grep ' status ' '$dir/coord.log' | tail -1 | sed -n 's/.* games=\([0-9]*\).*/\1/p')\" -gt $g0 ]"

# The coordinator killed and restarted: same best net, window = what was acked.
kill -9 "$coord"; wait "$coord" 2>/dev/null
# The best net is the last one promotions.log names (written before the database): a
# status line read before the kill can predate a promotion made just before it.
best_before=$(grep '"promoted":true' "$camp/promotions.log" | tail -1 | sed 's/.*"net":"\([0-9a-f]*\)".*/\1/')
games_before=$(status_field games) # acked games at the last status line before the kill
cp "$dir/coord.log" "$dir/coord.log.before"; : >"$dir/coord.log"
start_coord
check "the window is rebuilt from every acked game" wait_for 20 bash -c "[ \"\$(sed -n 's/.*window rebuilt games=\([0-9]*\).*/\1/p' '$dir/coord.log')\" -ge $games_before ] 2>/dev/null"
check "restarted coordinator resumes the campaign" wait_for 20 grep -q "resumed best=$best_before" "$dir/coord.log"
check "restarted coordinator keeps the best net" wait_for 20 bash -c "grep ' status ' '$dir/coord.log' | tail -1 | grep -q 'best=$best_before'"
check "worker 1 reconnects and games flow again" wait_for 60 bash -c "[ \"\$(grep ' status ' '$dir/coord.log' | tail -1 | sed -n 's/.* games=\([0-9]*\).*/\1/p')\" -gt $g0 ]"

# The trainer killed and restarted: resumes at its checkpoint step.
sleep 2
kill -9 "$trainer"; wait "$trainer" 2>/dev/null
ck=$(grep "checkpoint written" "$dir/trainer.log" | tail -1 | sed -n 's/.* step=\([0-9]*\).*/\1/p')
start_trainer
check "restarted trainer resumes at its checkpoint" wait_for 20 grep -q "resumed from checkpoint .* step=$ck " "$dir/trainer.log"

# Clean stop, then a torn last record: the coordinator drops it and loads the rest.
for p in "$w1" "$trainer" "$coord"; do kill -TERM "$p"; done
for p in "$w1" "$trainer" "$coord"; do wait "$p"; rc=$?; check "clean exit on SIGTERM (pid $p)" test "$rc" -eq 0; done
pids=()
seg=$(ls "$camp"/games/seg-*.bin | tail -1)
size=$(stat -c %s "$seg")
truncate -s $((size - 7)) "$seg"
: >"$dir/coord.log"
start_coord
check "coordinator restarts on a torn segment" wait_for 20 grep -q " status " "$dir/coord.log"
check "the torn record is reported" grep -qi "torn\|truncat" "$dir/coord.log"
kill -TERM "$coord"; wait "$coord"
pids=()
finish
