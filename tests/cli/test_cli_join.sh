#!/usr/bin/env bash
# test_cli_join.sh XQZ BINDIR: joining in one line (issue 49). A coordinator bound to every
# interface logs, at start, the command that adds a worker on another machine, with its
# endpoints as other machines reach them (not "*"); `xqz join-command --campaign DIR`
# prints the same; running that command (plus local options) joins. A loopback-only
# coordinator warns that no other machine can join. With CURVE the steps name the
# coordinator's .pub and the curve_allow_dir the worker's key goes into.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator WORKER=$BIN/worker/xqz-worker
dir=$(mktemp -d)
pids=()
trap 'stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT
export OPENBLAS_NUM_THREADS=1
read -r port < <(free_port)

"$COORD" --campaign "$dir/camp" --router "tcp://*:$port" --pub "tcp://*:$((port + 1))" --http= \
  --net_size tiny --sims 4 --fast_sims 2 --max_plies 20 >"$dir/coord.log" 2>&1 &
coord=$!
pids+=("$coord")
check "the coordinator starts" wait_for 20 grep -qs listening "$dir/coord.log"
logged=$(grep -o 'to add a worker on another machine: xqz-worker .*' "$dir/coord.log" | sed 's/^to add a worker on another machine: //')
check "it logs the command at start" [ -n "$logged" ]
check "with reachable endpoints (no '*', no loopback): $logged" \
  sh -c "echo '$logged' | grep -Eq '^xqz-worker --coordinator tcp://[^*:]+:$port --pub tcp://[^*:]+:$((port + 1))$' && ! echo '$logged' | grep -q 'tcp://127\.'"
check "and no loopback warning" sh -c "! grep -q 'listens on loopback only' '$dir/coord.log'"
"$XQZ" join-command --campaign "$dir/camp" >"$dir/join.out" 2>"$dir/join.err"; rc=$?
check "xqz join-command exits 0" [ "$rc" = 0 ]
check "and prints the same command" [ "$(cat "$dir/join.out")" = "$logged" ]
check "with nothing on stderr" [ ! -s "$dir/join.err" ]
# The printed command, split into words as a shell would; xqz-worker is this build's.
# shellcheck disable=SC2086
set -- $logged
shift
"$WORKER" "$@" --id join-w1 --threads 1 --games-per-thread 1 --cache "$dir/cache" --spool "$dir/spool" \
  >"$dir/worker.log" 2>&1 &
pids+=("$!")
check "the printed command joins" wait_for 30 grep -qs 'hello worker=join-w1' "$dir/coord.log"
kill "$coord"; wait "$coord"

printf 'router = tcp://127.0.0.1:%s\npub = tcp://127.0.0.1:%s\n' "$port" "$((port + 1))" >"$dir/lo.ini"
mkdir -p "$dir/lo" && mv "$dir/lo.ini" "$dir/lo/campaign.ini"
"$XQZ" join-command --campaign "$dir/lo" >"$dir/lo.out" 2>"$dir/lo.err"
check "loopback: a warning that no other machine can join" \
  grep -q "listens on loopback only.*set router = tcp://\*:PORT" "$dir/lo.err"
"$XQZ" keygen --dir "$dir/keys" coordinator >/dev/null
mkdir -p "$dir/cv" "$dir/keys/allow"
printf 'router = tcp://*:%s\npub = tcp://*:%s\ncurve_secret_key = %s\ncurve_allow_dir = %s\n' \
  "$port" "$((port + 1))" "$dir/keys/coordinator.secret" "$dir/keys/allow" >"$dir/cv/campaign.ini"
"$XQZ" join-command --campaign "$dir/cv" >"$dir/cv.out" 2>"$dir/cv.err"
check "CURVE: the worker's key goes into curve_allow_dir" grep -q "worker.pub into $dir/keys/allow/" "$dir/cv.out"
check "CURVE: the coordinator's public key file is named" grep -q "copy $dir/keys/coordinator.pub to the worker" "$dir/cv.out"
check "CURVE: the command gives both keys" \
  grep -q "xqz-worker --coordinator tcp://.* --server-key ~/.xqz/coordinator.pub --key ~/.xqz/worker.secret" "$dir/cv.out"
"$XQZ" join-command --campaign "$dir/nowhere" >"$dir/none.out" 2>&1; rc=$?
check "no campaign: exit 1 with the reason" sh -c "[ $rc = 1 ] && grep -q 'has no campaign.ini' '$dir/none.out'"
finish
