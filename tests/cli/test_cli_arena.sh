#!/usr/bin/env bash
# test_cli_arena.sh XQZ: `xqz arena` prints progress on stderr, one JSON object as the last
# line of stdout, stops early on an SPRT decision, and exits 2 on bad arguments or specs.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
json_ok() { # json_ok LINE PYTHON-EXPRESSION-ON-j
  python3 -c 'import json, sys; j = json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$XQZ" arena alphabeta:2 random --games 4 --seed 7 --max-plies 150 >"$tmp/out" 2>"$tmp/err"; rc=$?
last=$(tail -1 "$tmp/out")
check "match exits 0" test "$rc" -eq 0
check "last line is JSON with the required keys" json_ok "$last" \
  'all(k in j for k in ("games","wins","draws","losses","score","elo","elo_ci95","sprt"))'
check "counts add up" json_ok "$last" 'j["games"] == 4 and j["wins"] + j["draws"] + j["losses"] == 4'
check "score from A's view" json_ok "$last" 'abs(j["score"] - (j["wins"] + 0.5 * j["draws"]) / 4) < 1e-3'
check "no SPRT requested: none" json_ok "$last" 'j["sprt"] == "none"'
check "one progress line per game on stderr" test "$(grep -c '^game [0-9]*/4:' "$tmp/err")" -eq 4

printf '# one FEN and one FEN with moves\n%s\n%s h2e2 h9g7\n' \
  "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1" \
  "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1" >"$tmp/open.txt"
last=$("$XQZ" arena greedy random --games 2 --openings "$tmp/open.txt" --max-plies 60 2>/dev/null | tail -1)
check "openings file" json_ok "$last" 'j["games"] == 2'

last=$("$XQZ" arena alphabeta:2 random --games 40 --sprt 0,400 --max-plies 150 2>/dev/null | tail -1)
check "SPRT stops early with accept" json_ok "$last" 'j["sprt"] == "accept" and j["games"] < 40'

"$XQZ" net init --size tiny --seed 1 --out "$tmp/tiny.xqzn" >/dev/null 2>&1
last=$("$XQZ" arena "net:$tmp/tiny.xqzn:16" greedy --games 2 --max-plies 40 2>/dev/null | tail -1)
check "net player (tiny net, 16 simulations)" json_ok "$last" 'j["games"] == 2 and j["a"].startswith("net:")'
"$XQZ" arena "net:$tmp/missing.xqzn" random --games 2 >/dev/null 2>&1; rc=$?
check "missing net file exits 2" test "$rc" -eq 2

"$XQZ" arena random --games 2 >/dev/null 2>&1; rc=$?
check "one player only exits 2" test "$rc" -eq 2
err=$("$XQZ" arena random bogus --games 2 2>&1 >/dev/null); rc=$?
check "bad spec exits 2" test "$rc" -eq 2
check "bad spec lists the valid forms" grep -q "alphabeta:D" <<<"$err"
"$XQZ" arena random random --games x >/dev/null 2>&1; rc=$?
check "bad --games exits 2" test "$rc" -eq 2
"$XQZ" arena random random --games 2 --sprt 5,0 >/dev/null 2>&1; rc=$?
check "bad --sprt exits 2" test "$rc" -eq 2
"$XQZ" arena random random --games 2 --max-plies 5000 >/dev/null 2>&1; rc=$?
check "bad --max-plies exits 2" test "$rc" -eq 2
"$XQZ" arena random random --games 2 --openings /nonexistent >/dev/null 2>&1; rc=$?
check "missing openings file exits 2" test "$rc" -eq 2
printf 'startpos h2h8\n' >"$tmp/bad.txt"
err=$("$XQZ" arena random random --games 2 --openings "$tmp/bad.txt" 2>&1 >/dev/null); rc=$?
check "illegal opening move exits 2 naming the line" test "$rc" -eq 2 -a -n "$(grep ':1:' <<<"$err")"
finish
