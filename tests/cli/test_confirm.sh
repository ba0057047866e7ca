#!/usr/bin/env bash
# test_confirm.sh XQZ: scripts/bench/confirm.sh on a made-up learning run (tiny nets): it
# plays the run's last promoted net against each opponent (PUCT or a Gumbel root) and
# writes one confirm.jsonl line per opponent and search, replacing only earlier lines of the
# same net, opponent and search; the report uses those of the ladder's search; bad
# arguments are refused with the reason and leave an earlier confirm.jsonl alone.
set -u
. "$(dirname "$0")/lib.sh"
export XQZ=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fake_learning_run "$dir/run" "$XQZ"
out=$("$root/scripts/bench/confirm.sh" "$dir/run" --games 4 --sims 4 --opponents "random greedy" 2>"$dir/err"); rc=$?
check "confirm exits 0" test "$rc" -eq 0
check "confirms the last promoted net" grep -q "confirming net 00000000 (promoted at 10.0 min)" <<<"$out"
check "one line per opponent, for that net, 4 games each" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [d["opponent"] for d in lines] == ["random", "greedy"], lines
for d in lines:
    r = d["result"]
    assert d["net"] == "00000000000000b2", d
    assert r["games"] == 4 and r["wins"] + r["draws"] + r["losses"] == 4, r
' "$dir/run/confirm.jsonl"
"$root/scripts/bench/confirm.sh" "$dir/run" --games 2 --sims 4 --search gumbel --opponents "random" >"$dir/out" 2>"$dir/err"; rc=$?
check "a Gumbel root: exits 0" test "$rc" -eq 0
check "says the root search" grep -q "gumbel root search" "$dir/out"
check "records the search, beside the PUCT records" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [(d["opponent"], d["search"], d["result"]["games"]) for d in lines] == [
    ("random", "puct", 4), ("greedy", "puct", 4), ("random", "gumbel", 2)], lines
' "$dir/run/confirm.jsonl"
check "the report takes the ladder search's records" python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import learning_report as lr
puct = lr.confirmations(sys.argv[2], "00000000000000b2")
gumbel = lr.confirmations(sys.argv[2], "00000000000000b2", "gumbel")
assert sorted(puct) == ["greedy", "random"] and puct["random"]["games"] == 4, puct
assert list(gumbel) == ["random"] and gumbel["random"]["games"] == 2, gumbel
' "$root/scripts/bench" "$dir/run"
"$root/scripts/bench/confirm.sh" "$dir/run" --games 2 --sims 4 --opponents "greedy" >/dev/null 2>"$dir/err"; rc=$?
check "a second PUCT call exits 0" test "$rc" -eq 0
check "replaces only its own record" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [(d["opponent"], d["search"], d["result"]["games"]) for d in lines] == [
    ("random", "puct", 4), ("random", "gumbel", 2), ("greedy", "puct", 2)], lines
' "$dir/run/confirm.jsonl"
cp "$dir/run/confirm.jsonl" "$dir/before"
"$root/scripts/bench/confirm.sh" "$dir/run" --search mcts >/dev/null 2>"$dir/err"; rc=$?
check "unknown search refused" test "$rc" -eq 2
check "names it" grep -q "search is puct or gumbel, not 'mcts'" "$dir/err"
"$root/scripts/bench/confirm.sh" "$dir/run" --games 5 >/dev/null 2>"$dir/err"; rc=$?
check "odd games refused" test "$rc" -eq 2
check "says why" grep -q "positive even number" "$dir/err"
"$root/scripts/bench/confirm.sh" "$dir/run" --games 2 --sims 2 --opponents "nosuchplayer" >/dev/null 2>"$dir/err"; rc=$?
check "a failing match is an error" test "$rc" -eq 1
check "names the opponent" grep -q "the match against nosuchplayer failed" "$dir/err"
check "earlier confirm.jsonl kept" cmp -s "$dir/before" "$dir/run/confirm.jsonl"
"$root/scripts/bench/confirm.sh" "$dir/nothing" >/dev/null 2>"$dir/err"; rc=$?
check "not a run refused" test "$rc" -eq 2
check "names it" grep -q "nothing is not a learning run" "$dir/err"
finish
