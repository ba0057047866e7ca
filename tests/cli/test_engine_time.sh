#!/usr/bin/env bash
# test_engine_time.sh XQZ: scripts/bench/engine_time.sh with tiny settings (20 and 40 ms a
# move, Fairy-Stockfish at depth 1, the shipped net): it plays every pair through the engine
# protocol, prints the table, and writes a well-formed CSV and SVG; its Elo is xqz arena's;
# bad arguments are refused with the reason. Skipped without Fairy-Stockfish (CI=true fails
# instead; scripts/bootstrap.sh installs it).
set -u
. "$(dirname "$0")/lib.sh"
export XQZ=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=$root/scripts/bench/engine_time.sh
command -v fairy-stockfish >/dev/null || [ -x /usr/games/fairy-stockfish ] ||
  skip_test "no fairy-stockfish (scripts/bootstrap.sh installs Debian's)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Two shards at once: each pair's 4 games are two games on each shard's openings.
"$bench" --times 40,20 --games 4 --parallel 2 --depths 1 --fs-movetime 20 --out "$dir/a" \
  >"$dir/a.out" 2>"$dir/a.err"; rc=$?
check "tiny run exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || { tail -20 "$dir/a.err"; cat "$dir/a.out"; }
check "table: the time pair, longer time first" \
  grep -q '^| net 40 ms vs net 20 ms | 4 | [0-9]*-[0-9]*-[0-9]* | ' "$dir/a.out"
check "table: the Fairy-Stockfish pair" \
  grep -q '^| net 20 ms vs Fairy-Stockfish depth 1 | 4 | ' "$dir/a.out"
check "table: Elo against the shortest time" grep -q '^| 40 ms | ' "$dir/a.out"
check "table.md is the printed table" bash -c "grep -q '^| pair | games | W-D-L' '$dir/a/table.md'"
check "two shards a pair, with their own logs" \
  test -s "$dir/a/logs/net40-vs-net20.1.out" -a -s "$dir/a/logs/net20-vs-fs1.0.out"
check "CSV: one row a pair, counts and Elo consistent" python3 - "$dir/a/engine_time.csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["kind"] for r in rows] == ["time", "fs"], rows
assert rows[0]["a_ms"] == "40" and rows[0]["b_ms"] == "20", rows[0]
assert rows[1]["a_ms"] == "20" and rows[1]["depth"] == "1", rows[1]
for r in rows:
    w, d, l, n = (int(r[k]) for k in ("wins", "draws", "losses", "games"))
    assert n == 4 and w + d + l == n, r
    s = (w + d / 2) / n
    assert abs(float(r["score"]) - s) < 1e-4, r
    assert sum(int(x) for x in r["ptnml"].split()) == 2, r  # two pairs
    if 0 < s < 1:
        assert abs(float(r["elo"]) + 400 * math.log10(1 / s - 1)) < 0.1, r
        assert float(r["elo_lo"]) <= float(r["elo"]) <= float(r["elo_hi"]), r
assert float(rows[0]["a_elo_vs_shortest"]) == float(rows[0]["elo"]), rows[0]
PY
check "SVG: well formed, a point per time and per depth" python3 - "$dir/a/engine_time.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
circles = root.findall(".//{http://www.w3.org/2000/svg}circle")
assert len(circles) == 3, len(circles)   # 20 ms, 40 ms; depth 1
PY

# One shard: the Elo and its interval are the ones xqz arena printed for the same games.
"$bench" --times 20 --games 4 --depths 1 --fs-movetime 20 --out "$dir/b" >"$dir/b.out" 2>&1; rc=$?
check "one time, Fairy-Stockfish only, exits 0" test "$rc" -eq 0
check "no time pair without two times" bash -c "! grep -q 'vs net' '$dir/b.out'"
check "Elo and interval as xqz arena's" python3 - "$dir/b" <<'PY'
import csv, json, math, sys
d = sys.argv[1]
(r,) = list(csv.DictReader(open(d + "/engine_time.csv")))
a = json.loads(open(d + "/logs/net20-vs-fs1.0.out").read().strip().splitlines()[-1])
assert (int(r["wins"]), int(r["draws"]), int(r["losses"])) == (a["wins"], a["draws"], a["losses"])
if a["elo"] is not None and math.isfinite(float(r["elo"])):
    assert abs(float(r["elo"]) - a["elo"]) < 0.1, (r, a)
assert r["ci_model"] in ("pentanomial", "trinomial", "wilson"), r
if r["ci_model"] == a["ci_model"] and a["elo_ci95"] is not None:
    half = (float(r["elo_hi"]) - float(r["elo_lo"])) / 2
    assert abs(half - a["elo_ci95"]) < 0.1, (r, a)
PY

# The report on made-up arena outputs: elo.c's pentanomial interval where it has a width,
# the trinomial one where every pair scored alike, a Wilson bound for a 100% score, and the
# ladder adding the pairs up.
mkdir -p "$dir/c/logs"
arena_json() { # FILE W D L PTNML
  echo "{\"games\":$(($2 + $3 + $4)),\"wins\":$2,\"draws\":$3,\"losses\":$4,\"ptnml\":[$5],\"avg_plies\":100.0}" >"$dir/c/logs/$1"
}
arena_json p.out 22 6 12 1,3,5,7,4
arena_json q.out 4 0 0 0,0,0,0,2
arena_json r.out 2 0 2 0,0,2,0,0
printf 'time\tp\t400\t100\t\t60\tlogs/p.out\ntime\tq\t1600\t400\t\t60\tlogs/q.out\nfs\tr\t1000\t\t3\t60\tlogs/r.out\n' \
  >"$dir/c/matches.tsv"
python3 "$root/scripts/bench/engine_time_report.py" report "$dir/c" >"$dir/c.out"; rc=$?
check "report on made-up outputs exits 0" test "$rc" -eq 0
# 62.5%: +89; the pair scores (0 to 1 by quarters, 1 3 5 7 4 pairs) give [+2, +189].
check "pentanomial interval" grep -q '^| net 400 ms vs net 100 ms | 40 | 22-6-12 | 62.5% | +89 \[+2, +189\]' "$dir/c.out"
check "100%: Wilson's lower bound, open above" grep -q '| 4-0-0 | 100.0% | +inf \[+7, +inf\]' "$dir/c.out"
check "split pairs: the trinomial interval" grep -q '| 2-0-2 | 50.0% | +0 \[-798, +798\]' "$dir/c.out"
check "ladder: 1600 ms at +inf, bounds added" grep -q '^| 1600 ms | +inf \[+9, +inf\] |' "$dir/c.out"
check "CSV names each interval's model" bash -c "cut -d, -f15 '$dir/c/engine_time.csv' | tr '\n' ' ' | grep -q 'ci_model pentanomial wilson trinomial'"

# Bad arguments: refused before anything is played, with the reason.
refused() { # refused WHAT ARGS...: exit 2 and stderr contains WHAT
  local what=$1; shift
  "$bench" "$@" --out "$dir/bad" >/dev/null 2>"$dir/bad.err" && return 1
  [ $? -eq 2 ] && grep -q -- "$what" "$dir/bad.err"
}
check "odd --games refused" refused "multiple of 2" --games 3
check "--games not a multiple of 2*P refused" refused "multiple of 2 \* --parallel (4)" --games 6 --parallel 2
check "a bad depth refused" refused "a depth in --depths must be a whole number" --depths 1,x
check "nothing to play refused" refused "nothing to play" --times 100 --depths none
check "a missing Fairy-Stockfish names bootstrap" refused "bootstrap.sh" --fs "$dir/nofs"
check "a missing net refused" refused "no net at" --net "$dir/none.xqzn"
check "an unknown option refused" refused "unknown option '--bogus'" --bogus
check "nothing played by the refusals" test ! -e "$dir/bad"
finish
