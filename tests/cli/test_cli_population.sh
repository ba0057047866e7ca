#!/usr/bin/env bash
# test_cli_population.sh XQZ BINDIR: `xqz population` and the population line of `xqz status`
# against a live coordinator (issue 48): a campaign without a population says so and exits 0
# (--json: null); one with population 4 prints its line (size, round, share) and the table
# header, and --json the population object; --follow prints again until stopped.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT

# start_coord NAME ARGS...: a coordinator on free ports for campaign NAME; sets router.
start_coord() {
  local name=$1; shift
  local port pubport
  port=$(free_port) pubport=$((port + 1))
  router=tcp://127.0.0.1:$port
  "$COORD" --campaign "$dir/$name" --router "$router" --pub "tcp://127.0.0.1:$pubport" --http= \
    --net_size tiny "$@" >"$dir/$name.log" 2>&1 &
  pids+=("$!")
  wait_for 20 "$XQZ" status --coordinator "$router" --timeout 500 >/dev/null 2>&1
}

start_coord plain
no_population() {
  "$XQZ" population --coordinator "$router" >"$dir/plain.out" 2>&1 &&
    grep -q "campaign plain has no population (its population setting is 0): nothing to show" \
      "$dir/plain.out"
}
check "no population: said, exit 0" no_population
check "no population: --json prints null" test "$("$XQZ" population --coordinator "$router" --json)" = null
no_line() { "$XQZ" status --coordinator "$router" >"$dir/plain-status.out" 2>&1 &&
  ! grep -q "^population" "$dir/plain-status.out"; }
check "no population: no line in xqz status" no_line

start_coord pop --population 4 --pbt_share 0.25
pop_screen() {
  "$XQZ" population --coordinator "$router" >"$dir/pop.out" 2>&1 &&
    grep -q "^population of pop: 4 members (0 alive), round 0, share 25%: no member rated yet" \
      "$dir/pop.out" && grep -Eq "^  member +host +alive +step +lr_scale" "$dir/pop.out" &&
    grep -q "^last exploit-and-explore steps (0 of 0)" "$dir/pop.out"
}
check "population: the line, the table and the events" pop_screen
pop_json() {
  "$XQZ" population --coordinator "$router" --json >"$dir/pop.json" 2>&1 &&
    python3 - "$dir/pop.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["size"] == 4 and p["share"] == 0.25 and p["rounds"] == 0, p
assert isinstance(p["members"], list) and p["events"] == [], p
for m in p["members"]:
    assert set(m["settings"]) == {"lr_scale", "l2", "value_weight", "batch"}, m
PY
}
check "population --json" pop_json
status_line() { "$XQZ" status --coordinator "$router" >"$dir/pop-status.out" 2>&1 &&
  grep -q "^population 4 members (0 alive), round 0, share 25%" "$dir/pop-status.out"; }
check "xqz status prints the population line" status_line
status_json() { "$XQZ" status --coordinator "$router" --json >"$dir/pop-status.json" &&
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["population"]["size"] == 4' \
    "$dir/pop-status.json"; }
check "xqz status --json has the population" status_json
follow() {
  timeout 3.5 "$XQZ" population --coordinator "$router" --follow --every 1 >"$dir/follow.out" 2>&1
  [ "$(grep -c '^population of pop' "$dir/follow.out")" -ge 2 ]
}
check "--follow prints again every --every seconds" follow
finish
