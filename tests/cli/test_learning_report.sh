#!/usr/bin/env bash
# test_learning_report.sh REPORT_PY: the learning benchmark's report on a made-up run
# directory: which nets are laddered, the table (one row per laddered net, opponents
# weakest first), the goal verdicts, the flag for a promotion that lost ladder points, the
# chart, and the section it writes into docs/results.md (in a copy, not the real docs).
set -u
. "$(dirname "$0")/lib.sh"
REPORT=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=$dir/run
mkdir -p "$run/campaign/nets"
cat >"$run/run.json" <<'J'
{"t0": 1000, "minutes": 120, "cores": 2, "cpu": "test cpu", "coordinator_args": "",
 "trainer_args": "", "worker_args": "--threads 1", "version": "xqzero 0.0.0 (protocol 1)"}
J
{
  echo '{"net":"00000000000000a1","parent":"0000000000000000","step":0,"promoted":true,"first":true,"elo":0,"time":1000}'
  echo '{"net":"00000000000000b2","parent":"00000000000000a1","step":1000,"w":30,"d":10,"l":10,"score":0.7,"elo":147.2,"promoted":true,"time":1600,"games":500,"positions":40000}'
  echo '{"net":"00000000000000c3","parent":"00000000000000b2","step":2000,"w":10,"d":10,"l":30,"score":0.3,"elo":147.2,"promoted":false,"time":2200,"games":900,"positions":80000}'
  echo '{"net":"00000000000000d4","parent":"00000000000000b2","step":3000,"w":30,"d":10,"l":10,"score":0.7,"elo":294.4,"promoted":true,"time":2800,"games":1400,"positions":120000}'
  echo '{"net":"00000000000000e5","parent":"00000000000000d4","step":4000,"w":30,"d":10,"l":10,"score":0.7,"elo":441.6,"promoted":true,"time":3400,"games":1900,"positions":160000}'
} >"$run/campaign/promotions.log"
echo '2026-01-01T00:00:00.000Z INFO  trainer started endpoint=tcp://x dir=y batch=256 step=0' >"$run/campaign/trainer.log"
sel=$(python3 "$REPORT" select "$run" --max-nets 3)
check "select: at most 3 nets, first and last kept" test "$(awk '{print $1}' <<<"$sel" | tr '\n' ' ')" = "00000000000000a1 00000000000000d4 00000000000000e5 "
check "select: net file paths" grep -q "campaign/nets/00000000000000e5.xqzn" <<<"$sel"
check "at: the net promoted by minute 30 (b2 at 10, c3 rejected, d4 at 30)" \
  test "$(python3 "$REPORT" at "$run" 30)" = "00000000000000d4 $run/campaign/nets/00000000000000d4.xqzn 30.0"
check "at: minute 29 gives b2" grep -q "^00000000000000b2 .* 10.0$" <<<"$(python3 "$REPORT" at "$run" 29)"
check "at: default is the last" grep -q "^00000000000000e5 " <<<"$(python3 "$REPORT" at "$run")"
res() { printf '{"games":10,"wins":%d,"draws":%d,"losses":%d,"score":%s,"elo":%s,"elo_ci95":%s}' "$@"; }
{
  for n in a1 d4 e5; do
    case $n in a1) r="$(res 2 4 4 0.4 -70.4 200)" g="$(res 0 0 10 0.0 null null)" ;;
               d4) r="$(res 10 0 0 1.0 null null)" g="$(res 8 2 0 0.9 381.7 300)" ;;
               e5) r="$(res 6 0 4 0.6 70.4 250)" g="$(res 3 0 7 0.3 -147.2 220)" ;; esac
    printf '{"net":"00000000000000%s","opponent":"greedy","result":%s}\n' "$n" "$g"
    printf '{"net":"00000000000000%s","opponent":"random","result":%s}\n' "$n" "$r"
  done
} >"$run/ladder.jsonl"
# Confirmation matches of the last net decide its verdicts; a line for another net is ignored.
{
  printf '{"net":"00000000000000e5","opponent":"greedy","result":%s}\n' "$(res 91 0 9 0.91 400 100 | sed 's/"games":10/"games":100/')"
  printf '{"net":"00000000000000d4","opponent":"random","result":%s}\n' "$(res 0 0 100 0.0 null null)"
} >"$run/confirm.jsonl"
out=$(python3 "$REPORT" report "$run" 2>&1)
check "greedy verdict from the confirmation" grep -q "goal: 00000000 91.0% (+91 =0 -9) against \`greedy\` in 100 confirmation games (needs 90%): \*\*met\*\*" <<<"$out"
check "random verdict still from the ladder (no confirmation of that net)" grep -q "60.0% (+6 =0 -4) against \`random\` in 10 ladder games" <<<"$out"
check "the table keeps the ladder cell" grep -q "| 30% (-147 ± 220) |" <<<"$out"
rm "$run/confirm.jsonl"
mkdir -p "$dir/repo/docs"
printf '# Results\n\nearlier text\n' >"$dir/repo/docs/results.md"
out=$(cd "$dir/repo" && python3 "$REPORT" report "$run" --write-docs 2>&1); rc=$?
check "report exits 0" test "$rc" -eq 0
check "table header: opponents weakest first" grep -q "| net | promoted at | games | positions trained | self-Elo | random | greedy |" <<<"$out"
check "a row per laddered net" test "$(grep -c '^| 00000000 ' <<<"$out")" -eq 3
check "minutes to 90% against greedy: the first laddered net there (d4 at 30 min)" \
  grep -q "^- minutes to 90% against \`greedy\`: 30.0 (00000000, the first laddered net there)" <<<"$out"
check "self-Elo per CPU-hour: the last net's +442 over 120 min on 2 cores" \
  grep -q "^- self-Elo per CPU-hour: +110 (the last laddered net's +442 over 4.0 CPU-hours)" <<<"$out"
check "promotion time in minutes, positions trained = step x batch" grep -q "^| 00000000 | 30.0 min | 1400 | 768000 | +294 | 100% (+inf) | 90% (+382 ± 300) |" <<<"$out"
check "goal verdicts for the last net, from its ladder cells" grep -q "goal: 00000000 60.0% (+6 =0 -4) against \`random\` in 10 ladder games (needs 95%): \*\*not met\*\*" <<<"$out"
check "weaker promotion flagged" grep -q "scores 45% on average, 50 points below" <<<"$out"
check "chart: one point per net and series" test "$(grep -c '<circle' "$run/learning.svg")" -eq 9
check "docs section written between markers" grep -q "<!-- learning:begin -->" "$dir/repo/docs/results.md"
check "docs keep earlier text" grep -q "earlier text" "$dir/repo/docs/results.md"
check "chart copied to docs" test -s "$dir/repo/docs/learning.svg"
check "cells say the ladder's search (PUCT unless run.json says otherwise)" grep -q "^Cells: score of the net (PUCT search" <<<"$out"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["ladder_search"]="gumbel"; json.dump(d,open(sys.argv[1],"w"))' "$run/run.json"
out=$(python3 "$REPORT" report "$run" 2>&1)
check "a Gumbel ladder says so in the cells" grep -q "^Cells: score of the net (a Gumbel root search" <<<"$out"
check "and in the command" grep -q "learning.sh --minutes 120 --games 10 --search gumbel" <<<"$out"
(cd "$dir/repo" && python3 "$REPORT" report "$run" --write-docs >/dev/null 2>&1)
check "rewriting replaces the section" test "$(grep -c "learning:begin" "$dir/repo/docs/results.md")" -eq 1
finish
