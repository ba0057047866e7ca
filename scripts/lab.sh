#!/usr/bin/env bash
# lab.sh [-f HOSTS] [-c CONF] COMMAND: runs xqzero workers, and population members on
# trainer boxes, on the lab's machines over ssh.
#   install [--binaries [DIR]]  put the worker (and xqz-trainer on trainer boxes) on every
#                               host: build it there from this source tree (git archive of
#                               HEAD, bootstrap.sh --build-only, cmake), or copy DIR's
#                               binaries (same OS and architecture); also copies the CURVE
#                               keys named in CONF
#   start                       start the worker (or members) on every host (already
#                               running: left alone)
#   stop                        stop it (SIGTERM; unacknowledged games stay in its spool)
#   status                      per host: up or down, pid, games, games/min, net, and what
#                               the coordinator has accepted from it (xqz status --json);
#                               per member: up or down, pid, its last step= and slot=
#   logs HOST                   the last lines of HOST's worker log, or of its members'
#                               logs (XQZ_LOG_LINES, 40)
# HOSTS (default deploy/hosts, or XQZ_HOSTS): one "HOST [THREADS] [members=N]" per
# line, # comments and blank lines allowed; THREADS defaults to all the host's cores.
# members=N (1..16) makes HOST a trainer box: no worker but N population members
# (docs/population.md), each with THREADS / N threads, its own key (XQZ_TRAINER_KEY with
# {member}) and member-I.log; stop lets each write its checkpoint. CONF (default
# deploy/lab.conf, or XQZ_LAB_CONF): see deploy/lab.conf.example; environment variables
# win over it. A host that uses the systemd units (scripts/install-services.sh) is
# started and stopped with `sudo -n systemctl` (xqz-worker@1, or xqz-member@1..N; threads
# and keys from /etc/xqzero); elsewhere the daemons run under nohup with pid files in
# ~/.xqzero/HOST (one directory per host, so a home directory shared by the hosts works).
# Hosts are handled in parallel; an unreachable one gets one line and the exit status is
# 1 at the end.
# The host "local" is this machine without ssh (commands run here with bash, files are
# copied with cp, state in ~/.xqzero/local): try lab.sh on one machine, e.g.
#   echo "local 2" >hosts; lab.sh -f hosts install --binaries build; lab.sh -f hosts start
# status joins each host with the coordinator's workers by worker id (lab.sh starts a
# host's worker with the host's name as its id), else, for a host running the systemd
# unit, by the worker's host name, matched exactly.
# The scripts run on the hosts are single-quoted on purpose: they expand there.
# shellcheck disable=SC2016
set -uo pipefail
prog=lab.sh
src=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "$prog: $*" >&2; exit 2; }
usage() { sed -n '2,/unit, by the worker.s host name, matched exactly/p' "$0" | sed 's/^# \{0,1\}//'; }

hosts_file=${XQZ_HOSTS:-$src/deploy/hosts} conf=${XQZ_LAB_CONF:-} conf_given=0
[ -n "$conf" ] && conf_given=1
while [ $# -gt 0 ]; do
  case "$1" in
    -f) [ $# -ge 2 ] || die "-f needs a hosts file"; hosts_file=$2; shift 2 ;;
    -c) [ $# -ge 2 ] || die "-c needs a configuration file"; conf=$2; conf_given=1; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (try --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
cmd=$1; shift
case "$cmd" in install|start|stop|status|logs) ;; *) die "unknown command '$cmd' (try --help)" ;; esac

# Settings: the configuration file, then the environment on top of it.
vars=(XQZ_COORDINATOR XQZ_GAMES_PER_THREAD XQZ_WORKER_ARGS XQZ_SERVER_KEY XQZ_WORKER_KEY
      XQZ_TRAINER_KEY XQZ_TRAINER_ARGS XQZ_LAB_DIR XQZ_BUILD_DIR XQZ_TOOL XQZ_STATUS_ARGS
      XQZ_SSH XQZ_SCP)
declare -A from_env=()
for v in "${vars[@]}"; do [ -n "${!v+x}" ] && from_env[$v]=${!v}; done
[ -n "$conf" ] || conf=$src/deploy/lab.conf
if [ -f "$conf" ]; then
  # shellcheck disable=SC1090
  . "$conf" || die "cannot read $conf"
elif [ "$conf_given" = 1 ]; then
  die "configuration file $conf not found (start from deploy/lab.conf.example)"
fi
for v in "${!from_env[@]}"; do printf -v "$v" '%s' "${from_env[$v]}"; done
: "${XQZ_COORDINATOR:=tcp://127.0.0.1:5555}" "${XQZ_GAMES_PER_THREAD:=}" "${XQZ_WORKER_ARGS:=}"
: "${XQZ_SERVER_KEY:=}" "${XQZ_WORKER_KEY:=}" "${XQZ_LAB_DIR:=.xqzero}" "${XQZ_BUILD_DIR:=build}"
: "${XQZ_TOOL:=}" "${XQZ_STATUS_ARGS:=}" "${XQZ_TRAINER_KEY:=}" "${XQZ_TRAINER_ARGS:=}"
: "${XQZ_SSH:=ssh -o BatchMode=yes -o ConnectTimeout=10}"
: "${XQZ_SCP:=scp -q -o BatchMode=yes -o ConnectTimeout=10}"
read -r -a SSH <<<"$XQZ_SSH"
read -r -a SCP <<<"$XQZ_SCP"
case "$XQZ_BUILD_DIR" in /*) build=$XQZ_BUILD_DIR ;; *) build=$src/$XQZ_BUILD_DIR ;; esac

# The hosts file: HOSTS[i] with THREADS[i] ("" = all cores) and MEMBERS[i] ("" = a
# worker, else the number of population members).
HOSTS=() THREADS=() MEMBERS=()
read_hosts() {
  [ -r "$hosts_file" ] || die "hosts file $hosts_file not found (one 'HOST [THREADS] [members=N]' per line; -f FILE)"
  local n=0 line h t m rest seen
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    line=${line%%#*}
    read -r h t m rest <<<"$line"
    [ -n "$h" ] || continue
    case "$t" in members=*) rest=$m$rest m=$t t= ;; esac
    if [ -n "$rest" ] || ! [[ "$h" =~ ^[A-Za-z0-9._@-]+$ ]] || { [ -n "$t" ] && ! [[ "$t" =~ ^[1-9][0-9]{0,2}$ ]]; } ||
       { [ -n "$m" ] && [ "${m#members=}" = "$m" ]; }; then
      die "$hosts_file:$n: '$line' is not 'HOST [THREADS] [members=N]' (THREADS a whole number 1..999)"
    fi
    [ -z "$m" ] || [[ "$m" =~ ^members=([1-9]|1[0-6])$ ]] ||
      die "$hosts_file:$n: '$line': $m is not a number of population members 1..16"
    m=${m#members=}
    for seen in "${HOSTS[@]}"; do
      [ "$seen" != "$h" ] || die "$hosts_file:$n: $h is listed twice (one worker per host; give it more THREADS)"
    done
    HOSTS+=("$h") THREADS+=("$t") MEMBERS+=("$m")
  done <"$hosts_file"
  [ ${#HOSTS[@]} -gt 0 ] || die "$hosts_file lists no host"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# on HOST COMMAND [< input]: runs COMMAND on HOST. When ssh itself fails (status 255:
# unreachable, refused, no key) prints "HOST: unreachable: <ssh's reason>".
on() {
  local host=$1 rc err=$tmp/ssh.$1.$BASHPID; shift
  if [ "$host" = local ]; then
    (cd && bash -c "$*") 2>"$err"; rc=$?
  else
    "${SSH[@]}" "$host" "$@" 2>"$err"; rc=$?
  fi
  if [ "$rc" -eq 255 ]; then
    echo "$host: unreachable: $(grep -v '^$' "$err" | tail -1)"
  else
    cat "$err" >&2
  fi
  rm -f "$err"
  return "$rc"
}
# put FILE HOST PATH: copies FILE to PATH (relative to the home directory) on HOST, with
# scp, or cp for the host "local".
put() {
  if [ "$2" = local ]; then (cd && cp -- "$1" "$3"); else "${SCP[@]}" "$1" "$2:$3"; fi
}
# remote HOST SCRIPT: runs the shell functions below and SCRIPT with bash on HOST.
remote() {
  local host=$1
  on "$host" "bash -s" <<EOF
D=$(printf %q "$XQZ_LAB_DIR/$host")
$(declare -p COORD GPT WARGS SKEY WKEY NICE TARGS TKEY)
$(declare -f remote_prelude remote_running remote_systemd remote_progress remote_units remote_member_progress)
remote_prelude || exit 1
$2
EOF
}

# --- functions that run on the hosts (sent by remote) ---
remote_prelude() {
  cd || return 1
  mkdir -p "$D" || return 1
  D=$(cd "$D" && pwd)
}
# remote_systemd [ROLE]: the unit xqz-ROLE@ (worker by default) is installed.
remote_systemd() { command -v systemctl >/dev/null && systemctl cat "xqz-${1:-worker}@.service" >/dev/null 2>&1; }
# remote_running [NAME [COMMAND]]: $D/NAME.pid (worker.pid) names a live COMMAND
# (xqz-worker); sets pid.
remote_running() {
  pid=$(cat "$D/${1:-worker}.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(ps -p "$pid" -o comm= 2>/dev/null)" = "${2:-xqz-worker}" ]
}
# remote_units N: the member units xqz-member@1 .. xqz-member@N.
remote_units() { local i; for i in $(seq "$1"); do printf 'xqz-member@%s ' "$i"; done; }
# remote_member_progress: a member's last training step and its slot from its log on stdin.
remote_member_progress() {
  local log step slot
  log=$(grep -E ' training step=| member slot=')
  step=$(grep ' training step=' <<<"$log" | tail -1 | sed -n 's/.* step=\([0-9]*\).*/\1/p')
  slot=$(grep ' member slot=' <<<"$log" | tail -1 | sed -n 's/.* slot=\([0-9]*\).*/\1/p')
  echo "step=${step:--} slot=${slot:--}"
}
# remote_progress: games, rate and net from the last two progress lines of the log on stdin.
remote_progress() {
  local a b ta tb ga gb net
  a=$(grep ' progress games=' | tail -2)
  [ -n "$a" ] || { echo "games=0 games/min=-"; return; }
  b=$(tail -1 <<<"$a"); a=$(head -1 <<<"$a")
  gb=$(sed -n 's/.* games=\([0-9]*\).*/\1/p' <<<"$b")
  ga=$(sed -n 's/.* games=\([0-9]*\).*/\1/p' <<<"$a")
  net=$(sed -n 's/.* net=\([0-9a-f]*\).*/\1/p' <<<"$b")
  tb=$(date -d "${b%% *}" +%s.%N 2>/dev/null) ta=$(date -d "${a%% *}" +%s.%N 2>/dev/null)
  echo "games=$gb games/min=$(awk -v g="$((gb - ga))" -v t="$(awk -v x="$tb" -v y="$ta" 'BEGIN{print x-y}')" \
    'BEGIN{ if (t > 0) printf "%.1f", g * 60 / t; else printf "-" }') net=$net"
}

# --- commands, one host at a time (run in parallel by each_host) ---
host_start() {
  local host=$1 threads=$2
  [ -z "$3" ] || { member_start "$@"; return; }
  remote "$host" "$(declare -p threads host)"'
if remote_systemd; then
  sudo -n systemctl start xqz-worker@1 || exit 1
  echo "$host: started (systemd unit xqz-worker@1; threads from /etc/xqzero/xqz.env)"; exit 0
fi
[ -x "$D/bin/xqz-run" ] || { echo "$host: not installed: run lab.sh install first"; exit 1; }
if remote_running; then echo "$host: already running pid=$pid"; exit 0; fi
{
  echo "XQZ_COORDINATOR=$COORD"
  echo "XQZ_WORKER_THREADS=$threads"
  echo "XQZ_GAMES_PER_THREAD=$GPT"
  echo "XQZ_WORKER_NICE=$NICE"
  echo "XQZ_WORKER_ID=$host"
  echo "XQZ_STATE_DIR=$D"
  echo "XQZ_CACHE_DIR=$D/cache"
  echo "XQZ_WORKER_ARGS=\"$WARGS\""
  if [ -n "$SKEY" ]; then echo "XQZ_SERVER_KEY=$D/keys/server.pub"; fi
  if [ -n "$WKEY" ]; then echo "XQZ_WORKER_KEY=$D/keys/worker.secret"; fi
} >"$D/xqz.env"
start=(nohup); command -v setsid >/dev/null && start=(setsid nohup)
XQZ_ENV_FILE="$D/xqz.env" "${start[@]}" "$D/bin/xqz-run" worker >>"$D/worker.log" 2>&1 </dev/null &
echo $! >"$D/worker.pid"
sleep 1
if ! remote_running; then
  echo "$host: the worker exited at once; the end of $D/worker.log:"; tail -5 "$D/worker.log"; exit 1
fi
echo "$host: started pid=$pid threads=${threads:-all}"'
}

# member_start HOST THREADS N: population members 1..N, THREADS / N threads each.
member_start() {
  local host=$1 threads=$2 members=$3
  remote "$host" "$(declare -p threads host members)"'
if remote_systemd member; then
  sudo -n systemctl start $(remote_units "$members") || exit 1
  echo "$host: started (systemd units xqz-member@1..$members; threads from /etc/xqzero)"; exit 0
fi
[ -x "$D/bin/xqz-trainer" ] || { echo "$host: xqz-trainer not installed: run lab.sh install first"; exit 1; }
each=$((${threads:-$(nproc)} / members)); [ "$each" -ge 1 ] || each=1
{
  echo "XQZ_COORDINATOR=$COORD"
  echo "XQZ_MEMBER_THREADS=$each"
  echo "XQZ_STATE_DIR=$D"
  echo "XQZ_TRAINER_ARGS=\"$TARGS\""
  if [ -n "$SKEY" ]; then echo "XQZ_SERVER_KEY=$D/keys/server.pub"; fi
} >"$D/member.env"
start=(nohup); command -v setsid >/dev/null && start=(setsid nohup)
started=() rc=0
for i in $(seq "$members"); do
  if remote_running "member-$i" xqz-trainer; then echo "$host: member $i already running pid=$pid"; continue; fi
  key=; [ -z "$TKEY" ] || key=$D/keys/trainer-$i.secret
  XQZ_ENV_FILE="$D/member.env" XQZ_TRAINER_KEY=$key "${start[@]}" "$D/bin/xqz-run" member "$i" \
    >>"$D/member-$i.log" 2>&1 </dev/null &
  echo $! >"$D/member-$i.pid"
  started+=("$i")
done
[ ${#started[@]} -eq 0 ] || sleep 1
for i in "${started[@]}"; do
  if remote_running "member-$i" xqz-trainer; then echo "$host: member $i started pid=$pid threads=$each"; continue; fi
  echo "$host: member $i exited at once; the end of $D/member-$i.log:"; tail -5 "$D/member-$i.log"; rc=1
done
exit "$rc"'
}

host_stop() {
  [ -z "$3" ] || { member_stop "$@"; return; }
  remote "$1" "host=$1"'
if remote_systemd; then
  sudo -n systemctl stop xqz-worker@1 || exit 1
  echo "$host: stopped (systemd unit xqz-worker@1)"; exit 0
fi
if ! remote_running; then rm -f "$D/worker.pid"; echo "$host: not running"; exit 0; fi
kill -TERM "$pid"
for _ in $(seq 450); do remote_running || break; sleep 0.1; done
if remote_running; then echo "$host: pid=$pid still running 45 s after SIGTERM"; exit 1; fi
rm -f "$D/worker.pid"
echo "$host: stopped (unacknowledged games stay in $D/worker-1/spool)"'
}

# member_stop HOST THREADS N: SIGTERM to every member, then wait: each writes its checkpoint.
member_stop() {
  remote "$1" "host=$1 members=$3"'
if remote_systemd member; then
  sudo -n systemctl stop $(remote_units "$members") || exit 1
  echo "$host: stopped (systemd units xqz-member@1..$members)"; exit 0
fi
running=() rc=0
for i in $(seq "$members"); do
  if remote_running "member-$i" xqz-trainer; then kill -TERM "$pid"; running+=("$i"); continue; fi
  rm -f "$D/member-$i.pid"; echo "$host: member $i not running"
done
end=$((SECONDS + 120))
for i in "${running[@]}"; do
  while remote_running "member-$i" xqz-trainer && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
  if remote_running "member-$i" xqz-trainer; then echo "$host: member $i pid=$pid still running 120 s after SIGTERM"; rc=1; continue; fi
  rm -f "$D/member-$i.pid"; echo "$host: member $i stopped (its checkpoint and slot stay in $D/member-$i)"
done
exit "$rc"'
}

host_status() {
  [ -z "$3" ] || { member_status "$@"; return; }
  remote "$1" "host=$1"'
name=$(hostname)
if remote_systemd; then
  if systemctl is-active -q xqz-worker@1; then
    echo "$host up hostname=$name pid=$(systemctl show -p MainPID --value xqz-worker@1) unit=xqz-worker@1 $(journalctl -q -u xqz-worker@1 -o cat -n 300 2>/dev/null | remote_progress)"
  else echo "$host down hostname=$name unit=xqz-worker@1"; fi
elif remote_running; then
  echo "$host up hostname=$name pid=$pid $(remote_progress <"$D/worker.log")"
else
  echo "$host down hostname=$name"
fi'
}

# member_status HOST THREADS N: "HOST member-I up|down ..." per member.
member_status() {
  remote "$1" "host=$1 members=$3"'
for i in $(seq "$members"); do
  u=xqz-member@$i log=$D/member-$i.log
  if remote_systemd member; then
    if systemctl is-active -q "$u"; then
      echo "$host member-$i up pid=$(systemctl show -p MainPID --value "$u") unit=$u $(journalctl -q -u "$u" -o cat 2>/dev/null | remote_member_progress)"
    else echo "$host member-$i down unit=$u"; fi
  elif remote_running "member-$i" xqz-trainer; then
    echo "$host member-$i up pid=$pid $(remote_member_progress <"$log")"
  elif [ -f "$log" ]; then
    echo "$host member-$i down $(remote_member_progress <"$log")"
  else
    echo "$host member-$i down"
  fi
done'
}

host_install() {
  local host=$1 members=$3 f g hd bins i key=$XQZ_WORKER_KEY kname=worker n=1
  hd=$(printf %q "$XQZ_LAB_DIR/$host")
  # A trainer box gets xqz-trainer too, and a trainer key per member (trainer-I.secret)
  # instead of a worker key: the coordinator binds a member slot to its key.
  bins=(worker/xqz-worker tools/xqz)
  [ -z "$members" ] || bins+=(trainer/xqz-trainer) key=$XQZ_TRAINER_KEY n=$members
  if [ -n "$members" ] && [ -n "$key" ] && [ "$members" -gt 1 ] && [ "${key//\{member\}/}" = "$key" ]; then
    echo "$host: its $members members would share the trainer key $key; put {member} in XQZ_TRAINER_KEY (one key per member: the coordinator binds a slot to a key)"
    return 1
  fi
  if [ "$mode" = source ]; then
    # The source as committed (git archive), else the tree without build directories.
    if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
      git -C "$src" archive --format=tar HEAD
    else
      tar -C "$src" -cf - --exclude='./build*' --exclude=./.git --exclude=./campaigns .
    fi | on "$host" "mkdir -p $hd && cd $hd && rm -rf src.new && mkdir src.new && tar -xf - -C src.new && rm -rf src && mv src.new src" || return 1
    remote "$host" "$(declare -p bins)"'
cd "$D/src" && scripts/bootstrap.sh --build-only || { echo "installing the build dependencies failed (run scripts/bootstrap.sh --build-only there as root once)"; exit 1; }
cmake -S "$D/src" -B "$D/build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >"$D/build.log" 2>&1 &&
cmake --build "$D/build" --target "${bins[@]##*/}" -j"$(nproc)" >>"$D/build.log" 2>&1 ||
  { echo "build failed; the end of $D/build.log:"; tail -15 "$D/build.log"; exit 1; }
mkdir -p "$D/bin"
for f in "${bins[@]}"; do cp "$D/build/$f" "$D/bin/.new" && mv -f "$D/bin/.new" "$D/bin/${f##*/}"; done
cp "$D/src/deploy/xqz-run" "$D/bin/.new" && mv -f "$D/bin/.new" "$D/bin/xqz-run"' | sed "s/^/$host: /" || return 1
  else
    on "$host" "mkdir -p $hd/bin" || return 1
    for f in "${bins[@]/#/$bindir/}" "$src/deploy/xqz-run"; do
      put "$f" "$host" "$hd/bin/.${f##*/}.new" 2>"$tmp/scp.$host" ||
        { echo "$host: copying ${f##*/} failed: $(tail -1 "$tmp/scp.$host")"; return 1; }
    done
    on "$host" "cd $hd/bin && for f in ${bins[*]##*/} xqz-run; do mv -f .\$f.new \$f; done" || return 1
  fi
  if [ -n "$XQZ_SERVER_KEY" ] || [ -n "$key" ]; then
    on "$host" "mkdir -p $hd/keys && chmod 700 $hd/keys" || return 1
    if [ -n "$XQZ_SERVER_KEY" ]; then
      put "$XQZ_SERVER_KEY" "$host" "$hd/keys/server.pub" || { echo "$host: copying $XQZ_SERVER_KEY failed"; return 1; }
    fi
    for i in $(seq "$n"); do
      [ -n "$key" ] || break
      [ -z "$members" ] || kname=trainer-$i
      f=${key//\{host\}/$host} && f=${f//\{member\}/$i}
      g=${f##*/}
      [ -r "$f" ] || { echo "$host: ${kname%-*} key $f not found (xqz keygen --dir DIR ${g%.secret})"; return 1; }
      put "$f" "$host" "$hd/keys/$kname.secret" || { echo "$host: copying $f failed"; return 1; }
      on "$host" "chmod 600 $hd/keys/$kname.secret" || return 1
    done
  fi
  echo "$host: installed ($mode) in ~/$XQZ_LAB_DIR/$host/bin"
}

# each_host FUNCTION: FUNCTION HOST THREADS MEMBERS for every host at once; their output
# in the order of the hosts file. Status 1 when any failed.
each_host() {
  local i rc=0
  for i in "${!HOSTS[@]}"; do
    ( "$1" "${HOSTS[$i]}" "${THREADS[$i]}" "${MEMBERS[$i]}" >"$tmp/out.$i" 2>&1; echo $? >"$tmp/rc.$i" ) &
  done
  wait
  for i in "${!HOSTS[@]}"; do
    cat "$tmp/out.$i"
    [ "$(cat "$tmp/rc.$i")" = 0 ] || rc=1
  done
  return "$rc"
}

# Values the remote functions use.
COORD=$XQZ_COORDINATOR GPT=$XQZ_GAMES_PER_THREAD WARGS=$XQZ_WORKER_ARGS
# Workers are guests on lab members' machines: the lowest CPU priority unless the
# configuration says otherwise (docs/operations.md, "Lending a machine to self-play").
NICE=${XQZ_WORKER_NICE:-19}
SKEY=$XQZ_SERVER_KEY WKEY=$XQZ_WORKER_KEY TKEY=$XQZ_TRAINER_KEY TARGS=$XQZ_TRAINER_ARGS

# coordinator_view: "HOSTNAME games net alive" per worker from xqz status --json, or an
# explanation on stderr when the coordinator cannot be asked.
coordinator_view() {
  local tool=$XQZ_TOOL extra
  [ -n "$tool" ] || { tool=$build/tools/xqz; [ -x "$tool" ] || tool=xqz; }
  read -r -a extra <<<"$XQZ_STATUS_ARGS"
  "$tool" status --coordinator "$XQZ_COORDINATOR" --json "${extra[@]}" >"$tmp/status.json" 2>"$tmp/status.err" ||
    { echo "coordinator $XQZ_COORDINATOR: xqz status failed: $(tail -1 "$tmp/status.err")" >&2; return 1; }
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for w in s.get("worker_list", []):
    if str(w.get("role", "")).upper() in ("2", "3", "ROLE_TRAINER", "ROLE_CLI", "TRAINER", "CLI"):
        continue
    print(w.get("host", "?"), w.get("worker_id", "?"), w.get("games", 0), w.get("net_id", "-"),
          "yes" if w.get("alive") else "no")
' "$tmp/status.json"
}

case "$cmd" in
  install)
    mode=source bindir=$build
    read_hosts
    if [ "${1:-}" = --binaries ]; then
      mode=binaries; shift
      if [ -n "${1:-}" ]; then bindir=$1; shift; fi
      need=(worker/xqz-worker tools/xqz)
      [ -z "${MEMBERS[*]// /}" ] || need+=(trainer/xqz-trainer)
      for f in "${need[@]}"; do
        [ -x "$bindir/$f" ] || die "$bindir/$f not found: build first, or name the build directory"
      done
    fi
    [ $# -eq 0 ] || die "install: unexpected '$1' (install [--binaries [DIR]])"
    each_host host_install ;;
  start) read_hosts; each_host host_start ;;
  stop) read_hosts; each_host host_stop ;;
  status)
    read_hosts
    each_host host_status >"$tmp/hosts.out"; rc=$?
    coordinator_view >"$tmp/coord.out" 2>"$tmp/coord.err"; crc=$?
    # Join: a host's worker in the coordinator's list is the one whose id is the host's name
    # (host_start gives it that id); a host without one (the systemd unit chooses its own
    # id) has the workers whose host name is exactly the machine's. Strings compared as
    # strings, never as numbers.
    while read -r host state rest; do
      # A member: as its host said (the coordinator's worker list has no trainers).
      case "$state" in member-*) echo "$host $state${rest:+ $rest}"; continue ;; esac
      name=$(sed -n 's/.*hostname=\([^ ]*\).*/\1/p' <<<"$rest")
      line="$host $state ${rest/hostname=$name/}"
      line=${line//  / }; line=${line% }
      if [ "$crc" -eq 0 ]; then
        acc=$(awk -v h="$host" -v n="$name" '
          { if ($2 "" == h "") { id = 1 } }
          { row[NR] = $0 }
          END {
            for (i = 1; i <= NR; i++) {
              split(row[i], f, " ")
              if (id ? f[2] "" != h "" : f[1] "" != n "") continue
              g += f[3]; if (f[5] == "yes") { a = 1; net = f[4] }
            }
            if (g != "") printf "accepted=%d alive=%s%s", g, a ? "yes" : "no", net !~ /^0*$/ ? " coordinator_net=" net : ""
          }' "$tmp/coord.out")
        [ -n "$acc" ] && line="$line $acc"
      fi
      echo "$line"
    done < <(grep -E '^[^ ]+ (member-[0-9]+ )?(up|down)( |$)' "$tmp/hosts.out")
    grep -vE '^[^ ]+ (member-[0-9]+ )?(up|down)( |$)' "$tmp/hosts.out"
    cat "$tmp/coord.err"
    exit "$rc" ;;
  logs)
    [ $# -eq 1 ] || die "logs needs one HOST"
    lines=${XQZ_LOG_LINES:-40}
    [[ "$lines" =~ ^[0-9]+$ ]] || die "XQZ_LOG_LINES must be a number of lines"
    remote "$1" "lines=$lines"'
if remote_systemd; then journalctl -q -u xqz-worker@1 -n "$lines" -o cat
elif remote_systemd member; then journalctl -q -u "xqz-member@*" -n "$lines" -o cat
else
  logs=(); for f in "$D/worker.log" "$D"/member-*.log; do [ -f "$f" ] && logs+=("$f"); done
  [ ${#logs[@]} -gt 0 ] || { echo "no worker or member log in $D (never started?)"; exit 1; }
  tail -n "$lines" "${logs[@]}"
fi' ;;
esac
