#!/usr/bin/env bash
# test_skips.sh BINDIR: tests whose prerequisites are missing skip up front, and say why.
#   As an unprivileged user (setpriv to nobody when run as root), test_netns.sh and
#   test_coordinator_tmpfs exit 77 (ctest: skipped) within seconds, printing "SKIPPED:" and
#   the reason; with CI=true they fail (exit 1) naming the same reason. scripts/test.sh's
#   closing line (scripts/lib/test_summary.py) counts passed, failed and skipped tests from a
#   ctest JUnit report, names the failed ones and each skipped one with its reason, and the time.
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
# The unprivileged user may not read the checkout or the build (a clone in root's 0700 /root,
# or in a 0700 home): what it runs is copied to $dir, readable by all, keeping the layout
# test_netns.sh sources lib.sh and netns_lib.sh through.
mkdir -p "$dir/src/tests/cli" "$dir/src/tests/integration"
cp "$SRC/tests/cli/lib.sh" "$dir/src/tests/cli/"
cp "$SRC/tests/integration/test_netns.sh" "$SRC/tests/integration/netns_lib.sh" "$dir/src/tests/integration/"
chmod -R a+rX "$dir/src"
unpriv=()
if [ "$(id -u)" -eq 0 ]; then unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi

# as_user OUT CI COMMAND...: runs COMMAND unprivileged with CI set to CI, output to OUT; its
# exit status is echoed.
as_user() {
  local out=$1 ci=$2; shift 2
  (cd "$dir" && CI=$ci timeout 60 "${unpriv[@]}" "$@" >"$out" 2>&1); echo $?
}
rc=$(as_user "$dir/netns.out" "" "$dir/src/tests/integration/test_netns.sh" "$BIN")
check "test_netns.sh without root exits 77 (skipped)" [ "$rc" = 77 ]
check "and says it needs root" grep -q "^SKIPPED: needs root" "$dir/netns.out"
rc=$(as_user "$dir/netns_ci.out" true "$dir/src/tests/integration/test_netns.sh" "$BIN")
check "under CI=true it fails instead (exit 1)" [ "$rc" = 1 ]
check "naming the reason" grep -q "^FAIL required under CI=true, but: needs root" "$dir/netns_ci.out"
tmpfs=$BIN/tests/test_coordinator_tmpfs
if [ -x "$tmpfs" ]; then
  cp "$tmpfs" "$dir/src/" && tmpfs=$dir/src/test_coordinator_tmpfs && chmod a+rx "$tmpfs"
  rc=$(as_user "$dir/tmpfs.out" "" "$tmpfs")
  check "test_coordinator_tmpfs without root exits 77 (skipped)" [ "$rc" = 77 ]
  check "and says it needs root" grep -q "^SKIPPED: needs root" "$dir/tmpfs.out"
  rc=$(as_user "$dir/tmpfs_ci.out" true "$tmpfs")
  check "under CI=true it fails instead (exit 1)" [ "$rc" = 1 ]
fi

cat >"$dir/report.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="4" failures="1" skipped="2">
  <testcase name="unit_a" status="run"><system-out>ok</system-out></testcase>
  <testcase name="netns" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>probing
SKIPPED: needs root for network namespaces (ip netns)
</system-out></testcase>
  <testcase name="quiet" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/></testcase>
  <testcase name="cli_b" status="fail"><failure message=""/><system-out>FAIL x</system-out></testcase>
</testsuite>
XML
line=$(python3 "$SRC/scripts/lib/test_summary.py" "$dir/report.xml" 754 "default build ok")
echo "$line"
check "the summary counts passed, failed and skipped" \
  grep -q "^== summary: 1 passed, 1 failed (cli_b), 2 skipped (" <<<"$line"
check "it gives each skip's printed reason" \
  grep -q "netns: needs root for network namespaces (ip netns); quiet: SKIP_RETURN_CODE=77" <<<"$line"
check "and the time taken" grep -q "default build ok, 12m34s in all$" <<<"$line"
line=$(python3 "$SRC/scripts/lib/test_summary.py" "$dir/none.xml" 5 "stopped in: build (exit 2)")
check "without a report it says no tests ran and where the run stopped" \
  grep -q "^== summary: no tests ran, stopped in: build (exit 2), 0m05s in all$" <<<"$line"
finish
