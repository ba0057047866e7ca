#!/usr/bin/env bash
# test_cli_status.sh XQZ BINDIR: `xqz status` and `xqz promotions` (with the anchors) against a live
# coordinator on a free loopback port with one worker playing short games (tiny net, few
# simulations), and the version commands. Also: a clear error when nothing answers; the
# screen names the campaign reached and its address, and workers "seen 12s ago"; the
# coordinator records its command-line ports in campaign.ini, which --campaign DIR reads.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT
port=$(free_port) pubport=$(free_port)
while [ "$pubport" = "$port" ]; do pubport=$(free_port); done
router=tcp://127.0.0.1:$port

version_line() { "$@" | grep -Eqx 'xqzero [0-9]+\.[0-9]+\.[0-9]+ \(protocol [0-9]+\)'; }
check "xqz version" version_line "$XQZ" version
check "xqz --version" version_line "$XQZ" --version
check "xqz-coordinator --version" version_line "$COORD" --version
check "xqz-worker --version" version_line "$WORKER" --version

no_answer() {
  ! "$XQZ" status --coordinator "$router" --timeout 300 >"$dir/none.out" 2>&1 &&
    grep -q "no answer from the coordinator at $router" "$dir/none.out"
}
check "status says clearly that nothing answers" no_answer

"$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$pubport" --http= \
  --net_size tiny --sims 8 --fast_sims 4 --max_plies 40 --games_per_job 2 --fsync_ms 50 \
  --anchors greedy --anchor_games 2 --gating_sims 4 >"$dir/coord.log" 2>&1 &
pids+=("$!")
"$WORKER" --coordinator "$router" --pub "tcp://127.0.0.1:$pubport" --id cli-w1 --threads 1 \
  --games-per-thread 2 --cache "$dir/cache" --spool "$dir/spool" --timeout 3000 \
  >"$dir/worker.log" 2>&1 &
pids+=("$!")

worker_has_games() {
  "$XQZ" status --coordinator "$router" --json >"$dir/status.json" 2>/dev/null &&
    python3 - "$dir/status.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
w = [w for w in s["worker_list"] if w["worker_id"] == "cli-w1"]
sys.exit(0 if w and w[0]["games"] > 0 else 1)
EOF
}
check "status --json shows the worker with games" wait_for 30 worker_has_games

status_fields() {
  python3 - "$dir/status.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
w = [w for w in s["worker_list"] if w["worker_id"] == "cli-w1"][0]
assert s["campaign"] == "camp", s["campaign"]
assert len(s["campaign_id"]) == 16 and int(s["campaign_id"], 16) != 0, s["campaign_id"]
assert s["protocol_version"] == 1 and s["software_version"].startswith("xqzero ")
assert len(s["best_net_id"]) == 16 and s["games"] >= w["games"]
assert s["workers"] == 1 and w["alive"] and w["role"] == "worker" and w["threads"] == 1
assert w["avg_plies"] > 0 and w["red_wins"] + w["black_wins"] + w["draws"] == w["games"]
assert sum(w["by_reason"].values()) == w["games"]
assert w["software_version"] == s["software_version"]
assert s["limits"]["max_message_bytes"] > 0 and "max_peer_errors" in s["limits"]
assert s["window_capacity"] > 0 and s["uptime_s"] >= 0
EOF
}
check "status --json fields agree" status_fields

"$XQZ" status --coordinator "$router" >"$dir/screen.out" 2>&1
screen_ok() {
  grep -Eq "^campaign   camp   id [0-9a-f]{16}   at $router " "$dir/screen.out" &&
    grep -Eq "^  cli-w1 .* [0-9]+s ago  " "$dir/screen.out" &&
    grep -q "^best net" "$dir/screen.out" &&
    grep -q "cli-w1" "$dir/screen.out" && grep -q "^workers: 1 alive" "$dir/screen.out"
}
check "status prints one screen with the worker" screen_ok

# The ports given on the command line are recorded in the campaign's campaign.ini, and
# --campaign DIR finds the coordinator through it.
check "campaign.ini records the router in use" grep -qx "router = $router" "$dir/camp/campaign.ini"
check "and the pub in use" grep -qx "pub = tcp://127.0.0.1:$pubport" "$dir/camp/campaign.ini"
# inih reads at most 200 bytes a line: the help comments are wrapped to fit.
check "no campaign.ini line is longer than inih reads" test -z "$(awk 'length > 98' "$dir/camp/campaign.ini")"
check "the net_size help is there, wrapped" grep -q "^; .*line convolutions" "$dir/camp/campaign.ini"
check "and the endpoint recording is logged" grep -q "recorded the endpoints in use in campaign.ini router=$router" "$dir/coord.log"
by_campaign() {
  "$XQZ" status --campaign "$dir/camp" >"$dir/bycamp.out" 2>&1 &&
    grep -Eq "^campaign   camp   id [0-9a-f]{16}   at $router " "$dir/bycamp.out"
}
check "status --campaign DIR reaches that campaign's coordinator" by_campaign
no_campaign() {
  mkdir -p "$dir/notcamp" # a directory, without campaign.ini (a missing one: test_cli_startup.sh)
  ! "$XQZ" status --campaign "$dir/notcamp" >"$dir/nocamp.out" 2>&1 &&
    grep -q "is it a campaign directory" "$dir/nocamp.out"
}
check "status --campaign on a directory without campaign.ini says so" no_campaign

# nets/best.xqzn names the best net from the start, and xqz play --campaign plays it.
best_link() {
  local best
  best=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best_net_id"])' "$dir/status.json")
  [ "$(readlink "$dir/camp/nets/best.xqzn")" = "$best.xqzn" ]
}
check "nets/best.xqzn links to the best net" best_link
play_campaign() {
  echo quit | "$XQZ" play --campaign "$dir/camp" --sims 2 >"$dir/play.out" 2>&1 &&
    grep -q "The best net of campaign $dir/camp: .*/camp/nets/[0-9a-f]\{16\}.xqzn" "$dir/play.out"
}
check "xqz play --campaign DIR plays its best net" play_campaign
play_nowhere() {
  ! "$XQZ" play --campaign "$dir/nowhere" >"$dir/play.out" 2>&1 &&
    grep -q "no such directory" "$dir/play.out"
}
check "xqz play --campaign on a missing directory says so" play_nowhere

promotions_json() {
  "$XQZ" promotions --coordinator "$router" --json >"$dir/prom.json" &&
    python3 -c 'import json,sys; assert isinstance(json.load(open(sys.argv[1])), list)' "$dir/prom.json"
}
check "promotions --json parses" promotions_json
check "promotions prints its table header" bash -c \
  "'$XQZ' promotions --coordinator '$router' | grep -q 'W-D-L'"

# Net 1 against the anchor (one pair, played by the worker): status and promotions show it.
anchors_shown() {
  "$XQZ" status --coordinator "$router" >"$dir/screen2.out" 2>&1 &&
    grep -Eq "^anchors    best net: [0-9]+% vs greedy \(2 games, net [0-9a-f]{16}, promotion 1\)" \
      "$dir/screen2.out"
}
check "status shows the best net's score against the anchor" wait_for 60 anchors_shown
anchor_table() {
  "$XQZ" promotions --coordinator "$router" >"$dir/prom.out" 2>&1 &&
    grep -q "^strength against the anchors" "$dir/prom.out" &&
    grep -Eq "^  1 +[0-9a-f]{16} +0 +[0-9]+% [0-9]+-[0-9]+-[0-9]+" "$dir/prom.out" &&
    grep -Eq "^  best net: [0-9]+% vs greedy" "$dir/prom.out"
}
check "promotions prints the anchor table" anchor_table
anchor_json() {
  "$XQZ" status --coordinator "$router" --json >"$dir/status2.json" &&
    python3 - "$dir/status2.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
a = s["anchor_history"]
assert len(a) == 1 and a[0]["anchor"] == "greedy" and a[0]["games"] == 2, a
assert a[0]["wins"] + a[0]["draws"] + a[0]["losses"] == 2 and a[0]["net_id"] == s["best_net_id"]
assert s["open_anchor"] is None
EOF
}
check "status --json carries the anchor history" anchor_json

# Issue 49: what comes next, the per-worker figures, the strength chart as SVG.
progress_shown() {
  "$XQZ" status --coordinator "$router" >"$dir/screen3.out" 2>&1 &&
    grep -q "^progress   next candidate unknown (no trainer has said its --candidate-every" \
      "$dir/screen3.out" &&
    grep -Eq "^           next anchor match at promotion 2 \(1 promotion away\)" "$dir/screen3.out" &&
    grep -Eq "^  cli-w1 .* [0-9]+s ago +[0-9]+s ago +(playing|idle) " "$dir/screen3.out"
}
check "status shows what comes next and the worker's last game and state" progress_shown
worker_figures_json() {
  "$XQZ" status --coordinator "$router" --json >"$dir/status3.json" &&
    python3 - "$dir/status3.json" <<'EOF'
import json, sys, time
s = json.load(open(sys.argv[1]))
w = [w for w in s["worker_list"] if w["worker_id"] == "cli-w1"][0]
assert w["games_day"] == w["games"] > 0, w
assert time.time() - 300 < w["last_game_time"] <= time.time() + 1, w
assert w["state"] in ("playing", "idle"), w
p = s["progress"]
assert p["candidate_every"] == 0 and p["next_candidate_s"] is None and not p["bounded"], p
assert p["next_anchor_promotion"] == 2 and p["promotions_to_anchor"] == 1, p
EOF
}
check "status --json carries games_day, last_game_time, state and progress" worker_figures_json
plot_svg() {
  "$XQZ" promotions --coordinator "$router" --plot "$dir/strength.svg" >"$dir/plot.out" 2>&1 &&
    python3 - "$dir/strength.svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == S + "svg"
titles = [t.text for t in root.iter(S + "title")]
assert any(t.startswith("net 1: Elo 0") for t in titles), titles
assert any(t.startswith("greedy: ") for t in titles), titles
texts = " ".join(t.text or "" for t in root.iter(S + "text"))
assert "by time" in texts, texts
EOF
}
check "promotions --plot writes the strength chart as SVG" plot_svg
plot_refuses_png() {
  ! "$XQZ" promotions --coordinator "$router" --plot "$dir/x.png" >"$dir/png.out" 2>&1 &&
    grep -q "SVG only" "$dir/png.out"
}
check "promotions --plot refuses another format" plot_refuses_png

follow_stops_on_ctrl_c() {
  "$XQZ" promotions --coordinator "$router" --follow >"$dir/follow.out" 2>&1 &
  local p=$!
  sleep 1
  kill -INT "$p"
  wait "$p" && grep -q "W-D-L" "$dir/follow.out"
}
check "promotions --follow runs until Ctrl-C" follow_stops_on_ctrl_c

finish
