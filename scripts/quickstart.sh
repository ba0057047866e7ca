#!/usr/bin/env bash
# The README's first command: installs what is missing, builds xqzero (Release), checks
# the rules engine, then runs a complete local campaign on this machine: the coordinator,
# the trainer and one worker (tiny net, settings fit for a 2-core box) in
# campaigns/quickstart, with a progress line every few seconds. Ctrl-C stops every
# process cleanly; running the script again resumes the same campaign.
#
# usage: scripts/quickstart.sh [--minutes M] [--campaign DIR] [--port P] [--population K]
# (ports P and P+1 for the coordinator, P+25 for its dashboard: http://127.0.0.1:5580/;
# --population K: K trainers (2 to 16) evolve their settings, docs/population.md; a
# campaign keeps the population it was started with)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10 camp=campaigns/quickstart port=5555
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --campaign) camp=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --population) MEMBERS=$2; shift 2 ;;
    -h|--help) . scripts/lib/usage.sh; script_usage "$0"; exit 0 ;;
    *) echo "quickstart: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$minutes" in ''|*[!0-9]*) echo "quickstart: --minutes takes a whole number" >&2; exit 2 ;; esac
MEMBERS=${MEMBERS:-1}
case "$MEMBERS" in ''|*[!0-9]*) echo "quickstart: --population takes a whole number (2 to 16)" >&2; exit 2 ;; esac
if [ "$MEMBERS" -eq 1 ] || [ "$MEMBERS" -gt 16 ]; then
  echo "quickstart: --population is 2 to 16 trainers (0 or leave it out: one trainer)" >&2; exit 2
fi

scripts/bootstrap.sh
. scripts/lib/campaign.sh
BUILD=${XQZ_BUILD:-build}
echo "== building xqzero (Release) in $BUILD/"
xqz_build_release "$BUILD"
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
if [ -f "$camp/campaign.db" ]; then
  echo "== resuming the campaign in $camp/ for $minutes minutes (Ctrl-C stops it cleanly)"
else
  echo "== a new campaign in $camp/ for $minutes minutes (Ctrl-C stops it cleanly)"
fi
if [ "$MEMBERS" -ge 2 ]; then
  echo "   a population of $MEMBERS trainers; logs: $camp/coordinator.log, $camp/trainer-1.log .. trainer-$MEMBERS.log, $camp/worker.log"
  echo "   watch it: $XQZ population --coordinator tcp://127.0.0.1:$port"
else
  echo "   logs: $camp/coordinator.log, $camp/trainer.log, $camp/worker.log"
fi
echo "   dashboard: http://127.0.0.1:$((port + 25))/ (Prometheus metrics at /metrics)"
stop_all() {
  trap - INT TERM
  echo
  echo "== stopping (worker, trainer, then coordinator)"
  campaign_stop
  campaign_summary "$camp"
  echo "== run scripts/quickstart.sh again to resume; see docs/operations.md"
}
trap 'stop_all; exit 130' INT TERM
trap 'kill -TERM "${CAMPAIGN_PIDS[@]}" 2>/dev/null' EXIT

COORD_ARGS=()
TRAINER_ARGS=(--batch 128 --candidate-every 300 --checkpoint-every-s 60 --log-every 50)
WORKER_ARGS=(--threads "$(nproc)" --games-per-thread 16 --progress 30)
if ! campaign_start "$BUILD" "$camp" "$port"; then
  echo "quickstart: see $camp/coordinator.log" >&2
  exit 1
fi
end=$((SECONDS + minutes * 60))
while [ $SECONDS -lt $end ]; do
  sleep 10 & wait $!  # wait returns at once when a signal arrives
  if ! campaign_alive; then
    echo "quickstart: a process stopped unexpectedly; see the logs in $camp/" >&2
    stop_all
    exit 1
  fi
  campaign_progress "$camp"
done
stop_all
