#!/usr/bin/env bash
# test_cli_selfplay.sh XQZ: `xqz selfplay` as a user runs it: a tiny net plays a few short
# games into a record file, the summary is one JSON line, bad input leaves nothing behind
# and an existing record file is never replaced silently.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$XQZ" net init --size tiny --seed 5 --out "$dir/net.xqzn" >/dev/null
out=$("$XQZ" selfplay --net "$dir/net.xqzn" --games 3 --sims 16 --fast-sims 4 --max-plies 60 \
      --seed 2 --out "$dir/g.xqzg" 2>"$dir/err"); rc=$?
check "selfplay exits 0" test "$rc" -eq 0
check "summary says 3 games" grep -q '"games":3' <<<"$out"
check "progress on stderr" grep -q "games 3/3" "$dir/err"
check "record file starts with its magic" test "$(head -c 4 "$dir/g.xqzg")" = "XQZG"
cp "$dir/g.xqzg" "$dir/keep.xqzg"
"$XQZ" selfplay --net "$dir/net.xqzn" --games 1 --sims 8 --out "$dir/g.xqzg" >/dev/null 2>"$dir/err"; rc=$?
check "refuses to replace a record file" test "$rc" -eq 1
check "says how to replace it" grep -q -- "--force" "$dir/err"
check "record file untouched" cmp -s "$dir/g.xqzg" "$dir/keep.xqzg"
"$XQZ" selfplay --net "$dir/net.xqzn" --games 3 --sims 16 --fast-sims 4 --max-plies 60 --seed 2 \
  --force --out "$dir/g2.xqzg" >/dev/null 2>&1
check "same seed gives the same games" cmp -s "$dir/g2.xqzg" "$dir/keep.xqzg"
"$XQZ" selfplay --net "$dir/missing.xqzn" --games 1 --out "$dir/m.xqzg" >/dev/null 2>"$dir/err"; rc=$?
check "missing net fails" test "$rc" -eq 1
check "missing net named" grep -q "missing.xqzn" "$dir/err"
check "nothing written for a missing net" test ! -e "$dir/m.xqzg"
"$XQZ" selfplay --net "$dir/net.xqzn" --games 0 --out "$dir/z.xqzg" >/dev/null 2>&1; rc=$?
check "zero games is bad usage" test "$rc" -eq 2
check "nothing written on bad usage" test ! -e "$dir/z.xqzg"
finish
