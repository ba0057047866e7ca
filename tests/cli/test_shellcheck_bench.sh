#!/usr/bin/env bash
# test_shellcheck_bench.sh SRCDIR: every benchmark script (scripts/bench/*.sh) passes the
# shell linter, one check per script (skipped where shellcheck is not installed;
# bootstrap.sh installs it).
set -u
. "$(dirname "$0")/lib.sh"
SRC=$1
if ! command -v shellcheck >/dev/null; then
  echo "shellcheck not installed: skipped"
  exit 0
fi
# From the source root, as the scripts run: they source scripts/lib/ by that path.
cd "$SRC" || exit 1
n=0
for f in scripts/bench/*.sh; do
  n=$((n + 1))
  check "shellcheck: $f" shellcheck -x "$f"
done
check "the benchmark scripts were found" test "$n" -gt 0
finish
