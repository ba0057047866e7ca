#!/usr/bin/env bash
# test_cli_options.sh COORDINATOR WORKER TRAINER: the three daemons take an option's name
# with dashes or with underscores (issue 49 item 5: the coordinator's --min-positions was an
# "unknown setting"), and a near miss is answered with the name it probably meant. Each
# refusal exits 2 and creates nothing.
set -u
. "$(dirname "$0")/lib.sh"
COORD=$1 WORKER=$2 TRAINER=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Coordinator: dashes reach the min_positions row (its value is then refused by range).
err=$("$COORD" --campaign "$dir/c" --min-positions abc 2>&1); rc=$?
check "coordinator --min-positions exits 2 on its value" test "$rc" -eq 2
check "coordinator --min-positions is min_positions" grep -q "min_positions: not an integer: 'abc'" <<<"$err"
check "coordinator: not an unknown setting" bash -c "! grep -q 'unknown setting' <<<\"\$1\"" _ "$err"
err=$("$COORD" --campaign "$dir/c" --min-positon 3 2>&1); rc=$?
check "coordinator --min-positon exits 2" test "$rc" -eq 2
check "coordinator --min-positon: did you mean" grep -q "unknown setting 'min-positon'; did you mean 'min_positions'?" <<<"$err"
err=$("$COORD" --campaign "$dir/c" --frobnicate 3 2>&1); rc=$?
check "coordinator --frobnicate: no suggestion" grep -q "unknown setting 'frobnicate' (see --help)" <<<"$err"
mkdir -p "$dir/ini"
printf 'min-positions = abc\n' >"$dir/ini/campaign.ini"
err=$("$COORD" --campaign "$dir/ini" 2>&1); rc=$?
check "campaign.ini's min-positions is min_positions" grep -q "min_positions: not an integer: 'abc'" <<<"$err"
check "no campaign created" test ! -e "$dir/c"

# Worker: underscores reach the dashed rows.
err=$("$WORKER" --games_per_thread 0 2>&1); rc=$?
check "worker --games_per_thread exits 2 on its value" test "$rc" -eq 2
check "worker --games_per_thread is --games-per-thread" grep -q -- "--games-per-thread must be a number from 1 to 4096, not '0'" <<<"$err"
err=$("$WORKER" --coordinater tcp://127.0.0.1:1 2>&1); rc=$?
check "worker --coordinater exits 2" test "$rc" -eq 2
check "worker --coordinater: did you mean --coordinator" grep -q -- "unknown option '--coordinater'; did you mean --coordinator?" <<<"$err"
err=$("$WORKER" --max_spool 2>&1); rc=$?
check "worker --max_spool without a value is named" grep -q -- "missing value for '--max_spool'" <<<"$err"

# Trainer: the same both ways.
err=$("$TRAINER" --dir "$dir/t" --max_steps x 2>&1); rc=$?
check "trainer --max_steps is --max-steps" grep -q -- "--max-steps: 'x' is not a whole number" <<<"$err"
err=$("$TRAINER" --dir "$dir/t" --ema-step 3 2>&1); rc=$?
check "trainer --ema-step: did you mean --ema-steps" grep -q -- "did you mean --ema-steps?" <<<"$err"
check "no trainer directory created" test ! -e "$dir/t"
finish
