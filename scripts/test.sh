#!/usr/bin/env bash
# Installs what is missing, builds everything with warnings as errors under AddressSanitizer
# and UBSan, and runs the whole test suite with ctest; then builds the default configuration
# (Release with the tests: -O2 finds warnings -O0 does not, and they are errors).
# Usage: scripts/test.sh [ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
BUILD=${XQZ_TEST_BUILD:-build-test}
JOBS=$(nproc 2>/dev/null || echo 2)
echo "== configure ($BUILD: Debug, -Werror, ASan+UBSan)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DXQZ_SANITIZE=ON -DXQZ_WERROR=ON \
      -DXQZ_NATIVE=OFF -DXQZ_TESTS=ON >/dev/null
echo "== build"
cmake --build "$BUILD" -j"$JOBS"
echo "== test"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1
# A hung test fails after 10 minutes instead of holding CI to its own limit.
(cd "$BUILD" && ctest --output-on-failure --timeout 600 -j"$JOBS" "$@")
# The default configuration, as `cmake -S . -B build && cmake --build build` makes it: Release
# with the tests on, so -O2 warnings in test code are errors here too.
echo "== default build (${XQZ_RELEASE_BUILD:-build-default}: Release, tests included)"
cmake -S . -B "${XQZ_RELEASE_BUILD:-build-default}" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=ON \
      -DXQZ_WERROR=ON >/dev/null
cmake --build "${XQZ_RELEASE_BUILD:-build-default}" -j"$JOBS" >/dev/null
