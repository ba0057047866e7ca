#!/usr/bin/env bash
# test_dashboard.sh BINDIR: the dashboard in a real browser, on live data.
#   A coordinator with its HTTP endpoint on a free loopback port, a trainer and a worker
#   (tiny net, few simulations, a threshold gate that promotes after two games) make games,
#   loss points and promotions; then headless chromium loads http://127.0.0.1:PORT/, and the
#   DOM it dumps must hold the Elo and loss charts with data points, the worker's row with
#   games > 0, the decided matches and the balance's state. /metrics must show the
#   worker's series. A screenshot is taken (set XQZ_DASHBOARD_PNG=path to keep it, e.g.
#   docs/dashboard.png). The coordinator must stop cleanly on SIGTERM with the endpoint open.
# Exit 77 (skipped) only when chromium is not installed (scripts/bootstrap.sh installs it);
# under CI=true that is a failure.
set -u
. "$(dirname "$0")/../cli/lib.sh"
BIN=$1
COORD=$BIN/coordinator/xqz-coordinator TRAINER=$BIN/trainer/xqz-trainer WORKER=$BIN/worker/xqz-worker
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then skip_test "chromium is not installed (scripts/bootstrap.sh installs it)"; fi
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
# api PATH: the body of GET http://127.0.0.1:$hport/PATH (empty on any error).
api() {
  python3 - "$hport" "$1" <<'EOF' 2>/dev/null
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}{sys.argv[2]}", timeout=5).read().decode())
EOF
}
# status_at_least FIELD N: /api/status has FIELD >= N (FIELD a number or, for a list, its length).
status_at_least() {
  api /api/status | python3 -c '
import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
sys.exit(0 if (len(v) if isinstance(v, list) else v) >= int(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null
}

port=$(free_port) pport=$(free_port) hport=$(free_port)
router=tcp://127.0.0.1:$port
"$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$pport" \
  --http "127.0.0.1:$hport" --min_positions 100 --sims 8 --fast_sims 2 --max_plies 60 \
  --games_per_job 2 --fsync_ms 50 --status_ms 1000 --gating threshold --threshold_games 2 \
  --threshold_score 0 --gating_sims 4 --batch_size 16 >>"$dir/coord.log" 2>&1 &
coord=$!; pids+=("$coord")
check "the coordinator serves the dashboard" wait_for 10 status_at_least games 0
"$TRAINER" --coordinator "$router" --dir "$dir/trainer" --size tiny --batch 16 \
  --candidate-every 10 --checkpoint-every-s 60 --log-every 5 >>"$dir/trainer.log" 2>&1 &
pids+=("$!")
"$WORKER" --coordinator "$router" --id dash-w1 --games-per-thread 2 --progress 1 \
  --cache "$dir/w.cache" --spool "$dir/w.spool" --timeout 3000 >>"$dir/worker.log" 2>&1 &
pids+=("$!")
check "gating matches are decided" wait_for 60 status_at_least recent_matches 3
check "the trainer's loss reaches the coordinator" wait_for 40 status_at_least loss_history 1

# The browser: the page's scripts fetch /api/status and /api/promotions and draw.
browse() { # browse ARGS...: headless chromium on the dashboard
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$dir/chromium" --virtual-time-budget=4000 "$@" "http://127.0.0.1:$hport/" \
    2>>"$dir/chromium.log"
}
browse --dump-dom >"$dir/dom.html"
dom_check() { # dom_check WHAT: one assertion on the dumped DOM (see the Python below)
  python3 - "$dir/dom.html" "$1" <<'EOF'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    """Collects, per element id of interest, the tags and text inside it."""
    def __init__(self):
        super().__init__()
        self.stack, self.inside, self.circles, self.rows, self.text = [], {}, {}, {}, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        ident = a.get("id")
        self.stack.append((tag, ident))
        if ident:
            self.inside[ident] = self.inside.get(ident, 0) + 1
        for i, n in self.inside.items():
            if n and tag == "circle" and "pt" in a.get("class", "").split():
                self.circles[i] = self.circles.get(i, 0) + 1
            if n and tag == "tr":
                self.rows.setdefault(i, []).append([])
    def handle_endtag(self, tag):
        while self.stack:
            t, ident = self.stack.pop()
            if ident:
                self.inside[ident] -= 1
            if t == tag:
                break
    def handle_data(self, data):
        for i, n in self.inside.items():
            if n:
                self.text[i] = self.text.get(i, "") + data
                if self.rows.get(i):
                    self.rows[i][-1].append(data.strip())

d = Dom()
d.feed(open(sys.argv[1], encoding="utf-8").read())
what = sys.argv[2]
body = lambda i: [r for r in d.rows.get(i, []) if r and "worker" not in r and "net" not in r]
if what == "elo-points":
    ok = d.circles.get("elo-chart", 0) >= 2
elif what == "loss-points":
    ok = d.circles.get("loss-chart", 0) >= 3  # total, policy and value
elif what == "worker-row":
    rows = [r for r in body("workers") if "dash-w1" in r]
    ok = len(rows) == 1 and int([c for c in rows[0] if c][4].replace(",", "")) > 0
elif what == "match-rows":
    ok = sum(1 for r in body("matches") if "promoted" in r) >= 2
elif what == "headline":
    ok = "camp" in d.text.get("headline", "") and "threshold" in d.text.get("headline", "")
elif what == "balance":
    # A state of the balance (docs/operations.md) and the achieved reuse against R.
    state = d.text.get("balance-state", "")
    ok = any(k in state for k in ("filling", "no-trainer", "balanced", "trainer-bound",
                                  "worker-bound")) and "/ R 4" in d.text.get("balance", "")
else:
    sys.exit(f"unknown check {what}")
if not ok:
    print(f"  {what}: circles={d.circles} rows={ {k: v[:3] for k, v in d.rows.items()} }")
sys.exit(0 if ok else 1)
EOF
}
check "the Elo chart has a point per promotion" dom_check elo-points
check "the loss chart has total, policy and value points" dom_check loss-points
check "the workers table shows dash-w1 with games" dom_check worker-row
check "the matches table shows the promotions" dom_check match-rows
check "the headline shows the campaign" dom_check headline
check "the balance shows its state and the reuse against R" dom_check balance
browse --hide-scrollbars --window-size=1400,1300 --screenshot="$dir/dashboard.png" >/dev/null
check "a screenshot is taken" test "$(head -c 4 "$dir/dashboard.png" 2>/dev/null | tail -c 3)" = "PNG"
if [ -n "${XQZ_DASHBOARD_PNG:-}" ]; then cp "$dir/dashboard.png" "$XQZ_DASHBOARD_PNG"; fi

worker_games_metric() {
  api /metrics | grep -q '^xqz_worker_games_total{worker="dash-w1",host="[^"]*",version="[^"]*"} [1-9]'
}
limits_metric() { api /metrics | grep -q '^xqz_limit{name="max_peer_errors"} 20$'; }
check "/metrics has the worker's games" worker_games_metric
check "/metrics has the limits" limits_metric

for p in "${pids[@]}"; do kill -TERM "$p"; done
wait "$coord"; rc=$?
check "the coordinator stops cleanly with the endpoint open" test "$rc" -eq 0
pids=()
finish
