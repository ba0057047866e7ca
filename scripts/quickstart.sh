#!/usr/bin/env bash
# The README's first command: installs what is missing, builds xqzero (Release), and runs
# the main job. Until the distributed campaign exists, the main job checks the rules
# engine against the known perft counts, measures its speed, creates a network and
# measures the network's speed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
BUILD=${XQZ_BUILD:-build}
JOBS=$(nproc 2>/dev/null || echo 2)
echo "== building xqzero (Release) in $BUILD/"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" >/dev/null
XQZ="$BUILD/tools/xqz"
echo "== perft of the start position, checked against the known counts"
expected=(0 44 1920 79666 3290240 133312995)
for d in 1 2 3 4 5; do
  got=$("$XQZ" perft startpos "$d" 2>"$BUILD/perft.err")
  printf 'depth %d: %10s   %s\n' "$d" "$got" "$(sed 's/^perft [0-9]*: [0-9]* nodes in /in /' "$BUILD/perft.err")"
  if [ "$got" != "${expected[$d]}" ]; then
    echo "quickstart: perft $d is $got, expected ${expected[$d]}: the rules are broken" >&2
    exit 1
  fi
done
echo "== move generation benchmark"
"$XQZ" bench movegen
OUT=${XQZ_OUT:-out}
mkdir -p "$OUT"
echo "== a fresh default (6x64) network in $OUT/net0.xqzn"
"$XQZ" net init --size default --seed 1 --force --out "$OUT/net0.xqzn"
"$XQZ" net info "$OUT/net0.xqzn"
echo "== network benchmark (short run; 'xqz bench nn' for the full one)"
"$XQZ" bench nn --quick
echo "== done: see docs/ for what comes next"
