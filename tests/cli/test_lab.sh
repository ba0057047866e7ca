#!/usr/bin/env bash
# test_lab.sh BINDIR: scripts/lab.sh against a fake ssh and scp on a real coordinator.
#   The fake ssh runs commands here, in a temporary HOME, for host "localhost" and fails
#   like ssh (status 255, "Could not resolve hostname") for "unreachable.invalid".
#   Checked: malformed hosts lines are named, install --binaries (and again), start
#   against a coordinator on a free loopback port, start twice gives one worker, status
#   shows the worker up with games and what the coordinator accepted (xqz status with
#   the admin key), logs, stop (and again), and the unreachable host: one line, the others
#   proceed, exit status 1. CURVE on, as documented: install copies the coordinator's
#   public key and the host's own secret key ({host} in XQZ_WORKER_KEY). A host with the
#   systemd unit (fake systemctl, journalctl, sudo): start, status, logs, stop. status
#   counts only the host's own worker, not another on the same machine. The host "local"
#   (no ssh, no scp): install, start, status, stop. A trainer box ("localhost 2
#   members=2"): install copies xqz-trainer and a trainer key per member ({member}; one
#   key shared by the members is refused), start starts two
#   xqz-trainer members (each --threads 1, its own --dir, the keys; they wait for a
#   coordinator that does not admit their key), status shows each with its step and slot
#   from its log, stop stops both; with the systemd units: xqz-member@1 and @2 through
#   systemctl, status from the journal. A bad members= is refused naming the line.
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$SRC/scripts/lab.sh
dir=$(mktemp -d)
coord=""
cleanup() {
  [ -n "$coord" ] && kill -9 "$coord" 2>/dev/null
  # A worker this test started (its pid file is in the fake home).
  for p in "$dir"/home/.xqzero/localhost/worker.pid "$dir"/lhome/.xqzero/local/worker.pid \
           "$dir"/home/.xqzero/localhost/member-*.pid; do
    p=$(cat "$p" 2>/dev/null) && [ -n "$p" ] && kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  if [ "${fails:-1}" -ne 0 ]; then
    for f in "$dir"/coord.log "$dir"/home/.xqzero/localhost/worker.log; do
      [ -f "$f" ] && { echo "---- $f (last 15 lines)"; tail -15 "$f"; }
    done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

mkdir -p "$dir/home" "$dir/fake"
cat >"$dir/fake/ssh" <<'EOF'
#!/usr/bin/env bash
# fake ssh [-o OPT]... HOST COMMAND...
while [ "${1:-}" = -o ]; do shift 2; done
host=$1; shift
case "$host" in
  localhost) cd "$FAKE_HOME" && HOME=$FAKE_HOME exec bash -c "$*" ;;
  # A host where the systemd unit is installed: fake systemctl, journalctl and sudo.
  unit.localhost) cd "$FAKE_HOME" && HOME=$FAKE_HOME PATH=$FAKE_UNIT_BIN:$PATH exec bash -c "$*" ;;
  *) echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; exit 255 ;;
esac
EOF
mkdir -p "$dir/unitbin"
cat >"$dir/unitbin/systemctl" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_HOME/systemctl.log"
case "$1" in
  cat) exit 0 ;;
  start) touch "$FAKE_HOME/unit.active" ;;
  stop) rm -f "$FAKE_HOME/unit.active" ;;
  is-active) [ -f "$FAKE_HOME/unit.active" ] ;;
  show) echo 4242 ;;
esac
EOF
cat >"$dir/unitbin/journalctl" <<'EOF'
#!/usr/bin/env bash
case "$*" in
  *xqz-member@*)
    i="$*"; i=${i##*xqz-member@}; i=${i%% *}
    echo "2026-11-29T10:00:00.000Z INFO  trainer population member slot=$i generation=0 parent=0 order=0"
    echo "2026-11-29T10:01:00.000Z INFO  trainer training step=30$i loss=3.1000 policy=2.0 value=0.9"
    exit 0 ;;
esac
echo "2026-11-29T10:00:00.000Z INFO  worker progress games=10 positions=99 pos_per_s=1.0 net=00000000000000aa unacked=0 connected=1"
echo "2026-11-29T10:01:00.000Z INFO  worker progress games=40 positions=399 pos_per_s=5.0 net=00000000000000bb unacked=0 connected=1"
EOF
printf '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n' >"$dir/unitbin/sudo"
chmod +x "$dir/unitbin/"*
export FAKE_UNIT_BIN=$dir/unitbin
cat >"$dir/fake/scp" <<'EOF'
#!/usr/bin/env bash
# fake scp [-q] [-o OPT]... SRC HOST:DEST
while [ "${1:-}" = -o ] || [ "${1:-}" = -q ]; do [ "$1" = -o ] && shift; shift; done
src=$1 dest=$2 host=${2%%:*} path=${2#*:}
case "$host" in
  localhost) case "$path" in /*) ;; *) path=$FAKE_HOME/$path ;; esac; exec cp "$src" "$path" ;;
  *) echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; exit 1 ;;
esac
EOF
chmod +x "$dir/fake/ssh" "$dir/fake/scp"
export FAKE_HOME=$dir/home XQZ_SSH=$dir/fake/ssh XQZ_SCP=$dir/fake/scp

# CURVE as documented: a coordinator key, one key per host ({host}), an admin key.
keys=$dir/keys
mkdir -p "$keys/allow" "$keys/admins"
for k in coordinator localhost admin trainer-localhost-1 trainer-localhost-2; do "$BIN/tools/xqz" keygen --dir "$keys" "$k" >/dev/null; done
cp "$keys/localhost.pub" "$keys/admin.pub" "$keys/allow/" && cp "$keys/admin.pub" "$keys/admins/"
# Ports below Linux's ephemeral range (32768-60999), so no socket bound to port 0 or
# outgoing connection of a concurrent test holds them; a clash left anyway is retried.
for _try in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 12000))
  # --http=: no dashboard, its default port would clash with other tests.
  "$BIN/coordinator/xqz-coordinator" --campaign "$dir/camp" --router "tcp://127.0.0.1:$port" --http= \
    --curve_secret_key "$keys/coordinator.secret" --curve_allow_dir "$keys/allow" --curve_admin_dir "$keys/admins" \
    --pub "tcp://127.0.0.1:$((port + 1))" --sims 8 --fast_sims 4 --max_plies 40 --games_per_job 2 \
    --gating none --status_ms 500 >"$dir/coord.log" 2>&1 &
  coord=$!
  wait_for 10 grep -qs "listening\|Address already in use" "$dir/coord.log"
  grep -qs "Address already in use" "$dir/coord.log" || break
  wait "$coord" 2>/dev/null
done

cat >"$dir/lab.conf" <<EOF
XQZ_COORDINATOR=tcp://127.0.0.1:$port
XQZ_GAMES_PER_THREAD=2
XQZ_WORKER_ARGS="--progress 1 --timeout 3000"
XQZ_BUILD_DIR=$BIN
XQZ_SERVER_KEY=$keys/coordinator.pub
XQZ_WORKER_KEY=$keys/{host}.secret
XQZ_TRAINER_KEY=$keys/trainer-{host}-{member}.secret
XQZ_STATUS_ARGS="--server-key $keys/coordinator.pub --key $keys/admin.secret"
EOF
printf '# the lab\nlocalhost 1\n\nunreachable.invalid 2   # down today\n' >"$dir/hosts"
printf 'localhost 1\n' >"$dir/hosts1"
lab() { "$LAB" -c "$dir/lab.conf" "$@"; }

# refused WHAT LINES PATTERN: lab.sh refuses a hosts file of LINES (printf %b) with exit
# status 2 and a message matching PATTERN.
refused() {
  printf '%b' "$2" >"$dir/bad"
  lab -f "$dir/bad" status >"$dir/out" 2>&1
  # shellcheck disable=SC2016 # expands in the bash -c
  check "$1" bash -c '[ "$1" -eq 2 ] && grep -q -- "$0" "$2"' "$3" "$?" "$dir/out"
}
refused "a malformed hosts line is named" 'localhost 1\nbad host 2 x\n' "$dir/bad:2: 'bad host 2 x'"
refused "a bad thread count is refused" 'localhost many\n' 'bad:1:'
refused "a host listed twice is refused" 'localhost 1\n# again:\nlocalhost 2\n' 'bad:3: localhost is listed twice'
refused "members=0 is refused naming the line" 'localhost 1\nlocalhost2 4 members=0\n' "bad:2: 'localhost2 4 members=0': members=0 is not"
refused "members=x is refused naming the line" 'localhost members=x\n' "bad:1: 'localhost members=x': members=x is not"
lab -c "$dir/none.conf" -f "$dir/hosts" status >"$dir/out" 2>&1; rc=$?
check "a missing configuration file is named" bash -c "[ $rc -eq 2 ] && grep -q 'none.conf not found' '$dir/out'"

lab -f "$dir/hosts" install --binaries "$BIN" >"$dir/out" 2>&1; rc=$?
check "install: exit 1 with a host unreachable" test "$rc" -eq 1
check "install: localhost installed" grep -q "^localhost: installed (binaries)" "$dir/out"
check "install: the unreachable host in one line" test "$(grep -c 'unreachable.invalid' "$dir/out")" -eq 1
check "install: ssh's reason is shown" grep -q "^unreachable.invalid: unreachable: ssh: Could not resolve hostname" "$dir/out"
check "install: binaries in ~/.xqzero/localhost/bin" test -x "$dir/home/.xqzero/localhost/bin/xqz-worker" -a -x "$dir/home/.xqzero/localhost/bin/xqz-run"
check "install: the host's own secret key, private" bash -c \
  "cmp -s '$keys/localhost.secret' '$dir/home/.xqzero/localhost/keys/worker.secret' && [ \$(stat -c %a '$dir/home/.xqzero/localhost/keys/worker.secret') = 600 ]"
check "install: the coordinator's public key" cmp -s "$keys/coordinator.pub" "$dir/home/.xqzero/localhost/keys/server.pub"
lab -f "$dir/hosts1" install --binaries "$BIN" >"$dir/out" 2>&1; rc=$?
check "install again: succeeds" test "$rc" -eq 0

lab -f "$dir/hosts" start >"$dir/out" 2>&1; rc=$?
check "start: exit 1 with a host unreachable" test "$rc" -eq 1
check "start: localhost started" grep -q "^localhost: started pid=[0-9]* threads=1" "$dir/out"
check "start: the unreachable host in one line" grep -q "^unreachable.invalid: unreachable: " "$dir/out"
pid=$(cat "$dir/home/.xqzero/localhost/worker.pid")
lab -f "$dir/hosts1" start >"$dir/out" 2>&1; rc=$?
check "start again: succeeds and says already running" bash -c "[ $rc -eq 0 ] && grep -q 'localhost: already running pid=$pid' '$dir/out'"
workers() { ps -eo args | grep -c "^$dir/home/.xqzero/localhost/bin/xqz-worker "; }
check "start twice: one worker" test "$(workers)" -eq 1
check "the worker has the coordinator, thread count and keys" \
  bash -c "ps -o args= -p $pid | grep -q -- '--threads 1 .*--coordinator tcp://127.0.0.1:$port .*--server-key .*/keys/server.pub --key .*/keys/worker.secret'"
check "the worker runs at the lowest priority (lab.sh's default --nice 19)" \
  bash -c "ps -o args= -p $pid | grep -q -- '--nice 19' && [ \$(ps -o ni= -p $pid) -eq 19 ]"
check "games arrive at the coordinator (over CURVE)" wait_for 60 bash -c "grep ' status ' '$dir/coord.log' | tail -1 | grep -q ' games=[1-9]'"
up_with_games() {
  lab -f "$dir/hosts" status >"$dir/status" 2>&1
  grep -qE "^localhost up pid=$pid .*games=[1-9][0-9]* games/min=[0-9.]+ net=[0-9a-f]{16}" "$dir/status"
}
check "status: the worker is up with games and a rate" wait_for 30 up_with_games
check "status: the unreachable host is reported" grep -q "^unreachable.invalid: unreachable: " "$dir/status"
accepted() { lab -f "$dir/hosts1" status >"$dir/status" 2>&1; grep -qE "^localhost up .*accepted=[1-9][0-9]* alive=yes" "$dir/status"; }
check "status: the coordinator's count for the host (xqz status, admin key)" wait_for 20 accepted
XQZ_LOG_LINES=5 lab logs localhost >"$dir/out" 2>&1; rc=$?
check "logs: the worker's last lines" bash -c "[ $rc -eq 0 ] && [ \$(wc -l <'$dir/out') -eq 5 ] && grep -q 'progress games=' '$dir/out'"
lab logs unreachable.invalid >"$dir/out" 2>&1; rc=$?
check "logs: an unreachable host is an error" bash -c "[ $rc -ne 0 ] && grep -q 'unreachable.invalid: unreachable' '$dir/out'"

lab -f "$dir/hosts" stop >"$dir/out" 2>&1; rc=$?
check "stop: exit 1 with a host unreachable" test "$rc" -eq 1
check "stop: localhost stopped" grep -q "^localhost: stopped" "$dir/out"
check "stop: the worker is gone" bash -c "! kill -0 $pid 2>/dev/null"
check "stop: the worker exited cleanly" grep -q "worker stopped unacked_in_spool=" "$dir/home/.xqzero/localhost/worker.log"
lab -f "$dir/hosts1" stop >"$dir/out" 2>&1; rc=$?
check "stop again: not running, exit 0" bash -c "[ $rc -eq 0 ] && grep -q '^localhost: not running' '$dir/out'"
lab -f "$dir/hosts1" status >"$dir/out" 2>&1
check "status: down after stop" grep -q "^localhost down" "$dir/out"

# Another worker on this machine (same host name, its own id): status counts only the
# games of the lab host's own worker.
"$BIN/worker/xqz-worker" --coordinator "tcp://127.0.0.1:$port" --server-key "$keys/coordinator.pub" \
  --key "$keys/admin.secret" --id stray --games-per-thread 2 --spool "$dir/stray.spool" \
  --cache "$dir/stray.cache" >"$dir/stray.log" 2>&1 &
stray=$!
games_of() {
  "$BIN/tools/xqz" status --coordinator "tcp://127.0.0.1:$port" --server-key "$keys/coordinator.pub" \
    --key "$keys/admin.secret" --json | python3 -c '
import json, sys
print(sum(w["games"] for w in json.load(sys.stdin)["worker_list"] if w["worker_id"] == sys.argv[1]))' "$1"
}
stray_has_games() { [ "$(games_of stray 2>/dev/null)" -gt 0 ] 2>/dev/null; }
check "the stray worker's games arrive" wait_for 60 stray_has_games
own=$(games_of localhost)
lab -f "$dir/hosts1" status >"$dir/out" 2>&1
only_own() { grep -q "^localhost down accepted=$own alive=" "$dir/out" || { echo "own=$own"; cat "$dir/out"; false; }; }
check "status: only the host's own worker is counted, not another on the machine" only_own
kill -9 "$stray"; wait "$stray" 2>/dev/null

# The host "local": this machine without ssh (ssh and scp made to fail).
printf 'local 1\n' >"$dir/hosts-local"
llab() { HOME=$dir/lhome XQZ_SSH=false XQZ_SCP=false "$LAB" -c "$dir/lab.conf" -f "$dir/hosts-local" "$@"; }
mkdir -p "$dir/lhome"
"$BIN/tools/xqz" keygen --dir "$keys" local >/dev/null && cp "$keys/local.pub" "$keys/allow/"
llab install --binaries "$BIN" >"$dir/out" 2>&1; rc=$?
check "local: install without ssh" bash -c "[ $rc -eq 0 ] && [ -x '$dir/lhome/.xqzero/local/bin/xqz-worker' ]"
llab start >"$dir/out" 2>&1; rc=$?
check "local: start without ssh" bash -c "[ $rc -eq 0 ] && grep -q '^local: started pid=' '$dir/out'"
lpid=$(cat "$dir/lhome/.xqzero/local/worker.pid" 2>/dev/null)
local_up() { llab status >"$dir/out" 2>&1; grep -qE "^local up pid=$lpid .*games=[1-9]" "$dir/out"; }
check "local: status shows it up with games" wait_for 60 local_up
llab stop >"$dir/out" 2>&1; rc=$?
check "local: stop" bash -c "[ $rc -eq 0 ] && grep -q '^local: stopped' '$dir/out' && ! kill -0 $lpid 2>/dev/null"

# A host with the systemd unit: lab.sh uses systemctl (through sudo -n) and the journal.
printf 'unit.localhost 4\n' >"$dir/hosts-unit"
lab -f "$dir/hosts-unit" start >"$dir/out" 2>&1; rc=$?
check "systemd host: start runs systemctl start xqz-worker@1" bash -c \
  "[ $rc -eq 0 ] && grep -q '^unit.localhost: started (systemd unit xqz-worker@1' '$dir/out' && grep -qx 'start xqz-worker@1' '$dir/home/systemctl.log'"
lab -f "$dir/hosts-unit" status >"$dir/out" 2>&1
check "systemd host: status from the unit and the journal" \
  grep -q "^unit.localhost up pid=4242 unit=xqz-worker@1 games=40 games/min=30.0 net=00000000000000bb" "$dir/out"
XQZ_LOG_LINES=2 lab logs unit.localhost >"$dir/out" 2>&1
check "systemd host: logs from the journal" grep -q "games=40" "$dir/out"
lab -f "$dir/hosts-unit" stop >"$dir/out" 2>&1; rc=$?
check "systemd host: stop runs systemctl stop" bash -c \
  "[ $rc -eq 0 ] && grep -qx 'stop xqz-worker@1' '$dir/home/systemctl.log'"
lab -f "$dir/hosts-unit" status >"$dir/out" 2>&1
check "systemd host: down after stop" grep -q "^unit.localhost down .*unit=xqz-worker@1" "$dir/out"

# A trainer box: two population members instead of a worker. The coordinator does not
# admit their key (no curve_trainer_dir): they wait for it, which is enough to start and
# stop them; their step and slot come from their logs.
printf 'localhost 2 members=2\n' >"$dir/hosts-members"
h=$dir/home/.xqzero/localhost
XQZ_TRAINER_KEY=$keys/trainer-localhost-1.secret lab -f "$dir/hosts-members" install --binaries "$BIN" >"$dir/out" 2>&1; rc=$?
check "members: one trainer key for two members is refused" bash -c \
  "[ $rc -eq 1 ] && grep -q '^localhost: its 2 members would share the trainer key .*put {member} in XQZ_TRAINER_KEY' '$dir/out'"
lab -f "$dir/hosts-members" install --binaries "$BIN" >"$dir/out" 2>&1; rc=$?
check "members: install copies xqz-trainer" bash -c "[ $rc -eq 0 ] && [ -x '$h/bin/xqz-trainer' ]"
check "members: install copies each member's trainer key, private" bash -c \
  "cmp -s '$keys/trainer-localhost-1.secret' '$h/keys/trainer-1.secret' && cmp -s '$keys/trainer-localhost-2.secret' '$h/keys/trainer-2.secret' &&
   [ \$(stat -c %a '$h/keys/trainer-2.secret') = 600 ]"
lab -f "$dir/hosts-members" start >"$dir/out" 2>&1; rc=$?
check "members: start starts members 1 and 2, a thread each" bash -c "[ $rc -eq 0 ] &&
  grep -q '^localhost: member 1 started pid=[0-9]* threads=1' '$dir/out' && grep -q '^localhost: member 2 started pid=[0-9]* threads=1' '$dir/out'"
m1=$(cat "$h/member-1.pid") m2=$(cat "$h/member-2.pid")
check "members: xqz-trainer with its own --dir, the coordinator and the keys" \
  bash -c "ps -o args= -p $m2 | grep -q -- '^$h/bin/xqz-trainer --dir $h/member-2 --threads 1 --coordinator tcp://127.0.0.1:$port --server-key $h/keys/server.pub --key $h/keys/trainer-2.secret'"
check "members: no worker on a trainer box" bash -c "! grep -q 'localhost: started' '$dir/out' && [ ! -s '$h/worker.pid' ]"
lab -f "$dir/hosts-members" start >"$dir/out" 2>&1; rc=$?
check "members: start again leaves them alone" bash -c "[ $rc -eq 0 ] && grep -q 'member 1 already running pid=$m1' '$dir/out' && grep -q 'member 2 already running pid=$m2' '$dir/out'"
echo "2026-11-29T10:00:00.000Z INFO  trainer population member slot=2 generation=0 parent=0 order=0" >>"$h/member-2.log"
echo "2026-11-29T10:01:00.000Z INFO  trainer training step=120 loss=3.1000 policy=2.0 value=0.9" >>"$h/member-2.log"
lab -f "$dir/hosts-members" status >"$dir/out" 2>&1
check "members: status lists each member up with its step and slot" bash -c \
  "grep -q '^localhost member-1 up pid=$m1 step=- slot=-$' '$dir/out' && grep -q '^localhost member-2 up pid=$m2 step=120 slot=2$' '$dir/out'"
XQZ_LOG_LINES=1 lab logs localhost >"$dir/out" 2>&1
check "members: logs shows the members' logs too" bash -c "grep -qx '==> $h/member-2.log <==' '$dir/out' && grep -q 'training step=120' '$dir/out'"
lab -f "$dir/hosts-members" stop >"$dir/out" 2>&1; rc=$?
check "members: stop stops both" bash -c "[ $rc -eq 0 ] && grep -q '^localhost: member 1 stopped' '$dir/out' &&
  grep -q '^localhost: member 2 stopped' '$dir/out' && ! kill -0 $m1 2>/dev/null && ! kill -0 $m2 2>/dev/null"
lab -f "$dir/hosts-members" status >"$dir/out" 2>&1
check "members: down after stop" bash -c "grep -q '^localhost member-1 down' '$dir/out' && grep -q '^localhost member-2 down step=120 slot=2' '$dir/out'"
# The same box with the xqz-member@ units: start, status and stop, each output with its
# exit status in $dir/unit-members.COMMAND.
printf 'unit.localhost 4 members=2\n' >"$dir/hosts-unit-members"
for c in start status stop; do
  lab -f "$dir/hosts-unit-members" "$c" >"$dir/unit-members.$c" 2>&1; echo "rc=$?" >>"$dir/unit-members.$c"
done
check "members, systemd host: start runs systemctl start xqz-member@1 xqz-member@2" bash -c \
  "grep -qx rc=0 '$dir/unit-members.start' && grep -q '^unit.localhost: started (systemd units xqz-member@1..2' '$dir/unit-members.start' &&
   grep -qx 'start xqz-member@1 xqz-member@2' '$dir/home/systemctl.log'"
check "members, systemd host: status from the units and the journal" bash -c \
  "grep -qx 'unit.localhost member-1 up pid=4242 unit=xqz-member@1 step=301 slot=1' '$dir/unit-members.status' &&
   grep -qx 'unit.localhost member-2 up pid=4242 unit=xqz-member@2 step=302 slot=2' '$dir/unit-members.status'"
check "members, systemd host: stop runs systemctl stop" bash -c \
  "grep -qx rc=0 '$dir/unit-members.stop' && grep -qx 'stop xqz-member@1 xqz-member@2' '$dir/home/systemctl.log'"

kill -TERM "$coord"; wait "$coord"; rc=$?; coord=""
check "coordinator stops cleanly" test "$rc" -eq 0
lab -f "$dir/hosts1" status >"$dir/out" 2>&1; rc=$?
check "status without a coordinator: hosts still shown, the reason on one line" bash -c \
  "[ $rc -eq 0 ] && grep -q '^localhost down' '$dir/out' && grep -q '^coordinator tcp://127.0.0.1:$port: xqz status failed: .*no answer' '$dir/out'"
check "shellcheck: lab.sh" bash -c "! command -v shellcheck >/dev/null || shellcheck -x '$LAB'"
finish
