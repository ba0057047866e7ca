#!/usr/bin/env bash
# precision_learning.sh: does low-precision self-play become strength? Two fresh learning
# runs (scripts/bench/learning.sh, the default campaign) side by side for M minutes, each
# pinned to its own core with taskset: arm A's worker plays self-play in fp32, arm B's in
# the path `--precision auto` picks on this CPU (bf16 where it has AVX512-BF16). Both arms
# start at the same second and see the same box, so the only difference is the worker's
# precision (gating and anchor games are played at the coordinator's arena_precision, fp32
# by default, in both). Then, at each checkpoint minute, the newest net each arm had
# promoted by that minute plays the other's, N games on paired four-ply openings with
# colours swapped, both in fp32 (the nets are compared, not the arithmetic), and a report
# gives each arm's games, trainer steps and promotions with the matches' Elo intervals.
#
# usage: scripts/bench/precision_learning.sh [--minutes M] [--games N] [--sims S]
#          [--at "MIN ..."] [--b PRECISION] [--out DIR] [--port P] [--report-only DIR]
#   --minutes M    length of both runs (default 60)
#   --games N      games of each head-to-head match, even (default 400)
#   --sims S       simulations per move in the matches (default 200, no noise)
#   --at "M1 M2"   checkpoint minutes (default: M/2 and M)
#   --b P          arm B's worker precision (default auto; bf16 to insist)
#   --out DIR      run directory (default bench-runs/precision-learning-YYYYmmdd-HHMMSS)
#   --port P       arm A's ports (P, P+1, P+25); arm B's are P+100... (default 5955)
#   --report-only DIR  skip the runs: play the matches and report an existing directory
# A timed comparison: run it on an otherwise idle box with at least two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "precision_learning.sh: $*" >&2; exit 2; }

minutes=60 games=400 sims=200 at="" b=auto out="" port=5955 report_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --minutes|--games|--sims|--at|--b|--out|--port|--report-only)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --minutes) minutes=$2 ;; --games) games=$2 ;; --sims) sims=$2 ;; --at) at=$2 ;;
        --b) b=$2 ;; --out) out=$2 ;; --port) port=$2 ;; --report-only) report_only=$2 ;;
      esac
      shift 2 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
for v in "$minutes" "$games" "$sims" "$port"; do
  case "$v" in ''|*[!0-9]*) die "numbers must be whole numbers, not '$v'" ;; esac
done
if [ $((games % 2)) -ne 0 ] || [ "$games" -eq 0 ]; then
  die "--games must be even and positive (pairs, colours swapped)"
fi
case "$b" in auto|fp32|bf16) ;; *) die "--b is auto, fp32 or bf16, not '$b'" ;; esac
at=${at:-"$((minutes / 2)) $minutes"}
command -v taskset >/dev/null || die "taskset (util-linux) is missing"
[ "$(nproc)" -ge 2 ] || die "needs two cores, one an arm; this box has $(nproc)"

scripts/bootstrap.sh
. scripts/lib/campaign.sh
BUILD="build-bench"
echo "== building xqzero (Release) in $BUILD/"
xqz_build_release "$BUILD"
XQZ=$PWD/$BUILD/tools/xqz

if [ -n "$report_only" ]; then
  out=$report_only
  if [ ! -d "$out/fp32" ] || [ ! -d "$out/b" ]; then die "$out holds no fp32/ and b/ runs"; fi
else
  out=${out:-bench-runs/precision-learning-$(date +%Y%m%d-%H%M%S)}
  [ -e "$out" ] && die "$out exists; a run starts from zero (use --report-only $out)"
  mkdir -p "$out"
  echo "== two learning runs side by side, $minutes minutes: fp32 on core 0, $b on core 1 ($out/)"
  # No ladder worth the time here: one opponent, the first and last nets; the matches below
  # are the comparison.
  arm() {  # core precision dir port
    LEARN_BUILD=$BUILD LEARN_WORKER_ARGS="--precision $2" taskset -c "$1" \
      scripts/bench/learning.sh --minutes "$minutes" --out "$3" --port "$4" \
      --ladder greedy --max-nets 2 --games 10 --confirm 0 >"$3.log" 2>&1
  }
  arm 0 fp32 "$out/fp32" "$port" & pa=$!
  arm 1 "$b" "$out/b" "$((port + 100))" & pb=$!
  trap 'kill -TERM $pa $pb 2>/dev/null; wait; exit 130' INT TERM
  rc=0
  wait $pa || rc=$?
  wait $pb || rc=$?
  trap - INT TERM
  [ $rc -eq 0 ] || die "a learning run failed (exit $rc): see $out/fp32.log and $out/b.log"
fi

# The newest net each arm promoted by each checkpoint minute, and the match between them
# (the matches two at a time: the runs are over, both cores are free).
match() {  # minute
  local fa fb res
  fa=$(python3 scripts/bench/learning_report.py at "$out/fp32" "$1" | cut -d' ' -f2)
  fb=$(python3 scripts/bench/learning_report.py at "$out/b" "$1" | cut -d' ' -f2)
  if [ -z "$fa" ] || [ -z "$fb" ]; then
    echo "   minute $1: an arm had promoted no net yet; no match" >&2
    return 0
  fi
  echo "== minute $1: $(basename "$fb") ($b) against $(basename "$fa") (fp32), $games games, $sims simulations"
  res=$(XQZ_PRECISION=fp32 "$XQZ" arena "net:$fb:$sims" "net:$fa:$sims" --games "$games" --seed 7 \
        --openings scripts/bench/openings-4ply.txt 2>"$out/match-$1.log" | tail -1)
  printf '{"minute":%s,"b":"%s","a":"%s","result":%s}\n' "$1" "$fb" "$fa" "${res:-null}" \
    >"$out/match-$1.json"
}
pids=()
for m in $at; do match "$m" & pids+=($!); done
wait "${pids[@]}"
: >"$out/matches.jsonl"
for m in $at; do
  if [ -f "$out/match-$m.json" ]; then cat "$out/match-$m.json" >>"$out/matches.jsonl"; fi
done
python3 scripts/bench/precision_learning_report.py report "$out" "$b"
echo "== report: $out/report.md"
