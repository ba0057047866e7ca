#!/usr/bin/env bash
# test_cli_trainer.sh TRAINER: xqz-trainer's command line: a bad --threads or --prefetch
# exits 2, names the option and its range, and creates nothing; --help lists them.
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
finish
