#!/usr/bin/env bash
# test_cli_blas.sh XQZ TRAINER WORKER: the OpenBLAS kernels the programs run on (nn/blas_core.h).
# On a CPU with AVX2 and FMA, `xqz version --verbose` never names a core of OpenBLAS's
# without AVX2 (Debian 12's OpenBLAS falls back to Prescott on a CPU it does not know:
# the program then runs itself again with OPENBLAS_CORETYPE set); an OPENBLAS_CORETYPE of
# the user's own is kept, even an old core; the trainer and the worker choose as xqz does.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1 TRAINER=$2 WORKER=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset OPENBLAS_CORETYPE XQZ_OPENBLAS_FALLBACK

core_of() { sed -n 's/^blas: .*; core \([A-Za-z0-9_]*\).*/\1/p' "$1"; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { grep -qw "$1" <<<"$flags"; }

verbose_ok() {
  "$XQZ" version --verbose >"$dir/v.out" 2>&1 &&
    grep -Eqx 'xqzero [0-9]+\.[0-9]+\.[0-9]+ \(protocol [0-9]+\)' "$dir/v.out" &&
    [ -n "$(core_of "$dir/v.out")" ]
}
check "xqz version --verbose names the version and the BLAS core" verbose_ok

no_old_core() {
  case "$(core_of "$dir/v.out")" in
    Prescott|Core2|Penryn|Dunnington|Nehalem|Atom|Sandybridge|Unknown|Katmai|Coppermine|\
    Northwood|Banias|Athlon|Opteron|Opteron_SSE3|Barcelona|Nano|Bobcat|Bulldozer|\
    Piledriver|Steamroller)
      echo "  a CPU with AVX2 and FMA runs OpenBLAS's $(core_of "$dir/v.out") kernels:"
      cat "$dir/v.out"
      return 1 ;;
  esac
}
if has avx2 && has fma; then
  check "a CPU with AVX2 and FMA runs AVX2 kernels or better" no_old_core
fi

users_core_kept() {
  OPENBLAS_CORETYPE=Prescott "$XQZ" version --verbose >"$dir/p.out" 2>&1 &&
    [ "$(core_of "$dir/p.out")" = Prescott ] && grep -q 'OPENBLAS_CORETYPE=Prescott' "$dir/p.out"
}
check "an OPENBLAS_CORETYPE of the user's own is kept" users_core_kept

bad_args() {
  ! "$XQZ" version --bogus >"$dir/b.out" 2>&1 && grep -q 'usage: xqz version' "$dir/b.out"
}
check "xqz version refuses an unknown option" bad_args

# The daemons choose the same way, before anything else: on a machine where xqz had to
# choose, a trainer and a worker (waiting for a coordinator that is not there) run with
# OPENBLAS_CORETYPE in their environment.
env_has_core() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qa '^OPENBLAS_CORETYPE='; }
daemon_chose() {
  "$@" >"$dir/daemon.log" 2>&1 &
  local pid=$! rc=1
  # ... under its own name (scripts/lab.sh finds its worker by name, as ps shows it).
  if wait_for 10 env_has_core "$pid" && [ "$(ps -p "$pid" -o comm=)" = "$(basename "$1")" ]; then
    rc=0
  else
    cat "$dir/daemon.log"
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  return "$rc"
}
if grep -q 'set by xqzero' "$dir/v.out"; then
  check "the trainer runs on the same kernels" daemon_chose \
    "$TRAINER" --coordinator tcp://127.0.0.1:1 --dir "$dir/tr" --size tiny
  check "the worker runs on the same kernels" daemon_chose \
    "$WORKER" --coordinator tcp://127.0.0.1:1 --cache "$dir/cache" --spool "$dir/spool"
fi
finish
