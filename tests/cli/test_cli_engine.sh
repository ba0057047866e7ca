#!/usr/bin/env bash
# test_cli_engine.sh XQZ: `xqz engine --campaign DIR` plays the campaign's best net
# (nets/best.xqzn), saying which on stderr and nothing on stdout before the GUI speaks; a
# directory that is not a campaign exits 2 naming it.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/camp/nets"
"$XQZ" net init --size tiny --out "$dir/camp/nets/00000000000000aa.xqzn" >/dev/null 2>&1
ln -s 00000000000000aa.xqzn "$dir/camp/nets/best.xqzn"
out=$(printf 'uci\nisready\nposition startpos\ngo nodes 20\nquit\n' |
      "$XQZ" engine --campaign "$dir/camp" 2>"$dir/err"); rc=$?
check "the engine on a campaign exits 0" test "$rc" -eq 0
check "it answers the handshake" grep -q '^uciok' <<<"$out"
check "it plays a move" grep -qE '^bestmove [a-i][0-9][a-i][0-9]' <<<"$out"
check "stdout starts with the GUI's answer, not the net's name" \
  bash -c "head -1 <<<\"\$1\" | grep -q '^id name'" _ "$out"
check "stderr names the best net it took" grep -q "best net of campaign .*00000000000000aa.xqzn" "$dir/err"
err=$("$XQZ" engine --campaign "$dir/none" 2>&1 </dev/null); rc=$?
check "a directory that is not a campaign exits 2" test "$rc" -eq 2
check "and is named" grep -qF "$dir/none" <<<"$err"
finish
