#!/usr/bin/env bash
# perft.sh: rules speed benchmark. Runs perft 5 from the start position with `xqz perft`
# (Release build in build-bench/) and with fairy-stockfish (one thread) in the same
# invocation, checks both count 133312995 nodes, and prints both node rates and the ratio
# ours / fairy-stockfish. The goal (issue 2) is a ratio of at least 1.5.
#
# Timing: xqz reports the time of the perft computation itself on stderr. For
# fairy-stockfish, one long-lived process is driven over a pipe; the time from sending
# `go perft 5` to reading `Nodes searched` is measured, minus the same round trip for
# `go perft 1` (the pipe and parsing latency), so process start-up is not counted.
#
# Usage: scripts/bench/perft.sh [DEPTH]   (default 5; other depths skip the count check)
set -euo pipefail
cd "$(dirname "$0")/../.."

depth=${1:-5}
expect=133312995
fen="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
fairy=/usr/games/fairy-stockfish
build="build-bench"

scripts/bootstrap.sh
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target xqz >/dev/null
[ -x "$fairy" ] || { echo "perft.sh: $fairy is missing; scripts/bootstrap.sh installs it" >&2; exit 1; }

now() { date +%s.%N; }

# --- xqz ---
err=$(mktemp)
trap 'rm -f "$err"' EXIT
ours_nodes=$("$build/tools/xqz" perft "$fen" "$depth" 2>"$err" | tail -n 1)
# stderr: "perft 5: 133312995 nodes in 1.234 s, 108000000 nodes/s"
ours_time=$(sed -n 's/.* nodes in \([0-9.]*\) s.*/\1/p' "$err")
[ -n "$ours_time" ] || { echo "perft.sh: cannot read xqz's timing: $(cat "$err")" >&2; exit 1; }

# --- fairy-stockfish ---
coproc FSF { "$fairy" 2>&1; }
send() { printf '%s\n' "$1" >&"${FSF[1]}"; }
# Reads engine lines until one starts with $1; leaves it in $line.
wait_for() {
  while IFS= read -r -t 900 line <&"${FSF[0]}"; do
    [[ $line == "$1"* ]] && return 0
  done
  echo "perft.sh: fairy-stockfish stopped before printing '$1'" >&2
  exit 1
}
send uci; wait_for uciok
send "setoption name UCI_Variant value xiangqi"
send "setoption name Threads value 1"
send isready; wait_for readyok
send "position fen $fen"
t0=$(now); send "go perft 1"; wait_for "Nodes searched"; t1=$(now)
t2=$(now); send "go perft $depth"; wait_for "Nodes searched"; t3=$(now)
fairy_nodes=${line##*: }
send quit
wait "$FSF_PID" 2>/dev/null || true

fairy_time=$(awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN { printf "%.3f", (d - c) - (b - a) }')

status=0
if [ "$depth" = 5 ]; then
  for who in ours fairy; do
    n=${who}_nodes
    if [ "${!n}" != "$expect" ]; then
      echo "perft.sh: $who counted ${!n} nodes at depth 5, expected $expect" >&2
      status=1
    fi
  done
fi

awk -v d="$depth" -v on="$ours_nodes" -v ot="$ours_time" -v fn="$fairy_nodes" -v ft="$fairy_time" 'BEGIN {
  orate = on / ot; frate = fn / ft
  printf "perft %d from the start position\n", d
  printf "  xqz             %10d nodes  %7.3f s  %6.1f M nodes/s\n", on, ot, orate / 1e6
  printf "  fairy-stockfish %10d nodes  %7.3f s  %6.1f M nodes/s\n", fn, ft, frate / 1e6
  printf "  ratio xqz / fairy-stockfish: %.2f (goal >= 1.5)\n", orate / frate
}'
exit $status
