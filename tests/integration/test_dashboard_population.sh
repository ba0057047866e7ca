#!/usr/bin/env bash
# test_dashboard_population.sh BINDIR: the dashboard's population panels in headless
# chromium (issue 48). A coordinator with population 4 and two exploit-and-explore steps
# written into its campaign.db (the rows population/events.c writes) shows the members
# panel with its line, the settings charts (before and after each step, by member) and the
# lineage, newest first; a coordinator without a population hides all three.
# Exit 77 (skipped) only when chromium or sqlite3 is not installed; under CI=true that is a
# failure.
set -u
. "$(dirname "$0")/../cli/lib.sh"
BIN=$1
COORD=$BIN/coordinator/xqz-coordinator
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then skip_test "chromium is not installed (scripts/bootstrap.sh installs it)"; fi
if ! command -v sqlite3 >/dev/null; then skip_test "sqlite3 is not installed"; fi
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT

api_up() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
    "http://127.0.0.1:$hport/api/status" 2>/dev/null
}
# run_coord NAME ARGS...: a coordinator for campaign NAME with its HTTP endpoint on hport.
run_coord() {
  local name=$1; shift
  local port pport
  port=$(free_port) pport=$(free_port) hport=$(free_port)
  "$COORD" --campaign "$dir/$name" --router "tcp://127.0.0.1:$port" \
    --pub "tcp://127.0.0.1:$pport" --http "127.0.0.1:$hport" --net_size tiny "$@" \
    >>"$dir/$name.log" 2>&1 &
  coord=$!
  pids+=("$coord")
  wait_for 20 api_up
}
browse() {
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$dir/chromium" --virtual-time-budget=4000 --dump-dom \
    "http://127.0.0.1:$hport/" >"$dir/$1.html" 2>>"$dir/chromium.log"
}
dom_check() { python3 "$(dirname "$0")/dashboard_dom.py" "$dir/$1.html" "$2"; }

check "a coordinator without a population serves the dashboard" run_coord plain
browse plain
check "no population: the population panels are hidden" dom_check plain population-hidden
kill -TERM "$coord"; wait "$coord"

check "a coordinator with population 4 serves the dashboard" run_coord pop --population 4 \
  --pbt_share 0.25
now=$(date +%s)
sqlite3 "$dir/pop/campaign.db" "INSERT INTO population_events VALUES
  (1, 1, 3, 1, 17, 1, 0.0001, 1, 256, 0.8, 0.0001, 1.2, 256, -40, 20, $((now - 600)));
  INSERT INTO population_events VALUES
  (2, 2, 0, 1, 18, 1, 0.0001, 1, 256, 1.2, 0.00012, 1, 320, -55, 30, $((now - 60)));"
browse pop
check "population: the members panel and its line" dom_check pop population-panel
check "population: the lineage, newest first" dom_check pop population-lineage
check "population: each setting charted by member" dom_check pop population-charts
kill -TERM "$coord"; wait "$coord"; rc=$?
check "the coordinator stops cleanly" test "$rc" -eq 0
pids=()
finish
