#!/usr/bin/env bash
# test_cli_explain.sh XQZ: `xqz explain` as a user runs it: one row per piece but the kings,
# each piece's worth consistent with the two values it was computed from, removals that
# would be illegal shown as such, a survival net's per-piece survival probability in the
# table and the JSON, and clear errors for a bad FEN or a missing net.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$XQZ" net init --size tiny --seed 5 --out "$dir/n.xqzn" >/dev/null 2>&1
json=$("$XQZ" explain startpos --net "$dir/n.xqzn" --json 2>&1); rc=$?
check "explain --json exits 0" test "$rc" -eq 0
consistent() {
  python3 -c '
import json, sys
d = json.loads(sys.argv[1])
v = d["value"]
assert -1 <= v <= 1, v
ps = d["pieces"]
assert len(ps) == 30, len(ps)          # 32 pieces, kings excepted
assert all(p["legal"] for p in ps)
for p in ps:
    sign = 1 if p["colour"] == "red" else -1
    assert abs(p["worth"] - sign * (v - p["value_without"])) < 1e-5, p
assert {p["square"] for p in ps if p["name"] == "rook"} == {"a0", "i0", "a9", "i9"}
' "$1"
}
check "startpos: 30 pieces, worth = owner's value with minus without" consistent "$json"
table=$("$XQZ" explain startpos --net "$dir/n.xqzn" 2>&1)
check "table shows the value" grep -q "^value .* for Red (Red to move)" <<<"$table"
check "table has a row per piece" test "$(grep -cE '^[a-i][0-9] ' <<<"$table")" -eq 30
check "board has ten ranks" test "$(grep -cE '^[0-9] ' <<<"$table")" -eq 10
# Removing the horse between the two kings would leave them facing: illegal, not evaluated.
fen="3k5/9/9/9/3N5/9/9/9/9/3K5 w - - 0 1"
json=$("$XQZ" explain "$fen" --net "$dir/n.xqzn" --json 2>&1)
check "blocking piece: removal flagged illegal" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["pieces"] == [{"square": "d5", "piece": "N", "name": "horse", "colour": "red", "legal": False}], d' "$json"
check "a net without the survival head says so and gives no survival" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["survival_head"] is False, d
assert all("survival" not in p for p in d["pieces"]), d' "$json"
check "table without the head has no survives column" test "$(grep -c survives <<<"$table")" -eq 0
# A net with the survival head: each piece's probability of surviving, beside its worth,
# in both outputs, Black to move too (the head answers in the mover's frame).
"$XQZ" net init --size tiny-s --seed 5 --out "$dir/s.xqzn" >/dev/null 2>&1
for pos in startpos "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"; do
  json=$("$XQZ" explain "$pos" --net "$dir/s.xqzn" --json 2>&1); rc=$?
  check "survival net ($pos): exits 0" test "$rc" -eq 0
  check "survival net ($pos): a probability per piece, worth as before" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); v = d["value"]
assert d["survival_head"] is True, d
ps = d["pieces"]; assert len(ps) == 30, len(ps)
for p in ps:
    assert 0 < p["survival"] < 1, p
    sign = 1 if p["colour"] == "red" else -1
    assert abs(p["worth"] - sign * (v - p["value_without"])) < 1e-5, p
assert len({round(p["survival"], 6) for p in ps}) > 1   # not one constant
' "$json"
done
table=$("$XQZ" explain startpos --net "$dir/s.xqzn" 2>&1)
check "survival net: table has the survives column" grep -q "^sq .*survives .*without" <<<"$table"
check "survival net: table explains it" grep -q "^survives: the survival head's probability" <<<"$table"
check "survival net: rows show a probability" test "$(grep -cE '^[a-i][0-9] +[A-Za-z] +[a-z]+ +0\.[0-9]{2} ' <<<"$table")" -eq 30
# The JSON's probability of the rook on a0 is the table's, rounded.
p=$("$XQZ" explain startpos --net "$dir/s.xqzn" --json | python3 -c 'import json,sys; print("%.2f" % [p for p in json.load(sys.stdin)["pieces"] if p["square"] == "a0"][0]["survival"])')
check "survival net: table and JSON agree" grep -qE "^a0 +R +rook +$p " <<<"$table"
err=$("$XQZ" explain "rnbakabnr/9/1c5c1/p1p1p1p1p w - - 0 1" --net "$dir/n.xqzn" 2>&1); rc=$?
check "bad FEN: usage error" test "$rc" -eq 2
check "bad FEN: says so" grep -q "bad FEN" <<<"$err"
err=$("$XQZ" explain startpos --net "$dir/missing.xqzn" 2>&1); rc=$?
check "missing net fails" test "$rc" -eq 1
check "missing net named" grep -q "missing.xqzn" <<<"$err"
# Without --net, the default net as `xqz play` and `xqz engine` take it ($XQZ_NET here, for
# speed; else the shipped nets/xqzero.xqzn).
out=$(XQZ_NET="$dir/n.xqzn" "$XQZ" explain startpos 2>&1); rc=$?
check "no --net: the default net" test "$rc" -eq 0
check "no --net: names the net it took" grep -q "^net  *$dir/n.xqzn" <<<"$out"
err=$(XQZ_NET="$dir/missing.xqzn" "$XQZ" explain startpos 2>&1); rc=$?
check "no --net, bad XQZ_NET: refused" test "$rc" -eq 2
check "no --net, bad XQZ_NET: says how to fix" grep -q "XQZ_NET" <<<"$err"
err=$("$XQZ" explain 2>&1); rc=$?
check "no position: usage" test "$rc" -eq 2
finish
