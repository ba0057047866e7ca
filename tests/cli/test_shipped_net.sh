#!/usr/bin/env bash
# test_shipped_net.sh XQZ SOURCE_DIR: the trained net shipped in nets/ (nets/README.md)
# loads, plays whole legal games (xqz arena adjudicates every move with the rules), and is
# what `xqz play` and `xqz engine` use when given no net; XQZ_NET overrides it, and an
# unreadable XQZ_NET is an error that names it.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
NET=$2/nets/xqzero.xqzn
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check "the shipped net is in the sources" test -s "$NET"
check "it loads and checks (net info)" "$XQZ" net info "$NET"
last=$("$XQZ" arena "net:$NET:32" random --games 2 --max-plies 200 --seed 4 2>/dev/null | tail -1)
check "it plays two whole games against random" \
  python3 -c 'import json, sys; j = json.loads(sys.argv[1]); sys.exit(0 if j["games"] == 2 else 1)' "$last"
out=$(printf 'quit\n' | "$XQZ" play --as black --sims 16 2>&1); rc=$?
check "xqz play without a net exits 0" test "$rc" -eq 0
check "it says it plays the shipped net" grep -qF "Playing the default net $NET" <<<"$out"
check "and the net moves" grep -qE "^xqzero plays [a-i][0-9][a-i][0-9]" <<<"$out"
out=$(printf 'uci\nisready\nposition startpos\ngo nodes 20\nquit\n' | "$XQZ" engine 2>"$dir/err"); rc=$?
check "xqz engine without a net exits 0" test "$rc" -eq 0
check "it plays a move" grep -qE '^bestmove [a-i][0-9][a-i][0-9]' <<<"$out"
check "stderr names the shipped net" grep -qF "default net $NET" "$dir/err"
"$XQZ" net init --size tiny --seed 2 --out "$dir/other.xqzn" >/dev/null 2>&1
out=$(printf 'quit\n' | XQZ_NET="$dir/other.xqzn" "$XQZ" play --as black --sims 8 2>&1)
check "XQZ_NET overrides the shipped net" grep -qF "Playing the default net $dir/other.xqzn" <<<"$out"
out=$(printf 'quit\n' | XQZ_NET="$dir/missing.xqzn" "$XQZ" play 2>&1); rc=$?
check "an unreadable XQZ_NET exits 2" test "$rc" -eq 2
check "and is named with the fix" grep -qF "XQZ_NET names $dir/missing.xqzn, which cannot be read" <<<"$out"
finish
