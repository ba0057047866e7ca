#!/usr/bin/env bash
# test_cli_play.sh XQZ: `xqz play` scripted through a pipe as a user would type: the board
# is drawn with files and ranks, an illegal move is explained and asked again, undo and
# help work, quit ends cleanly; a game against a tiny net shows the net's move and value,
# and a finished game is announced with its reason. Moves in WXF and Chinese are taken; the
# board is shown from Black's side with --as black, with a Black move as the example after a
# refusal; --unicode draws each side's own characters; --color; hint, moves, save FILE (PGN)
# and the move list at the end.
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
check "the opponent's move is shown" grep -Eq "^random plays [a-i][0-9][a-i][0-9] \([KAEHRCP+=-][1-9+=-][+=-][1-9]\)$" <<<"$out"
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
check "net move and value shown" grep -q "^xqzero plays [a-i][0-9][a-i][0-9] (.*): value [-+][0-9.]* for xqzero" <<<"$out"
# The human mates with b1b9: the game is over at once.
out=$(printf 'b1b9\n' | "$XQZ" play --opponent random --fen "4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1" 2>&1); rc=$?
check "finished game exits 0" test "$rc" -eq 0
check "result announced with its reason" grep -q "^Game over: 1-0 by checkmate. You win." <<<"$out"
out=$(printf 'quit\n' | "$XQZ" play --net "$dir/none.xqzn" 2>&1); rc=$?
check "missing net fails" test "$rc" -ne 0
"$XQZ" play --as green --opponent random </dev/null >/dev/null 2>&1; rc=$?
check "bad --as is a usage error" test "$rc" -eq 2
# The three notations: WXF for Red, Chinese, and the same move refused when it is illegal.
out=$(printf 'C2=5\nundo\n炮二平五\nundo\nH2+3\nmoves\nquit\n' | "$XQZ" play --opponent random --seed 3 2>&1)
check "WXF C2=5 is h2e2" grep -q "^ 2  . C . . C . . . .  2$" <<<"$out"
check "Chinese 炮二平五 is taken" test "$(grep -c "^ 2  . C . . C . . . .  2$" <<<"$out")" -ge 2
check "WXF H2+3 is h0g2" grep -q "^ 0  R N B A K A B . R  0$" <<<"$out"
check "moves lists ICCS" grep -Eq "^Moves \(ICCS\): 1\. h0g2 [a-i][0-9][a-i][0-9]$" <<<"$out"
check "moves lists WXF" grep -Eq "^Moves \(WXF\): 1\. H2\+3 " <<<"$out"
# As Black: the board from Black's side, Black's moves in its own file count, and a Black
# move as the example after a refusal.
out=$(printf 'H8+7\nh0g2\n马2进3\nquit\n' | "$XQZ" play --opponent random --seed 3 --as black 2>&1)
check "Black's side: files run i to a" grep -q "^    i h g f e d c b a$" <<<"$out"
check "Black's side: rank 0 on top" bash -c "grep -m1 '^ [0-9]  ' <<<\"\$1\" | grep -q '^ 0  '" _ "$out"
check "WXF H8+7 for Black moves the h9 horse (shown second from the left)" grep -q '^ 9  r . b a k a b n r  9$' <<<"$out"
check "Red's move refused for Black" grep -q "Illegal move 'h0g2'" <<<"$out"
check "the example is a Black move" grep -Eq "Illegal move 'h0g2'.*Type a move like [a-i][5-9][a-i][0-9] " <<<"$out"
check "Chinese 马2进3 with Black's digits" bash -c "grep '^ 9  ' <<<\"\$1\" | tail -1 | grep -q '^ 9  r . b a k a b . r  9$'" _ "$out"
# --unicode: each side's own characters.
out=$(printf 'quit\n' | "$XQZ" play --opponent random --unicode 2>&1)
check "unicode Red pieces" grep -q "^ 0  俥傌相仕帥仕相傌俥  0$" <<<"$out"
check "unicode Black pieces" grep -q "^ 9  車馬象士將士象馬車  9$" <<<"$out"
check "unicode Red and Black cannons differ" grep -q "^ 7  ．砲．．．．．砲．  7$" <<<"$out"
# Colour: never in a pipe unless asked; --color=always colours; NO_COLOR is respected by auto.
out=$(printf 'quit\n' | "$XQZ" play --opponent random 2>&1)
check "no colour in a pipe" bash -c "! grep -q \$'\\033' <<<\"\$1\"" _ "$out"
out=$(printf 'quit\n' | "$XQZ" play --opponent random --color=always 2>&1)
check "--color=always colours Red" grep -q $'\033\\[1;31mR' <<<"$out"
"$XQZ" play --opponent random --color sometimes </dev/null >/dev/null 2>&1; rc=$?
check "bad --color is a usage error" test "$rc" -eq 2
# hint, save FILE (PGN that names the moves), and the list when the game ends.
out=$(printf 'hint\nh2e2\nsave %s\nquit\n' "$dir/g.pgn" | "$XQZ" play --net "$dir/t.xqzn" --sims 16 2>&1)
check "hint suggests a move" grep -Eq "^Hint: [a-i][0-9][a-i][0-9] \(.*\), value" <<<"$out"
check "save says so" grep -q "^Saved 2 plies to $dir/g.pgn" <<<"$out"
check "saved PGN has the tags" grep -q '^\[Game "Chinese Chess"\]$' "$dir/g.pgn"
check "saved PGN has ICCS format" grep -q '^\[Format "ICCS"\]$' "$dir/g.pgn"
check "saved PGN has the moves" grep -Eq "^1\. h2e2 [a-i][0-9][a-i][0-9] \{Unfinished" "$dir/g.pgn"
out=$(printf 'b1b9\n' | "$XQZ" play --opponent random --fen "4k4/R8/9/9/9/9/9/9/1R7/5K3 w - - 0 1" 2>&1)
check "the moves are listed at the end" grep -q "^Moves (WXF): 1. R8+8$" <<<"$out"
out=$(printf 'save\nquit\n' | "$XQZ" play --opponent random 2>&1)
check "save without a file says how" grep -q "save needs a file name" <<<"$out"
finish
