#!/usr/bin/env bash
# jobsize.sh: self-play throughput against the coordinator's games_per_job, as one worker
# plays it. A worker plays a job's games at once (at most threads x games-per-thread of
# them) and asks for the next job when the last game ends, so the slots empty one by one
# while the longest game finishes. Each row plays the same number of games as a run of
# jobs of one size, on the same net, and prints plies/s and the ratio to the first size
# (the reference, measured in the same invocation); rounds alternate the sizes.
#
# usage: scripts/bench/jobsize.sh [--net FILE] [--sizes "16 32 64"] [--games N] [--rounds R]
#                                 [--threads T] [--games-per-thread G]
#   --net FILE            the net to play (default: a fresh tiny net; a trained net, e.g. a
#                         learning run's last, gives realistic game lengths)
#   --sizes LIST          job sizes; the first is the reference (default "16 32 64")
#   --games N             games per row, a multiple of every size (default 128)
#   --rounds R            alternating rounds; each row keeps its best (default 2)
#   --threads T           worker threads (default: one per core)
#   --games-per-thread G  the worker's slots per thread (default 32, the worker's default)
#   Self-play settings are the coordinator's defaults: sims 64, fast_sims 16, full_frac 0.25,
#   max_plies 300. Environment: XQZ, the xqz binary (default: a Release build in build-bench/).
set -euo pipefail
cd "$(dirname "$0")/../.."

net="" sizes="16 32 64" games=128 rounds=2 threads=$(nproc) gpt=32
while [ $# -gt 0 ]; do
  case "$1" in
    --net) net=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --games-per-thread) gpt=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "jobsize.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in $sizes "$games" "$rounds" "$threads" "$gpt"; do
  case "$v" in ''|*[!0-9]*|0) echo "jobsize.sh: numbers must be positive whole numbers, not '$v'" >&2; exit 2 ;; esac
done
for s in $sizes; do
  [ $((games % s)) -eq 0 ] || { echo "jobsize.sh: --games $games is not a multiple of size $s" >&2; exit 2; }
done
[ -z "$net" ] || [ -f "$net" ] || { echo "jobsize.sh: no net file '$net'" >&2; exit 2; }

# shellcheck source=scripts/lib/campaign.sh
. scripts/lib/campaign.sh
bench_xqz .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$net" ]; then
  net=$tmp/fresh.xqzn
  "$XQZ" net init --size tiny --out "$net" >/dev/null
  label="a fresh tiny net"
else
  label=$net
fi

slots=$((threads * gpt))
echo "== self-play by job size: $games games per row, $threads threads x $gpt slots, net $label"
seed=1
for r in $(seq 1 "$rounds"); do
  for s in $sizes; do
    played=$s
    [ "$played" -le "$slots" ] || played=$slots
    jobs=$((games / s))
    : >"$tmp/round"
    start=$(date +%s.%N)
    for _ in $(seq 1 "$jobs"); do
      seed=$((seed + 1))
      "$XQZ" selfplay --net "$net" --games "$played" --threads "$threads" --parallel "$gpt" \
        --sims 64 --fast-sims 16 --full-frac 0.25 --max-plies 300 --seed "$seed" \
        --out "$tmp/games.bin" --force 2>/dev/null | tail -n 1 >>"$tmp/round"
    done
    end=$(date +%s.%N)
    python3 - "$s" "$start" "$end" "$tmp/round" >>"$tmp/rows" <<'EOF'
import json, sys
size, start, end, path = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
recs = [json.loads(l) for l in open(path) if l.strip()]
print(size, sum(r["plies"] for r in recs), sum(r["games"] for r in recs), end - start)
EOF
    echo "   round $r, size $s: $(tail -n 1 "$tmp/rows" | awk '{printf "%d plies in %.1f s", $2, $4}')"
  done
done
python3 - "$tmp/rows" "$sizes" <<'EOF'
import sys
rows, order = sys.argv[1], [int(s) for s in sys.argv[2].split()]
best = {}
for line in open(rows):
    size, plies, games, secs = line.split()
    rate = int(plies) / float(secs)
    best[int(size)] = max(best.get(int(size), 0.0), rate)
ref = best[order[0]]
print(f"{'job size':>8} {'plies/s':>9} {'ratio':>7}   (best of the rounds; wall time, jobs run one after another)")
for s in order:
    print(f"{s:>8} {best[s]:>9.1f} {best[s] / ref:>6.2f}x")
EOF
