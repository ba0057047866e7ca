#!/usr/bin/env bash
# Installs what is missing, builds everything with warnings as errors under AddressSanitizer
# and UBSan, and runs the whole test suite with ctest; then builds the default configuration
# (Release with the tests: -O2 finds warnings -O0 does not, and they are errors) and runs the
# unit tests in it, compiled for this host's vector instructions as shipped; then the tests
# of the modules that start threads under ThreadSanitizer (build-tsan, a minute or two;
# XQZ_TSAN_STAGE=0 leaves it out); then the chaos soak on the default build, a 5-minute
# seeded campaign under random faults
# (scripts/bench/chaos.sh; XQZ_CHAOS_MINUTES=0 leaves it out, XQZ_CHAOS_SEED picks another
# schedule), and a 4-minute one with a population of two trainers (XQZ_CHAOS_POP_MINUTES). Ends with one line, "== summary: ...": tests passed and failed, skipped and
# why, where the run stopped if it did, and the time taken (scripts/lib/test_summary.py).
# Tests whose prerequisites are missing here (root, network namespaces, chromium) are
# skipped and named in the summary; with CI=true (as CI sets it) they fail instead.
# Usage: scripts/test.sh [ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${XQZ_TEST_BUILD:-build-test}
JOBS=$(nproc 2>/dev/null || echo 2)
JUNIT=$PWD/$BUILD/test-results.xml
stage=bootstrap
start=$SECONDS
rm -f "$JUNIT"
# The summary is printed however the run ends: a failed stage is named in it.
summary() {
  local rc=$? note
  if [ "$rc" -eq 0 ]; then note="default build, its unit tests, the TSan pass and the chaos soaks ok"; else note="stopped in: $stage (exit $rc)"; fi
  python3 scripts/lib/test_summary.py "$JUNIT" "$((SECONDS - start))" "$note"
  exit "$rc"
}
trap summary EXIT
scripts/bootstrap.sh
stage=configure
echo "== configure ($BUILD: Debug, -Werror, ASan+UBSan)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DXQZ_SANITIZE=ON -DXQZ_WERROR=ON \
      -DXQZ_NATIVE=OFF -DXQZ_TESTS=ON >/dev/null
stage=build
echo "== build"
cmake --build "$BUILD" -j"$JOBS"
stage=test
echo "== test"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1
# A hung test fails after 10 minutes instead of holding CI to its own limit. The JUnit report
# (ctest 3.21 and later) feeds the summary.
junit=()
if [[ $(ctest --help) == *--output-junit* ]]; then junit=(--output-junit "$JUNIT"); fi
(cd "$BUILD" && ctest --output-on-failure --timeout 600 -j"$JOBS" "${junit[@]}" "$@")
# The default configuration, as `cmake -S . -B build && cmake --build build` makes it: Release
# with the tests on, so -O2 warnings in test code are errors here too.
stage="default build"
echo "== default build (${XQZ_RELEASE_BUILD:-build-default}: Release, tests included)"
cmake -S . -B "${XQZ_RELEASE_BUILD:-build-default}" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=ON \
      -DXQZ_WERROR=ON >/dev/null
cmake --build "${XQZ_RELEASE_BUILD:-build-default}" -j"$JOBS" >/dev/null
# The unit tests again in that build, as shipped (-O3 -march=native: AVX, FMA, AVX-512 where
# the host has them). The sanitized build above is compiled for any x86-64 and so never
# runs the kernels' vector code; their bit-for-bit contracts (a row of a GEMM the same
# alone or in a block, N trainer threads taking one thread's step) are checked here. About a
# minute; the command-line and integration tests ran above.
stage="default build's unit tests"
echo "== unit tests in the default build"
(cd "${XQZ_RELEASE_BUILD:-build-default}" && ctest --output-on-failure --timeout 600 -j"$JOBS" \
   -R '^test_' "$@")
# ThreadSanitizer over the tests of the five modules that start threads (docs/testing.md,
# "ThreadSanitizer"): the trainer's shards (nn_train_pool), the search's lanes (mcts), self-play
# threads (selfplay), the worker's play thread (worker/selfplay_loop.c, through the daemon in
# test_worker_link and, replaying a recording, test_worker_replay) and the engine's search thread (tools/cmd_engine.c, through xqz in
# test_engine*), with the GEMM and dashboard tests that start threads of their own. Its own
# build (TSan cannot share a process with ASan), only these targets, one test at a time: the
# worker runs at nice 19 and starves beside a busy test. A race fails the run; the
# suppressions (tests/tsan.supp) name only libraries we do not own.
if [ "${XQZ_TSAN_STAGE:-1}" != 0 ]; then
  stage="TSan build"
  tsan_build=${XQZ_TSAN_BUILD:-build-tsan}
  tsan_tests=(test_nn_train_pool test_mcts test_selfplay test_nn_blas test_coordinator_http
              test_engine test_engine_gui test_worker_link test_worker_replay)
  echo "== TSan build ($tsan_build: RelWithDebInfo, -Werror, ThreadSanitizer; ${tsan_tests[*]})"
  cmake -S . -B "$tsan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXQZ_TSAN=ON -DXQZ_WERROR=ON \
        -DXQZ_NATIVE=OFF -DXQZ_TESTS=ON >/dev/null
  cmake --build "$tsan_build" -j"$JOBS" --target "${tsan_tests[@]}" >/dev/null
  stage="TSan tests"
  echo "== TSan tests"
  tsan_re="^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
  tsan_opts="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
  (cd "$tsan_build" && TSAN_OPTIONS=${TSAN_OPTIONS:-$tsan_opts} \
     ctest --output-on-failure --timeout 600 -j1 -R "$tsan_re")
fi
# The chaos soak on the default build: its table and any violation are printed; a
# violation fails the run, and the line "reproduce: ..." repeats it.
if [ "${XQZ_CHAOS_MINUTES:-5}" != 0 ]; then
  stage="chaos soak"
  echo "== chaos soak (${XQZ_CHAOS_MINUTES:-5} minutes, seed ${XQZ_CHAOS_SEED:-1})"
  scripts/bench/chaos.sh --minutes "${XQZ_CHAOS_MINUTES:-5}" --seed "${XQZ_CHAOS_SEED:-1}" \
    --bin "${XQZ_RELEASE_BUILD:-build-default}"
fi
# And a population of two trainers under the same faults (rounds decided while they
# strike; a second trainer taking a member's slot): XQZ_CHAOS_POP_MINUTES=0 leaves it out.
if [ "${XQZ_CHAOS_POP_MINUTES:-4}" != 0 ]; then
  stage="chaos soak (population)"
  echo "== chaos soak with a population of 2 (${XQZ_CHAOS_POP_MINUTES:-4} minutes, seed ${XQZ_CHAOS_SEED:-1})"
  # The kinds that strike a population's state (its daemons, its database, its nets, a
  # forged member, a member gone for good, a damaged net of a round), so that each comes
  # up in 4 minutes.
  scripts/bench/chaos.sh --minutes "${XQZ_CHAOS_POP_MINUTES:-4}" --seed "${XQZ_CHAOS_SEED:-1}" \
    --bin "${XQZ_RELEASE_BUILD:-build-default}" --population 2 \
    --kinds kill9_coordinator,term_coordinator,kill9_trainer,sigstop_trainer,checkpoint_flip,db_lock,net_flip,candidate_move,forged_member,member_gone,round_net_flip
fi
