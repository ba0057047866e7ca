#!/usr/bin/env bash
# test_cli_coordinator.sh COORDINATOR: xqz-coordinator's command line and campaign.ini,
# checked before any file is written: a bad setting (a value out of range, a bad ZeroMQ or
# HTTP address, a setting given twice in campaign.ini) exits 2, names the setting, and
# creates or changes nothing.
set -u
. "$(dirname "$0")/lib.sh"
COORD=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
err=$("$COORD" --campaign "$dir/new" --mate_probe 2 2>&1); rc=$?
check "an out-of-range setting exits 2" test "$rc" -eq 2
check "the setting (once) and its range are named" grep -q -- "command line: --mate_probe: 2 outside \[0, 1\]" <<<"$err"
check "no campaign directory is created" test ! -e "$dir/new"
err=$("$COORD" --campaign "$dir/new" --games_per_jobs 8 2>&1); rc=$?
check "an unknown setting exits 2" test "$rc" -eq 2
check "the unknown setting is named" grep -q "unknown setting 'games_per_jobs'" <<<"$err"
check "still no campaign directory" test ! -e "$dir/new"
for bad in 4x 4x0 x16 4X16 4x16x 41x16 -1x16 big 4x16g0 tiny-gg 0x16g 4x16ss tiny-sg; do
  err=$("$COORD" --campaign "$dir/new" --net_size "$bad" 2>&1); rc=$?
  check "net_size '$bad' exits 2" test "$rc" -eq 2
  check "net_size '$bad' is named" grep -q "command line: --net_size: '$bad' is not a network size: tiny (2x16), default (6x64), large (10x128) or BxC" <<<"$err"
  check "net_size '$bad': every suffix is shown, to the last" grep -q "s (survival head), r (reply head)$" <<<"$err"
done
check "still no campaign directory after the net sizes" test ! -e "$dir/new"
err=$("$COORD" --campaign "$dir/new" --window 1000 --min_positions 5000 2>&1); rc=$?
check "a window that can never hold min_positions exits 2" test "$rc" -eq 2
check "min_positions and the window are named" \
  grep -q "min_positions: 5000 can never be reached: the window holds at most 1000" <<<"$err"
err=$("$COORD" --campaign "$dir/new" --window 1000 --window_max 500 2>&1); rc=$?
check "a window_max below window exits 2" bash -c "[ $rc -eq 2 ] && grep -q 'window_max: 500 is below window (1000)' <<<'$err'"
check "still no campaign directory after the window checks" test ! -e "$dir/new"
err=$("$COORD" --campaign "$dir/new" --self_balance 1 --sims 64 --sims_max 32 2>&1); rc=$?
check "a self_balance cap below sims exits 2" bash -c "[ $rc -eq 2 ] && grep -q 'sims_max: 32 is below sims (64)' <<<'$err'"
check "still no campaign directory after the self_balance check" test ! -e "$dir/new"
err=$("$COORD" --campaign "$dir/new" --population 1 2>&1); rc=$?
check "a population of one exits 2" bash -c "[ $rc -eq 2 ] && grep -q 'population: 1 is not a population: set 0 for one trainer, or 2 to 16' <<<'$err'"
err=$("$COORD" --campaign "$dir/new" --population 17 2>&1); rc=$?
check "a population above 16 exits 2" bash -c "[ $rc -eq 2 ] && grep -q -- '--population: 17 outside \[0, 16\]' <<<'$err'"
for kv in "pbt_quantile 0.6" "pbt_quantile 0" "pbt_resample_p 1.5" "pbt_share 0.7" "pbt_interval_steps 0" "population_control 2"; do
  read -r k v <<<"$kv"
  err=$("$COORD" --campaign "$dir/new" --"$k" "$v" 2>&1); rc=$?
  check "$k $v exits 2 and is named" \
    bash -c "[ $rc -eq 2 ] && grep -qF -- '--$k: $v outside' <<<\"\$1\"" _ "$err"
done
check "still no campaign directory after the population checks" test ! -e "$dir/new"
for bad in 127.0.0.1:5555 tcp://127.0.0.1 tcp://127.0.0.1:99999 tcp://:5555 "tcp://127.0.0.1: 5" udp://1.2.3.4:5; do
  err=$("$COORD" --campaign "$dir/new" --router "$bad" 2>&1); rc=$?
  check "router '$bad' exits 2" test "$rc" -eq 2
  check "router '$bad' is named" grep -qF -- "command line: --router: '$bad'" <<<"$err"
done
err=$("$COORD" --campaign "$dir/new" --router 127.0.0.1:5555 2>&1)
check "a router without tcp:// says how to write one" grep -q "write tcp://HOST:PORT" <<<"$err"
err=$("$COORD" --campaign "$dir/new" --pub tcp://127.0.0.1 2>&1); rc=$?
check "a pub without a port exits 2 and is named" \
  bash -c "[ $rc -eq 2 ] && grep -qF -- \"command line: --pub: 'tcp://127.0.0.1'\" <<<\"\$1\"" _ "$err"
for bad in 127.0.0.1 127.0.0.1:99999 localhost:http :5580; do
  err=$("$COORD" --campaign "$dir/new" --http "$bad" 2>&1); rc=$?
  check "http '$bad' exits 2" test "$rc" -eq 2
  check "http '$bad' is named" grep -qF -- "--http: http address '$bad'" <<<"$err"
done
check "still no campaign directory after the addresses" test ! -e "$dir/new"
err=$("$COORD" --campaign "$dir/new" --gating fast 2>&1); rc=$?
check "an unknown gating mode exits 2 and lists the modes" \
  bash -c "[ $rc -eq 2 ] && grep -q \"gating: 'fast' is not one of sprt|threshold|none\" <<<\"\$1\"" _ "$err"
err=$("$COORD" --campaign "$dir/new" --search alphazero 2>&1); rc=$?
check "an unknown root search exits 2 and lists the choices" \
  bash -c "[ $rc -eq 2 ] && grep -q \"search: 'alphazero' is not one of puct|gumbel|gumbel_tree\" <<<\"\$1\"" _ "$err"
err=$("$COORD" --campaign "$dir/new" --gumbel_actions 0 2>&1); rc=$?
check "gumbel_actions 0 exits 2 with its range" \
  bash -c "[ $rc -eq 2 ] && grep -q -- 'gumbel_actions: 0 outside \[1, 128\]' <<<\"\$1\"" _ "$err"
mkdir -p "$dir/twice"
printf 'sims = 8\n; a comment\nfast_sims = 4\n[more]\nsims = 16\n' >"$dir/twice/campaign.ini"
cp "$dir/twice/campaign.ini" "$dir/twice.ini"
err=$("$COORD" --campaign "$dir/twice" 2>&1); rc=$?
check "a setting given twice in campaign.ini exits 2" test "$rc" -eq 2
check "both of its lines are named" grep -q "'sims' is set twice, at line 1 and at line 5" <<<"$err"
check "that campaign.ini is untouched" cmp -s "$dir/twice/campaign.ini" "$dir/twice.ini"
check "nothing else is created beside it" test "$(ls "$dir/twice")" = "campaign.ini"
printf '  window = 5000\nsims = 8\nwindow = 6000\n' >"$dir/twice/campaign.ini"
err=$("$COORD" --campaign "$dir/twice" 2>&1); rc=$?
check "an indented first setting given again is refused too" \
  bash -c "[ $rc -eq 2 ] && grep -q \"'window' is set twice, at line 1 and at line 3\" <<<\"\$1\"" _ "$err"
mkdir -p "$dir/old"
printf 'games_per_job = 8\n' >"$dir/old/campaign.ini"
cp "$dir/old/campaign.ini" "$dir/keep.ini"
"$COORD" --campaign "$dir/old" --sims=-3 >/dev/null 2>&1; rc=$?
check "a bad setting on an existing campaign exits 2" test "$rc" -eq 2
check "its campaign.ini is untouched" cmp -s "$dir/old/campaign.ini" "$dir/keep.ini"
check "nothing else is created in it" test "$(ls "$dir/old")" = "campaign.ini"
err=$("$COORD" --sims 8 2>&1); rc=$?
check "a missing --campaign exits 2" bash -c "[ $rc -eq 2 ] && grep -q -- '--campaign DIR is required' <<<'$err'"
finish
