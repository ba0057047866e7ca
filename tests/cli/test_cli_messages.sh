#!/usr/bin/env bash
# test_cli_messages.sh XQZ BINDIR: messages a new user met that now say what they mean
# (issue 49 items 8 and 10).
#   An endpoint missing a part names the part: tcp://127.0.0.1 has no port, tcp://:5555 no
#   host, tcp://127.0.0.1:abc a bad port (the coordinator, the worker and xqz).
#   A new campaign's database is "created", not "migrated from=0".
#   The lock's holder is shown with an ISO 8601 time, not seconds since the epoch.
#   A gating match without a decisive game (0-2-0) shows "0 (draws only)", not "+0 ± 0", and
#   its interval is null in JSON; a best Elo of 5.68e-14 (chained sums) shows as 0.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT
export OPENBLAS_NUM_THREADS=1

# says NAME PATTERN COMMAND...: COMMAND exits 2 with PATTERN in its output.
says() {
  local name=$1 pat=$2 rc; shift 2
  "$@" >"$dir/err.out" 2>&1; rc=$?
  check "$name (exit 2)" [ "$rc" = 2 ]
  check "$name: $pat" grep -qF -- "$pat" "$dir/err.out"
}
says "coordinator --router tcp://127.0.0.1" "'tcp://127.0.0.1' has no port: add one, as in tcp://127.0.0.1:5555" \
  "$COORD" --campaign "$dir/none" --router tcp://127.0.0.1
says "coordinator --router tcp://:5555" "'tcp://:5555' has no host" \
  "$COORD" --campaign "$dir/none" --router tcp://:5555
says "worker --coordinator tcp://127.0.0.1" "'tcp://127.0.0.1' has no port: add one" \
  "$WORKER" --coordinator tcp://127.0.0.1
says "worker --coordinator tcp://:5555" "'tcp://:5555' has no host" \
  "$WORKER" --coordinator tcp://:5555
says "xqz status --coordinator tcp://127.0.0.1:abc" "the port 'abc' is not a number" \
  "$XQZ" status --coordinator tcp://127.0.0.1:abc
check "no campaign made by the refusals" test ! -e "$dir/none"

port=$(free_port)
router=tcp://127.0.0.1:$port
start() {
  "$COORD" --campaign "$dir/camp" --router "$router" --pub "tcp://127.0.0.1:$((port + 1))" \
    --http "" --net_size tiny >>"$dir/coord$1.log" 2>&1 &
  cpid=$!
  pids+=("$cpid")
  wait_for 30 grep -q "listening" "$dir/coord$1.log"
}
stop() { kill -TERM "$cpid" && wait "$cpid"; }
check "coordinator starts a new campaign" start 1
check "a new campaign's database is created" grep -q "schema created .*version=" "$dir/coord1.log"
check "... not migrated from 0" bash -c "! grep -q 'schema migrated' '$dir/coord1.log'"

# A second coordinator on the same campaign: refused, the holder's time in ISO 8601.
"$COORD" --campaign "$dir/camp" --router "tcp://127.0.0.1:$(free_port)" --http "" \
  >"$dir/second.log" 2>&1
check "the lock holder's time is ISO 8601" \
  grep -Eq "since=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\)" "$dir/second.log"
check "... not seconds since the epoch" bash -c "! grep -Eq 'since=[0-9]+\)' '$dir/second.log'"
check "the coordinator stops" stop

# A 0-2-0 match and a best Elo that chained sums left at 5.68e-14, written as the
# coordinator would have written them.
python3 - "$dir/camp/campaign.db" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE promotions SET elo = 5.684341886080802e-14")
db.execute("INSERT INTO matches(id, net_a, net_b, wins, draws, losses, score, elo, decision, time)"
           " VALUES (7, 2, 1, 0, 2, 0, 0.5, 0.0, 'rejected', ?)", (int(time.time()),))
db.commit()
PY
check "coordinator restarts" start 2
"$XQZ" status --coordinator "$router" --json >"$dir/status.out" 2>&1
"$XQZ" status --coordinator "$router" >"$dir/screen.out" 2>&1
"$XQZ" promotions --coordinator "$router" >"$dir/prom.out" 2>&1
"$XQZ" promotions --coordinator "$router" --json >"$dir/promjson.out" 2>&1
check "/api/status's best_elo is 0, not 5.68e-14" python3 -c "
import json, sys
s = json.load(open('$dir/status.out'))
sys.exit(0 if s['best_elo'] == 0 else 1)"
check "xqz status shows Elo 0.0" grep -q "^best net .*   Elo 0\.0   " "$dir/screen.out"
check "a 0-2-0 match shows 0 (draws only)" grep -q "0-2-0 .* 0 (draws only) " "$dir/prom.out"
check "... never ± 0" bash -c "! grep -q '± 0' '$dir/prom.out'"
check "its interval is null in JSON" python3 -c "
import json, sys
m = [m for m in json.load(open('$dir/promjson.out')) if m['draws'] == 2][0]
sys.exit(0 if m['elo_lo'] is None and m['elo_hi'] is None and m['elo'] == 0 else 1)"
check "the coordinator stops again" stop
finish
