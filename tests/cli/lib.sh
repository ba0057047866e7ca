# lib.sh: shared by the command-line and integration test scripts (sourced, not run).
# check NAME COMMAND... runs COMMAND and prints "ok NAME" or "FAIL NAME"; finish prints the
# closing "N passed, M failed" line and returns non-zero when anything failed.
fails=0 total=0
check() {
  local name=$1; shift
  total=$((total + 1))
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
finish() {
  echo "$((total - fails)) passed, $fails failed"
  [ "$fails" -eq 0 ]
}
# skip_test REASON: for a prerequisite this machine lacks (root, network namespaces, a
# browser), checked before anything starts. Prints "SKIPPED: REASON" and exits 77, which
# ctest reports as skipped (SKIP_RETURN_CODE 77) and scripts/test.sh names in its summary.
# Under CI=true nothing is optional: it prints "FAIL ..." and exits 1 instead.
skip_test() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL required under CI=true, but: $1"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 77
}

# Helpers of the scripts that run daemons.
# wait_for SECONDS COMMAND...: polls COMMAND every half second until it succeeds; false on
# time-out.
wait_for() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.5; done
}
# free_port: a loopback TCP port the kernel has just found free, whose successor is free too
# (the coordinator's ROUTER takes P and its PUB P+1 in most tests; an ephemeral port of some
# other test's connection sitting on P+1 made a coordinator fail to bind its PUB).
free_port() {
  python3 - <<'PY'
import socket
for _ in range(200):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1))
    except OSError:
        a.close(); b.close(); continue
    print(p); break
PY
}
# stop_and_report DIR FILE...: for EXIT traps. Kills the processes in the caller's pids
# array, shows the last lines of each FILE that exists when a check failed, and removes DIR.
stop_and_report() {
  local dir=$1 p f; shift
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "${fails:-1}" -ne 0 ]; then
    for f in "$@"; do [ -f "$f" ] && { echo "---- $f (last 15 lines)"; tail -15 "$f"; }; done
  fi
  rm -rf "$dir"
}
# fake_learning_run DIR XQZ: a learning run directory (scripts/bench/learning.sh) with two
# promoted tiny nets, a1 at minute 0 and b2 at minute 10 (step 1000), and a rejected c3
# without a file.
fake_learning_run() {
  local r=$1 xqz=$2
  mkdir -p "$r/campaign/nets"
  echo '{"t0": 1000, "minutes": 120}' >"$r/run.json"
  "$xqz" net init --size tiny --seed 1 --out "$r/campaign/nets/00000000000000a1.xqzn" >/dev/null
  "$xqz" net init --size tiny --seed 2 --out "$r/campaign/nets/00000000000000b2.xqzn" >/dev/null
  {
    echo '{"net":"00000000000000a1","promoted":true,"first":true,"time":1000}'
    echo '{"net":"00000000000000b2","promoted":true,"step":1000,"time":1600}'
    echo '{"net":"00000000000000c3","promoted":false,"time":1700}'
  } >"$r/campaign/promotions.log"
}
