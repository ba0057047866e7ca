#!/usr/bin/env bash
# full_disk.sh: a full disk under a playing worker, measured. The campaign directory is a
# 20 MiB tmpfs in a mount namespace of its own (root needed); a coordinator and one worker
# (tiny net, short games) play; after 10 s a file fills the tmpfs for 25 s and is deleted;
# 40 s later (workers resend after 30 s) both stop with SIGTERM. Prints the games the worker
# played, those still in its spool (unacknowledged), hence acknowledged, and those stored in
# the campaign (`xqz games`): acknowledged minus stored is what the full disk lost.
#
# usage: sudo scripts/bench/full_disk.sh BINDIR
#   BINDIR: a build directory with coordinator/xqz-coordinator, worker/xqz-worker and
#   tools/xqz (e.g. build-rel).
# Measured on 2026-12-01 (2 shared cores): the coordinator of 3fe4144 acknowledged 3000
# games and stored 2261 (739 lost); this one acknowledged 3560 and stored 3560.
set -u
[ $# -eq 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
bin=$(cd "$1" && pwd)
if [ "${XQZ_FULL_DISK_NS:-}" != 1 ]; then
  XQZ_FULL_DISK_NS=1 exec unshare -m "$0" "$@"
fi
mount --make-rprivate /
d=$(mktemp -d)
mkdir -p "$d/camp"
mount -t tmpfs -o size=20m tmpfs "$d/camp" || { echo "cannot mount a tmpfs" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
"$bin/coordinator/xqz-coordinator" --campaign "$d/camp" --router "$router" --pub "$pub" --http= \
  --net_size tiny --sims 8 --fast_sims 4 --max_plies 40 --games_per_job 8 --fsync_ms 50 \
  >"$d/coord.log" 2>&1 &
coord=$!
sleep 2
"$bin/worker/xqz-worker" --coordinator "$router" --pub "$pub" --id w1 --threads 2 \
  --games-per-thread 8 --cache "$d/cache" --spool "$d/spool" --progress 5 >"$d/worker.log" 2>&1 &
worker=$!
sleep 10
dd if=/dev/zero of="$d/camp/filler" bs=1M count=64 2>/dev/null
sleep 25
rm -f "$d/camp/filler"
sleep 40
kill -TERM "$worker"; wait "$worker"
kill -TERM "$coord"; wait "$coord"
played=$(grep -o "progress games=[0-9]*" "$d/worker.log" | tail -1 | cut -d= -f2)
spooled=$(find "$d/spool" -name '*.xqs' | wc -l)
stored=$("$bin/tools/xqz" games "$d/camp" --json 2>/dev/null |
  python3 -c 'import json, sys; print([json.loads(l) for l in sys.stdin][-1]["games"])')
echo "played=$played still_spooled=$spooled acked=$((played - spooled)) stored=$stored" \
  "lost=$((played - spooled - stored))"
echo "coordinator lines about the full disk: $(grep -c 'cannot store games' "$d/coord.log")"
umount "$d/camp"
rm -rf "$d"
