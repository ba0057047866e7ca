#!/usr/bin/env bash
# The README's first command: installs what is missing, builds xqzero (Release), and runs
# the main job. Until the distributed campaign exists, the main job checks the rules
# engine against the known perft counts and measures its speed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
BUILD=${XQZ_BUILD:-build}
JOBS=$(nproc 2>/dev/null || echo 2)
echo "== building xqzero (Release) in $BUILD/"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$JOBS" >/dev/null
XQZ="$BUILD/tools/xqz"
echo "== perft of the start position (expected 44 1920 79666 3290240 133312995)"
for d in 1 2 3 4 5; do
  printf 'depth %d: ' "$d"
  "$XQZ" perft startpos "$d"
done
echo "== move generation benchmark"
"$XQZ" bench movegen
echo "== done: see docs/ for what comes next"
