#!/usr/bin/env bash
# lab.sh: the balance of self-play against training on one box (issue 18). A real
# xqz-coordinator on a fresh campaign in a temporary directory (a small window, short
# balance settings), the real xqz-trainer (--threads as given, a tiny net by default), and
# simulated workers: `xqz bench coordinator` replays recorded real games over many DEALER
# connections at an offered rate in positions/s that steps up. The games come from a
# campaign's segment files (--records DIR) or, without one, from `xqz selfplay` on a fresh
# net of the same size, played first. For each step it prints the achieved ingest
# (positions/s acked), the samples trained/s (the trainer's steps x batch), the achieved
# reuse and the balance state (`xqz status --json`), whether the trainer-bound warning was
# logged, the ack latency p50/p99 (send to Ack), the batch latency p50/p99 (a probe trainer
# socket asking for one batch of 256 a second beside the real trainer) and the CPU share
# of the coordinator and the trainer (/proc/PID/stat; 100% = one core).
#
# usage: scripts/bench/lab.sh [--threads N] [--size tiny|default|large|BxC]
#          [--steps P1,P2,...] [--step-s S] [--connections C] [--reuse R] [--window W]
#          [--records CAMPAIGN_DIR|FILE.xqzg] [--games G] [--keep]
#   --threads      trainer threads (default: nproc)
#   --steps        offered positions/s (default 500,1000,2000,3000,4000,6000,8000)
#   --step-s       seconds per step (default 30; the balance span is 2/3 of it and the
#                  trainer-bound warning needs 1/3 of it below R/2; below about 20 s the
#                  trainer's own start, at min_positions, can show as trainer-bound in
#                  the first step)
#   --connections  simulated worker connections (default 64)
#   --games        games to record when no --records is given (default 300)
#   --keep         keep the temporary directory (logs, campaign) and print its path
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { echo "lab.sh: $*" >&2; exit 2; }
threads=$(nproc) size=tiny steps=500,1000,2000,3000,4000,6000,8000 step_s=30 conns=64 reuse=4
window=20000 records="" games=300 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --threads|--size|--steps|--step-s|--connections|--reuse|--window|--records|--games)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --threads) threads=$2 ;; --size) size=$2 ;; --steps) steps=$2 ;;
        --step-s) step_s=$2 ;; --connections) conns=$2 ;; --reuse) reuse=$2 ;;
        --window) window=$2 ;; --records) records=$2 ;; --games) games=$2 ;;
      esac
      shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/--keep /p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
done
case "$steps" in ''|*[!0-9,]*) die "--steps wants positions/s like 500,1000,2000" ;; esac
for v in "$threads" "$step_s" "$conns" "$window" "$games"; do
  case "$v" in ''|*[!0-9]*) die "'$v' is not a whole number (--threads, --step-s, --connections, --window, --games)" ;; esac
done
[ "$step_s" -ge 6 ] || die "--step-s $step_s is too short for the balance span; give 6 or more"
[ -z "$records" ] || [ -e "$records" ] || die "--records $records: no such campaign directory or file"

load0=$(cut -d' ' -f1-3 /proc/loadavg)
scripts/bootstrap.sh --build-only
build="build-bench"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target xqz xqz-coordinator xqz-trainer >/dev/null
xqz=$build/tools/xqz

tmp=$(mktemp -d /tmp/xqz-bench-lab-XXXXXX)
coord_pid="" trainer_pid="" bench_pid=""
# shellcheck disable=SC2317  # cleanup runs from the EXIT trap
cleanup() {
  for p in "$bench_pid" "$trainer_pid" "$coord_pid"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; fi
  done
  if [ "$keep" = 1 ]; then echo "lab.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
router_port=$(free_port)
pub_port=$(free_port)
while [ "$pub_port" = "$router_port" ]; do pub_port=$(free_port); done
endpoint="tcp://127.0.0.1:$router_port"

if [ -z "$records" ]; then
  echo "recording $games self-play games on a fresh $size net (xqz selfplay)" >&2
  "$xqz" net init --size "$size" --out "$tmp/start.xqzn" >/dev/null
  OPENBLAS_NUM_THREADS=1 "$xqz" selfplay --net "$tmp/start.xqzn" --games "$games" \
    --out "$tmp/games.xqzg" --threads "$(nproc)" --parallel 32 --sims 16 --fast-sims 4 \
    --full-frac 0.25 --max-plies 200 >"$tmp/selfplay.json" 2>"$tmp/selfplay.err"
  records=$tmp/games.xqzg
fi

span=$((step_s * 2 / 3)) warn=$((step_s / 3))
"$build/coordinator/xqz-coordinator" --campaign "$tmp/camp" --net_size "$size" \
  --router "$endpoint" --pub "tcp://127.0.0.1:$pub_port" --http= \
  --window "$window" --min_positions 2000 --reuse "$reuse" --batch_size 256 \
  --balance_window_s "$span" --balance_warn_s "$warn" --status_ms 60000 \
  2>"$tmp/coordinator.log" &
coord_pid=$!
for _ in $(seq 50); do
  "$xqz" status --coordinator "$endpoint" --json >/dev/null 2>&1 && break
  sleep 0.2
done
kill -0 "$coord_pid" 2>/dev/null || { cat "$tmp/coordinator.log" >&2; die "the coordinator did not start"; }

OPENBLAS_NUM_THREADS=1 "$build/trainer/xqz-trainer" --coordinator "$endpoint" \
  --dir "$tmp/trainer" --size "$size" --threads "$threads" --batch 256 \
  --candidate-every 1000000000 --log-every 5 2>"$tmp/trainer.log" &
trainer_pid=$!

cpu_ticks() { # utime + stime of PID, in clock ticks
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
trainer_step() { # the trainer's last logged step (0 before its first)
  local s
  s=$({ grep -o 'training step=[0-9]*' "$tmp/trainer.log" || true; } | tail -n 1 | sed 's/.*=//')
  echo "${s:-0}"
}
warnings() { grep -c "balance campaign is trainer-bound" "$tmp/coordinator.log" || true; }
hz=$(getconf CLK_TCK)

rows=()
for rate in ${steps//,/ }; do
  echo "== offered $rate positions/s for $step_s s" >&2
  t0=$(date +%s.%N) c0=$(cpu_ticks "$coord_pid") tr0=$(cpu_ticks "$trainer_pid") s0=$(trainer_step)
  w0=$(warnings)
  "$xqz" bench coordinator --endpoint "$endpoint" --records "$records" --workers "$conns" \
    --inflight 16 --position-rate "$rate" --seconds "$step_s" --trainer --trainer-rate 1 \
    --batch 256 --json >"$tmp/step-$rate.json" 2>"$tmp/step-$rate.err" &
  bench_pid=$!
  sleep "$((step_s - 1))"
  "$xqz" status --coordinator "$endpoint" --json >"$tmp/status-$rate.json"
  wait "$bench_pid" || { tail -n 5 "$tmp/step-$rate.err" >&2; die "the simulated workers failed at $rate positions/s"; }
  bench_pid=""
  t1=$(date +%s.%N) c1=$(cpu_ticks "$coord_pid") tr1=$(cpu_ticks "$trainer_pid") s1=$(trainer_step)
  w1=$(warnings)
  kill -0 "$trainer_pid" 2>/dev/null || { tail -n 5 "$tmp/trainer.log" >&2; die "the trainer exited"; }
  rows+=("$(python3 - "$tmp/step-$rate.json" "$tmp/status-$rate.json" "$rate" "$t0" "$t1" \
    "$c0" "$c1" "$tr0" "$tr1" "$s0" "$s1" "$w0" "$w1" "$hz" <<'PY'
import json, sys
a = sys.argv
bench, st = json.load(open(a[1])), json.load(open(a[2]))["balance"]
rate, t0, t1, c0, c1, r0, r1, s0, s1, w0, w1, hz = a[3], *map(float, a[4:])
dt = t1 - t0
lat = lambda k: f"{bench[k]:8.1f}" if bench["batches"] else f"{'-':>8}"
print(f"{rate:>8} {bench['positions_per_s']:8.0f} {(s1 - s0) * 256 / dt:9.0f} "
      f"{st['reuse']:6.2f} {st['state']:>13} {'yes' if w1 > w0 else '-':>5} "
      f"{bench['ack_p50_ms']:8.1f} {bench['ack_p99_ms']:8.1f} {lat('batch_p50_ms')} "
      f"{lat('batch_p99_ms')} {100 * (c1 - c0) / hz / dt:6.0f}% {100 * (r1 - r0) / hz / dt:6.0f}%")
PY
)")
  echo "${rows[${#rows[@]}-1]}" >&2
done

kill -TERM "$trainer_pid" 2>/dev/null || true
wait "$trainer_pid" 2>/dev/null || true
trainer_pid=""
kill -TERM "$coord_pid"
status=0
wait "$coord_pid" || status=$?
coord_pid=""
[ "$status" -eq 0 ] || { tail -n 20 "$tmp/coordinator.log" >&2; echo "lab.sh: coordinator exited $status on SIGTERM" >&2; }

echo
echo "lab balance, $(date -u +%Y-%m-%d), $(nproc) cores, load average $load0 at the start," \
  "$(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "trainer: --threads $threads --size $size, batch 256; coordinator: window $window," \
  "reuse R = $reuse, balance_window_s $span, balance_warn_s $warn; $conns connections," \
  "$step_s s per step; records: $(python3 -c 'import os,sys; print(os.path.basename(sys.argv[1]))' "$records")"
printf '%8s %8s %9s %6s %13s %5s %8s %8s %8s %8s %7s %7s\n' offered ingest trained reuse \
  state warn "ack p50" "ack p99" "bat p50" "bat p99" coord trainer
printf '%8s %8s %9s %6s %13s %5s %8s %8s %8s %8s %7s %7s\n' pos/s pos/s samples/s "" "" "" \
  ms ms ms ms CPU CPU
printf '%s\n' "${rows[@]}"
grep "balance campaign is trainer-bound\|balance no longer trainer-bound" "$tmp/coordinator.log" |
  sed 's/^/coordinator: /' || true
exit "$status"
