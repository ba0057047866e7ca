#!/usr/bin/env bash
# test_cli_trainer.sh TRAINER: xqz-trainer's command line: a bad --threads or --prefetch
# exits 2, names the option and its range, and creates nothing; --help lists them. Every
# setting is checked at start: a bad --lr or --size exits 2 at once, with the coordinator
# down, instead of after the best net arrives (issue 49 item 4). Options may be spelled
# with underscores, and a near miss is answered with "did you mean" (item 5).
set -u
. "$(dirname "$0")/lib.sh"
TRAINER=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for bad in 0 1025 -3 two 4x ""; do
  err=$("$TRAINER" --dir "$dir/t" --threads "$bad" 2>&1); rc=$?
  check "--threads '$bad' exits 2" test "$rc" -eq 2
  check "--threads '$bad' is named with its range" \
    grep -q -- "--threads: '$bad' is not a thread count; give 1..1024, or all" <<<"$err"
done
check "no state directory is created" test ! -e "$dir/t"
err=$("$TRAINER" --dir "$dir/t" --prefetch 9 2>&1); rc=$?
check "--prefetch 9 exits 2" test "$rc" -eq 2
check "--prefetch names its range" grep -q -- "--prefetch: '9' is not a whole number in \[1, 8\]" <<<"$err"
check "still no state directory" test ! -e "$dir/t"
help=$("$TRAINER" --help)
check "--help lists --threads with its default" grep -q -- "--threads S .*(default all)" <<<"$help"
check "--help lists --prefetch with its default" grep -q -- "--prefetch N .*(default 2)" <<<"$help"

# Issue 49 item 4: a bad --lr or --size is refused before the trainer waits on a
# coordinator (none listens at port 1), with exit status 2 and nothing created.
err=$(timeout 20 "$TRAINER" --dir "$dir/t" --coordinator tcp://127.0.0.1:1 --lr abc 2>&1); rc=$?
check "--lr abc exits 2 at once, coordinator down" test "$rc" -eq 2
check "--lr abc is named with the form it wants" grep -q -- "--lr: 'abc': .*give STEP:LR" <<<"$err"
err=$(timeout 20 "$TRAINER" --dir "$dir/t" --coordinator tcp://127.0.0.1:1 --lr 0:0.1,0:0.2 2>&1); rc=$?
check "--lr with steps that do not increase exits 2" test "$rc" -eq 2
err=$(timeout 20 "$TRAINER" --dir "$dir/t" --coordinator tcp://127.0.0.1:1 --size huge 2>&1); rc=$?
check "--size huge exits 2 at once" test "$rc" -eq 2
check "--size huge names the sizes" grep -q -- "--size: 'huge' is not a network size (tiny" <<<"$err"
err=$("$TRAINER" --dir "$dir/t" --max-loss 0 2>&1); rc=$?
check "--max-loss 0 exits 2" test "$rc" -eq 2
err=$("$TRAINER" --dir "$dir/t" --keep-checkpoints 10 2>&1); rc=$?
check "--keep-checkpoints 10 exits 2 with its range" grep -q -- "--keep-checkpoints: '10' is not a whole number in \[0, 9\]" <<<"$err"
check "still nothing created" test ! -e "$dir/t"

# Issue 49 item 5: underscores for dashes, and "did you mean" for a near miss.
err=$("$TRAINER" --dir "$dir/t" --candidate_every 0 2>&1); rc=$?
check "--candidate_every is --candidate-every" grep -q -- "--candidate-every: '0' is not a whole number" <<<"$err"
err=$("$TRAINER" --dir "$dir/t" --theads 2 2>&1); rc=$?
check "--theads exits 2" test "$rc" -eq 2
check "--theads: did you mean --threads?" grep -q -- "unknown option '--theads'; did you mean --threads?" <<<"$err"
err=$("$TRAINER" --dir "$dir/t" --bogus 2 2>&1); rc=$?
check "--bogus: no suggestion" grep -q -- "unknown option '--bogus' (see --help)" <<<"$err"
help=$("$TRAINER" --help)
check "--help lists --keep-checkpoints with its default" grep -q -- "--keep-checkpoints N .*(default 3)" <<<"$help"
check "--help lists --max-loss with its default" grep -q -- "--max-loss X .*(default 1000)" <<<"$help"
finish
