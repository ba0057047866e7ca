#!/usr/bin/env bash
# test_services.sh BINDIR: the systemd deployment without touching the real system.
#   scripts/install-services.sh into a throwaway root (--destdir): binaries, units with
#   ExecStart at the prefix, the environment file written once and kept on a re-run,
#   clear errors for a bad role and a missing build; systemd-analyze verify of the
#   installed units (when systemd-analyze is there); deploy/xqz-run builds the daemons'
#   command lines from the environment, leaving out the flags of empty variables; the
#   Slurm batch script (fake srun: ids, threads, spool, the spool lock); the Containerfile
#   (copied files exist, runtime packages cover every library the daemons link).
set -u
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
INSTALL=$SRC/scripts/install-services.sh RUN=$SRC/deploy/xqz-run
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$dir/root

all_roles=(--role coordinator --role trainer --role member --role worker)
"$INSTALL" --destdir "$root" --build "$BIN" --prefix /opt/xqz "${all_roles[@]}" >"$dir/out1"; rc=$?
check "installer runs into a throwaway root" test "$rc" -eq 0
for f in xqz xqz-run xqz-coordinator xqz-trainer xqz-worker; do
  check "installed $f" test -x "$root/opt/xqz/bin/$f"
done
for u in xqz-coordinator.service xqz-trainer.service xqz-member@.service xqz-worker@.service; do
  check "installed $u at the prefix" grep -q "^ExecStart=/opt/xqz/bin/xqz-run " "$root/etc/systemd/system/$u"
done
check "the environment file is written from the example" cmp -s "$SRC/deploy/xqz.env.example" "$root/etc/xqzero/xqz.env"
check "state, cache and key directories exist" test -d "$root/var/lib/xqzero" -a -d "$root/var/cache/xqzero" -a -d "$root/etc/xqzero/keys"
check "it says what to start" grep -q "systemctl enable --now xqz-worker@1" "$dir/out1"
check "it says how to start members" grep -q "systemctl enable --now xqz-member@1 xqz-member@2" "$dir/out1"
check "it names the installed version" grep -q "(xqzero [0-9.]* (protocol [0-9]*))" "$dir/out1"
check "it names where it installed, under --destdir" \
  grep -q "into $root/opt/xqz/bin and $root/etc/systemd/system$" "$dir/out1"
"$INSTALL" --help >"$dir/help" 2>&1; rc=$?
check "--help exits 0" test "$rc" -eq 0
check "--help is the usage text, from its first line" grep -q "^install-services.sh --role" "$dir/help"
check "--help ends with the last option, no line of shell" \
  bash -c "tail -1 '$dir/help' | grep -q 'systemctl is not called' && ! grep -q 'set -e' '$dir/help'"
"$SRC/scripts/quickstart.sh" --help >"$dir/qhelp" 2>&1
check "the quickstart's --help has no line of shell either" \
  bash -c "grep -q '^usage: scripts/quickstart.sh' '$dir/qhelp' && ! grep -q 'set -e' '$dir/qhelp'"

echo "XQZ_COORDINATOR=tcp://edited:5555" >>"$root/etc/xqzero/xqz.env"
cp "$root/etc/xqzero/xqz.env" "$dir/env.before"
"$INSTALL" --destdir "$root" --build "$BIN" --prefix /opt/xqz "${all_roles[@]}" >"$dir/out2"; rc=$?
check "a second run succeeds (upgrade)" test "$rc" -eq 0
check "a second run keeps the edited environment file" cmp -s "$dir/env.before" "$root/etc/xqzero/xqz.env"
check "a second run leaves no temporary files" test -z "$(find "$root" -name '.*.new')"

"$INSTALL" --destdir "$dir/r2" --build "$BIN" --role gpu >/dev/null 2>"$dir/err"; rc=$?
check "an unknown role exits 2" test "$rc" -eq 2
check "an unknown role is named" grep -q "unknown role 'gpu'" "$dir/err"
"$INSTALL" --destdir "$dir/r3" --build "$dir/nothing" --role worker >/dev/null 2>"$dir/err"; rc=$?
check "a missing build exits 1 and says to build" bash -c "[ $rc -eq 1 ] && grep -q 'build first' '$dir/err'"
"$INSTALL" --destdir "$dir/r4" --build "$BIN" >/dev/null 2>"$dir/err"; rc=$?
check "no role exits 2" test "$rc" -eq 2

if command -v systemd-analyze >/dev/null && [ -d /lib/systemd/system ]; then
  # verify --root needs the base units (sysinit.target, ...) inside the root.
  "$INSTALL" --destdir "$dir/v" --build "$BIN" "${all_roles[@]}" >/dev/null
  mkdir -p "$dir/v/usr/lib/systemd"
  ln -s /lib/systemd/system "$dir/v/usr/lib/systemd/system"
  systemd-analyze verify --man=no --root="$dir/v" xqz-coordinator.service xqz-trainer.service \
    xqz-worker@1.service xqz-worker@2.service xqz-member@1.service xqz-member@2.service \
    >"$dir/verify" 2>&1; rc=$?
  check "systemd-analyze verify accepts the units without a warning" bash -c "[ $rc -eq 0 ] && [ ! -s '$dir/verify' ]"
  [ -s "$dir/verify" ] && cat "$dir/verify"
  # Exposure score 0..100 (systemd's 0.0..10.0): the sandbox must keep every unit at 3.0 or less.
  for u in xqz-coordinator.service xqz-trainer.service xqz-member@.service xqz-worker@.service; do
    check "systemd-analyze security: $u exposure at most 3.0" \
      systemd-analyze security --offline=yes --threshold=30 --root="$dir/v" "$dir/v/etc/systemd/system/$u" >/dev/null 2>&1
  done
else
  echo "skip systemd-analyze verify (not available)"
fi

# xqz-run: command lines from the environment.
dry() { env -i PATH="$PATH" XQZ_DRY_RUN=1 XQZ_BINDIR=/b "$@"; }
out=$(dry XQZ_COORDINATOR=tcp://c:5555 XQZ_WORKER_THREADS=3 XQZ_WORKER_ID=h XQZ_STATE_DIR=/s \
      XQZ_CACHE_DIR=/c XQZ_SERVER_KEY= XQZ_WORKER_KEY= "$RUN" worker 2)
check "worker: slot 2 has its own id, spool and cache" test "$out" = \
  "/b/xqz-worker --id h-2 --threads 3 --spool /s/worker-2/spool --cache /c/worker-2 --coordinator tcp://c:5555"
out=$(dry XQZ_WORKER_ID=h XQZ_WORKER_THREADS=1 XQZ_SERVER_KEY=/k/c.pub XQZ_WORKER_KEY=/k/w.secret \
      XQZ_GAMES_PER_THREAD=8 XQZ_WORKER_ARGS="--progress 5  --timeout 3000" "$RUN" worker)
check "worker: keys, games per thread and extra args when set" test "$out" = \
  "/b/xqz-worker --id h --threads 1 --spool /var/lib/xqzero/worker-1/spool --cache /var/cache/xqzero/worker-1 --games-per-thread 8 --server-key /k/c.pub --key /k/w.secret --progress 5 --timeout 3000"
out=$(dry XQZ_WORKER_ID=h "$RUN" worker)
check "worker: threads default to the core count" bash -c "grep -q -- '--threads $(nproc) ' <<<'$out'"
out=$(dry XQZ_TRAINER_DIR=/t XQZ_COORDINATOR=tcp://c:5555 XQZ_SERVER_KEY=/k/c.pub XQZ_TRAINER_KEY=/k/t.secret \
      XQZ_TRAINER_ARGS="--size tiny" "$RUN" trainer)
check "trainer: dir, address, keys, args" test "$out" = \
  "/b/xqz-trainer --dir /t --coordinator tcp://c:5555 --server-key /k/c.pub --key /k/t.secret --size tiny"
out=$(dry XQZ_STATE_DIR=/s XQZ_COORDINATOR=tcp://c:5555 XQZ_MEMBER_THREADS=4 \
      XQZ_TRAINER_KEY=/k/t.secret XQZ_TRAINER_ARGS="--batch 128" "$RUN" member 2)
check "member: instance 2 has its own state directory and the threads given" test "$out" = \
  "/b/xqz-trainer --dir /s/member-2 --threads 4 --coordinator tcp://c:5555 --key /k/t.secret --batch 128"
out=$(dry "$RUN" member)
check "member: all cores by default, state under /var/lib/xqzero" test "$out" = \
  "/b/xqz-trainer --dir /var/lib/xqzero/member-1 --threads all"
out=$(dry XQZ_CAMPAIGN=/camp XQZ_CURVE_SECRET_KEY= XQZ_HTTP=0.0.0.0:5580 "$RUN" coordinator)
check "coordinator: empty settings left out, http given" test "$out" = \
  "/b/xqz-coordinator --campaign /camp --http 0.0.0.0:5580"
out=$(dry XQZ_CAMPAIGN=/camp XQZ_CURVE_SECRET_KEY=/k/c.secret XQZ_CURVE_ALLOW_DIR=/k/allow \
      XQZ_CURVE_ADMIN_DIR=/k/admin "$RUN" coordinator)
check "coordinator: CURVE settings" test "$out" = \
  "/b/xqz-coordinator --campaign /camp --curve_secret_key /k/c.secret --curve_allow_dir /k/allow --curve_admin_dir /k/admin"
printf 'XQZ_CAMPAIGN=/from-file\nXQZ_COORDINATOR_ARGS="--sims 8 --gating none"\n' >"$dir/env"
out=$(dry XQZ_ENV_FILE="$dir/env" "$RUN" coordinator)
check "XQZ_ENV_FILE is read (quoted values with spaces)" test "$out" = \
  "/b/xqz-coordinator --campaign /from-file --sims 8 --gating none"
dry "$RUN" coordinator >/dev/null 2>"$dir/err"; rc=$?
check "coordinator without XQZ_CAMPAIGN fails and says so" bash -c "[ $rc -ne 0 ] && grep -q XQZ_CAMPAIGN '$dir/err'"
dry "$RUN" gpu >/dev/null 2>"$dir/err"; rc=$?
check "an unknown role exits 2" bash -c "[ $rc -eq 2 ] && grep -q \"unknown role 'gpu'\" '$dir/err'"
dry "$RUN" worker '../x' >/dev/null 2>"$dir/err"; rc=$?
check "an instance with a slash is refused" test "$rc" -eq 2
env -i PATH="$PATH" XQZ_BINDIR="$dir/none" XQZ_CAMPAIGN=/c "$RUN" coordinator 2>"$dir/err"; rc=$?
check "a missing daemon is named" bash -c "[ $rc -eq 1 ] && grep -q 'xqz-coordinator not found' '$dir/err'"

# Slurm: the batch script with a fake srun that prints the worker's command line.
SBATCH=$SRC/deploy/slurm/xqz-workers.sbatch
check "sbatch script: bash -n" bash -n "$SBATCH"
mkdir -p "$dir/src/deploy" "$dir/src/build/worker" "$dir/fakebin"
ln -s "$RUN" "$dir/src/deploy/xqz-run"
ln -s "$BIN/worker/xqz-worker" "$dir/src/build/worker/xqz-worker"
printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nXQZ_DRY_RUN=1 exec "$@"\n' >"$dir/fakebin/srun"
chmod +x "$dir/fakebin/srun"
slurm() { env -i PATH="$dir/fakebin:$PATH" HOME="$dir" USER=u XQZ_SRC="$dir/src" TMPDIR="$dir/tmp" "$@" bash "$SBATCH"; }
out=$(slurm XQZ_COORDINATOR=tcp://c:5555 SLURM_ARRAY_TASK_ID=3 SLURM_CPUS_PER_TASK=2 2>&1 | tail -1)
check "sbatch: task 3 runs slurm-3 with the task's CPUs, shared spool, node-local cache" test "$out" = \
  "$dir/src/build/worker/xqz-worker --id slurm-3 --threads 2 --spool $dir/src/slurm-spool/task-3/worker-1/spool --cache $dir/tmp/xqz-u/task-3/worker-1 --coordinator tcp://c:5555"
( flock 9; sleep 3 ) 9>"$dir/src/slurm-spool/task-3/lock" &
sleep 0.3
slurm XQZ_COORDINATOR=tcp://c:5555 SLURM_ARRAY_TASK_ID=3 >"$dir/out" 2>&1; rc=$?
check "sbatch: a second task on the same spool is refused" bash -c "[ $rc -eq 1 ] && grep -q 'another task uses the spool' '$dir/out'"
wait
slurm SLURM_ARRAY_TASK_ID=3 >"$dir/out" 2>&1; rc=$?
check "sbatch: no coordinator address is an error naming XQZ_COORDINATOR" bash -c "[ $rc -ne 0 ] && grep -q XQZ_COORDINATOR '$dir/out'"

# Container: what the Containerfile copies exists, and its runtime stage installs the
# package of every shared library the daemons need (as this Debian build links them).
CF=$SRC/deploy/container/Containerfile
check "Containerfile: the copied files exist" bash -c "cd '$SRC' && test -x deploy/xqz-run && test -x scripts/bootstrap.sh"
check "Containerfile: the entrypoint is xqz-run" grep -q '^ENTRYPOINT \["/usr/local/bin/xqz-run"\]' "$CF"
if command -v readelf >/dev/null && command -v dpkg >/dev/null; then
  missing=""
  for b in coordinator/xqz-coordinator trainer/xqz-trainer worker/xqz-worker tools/xqz; do
    for lib in $(readelf -d "$BIN/$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
      case "$lib" in libc.so*|libm.so*|libasan*|libubsan*|libgcc_s*|ld-linux*) continue ;; esac
      path=$(ldd "$BIN/$b" | awk -v l="$lib" '$1 == l { print $3 }')
      pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | cut -d: -f1 | head -1)
      grep -q "[ ]$pkg\([ ]\|$\)" "$CF" || missing="$missing $lib($pkg)"
    done
  done
  check "Containerfile: runtime packages cover the daemons' libraries${missing:+ (missing:$missing)}" test -z "$missing"
fi

if command -v shellcheck >/dev/null; then
  check "shellcheck: deploy scripts" shellcheck -x "$INSTALL" "$RUN" "$SBATCH"
fi
finish
