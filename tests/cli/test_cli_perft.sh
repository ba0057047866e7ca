#!/usr/bin/env bash
# test_cli_perft.sh XQZ: `xqz perft` output format, --divide, and its errors.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
out=$("$XQZ" perft startpos 3 --divide 2>/dev/null); rc=$?
check "divide exit 0" test "$rc" -eq 0
check "divide: 44 move lines then the total" test "$(echo "$out" | wc -l)" -eq 45
check "divide: last line is the total alone" test "$(echo "$out" | tail -1)" = "79666"
check "divide: lines are 'move: count'" test -z "$(echo "$out" | head -44 | grep -vE '^[a-i][0-9][a-i][0-9]: [0-9]+$')"
sum=$(echo "$out" | head -44 | awk -F': ' '{s += $2} END {print s}')
check "divide: counts add up" test "$sum" = "79666"
check "h2e2 subtree (fairy-stockfish: 1564)" test "$(echo "$out" | grep "^h2e2:")" = "h2e2: 1564"
out=$("$XQZ" perft "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1" 2 2>/dev/null)
check "FEN argument" test "$out" = "3"
err=$("$XQZ" perft startpos 2 2>&1 >/dev/null)
check "timing goes to stderr" grep -q "nodes/s" <<<"$err"
err=$("$XQZ" perft "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w" 2 2>&1); rc=$?
check "bad FEN exits 2" test "$rc" -eq 2
check "bad FEN names the problem" grep -q "9 ranks, expected 10" <<<"$err"
"$XQZ" perft startpos x >/dev/null 2>&1; rc=$?
check "bad depth exits 2" test "$rc" -eq 2
"$XQZ" nosuchcommand >/dev/null 2>&1; rc=$?
check "unknown command exits 2" test "$rc" -eq 2
finish
