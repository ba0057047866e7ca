#!/usr/bin/env bash
# test_cli_startup.sh XQZ BINDIR: what a new user meets when a campaign starts (issue 49
# items 1, 6, 7).
#   A campaign the coordinator cannot write (campaign.db, its directory; campaign.ini when the
#   command line gives endpoints it must record) is refused at start, exit 2, naming the file
#   and the fix, before anything listens. Made read-only with chmod when not root, else with
#   chattr +i (root writes through file modes; an immutable file stops root too); skipped
#   with the reason when neither works here.
#   A restart with other settings logs each one that differs from the last start, and where
#   the new value comes from.
#   xqz status and xqz games on a missing campaign directory: one clear error, exit non-zero,
#   nothing else printed.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 BIN=$2
COORD=$BIN/coordinator/xqz-coordinator
dir=$(mktemp -d)
pids=()
locked=()
trap 'for f in "${locked[@]}"; do chattr -i "$f" 2>/dev/null; chmod u+w "$f" 2>/dev/null; done
      stop_and_report "$dir" "$dir"/*.log "$dir"/*.out' EXIT
export OPENBLAS_NUM_THREADS=1
camp=$dir/camp
read -r port < <(free_port)
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))

# run_once LOG ARGS...: starts the coordinator on the campaign, waits until it listens (or
# exits), stops it with SIGTERM; its exit status in $rc.
run_once() {
  local log=$1; shift
  "$COORD" --campaign "$camp" --http= "$@" >"$dir/$log" 2>&1 &
  local p=$!
  pids+=("$p")
  wait_for 20 sh -c "grep -qs listening '$dir/$log' || ! kill -0 $p 2>/dev/null"
  kill "$p" 2>/dev/null
  wait "$p"; rc=$?
}

# Item 7 first: nothing exists yet.
"$XQZ" status --campaign "$dir/nowhere" >"$dir/status.out" 2>"$dir/status.err"; rc=$?
check "status on a missing campaign exits non-zero" [ "$rc" -ne 0 ]
check "status prints nothing on stdout" [ ! -s "$dir/status.out" ]
check "status says one line" [ "$(wc -l <"$dir/status.err")" -eq 1 ]
check "status names the directory once and that it does not exist" \
  grep -q "^xqz status: $dir/nowhere: no such campaign directory" "$dir/status.err"
check "status leaves no field empty (no '()', no ': (')" \
  sh -c "! grep -qE '\(\)|: \(|  ' '$dir/status.err'"
"$XQZ" games "$dir/nowhere" >"$dir/games.out" 2>"$dir/games.err"; rc=$?
check "games on a missing campaign exits non-zero" [ "$rc" -ne 0 ]
check "games prints no header" [ ! -s "$dir/games.out" ]
check "games says one line naming the directory" \
  sh -c "[ \$(wc -l <'$dir/games.err') -eq 1 ] && grep -q 'no such campaign directory' '$dir/games.err'"

# Item 6: settings changed between two starts.
run_once first.log --router "$router" --pub "$pub" --net_size tiny --sims 40
check "the first start runs and stops cleanly" sh -c "[ $rc = 0 ] && grep -q 'stopped cleanly' '$dir/first.log'"
check "the first start lists no change" sh -c "! grep -q 'differs from the last start' '$dir/first.log'"
check "the settings of the start are recorded" grep -q '^sims = 40$' "$camp/last-start.ini"
run_once second.log --router "$router" --pub "$pub" --net_size tiny --sims 30
check "a restart with --sims 30 logs it" \
  grep -q 'setting differs from the last start key=sims was="40" now="30" from=command-line' "$dir/second.log"
check "and only it" [ "$(grep -c 'differs from the last start key=' "$dir/second.log")" -eq 1 ]
check "and says where the last start's settings are" grep -q "1 setting(s) differ.*last-start.ini" "$dir/second.log"
sed -i 's/^fsync_ms = .*/fsync_ms = 77/' "$camp/campaign.ini"
run_once third.log --router "$router" --pub "$pub" --net_size tiny --sims 30
check "a change in campaign.ini is logged as such" \
  grep -q 'key=fsync_ms was="[0-9]*" now="77" from=campaign.ini' "$dir/third.log"

# Item 1: a read-only campaign.
# make_ro FILE: read-only to this process (chmod when not root, else chattr +i); false when
# this machine cannot.
make_ro() {
  if [ "$(id -u)" != 0 ]; then chmod a-w "$1"; else chattr +i "$1" 2>/dev/null || return 1; fi
  locked+=("$1")
  ! [ -w "$1" ]
}
undo_ro() { chattr -i "$1" 2>/dev/null; chmod u+w "$1"; }
if ! make_ro "$camp/campaign.db"; then
  undo_ro "$camp/campaign.db"
  finish
  rc=$?
  [ "$rc" -ne 0 ] && exit 1
  skip_test "running as root, and chattr +i fails on $dir's file system: no way to make a file read-only to root here (the refusal is tested where chattr works or as another user)"
fi
run_once ro-db.log --router "$router" --pub "$pub"
check "a read-only campaign.db: exit 2" [ "$rc" = 2 ]
check "it is refused at start, naming the file" \
  grep -q "cannot start: $camp/campaign.db is read-only" "$dir/ro-db.log"
check "and the fix" grep -qE "chmod u\+w $camp/campaign.db|chattr -i -a $camp/campaign.db" "$dir/ro-db.log"
check "it never listens" sh -c "! grep -q listening '$dir/ro-db.log'"
check "nor says it stopped cleanly" sh -c "! grep -q 'stopped cleanly' '$dir/ro-db.log'"
undo_ro "$camp/campaign.db"
make_ro "$camp/campaign.ini"
read -r p2 < <(free_port)
run_once ro-ini.log --router "tcp://127.0.0.1:$p2" --pub "$pub"
check "a read-only campaign.ini and a new --router: exit 2" [ "$rc" = 2 ]
check "it names campaign.ini" grep -q "cannot start: $camp/campaign.ini is read-only" "$dir/ro-ini.log"
check "and the endpoints it could not record" \
  grep -q "campaign.ini is read-only.*command line gives other endpoints" "$dir/ro-ini.log"
run_once ro-ini-same.log --router "$router" --pub "$pub"
check "a read-only campaign.ini with its own endpoints still starts" \
  grep -q listening "$dir/ro-ini-same.log"
undo_ro "$camp/campaign.ini"
finish
