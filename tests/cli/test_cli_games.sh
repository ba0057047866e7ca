#!/usr/bin/env bash
# test_cli_games.sh XQZ: `xqz games` as a user runs it on a record file from `xqz selfplay`:
# a row per file whose counts add up, the JSON form, and clear errors for a missing path,
# a file that holds no games and a bad option.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$XQZ" net init --size tiny --seed 5 --out "$dir/net.xqzn" >/dev/null
"$XQZ" selfplay --net "$dir/net.xqzn" --games 4 --sims 16 --fast-sims 4 --max-plies 40 \
  --seed 3 --out "$dir/g.xqzg" >/dev/null 2>&1
out=$("$XQZ" games "$dir/g.xqzg" 2>"$dir/err"); rc=$?
check "games exits 0" test "$rc" -eq 0
check "says how capped games are scored" grep -q "^adjudicate_material 0 " <<<"$out"
check "a row for the file with 4 games" grep -Eq "^g\.xqzg +4 " <<<"$out"
json=$("$XQZ" games "$dir/g.xqzg" --adjudicate 3 --json); rc=$?
check "json exits 0" test "$rc" -eq 0
check "json parses and adds up" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["games"] == 4 and d["bad"] == 0 and d["adjudicate_material"] == 3, d
assert d["red_wins"] + d["black_wins"] + d["draws"] == 4, d
assert sum(d["reasons"].values()) == 4, d
assert 0 < d["samples"] and 0 <= d["decisive_samples"] <= d["samples"], d
' "$json"
"$XQZ" games "$dir/missing" >/dev/null 2>"$dir/err"; rc=$?
check "missing path fails" test "$rc" -eq 1
check "missing path named" grep -q "missing" "$dir/err"
"$XQZ" games "$dir/net.xqzn" >/dev/null 2>"$dir/err"; rc=$?
check "a net file is not games" test "$rc" -eq 1
check "says what the file is not" grep -q "neither a segment file nor a game-record file" "$dir/err"
mkdir "$dir/empty"
"$XQZ" games "$dir/empty" >/dev/null 2>"$dir/err"; rc=$?
check "a directory without segments fails" test "$rc" -eq 1
check "says no segment files" grep -q "no segment files" "$dir/err"
"$XQZ" games "$dir/g.xqzg" --adjudicate lots >/dev/null 2>"$dir/err"; rc=$?
check "bad --adjudicate is bad usage" test "$rc" -eq 2
"$XQZ" games >/dev/null 2>&1; rc=$?
check "no path is bad usage" test "$rc" -eq 2
finish
