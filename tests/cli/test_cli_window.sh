#!/usr/bin/env bash
# test_cli_window.sh XQZ BINDIR: the growing window in a live coordinator. With window 1000,
# window_max 20000, `xqz bench coordinator` streams a few thousand positions; `xqz status
# --json` must then show a window capacity equal to KataGo's power law of the positions
# ingested (computed here in Python from the formula of docs/tuning.md), holding every
# position it has room for. A restart rebuilds the same window from the segments.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.err' EXIT
port=$(free_port) pubport=$(free_port)
router=tcp://127.0.0.1:$port
start() {
  "$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$pubport" --http= \
    --window 1000 --window_max 20000 --window_exponent 0.65 --window_slope 0.4 \
    --min_positions 100 --fsync_ms 50 --status_ms 60000 >>"$dir/coord.log" 2>&1 &
  coord=$!
  pids+=("$coord")
}
# window_ok: capacity = W(positions) by the formula, and the window holds min(capacity, N).
window_ok() {
  "$XQZ" status --coordinator "$router" --json >"$dir/status.json" 2>/dev/null &&
    python3 - "$dir/status.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n, w0, wmax, a, slope = s["positions"], 1000, 20000, 0.65, 0.4
want = w0 if n <= w0 else min(wmax, int(w0 + slope * w0 / a * ((n / w0) ** a - 1)))
print(f"  positions {n}: window {s['window_positions']} / {s['window_capacity']} (formula {want})")
sys.exit(0 if n > 2000 and abs(s["window_capacity"] - want) <= 1 and
         s["window_positions"] == min(n, s["window_capacity"]) else 1)
PY
}
start
"$XQZ" bench coordinator --endpoint "$router" --workers 1 --inflight 1 --pool 32 --seconds 3 \
  >"$dir/bench.out" 2>"$dir/bench.err"
check "the window grew with the positions ingested, by the formula" window_ok
cp "$dir/status.json" "$dir/before.json"
kill -TERM "$coord"
wait "$coord"
check "the coordinator stopped cleanly" test $? -eq 0
start
check "after a restart the window is rebuilt the same" wait_for 15 window_ok
same() {
  python3 - "$dir/before.json" "$dir/status.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("positions", "window_positions", "window_capacity")
sys.exit(0 if all(a[k] == b[k] for k in keys) else 1)
PY
}
check "with the same positions, window and capacity as before" same
finish
