#!/usr/bin/env bash
# test_cli_play.sh XQZ: `xqz play` scripted through a pipe as a user would type: the board
# is drawn with files and ranks, an illegal move is explained and asked again, undo and
# help work, quit ends cleanly; a game against a tiny net shows the net's move and value,
# and a finished game is announced with its reason.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$(printf 'h2e2\nh2e9\nxyz\nhelp\nundo\nquit\n' | "$XQZ" play --opponent random --seed 3 2>&1); rc=$?
check "play exits 0 on quit" test "$rc" -eq 0
check "board has file letters" grep -q "^    a b c d e f g h i$" <<<"$out"
check "board has Red's back rank at rank 0" grep -q "^ 0  R N B A K A B N R  0$" <<<"$out"
check "board has Black's back rank at rank 9" grep -q "^ 9  r n b a k a b n r  9$" <<<"$out"
check "the opponent's move is shown" grep -q "^random plays [a-i][0-9][a-i][0-9]$" <<<"$out"
check "the move is made on the board" grep -q "^ 2  . C . . C . . . .  2$" <<<"$out"
check "illegal move is explained" grep -q "Illegal move 'h2e9'" <<<"$out"
check "garbage is explained" grep -q "Illegal move 'xyz'" <<<"$out"
check "help explains ICCS" grep -q "ICCS" <<<"$out"
check "undo takes back" grep -q "Took back one move each" <<<"$out"
check "quit says bye" grep -q "^Bye" <<<"$out"
# After undo the start position is back on the board before quit.
check "undo restores the start" bash -c "grep 'FEN' <<<\"\$1\" | tail -1 | grep -q 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w'" _ "$out"
out=$(printf '' | "$XQZ" play --opponent random 2>&1); rc=$?
check "end of input exits 0" test "$rc" -eq 0
# Against a tiny net as Black: the net moves first and reports its value.
"$XQZ" net init --size tiny --seed 2 --out "$dir/t.xqzn" >/dev/null 2>&1
out=$(printf 'h9g7\nquit\n' | "$XQZ" play --net "$dir/t.xqzn" --sims 16 --as black 2>&1); rc=$?
check "net game exits 0" test "$rc" -eq 0
check "net move and value shown" grep -q "^xqzero plays [a-i][0-9][a-i][0-9] (value [-+][0-9.]* for xqzero" <<<"$out"
# The human mates with b1b9: the game is over at once.
out=$(printf 'b1b9\n' | "$XQZ" play --opponent random --fen "4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1" 2>&1); rc=$?
check "finished game exits 0" test "$rc" -eq 0
check "result announced with its reason" grep -q "^Game over: 1-0 by checkmate. You win." <<<"$out"
out=$(printf 'quit\n' | "$XQZ" play --net "$dir/none.xqzn" 2>&1); rc=$?
check "missing net fails" test "$rc" -ne 0
"$XQZ" play --as green --opponent random </dev/null >/dev/null 2>&1; rc=$?
check "bad --as is a usage error" test "$rc" -eq 2
finish
