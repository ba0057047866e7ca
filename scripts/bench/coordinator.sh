#!/usr/bin/env bash
# coordinator.sh: coordinator ingest benchmark (issue 5). Starts xqz-coordinator (Release
# build in build-bench/) on a fresh temporary campaign and free loopback ports, with
# settings that do not pace the benchmark, then drives it with `xqz bench coordinator`:
# simulated workers stream valid game records (a window of unacknowledged records per
# socket), optionally a simulated trainer pulls batches. Prints positions/s acked
# (validated, fsync'd, acknowledged), batches/s, and the ratio to the goal of 100,000
# positions/s. Then, with the window full and the pacing lifted, the batch-serving rate
# (issue 18): a simulated trainer alone asks for batches of 256 as fast as they are served,
# with 1 and then 4 requests in flight, and once more beside 16 workers offering 1,000
# games/s; it prints samples/s served, the batch latency (request to Batch) p50 and p99,
# and the ratio to the goal of 200,000 samples/s. Stops the coordinator with SIGTERM and
# checks it exits 0.
#
# Usage: scripts/bench/coordinator.sh [SECONDS] [WORKER COUNTS...]   (default 20; 1 4 16)
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-20}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 4 16)
goal=100000
serve_goal=200000
inflight=${XQZ_BENCH_INFLIGHT:-256}
build="build-bench"

scripts/bootstrap.sh
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target xqz xqz-coordinator >/dev/null

tmp=$(mktemp -d /tmp/xqz-bench-coord-XXXXXX)
coord_pid=
# shellcheck disable=SC2317  # cleanup runs from the EXIT trap
cleanup() {
  if [ -n "$coord_pid" ] && kill -0 "$coord_pid" 2>/dev/null; then kill -9 "$coord_pid" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
router_port=$(free_port)
pub_port=$(free_port)
while [ "$pub_port" = "$router_port" ]; do pub_port=$(free_port); done
endpoint="tcp://127.0.0.1:$router_port"

"$build/coordinator/xqz-coordinator" --campaign "$tmp/camp" \
  --router "$endpoint" --pub "tcp://127.0.0.1:$pub_port" --http= \
  --window 200000 --min_positions 1000 --reuse 1000 --batch_size 8192 \
  --fsync_ms 50 --status_ms 1000 --max_plies 1000 --worker_timeout_ms 600000 \
  --heartbeat_ms 600000 2>"$tmp/coordinator.log" &
coord_pid=$!
for _ in $(seq 50); do
  grep -q "listening\|router" "$tmp/coordinator.log" 2>/dev/null && break
  sleep 0.1
done
sleep 0.5
kill -0 "$coord_pid" || { echo "coordinator.sh: coordinator failed:"; cat "$tmp/coordinator.log"; exit 1; }

results=()
run() { # label args...
  local label=$1; shift
  echo "== $label" >&2
  local line
  line=$("$build/tools/xqz" bench coordinator --endpoint "$endpoint" --seconds "$seconds" --inflight "$inflight" --json "$@")
  results+=("$label|$line")
}
for n in "${counts[@]}"; do run "workers $n" --workers "$n"; done
n_last=${counts[${#counts[@]}-1]}
run "workers $n_last + trainer" --workers "$n_last" --trainer --batch 256
serve=()
serve_run() { # label args...: the window is full now
  local label=$1; shift
  echo "== $label" >&2
  serve+=("$label|$("$build/tools/xqz" bench coordinator --endpoint "$endpoint" --seconds "$seconds" --trainer --batch 256 --json "$@")")
}
serve_run "trainer alone, 1 ahead" --workers 0 --prefetch 1
serve_run "trainer alone, 4 ahead" --workers 0 --prefetch 4
serve_run "trainer 2 ahead + 16 w" --workers 16 --rate 1000 --prefetch 2

kill -TERM "$coord_pid"
status=0
wait "$coord_pid" || status=$?
coord_pid=
if [ "$status" -ne 0 ]; then
  echo "coordinator.sh: coordinator exited $status on SIGTERM" >&2
  tail -n 20 "$tmp/coordinator.log" >&2
fi

echo
echo "coordinator ingest, $seconds s per run, $(date -u +%Y-%m-%d), $(nproc) cores"
printf '%-22s %10s %12s %9s %10s %8s\n' run records/s positions/s rejected batches/s "x goal"
best=0
for r in "${results[@]}"; do
  label=${r%%|*}; j=${r#*|}
  get() { sed -n "s/.*\"$1\":\([0-9.a-z]*\).*/\1/p" <<<"$j"; }
  rs=$(get records_per_s); ps=$(get positions_per_s); rj=$(get rejected); bs=$(get batches_per_s)
  awk -v l="$label" -v rs="$rs" -v ps="$ps" -v rj="$rj" -v bs="$bs" -v g="$goal" \
    'BEGIN { printf "%-22s %10.0f %12.0f %9d %10.2f %8.2f\n", l, rs, ps, rj, bs, ps / g }'
  best=$(awk -v a="$best" -v b="$ps" 'BEGIN { print (b > a) ? b : a }')
done
awk -v b="$best" -v g="$goal" 'BEGIN { printf "best: %.0f positions/s = %.2f x the goal of %d\n", b, b / g, g }'
echo
echo "batch serving (batches of 256, window full, pacing lifted), $seconds s per run"
printf '%-24s %12s %12s %10s %10s %8s\n' run samples/s positions/s "p50 ms" "p99 ms" "x goal"
for r in "${serve[@]}"; do
  label=${r%%|*}; j=${r#*|}
  get() { sed -n "s/.*\"$1\":\([0-9.a-z]*\).*/\1/p" <<<"$j"; }
  awk -v l="$label" -v s="$(get samples_per_s)" -v ps="$(get positions_per_s)" \
    -v p50="$(get batch_p50_ms)" -v p99="$(get batch_p99_ms)" -v g="$serve_goal" \
    'BEGIN { printf "%-24s %12.0f %12.0f %10.2f %10.2f %8.2f\n", l, s, ps, p50, p99, s / g }'
done
grep "status " "$tmp/coordinator.log" | tail -n 1 | sed "s/^/coordinator: /"
exit $status
