#!/usr/bin/env bash
# test_errors.sh BINDIR: mistakes a new user makes get an error that names the fix.
#   An endpoint without its transport (--coordinator 127.0.0.1:5655) is refused up front by
#   the worker, the trainer and xqz status, saying tcp:// is needed; CURVE key files given
#   the wrong way round are refused by name. Against a CURVE coordinator, a worker without
#   keys, one with the wrong server key and one whose key is not allowed each name the
#   likely cause after a few failed handshakes. A silent worker is logged by id and address,
#   a silent CLI peer not at all (no empty "worker="). The quickstart's coordinator start, on a
#   port that is taken, suggests --port.
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
XQZ=$BIN/tools/xqz COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
TRAINER=$BIN/trainer/xqz-trainer
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log' EXIT
export OPENBLAS_NUM_THREADS=1

# refused NAME PATTERN COMMAND...: COMMAND exits 2 at once with PATTERN on stderr.
refused() {
  local name=$1 pat=$2 rc; shift 2
  "$@" >/dev/null 2>"$dir/err"; rc=$?
  check "$name (exit 2)" [ "$rc" = 2 ]
  check "$name: names the fix" grep -q -- "$pat" "$dir/err" || cat "$dir/err"
}
tcp="'127.0.0.1:5655' is not a ZeroMQ endpoint: it needs its transport, as in tcp://127.0.0.1:5655"
refused "xqz-worker --coordinator without tcp://" "$tcp" "$WORKER" --coordinator 127.0.0.1:5655
refused "xqz-trainer --coordinator without tcp://" "$tcp" \
  "$TRAINER" --dir "$dir/t" --coordinator 127.0.0.1:5655
refused "xqz status --coordinator without tcp://" "$tcp" "$XQZ" status --coordinator 127.0.0.1:5655
refused "xqz promotions --coordinator without a port" "has no port: add one, as in tcp://127.0.0.1:5555" \
  "$XQZ" promotions --coordinator tcp://127.0.0.1
refused "xqz-worker --pub without tcp://" "'127.0.0.1:5656' is not a ZeroMQ endpoint" \
  "$WORKER" --pub 127.0.0.1:5656

keys=$dir/keys
mkdir -p "$keys/allow"
for k in coordinator lab rogue; do "$XQZ" keygen --dir "$keys" "$k" >/dev/null; done
cp "$keys/lab.pub" "$keys/allow/"
refused "a worker with its key files swapped" "CURVE key files swapped" \
  "$WORKER" --server-key "$keys/coordinator.secret" --key "$keys/lab.pub"

port=$(free_port)
"$COORD" --campaign "$dir/camp" --router "tcp://127.0.0.1:$port" --pub "tcp://127.0.0.1:$((port + 1))" \
  --http "" --net_size tiny --curve_secret_key "$keys/coordinator.secret" \
  --curve_allow_dir "$keys/allow" >"$dir/coord.log" 2>&1 &
pids+=($!)
check "the CURVE coordinator listens" wait_for 20 grep -q "listening" "$dir/coord.log"
# worker_hint NAME LOG PATTERN ARGS...: a worker with ARGS logs PATTERN within 20 s.
worker_hint() {
  local name=$1 log=$2 pat=$3 w; shift 3
  "$WORKER" --coordinator "tcp://127.0.0.1:$port" --timeout 500 --spool "$dir/$log.spool" \
    --cache "$dir/$log.cache" "$@" >"$dir/$log.log" 2>&1 &
  w=$!; pids+=("$w")
  check "$name" wait_for 20 grep -q "coordinator not answering: $pat" "$dir/$log.log"
  kill "$w" 2>/dev/null
}
worker_hint "a worker without keys is told the coordinator probably uses CURVE" nokeys \
  "the coordinator's port answers but the handshake fails: it probably uses CURVE; give --server-key"
worker_hint "a worker with another server key is told to check its keys" wrongkey \
  "the CURVE handshake fails: --server-key must be the coordinator's .pub" \
  --server-key "$keys/rogue.pub" --key "$keys/lab.secret"
worker_hint "a worker whose key is not allowed is told to allow it" notallowed \
  "the coordinator refuses this worker's key: copy this worker's .pub into the coordinator's curve_allow_dir" \
  --server-key "$keys/coordinator.pub" --key "$keys/rogue.secret"

# A silent peer: a CLI request going quiet is not logged; a worker is, by id and address.
pport=$(free_port)
"$COORD" --campaign "$dir/plain" --router "tcp://127.0.0.1:$pport" --pub "tcp://127.0.0.1:$((pport + 1))" \
  --http "" --net_size tiny --worker_timeout_ms 500 --sims 4 --fast_sims 2 --max_plies 20 \
  >"$dir/plain.log" 2>&1 &
pids+=($!)
check "a plain coordinator listens" wait_for 20 grep -q "listening" "$dir/plain.log"
"$XQZ" status --coordinator "tcp://127.0.0.1:$pport" >/dev/null 2>&1
# --campaign DIR reaches a router bound to every interface (tcp://*:PORT) on loopback.
mkdir -p "$dir/wild" && printf 'router = tcp://*:%s\n' "$pport" >"$dir/wild/campaign.ini"
check "xqz status --campaign turns a bind to every interface into loopback" bash -c \
  "'$XQZ' status --campaign '$dir/wild' | grep -q '^campaign   plain   id [0-9a-f]*   at tcp://127.0.0.1:$pport '"
"$WORKER" --coordinator "tcp://127.0.0.1:$pport" --id gone-w1 --games-per-thread 1 \
  --spool "$dir/gone.spool" --cache "$dir/gone.cache" >"$dir/gone.log" 2>&1 &
w=$!; pids+=("$w")
check "the worker is welcomed" wait_for 20 grep -q "connected coordinator=" "$dir/gone.log"
kill -9 "$w"; wait "$w" 2>/dev/null
check "a silent worker is logged by id and address" wait_for 10 grep -q \
  "worker silent, presumed gone; .* worker=gone-w1 address=127.0.0.1" "$dir/plain.log"
check "a silent CLI peer is not logged with an empty worker id" \
  bash -c "! grep -Eq 'presumed gone.* worker=( |$)' '$dir/plain.log'"
# The quickstart's start (scripts/lib/campaign.sh) on a port another program holds.
qport=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$qport" &
pids+=($!)
check "something holds the port" wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$qport" 2>/dev/null
(
  . "$SRC/scripts/lib/campaign.sh"
  COORD_ARGS=(--net_size tiny) TRAINER_ARGS=() WORKER_ARGS=()
  campaign_start "$BIN" "$dir/qs" "$qport"
) >"$dir/qs.out" 2>&1
check "the quickstart's coordinator does not start on a taken port" [ $? = 1 ]
check "and it suggests --port" grep -q "is taken (another campaign, or another program): run again with --port N" "$dir/qs.out"
finish
