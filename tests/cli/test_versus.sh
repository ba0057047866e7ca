#!/usr/bin/env bash
# test_versus.sh XQZ: scripts/bench/versus.sh on two made-up learning runs (tiny nets): it
# picks the net each run had promoted by the given minute, plays both halves and adds
# them up; bad arguments are refused with the reason.
set -u
. "$(dirname "$0")/lib.sh"
export XQZ=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for r in a b; do fake_learning_run "$dir/$r" "$XQZ"; done
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --minute 5 --games 8 --sims 4 2>"$dir/err"); rc=$?
check "versus exits 0" test "$rc" -eq 0
check "net promoted by minute 5 is net 1" grep -q "A: .* net 00000000 (promoted at 0.0 min)" <<<"$out"
check "8 games in all" python3 -c '
import json, sys
r = json.loads(sys.argv[1].strip().splitlines()[-1])
assert r["games"] == 8 and r["wins"] + r["draws"] + r["losses"] == 8, r
assert r["score"] == 0.5, r   # the same net on both sides, on paired openings
' "$out"
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --games 4 --sims 4 2>/dev/null)
check "default: each run's last promoted net" grep -q "B: .* net 00000000 (promoted at 10.0 min)" <<<"$out"
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --step 999 --games 4 --sims 4 2>/dev/null)
check "--step 999: the net of fewer steps, net 1" grep -q "A: .* net 00000000 (promoted at 0.0 min)" <<<"$out"
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --step 1000 --games 4 --sims 4 2>/dev/null)
check "--step 1000: the net of 1000 steps" grep -q "B: .* net 00000000 (promoted at 10.0 min)" <<<"$out"
"$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --step 5 --minute 5 >/dev/null 2>"$dir/err"; rc=$?
check "--step with --minute refused" bash -c "[ $rc -eq 2 ] && grep -q 'give one' '$dir/err'"
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/a" --games 4 --sims 8 --search-a gumbel 2>"$dir/err"); rc=$?
check "one run against itself, Gumbel root against PUCT, exits 0" test "$rc" -eq 0
check "says which search each side plays" grep -q "A plays gnet:, B plays net:" <<<"$out"
check "and plays the 4 games" grep -q '"games": 4' <<<"$out"
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/a" --games 4 --sims 8 --search-a gumbel_tree \
  --search-b gumbel 2>"$dir/err"); rc=$?
check "gumbel_tree against gumbel exits 0" test "$rc" -eq 0
check "plays gtnet: against gnet:" grep -q "A plays gtnet:, B plays gnet:" <<<"$out"
# A weights file in place of a run (the shipped net, say) plays as itself.
"$XQZ" net init --size tiny --seed 1 --out "$dir/shipped.xqzn" >/dev/null
id=$("$XQZ" net info "$dir/shipped.xqzn" | awk '/^net id:/ {print substr($3, 1, 8)}')
out=$("$root/scripts/bench/versus.sh" "$dir/a" "$dir/shipped.xqzn" --step 999 --games 4 --sims 4 2>"$dir/err"); rc=$?
check "a weights file as B exits 0" test "$rc" -eq 0
check "names the file and its net id" grep -q "B: $dir/shipped.xqzn (net $id, a weights file)" <<<"$out"
check "the run still picks by --step" grep -q "A: .* net 00000000 (promoted at 0.0 min)" <<<"$out"
check "same seed, same net: even" grep -q '"score": 0.5' <<<"$out"
head -c 100 "$dir/shipped.xqzn" >"$dir/cut.xqzn"
"$root/scripts/bench/versus.sh" "$dir/cut.xqzn" "$dir/a" --games 4 >/dev/null 2>"$dir/err"; rc=$?
check "a truncated weights file refused" test "$rc" -eq 2
check "with xqz's reason, naming the file" grep -q "cut.xqzn" "$dir/err"
"$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --search-b alphazero >/dev/null 2>"$dir/err"; rc=$?
check "an unknown search refused" bash -c "[ $rc -eq 2 ] && grep -q \"takes puct, gumbel or gumbel_tree, not 'alphazero'\" '$dir/err'"
"$root/scripts/bench/versus.sh" "$dir/a" "$dir/b" --games 6 >/dev/null 2>"$dir/err"; rc=$?
check "games not a multiple of 4 refused" test "$rc" -eq 2
check "says why" grep -q "multiple of 4" "$dir/err"
"$root/scripts/bench/versus.sh" "$dir/a" "$dir/nothing" >/dev/null 2>"$dir/err"; rc=$?
check "not a run refused" test "$rc" -eq 2
check "names it" grep -q "nothing is not a learning run" "$dir/err"
finish
