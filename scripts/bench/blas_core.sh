#!/usr/bin/env bash
# blas_core.sh: what the OpenBLAS kernels are worth on this machine. Runs the tiny net's
# inference and training (`xqz bench nn`) and one self-play thread (`xqz bench selfplay`)
# on OpenBLAS's Prescott kernels (SSE3: what Debian 12's OpenBLAS falls back to on a CPU
# it does not know) and on the kernels the programs choose by themselves (nn/blas_core.h),
# alternating A B A B, and prints each figure of the choice as a ratio to Prescott's.
# usage: scripts/bench/blas_core.sh [--rounds N] [--seconds T] [--net SIZE]
#   --rounds N    A/B rounds (default 2)
#   --seconds T   seconds of self-play per measurement (default 8)
#   --net SIZE    network size (default tiny; tiny-l to see the line convolutions)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
rounds=2 seconds=8 size=tiny
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --net) size=${2:?--net needs a size}; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "blas_core.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for v in "$rounds" "$seconds"; do
  case "$v" in ''|*[!0-9]*|0) echo "blas_core.sh: '$v' is not a positive whole number" >&2; exit 2 ;; esac
done

"$root/scripts/bootstrap.sh" --build-only
. "$root/scripts/lib/campaign.sh"
xqz_build_release "$root/build-bench"
xqz="$root/build-bench/tools/xqz"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$xqz" net init --size "$size" --out "$tmp/net.xqzn" >/dev/null

measure() { # measure LABEL ROUND [env...]: one bench nn and one bench selfplay
  local label=$1 round=$2; shift 2
  env -u OPENBLAS_CORETYPE -u XQZ_OPENBLAS_FALLBACK "$@" OPENBLAS_NUM_THREADS=1 \
    "$xqz" bench nn --quick --json --nets "$size" >"$tmp/nn.$label.$round.json"
  env -u OPENBLAS_CORETYPE -u XQZ_OPENBLAS_FALLBACK "$@" OPENBLAS_NUM_THREADS=1 \
    "$xqz" bench selfplay --net "$tmp/net.xqzn" --sims 64 --seconds "$seconds" --parallel 32 \
    >"$tmp/sp.$label.$round.txt"
}
for r in $(seq 1 "$rounds"); do
  echo "== round $r of $rounds: Prescott, then the programs' own choice" >&2
  measure ref "$r" OPENBLAS_CORETYPE=Prescott
  measure own "$r"
done

python3 - "$tmp" "$rounds" <<'PY'
import json, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def figures(label):
    rows = []
    for r in range(1, rounds + 1):
        nn = json.load(open(f"{d}/nn.{label}.{r}.json"))
        net = next(iter(nn["infer"]))
        plies = None
        for line in open(f"{d}/sp.{label}.{r}.txt"):
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "32":
                plies = float(parts[2])
        rows.append({"core": nn["openblas_core"], "net": net,
                     "sgemm peak GFLOP/s": nn["sgemm_peak_gflops"],
                     "infer batch 32 /s": nn["infer"][net]["32"],
                     "train batch 256 /s": nn["train"][net]["256"],
                     "self-play plies/s": plies})
    return rows
ref, own = figures("ref"), figures("own")
print(f"net {ref[0]['net']}: OpenBLAS core {ref[0]['core']} (reference) against "
      f"{own[0]['core']} (chosen by the programs), {rounds} rounds, one thread")
print(f"{'figure':22} {'reference':>12} {'chosen':>12} {'ratio':>7}")
for key in ("sgemm peak GFLOP/s", "infer batch 32 /s", "train batch 256 /s", "self-play plies/s"):
    a = sum(x[key] for x in ref) / rounds
    b = sum(x[key] for x in own) / rounds
    print(f"{key:22} {a:12.1f} {b:12.1f} {b / a:6.2f}x")
PY
