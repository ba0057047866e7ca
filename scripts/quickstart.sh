#!/usr/bin/env bash
# The README's first command: installs what is missing, builds xqzero (Release), checks
# the rules engine, then runs a complete local campaign on this machine: the coordinator,
# the trainer and one worker (tiny net, settings fit for a 2-core box) in
# campaigns/quickstart, with a progress line every few seconds. Ctrl-C stops every
# process cleanly; running the script again resumes the same campaign.
#
# usage: scripts/quickstart.sh [--minutes M] [--campaign DIR] [--port P]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10 camp=campaigns/quickstart port=5555
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --campaign) camp=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "quickstart: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$minutes" in ''|*[!0-9]*) echo "quickstart: --minutes takes a whole number" >&2; exit 2 ;; esac

scripts/bootstrap.sh
BUILD=${XQZ_BUILD:-build}
JOBS=$(nproc 2>/dev/null || echo 2)
echo "== building xqzero (Release) in $BUILD/"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" >/dev/null
XQZ="$BUILD/tools/xqz"

echo "== rules check: perft of the start position against the known counts"
expected=(0 44 1920 79666 3290240 133312995)
for d in 1 2 3 4 5; do
  got=$("$XQZ" perft startpos "$d" 2>"$BUILD/perft.err")
  printf 'depth %d: %10s   %s\n' "$d" "$got" "$(sed 's/^perft [0-9]*: [0-9]* nodes in /in /' "$BUILD/perft.err")"
  if [ "$got" != "${expected[$d]}" ]; then
    echo "quickstart: perft $d is $got, expected ${expected[$d]}: the rules are broken" >&2
    exit 1
  fi
done

# From here on a failing command must not end the script with the daemons left running:
# errors are handled where they matter, and every exit path stops the processes.
set +e +o pipefail
mkdir -p "$camp"
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
if [ -f "$camp/campaign.db" ]; then
  echo "== resuming the campaign in $camp/ for $minutes minutes (Ctrl-C stops it cleanly)"
else
  echo "== a new campaign in $camp/ for $minutes minutes (Ctrl-C stops it cleanly)"
fi
echo "   logs: $camp/coordinator.log, $camp/trainer.log, $camp/worker.log"
pids=()
stop_all() {
  trap - INT TERM
  echo
  echo "== stopping (worker, trainer, then coordinator)"
  local p
  for p in "${pids[@]:2}" "${pids[1]:-}" "${pids[0]:-}"; do
    [ -n "$p" ] || continue
    kill -TERM "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  echo "== promotions ($camp/promotions.log):"
  grep -c '"promoted":true' "$camp/promotions.log" 2>/dev/null | sed 's/^/   nets promoted so far: /'
  tail -3 "$camp/promotions.log" 2>/dev/null | sed 's/^/   /'
  echo "== run scripts/quickstart.sh again to resume; see docs/operations.md"
}
trap 'stop_all; exit 130' INT TERM
trap 'kill -TERM "${pids[@]}" 2>/dev/null' EXIT

"$BUILD/coordinator/xqz-coordinator" --campaign "$camp" --router "$router" --pub "$pub" \
  --status_ms 5000 >>"$camp/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q "listening" "$camp/coordinator.log" 2>/dev/null && break; sleep 0.2; done
if ! kill -0 "${pids[0]}" 2>/dev/null; then
  echo "quickstart: the coordinator did not start:" >&2
  tail -5 "$camp/coordinator.log" >&2
  exit 1
fi
"$BUILD/trainer/xqz-trainer" --coordinator "$router" --dir "$camp/trainer" \
  --batch 128 --candidate-every 300 --checkpoint-every-s 60 --log-every 50 \
  >>"$camp/trainer.log" 2>&1 &
pids+=($!)
"$BUILD/worker/xqz-worker" --coordinator "$router" --threads 1 --games-per-thread 16 \
  --cache "$camp/worker-cache" --spool "$camp/worker-spool" --progress 30 \
  >>"$camp/worker.log" 2>&1 &
pids+=($!)

field() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }
end=$((SECONDS + minutes * 60))
last_pos=0 last_t=$SECONDS
while [ $SECONDS -lt $end ]; do
  sleep 10 & wait $!  # wait returns at once when a signal arrives
  for p in "${pids[@]}"; do
    if ! kill -0 "$p" 2>/dev/null; then
      echo "quickstart: a process stopped unexpectedly; see the logs in $camp/" >&2
      stop_all
      exit 1
    fi
  done
  st=$(grep " status " "$camp/coordinator.log" | tail -1)
  tr=$(grep "training step=" "$camp/trainer.log" | tail -1)
  pos=$(field positions <<<"$st"); pos=${pos:-0}
  rate=$(( (pos - last_pos) / (SECONDS - last_t > 0 ? SECONDS - last_t : 1) ))
  [ "$last_pos" -eq 0 ] && rate="-"
  last_pos=$pos last_t=$SECONDS
  gating=$(sed -n 's/.*gating="\([^"]*\)".*/\1/p' <<<"$st")
  printf '[%3dm%02ds] games %s  positions %s (%s/s)  trainer step %s  loss %s  best %s  gating: %s\n' \
    $((SECONDS / 60)) $((SECONDS % 60)) "$(field games <<<"$st")" "$pos" "$rate" \
    "$(field trainer_step <<<"$st")" "$(field loss <<<"$tr")" "$(field best <<<"$st")" "${gating:-none yet}"
done
stop_all
