#!/usr/bin/env bash
# test_cli_help.sh XQZ: the xqz tool's help says what each command takes (issue 49 item 9):
# engine and play show --net as optional (they default to the shipped net); bench names all
# five benchmarks; `xqz bench --help` and each `xqz bench WHAT --help` print their usage on
# stdout and exit 0, while a missing or unknown benchmark exits 2.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
help=$("$XQZ" --help); rc=$?
check "xqz --help exits 0" test "$rc" -eq 0
check "engine's --net is optional" grep -Eq "^  engine .*engine \[--net FILE \| --campaign DIR\].*shipped net" <<<"$help"
check "play's --net is optional" grep -Eq "^  play .*play \[--net FILE \| --campaign DIR\].*shipped net" <<<"$help"
check "bench lists all five" grep -Eq "^  bench .*movegen \| nn \| selfplay \| coordinator \| train" <<<"$help"
out=$("$XQZ" bench --help 2>/dev/null); rc=$?
check "xqz bench --help exits 0" test "$rc" -eq 0
for w in movegen nn selfplay coordinator train; do
  check "xqz bench --help names $w" grep -Eq "^  $w " <<<"$out"
  o=$("$XQZ" bench "$w" --help 2>/dev/null); rc=$?
  check "xqz bench $w --help exits 0" test "$rc" -eq 0
  check "xqz bench $w --help prints its usage on stdout" grep -q "^usage: xqz bench $w" <<<"$o"
done
"$XQZ" bench >/dev/null 2>&1; rc=$?
check "xqz bench alone exits 2" test "$rc" -eq 2
err=$("$XQZ" bench frobnicate 2>&1); rc=$?
check "xqz bench frobnicate exits 2" test "$rc" -eq 2
check "... naming it" grep -q "unknown benchmark 'frobnicate'" <<<"$err"
finish
