#!/usr/bin/env bash
# install-services.sh --role coordinator|trainer|member|worker [--role ...] [options]: installs
# built xqzero daemons as systemd services on this host (docs/operations.md, "Services").
#   - the role's daemon, the xqz tool and deploy/xqz-run into PREFIX/bin
#   - its unit(s) from deploy/systemd into /etc/systemd/system (ExecStart points at PREFIX)
#   - /etc/xqzero/xqz.env from deploy/xqz.env.example, only when it does not exist yet
#   - the system user 'xqz', /var/lib/xqzero, /var/cache/xqzero, /etc/xqzero/keys
# Idempotent: run it again after a rebuild to upgrade the binaries; settings are kept.
# It enables nothing: the closing lines say what to start.
#
# options:
#   --role R        coordinator, trainer, member (a population's trainers: xqz-member@N)
#                   or worker (repeatable)
#   --build DIR     the CMake build directory with the binaries (default: build)
#   --prefix DIR    where binaries go (default: /usr/local)
#   --destdir DIR   install into DIR as a root (for packaging and tests): no user is
#                   created, nothing is chowned, systemctl is not called
set -euo pipefail
prog=install-services.sh
src=$(cd "$(dirname "$0")/.." && pwd)
build=build prefix=/usr/local destdir="" roles=()
die() { echo "$prog: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --role) [ $# -ge 2 ] || die "--role needs coordinator, trainer, member or worker"
            case "$2" in coordinator|trainer|member|worker) roles+=("$2") ;;
              *) die "unknown role '$2': coordinator, trainer, member or worker" ;; esac
            shift 2 ;;
    --build) [ $# -ge 2 ] || die "--build needs a directory"; build=$2; shift 2 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --destdir) [ $# -ge 2 ] || die "--destdir needs a directory"; destdir=$2; shift 2 ;;
    -h|--help)
      # shellcheck source=SCRIPTDIR/lib/usage.sh
      . "$src/scripts/lib/usage.sh"; script_usage "$0"; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
done
[ ${#roles[@]} -gt 0 ] || die "say which services to install: --role coordinator|trainer|member|worker"
case "$build" in /*) ;; *) build=$src/$build ;; esac
if [ -n "$destdir" ]; then
  mkdir -p "$destdir"
  destdir=$(cd "$destdir" && pwd)
elif [ "$(id -u)" -ne 0 ]; then
  echo "$prog: needs root to install into / (or use --destdir DIR)" >&2; exit 1
fi

# binary ROLE: the daemon a role runs, relative to the build directory.
binary() { case "$1" in coordinator) echo coordinator/xqz-coordinator ;;
  trainer|member) echo trainer/xqz-trainer ;; worker) echo worker/xqz-worker ;; esac; }
unit() { case "$1" in worker|member) echo "xqz-$1@.service" ;; *) echo "xqz-$1.service" ;; esac; }

files=(tools/xqz)
for r in "${roles[@]}"; do files+=("$(binary "$r")"); done
for f in "${files[@]}"; do
  [ -x "$build/$f" ] || { echo "$prog: $build/$f is missing: build first (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build), or give --build DIR" >&2; exit 1; }
done

bindir=$destdir$prefix/bin unitdir=$destdir/etc/systemd/system etc=$destdir/etc/xqzero
install -d -m 0755 "$bindir" "$unitdir"
# New files are renamed into place, so a running daemon keeps its old inode.
for f in "${files[@]}" xqz-run; do
  from=$build/$f; [ "$f" = xqz-run ] && from=$src/deploy/xqz-run
  install -m 0755 "$from" "$bindir/.$(basename "$f").new"
  mv -f "$bindir/.$(basename "$f").new" "$bindir/$(basename "$f")"
done
for r in "${roles[@]}"; do
  u=$(unit "$r")
  sed "s|/usr/local/bin/|$prefix/bin/|" "$src/deploy/systemd/$u" >"$unitdir/.$u.new"
  chmod 0644 "$unitdir/.$u.new"
  mv -f "$unitdir/.$u.new" "$unitdir/$u"
done

if [ -z "$destdir" ] && ! getent passwd xqz >/dev/null; then
  useradd --system --user-group --home-dir /var/lib/xqzero --no-create-home \
    --shell /usr/sbin/nologin --comment "xqzero services" xqz
  echo "$prog: created the system user xqz"
fi
install -d -m 0755 "$etc"
install -d -m 0750 "$etc/keys" "$destdir/var/lib/xqzero" "$destdir/var/cache/xqzero"
if [ -z "$destdir" ]; then
  chown root:xqz "$etc/keys"
  chown xqz:xqz "$destdir/var/lib/xqzero" "$destdir/var/cache/xqzero"
fi
if [ ! -e "$etc/xqz.env" ]; then
  install -m 0644 "$src/deploy/xqz.env.example" "$etc/xqz.env"
  echo "$prog: wrote $etc/xqz.env from the example: edit it (coordinator address, keys)"
fi
if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

version=$("$bindir/xqz" version 2>/dev/null || echo "unknown version")
echo "$prog: installed ${roles[*]} ($version) into $bindir and $unitdir"
echo "  running daemons keep the old version until restarted"
for r in "${roles[@]}"; do
  case "$r" in
    worker) echo "  start: systemctl enable --now xqz-worker@1   (more slots: @2, @3, ...)" ;;
    member) echo "  start: systemctl enable --now xqz-member@1 xqz-member@2   (one per member on this box;"
            echo "         set XQZ_MEMBER_THREADS in /etc/xqzero/xqz.env to the cores / members)" ;;
    *) echo "  start: systemctl enable --now xqz-$r" ;;
  esac
done
