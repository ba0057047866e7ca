#!/usr/bin/env bash
# trainer.sh: the trainer's data-parallel scaling. `xqz bench train` times the trainer's
# own step (Batch decode, planes, masks, forward, backward, SGD; trainer/batch_shard.c and
# nn/nn_train_pool.c) on the tiny 2x16, default 6x64 and large 10x128 nets at 1..N
# threads in one invocation, so every speed-up is a ratio within one run; PyTorch
# (nn_torch.py --train-only, Debian's python3-torch) trains the same nets at batch 256 on
# the same thread counts, and its figure is printed beside ours.
# usage: scripts/bench/trainer.sh [--threads 1,2,...] [--sizes tiny,default,large]
#                                 [--seconds S] [--no-torch]
#   --threads   default 1..nproc
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
threads=$(seq -s, 1 "$(nproc)")
sizes=tiny,default,large
seconds=3
torch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) [ $# -ge 2 ] || { echo "trainer.sh: --threads needs a list" >&2; exit 2; }
               threads="$2"; shift 2 ;;
    --sizes) [ $# -ge 2 ] || { echo "trainer.sh: --sizes needs a list" >&2; exit 2; }
             sizes="$2"; shift 2 ;;
    --seconds) [ $# -ge 2 ] || { echo "trainer.sh: --seconds needs a value" >&2; exit 2; }
               seconds="$2"; shift 2 ;;
    --no-torch) torch=0; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "trainer.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$threads" in ''|*[!0-9,]*) echo "trainer.sh: --threads wants numbers like 1,2,4" >&2; exit 2 ;; esac

if [ "$torch" = 1 ]; then "$root/scripts/bootstrap.sh" --bench; else "$root/scripts/bootstrap.sh" --build-only; fi
build="$root/build-bench"
if [ ! -x "$build/tools/xqz" ] || [ -n "$(find "$root/common" "$root/tools" -newer "$build/tools/xqz" -name '*.[ch]' -print -quit)" ]; then
  echo "building xqz (Release) in $build" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target xqz >/dev/null
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "xqz bench train --threads $threads --sizes $sizes" >&2
OPENBLAS_NUM_THREADS=1 "$build/tools/xqz" bench train --json --threads "$threads" --sizes "$sizes" \
  --seconds "$seconds" > "$tmp/ours.json"
nets=$(/usr/bin/python3 -c 'import json,sys; print(",".join(sorted({r["net"] for r in json.load(open(sys.argv[1]))["rows"]})))' "$tmp/ours.json")
if [ "$torch" = 1 ]; then
  for t in ${threads//,/ }; do
    echo "PyTorch training, torch.set_num_threads($t)" >&2
    OMP_NUM_THREADS="$t" /usr/bin/python3 "$here/nn_torch.py" --train-only --threads "$t" \
      --nets "$nets" > "$tmp/torch.$t.json"
  done
fi

/usr/bin/python3 - "$tmp" "$threads" "$torch" <<'PY'
import json, os, sys
d, threads, torch = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"
ours = json.load(open(f"{d}/ours.json"))
tr = {t: json.load(open(f"{d}/torch.{t}.json")) for t in threads} if torch else {}
ver = next(iter(tr.values()))["torch"] if tr else "-"
print(f"batch {ours['batch']}; one core's sgemm peak {ours['sgemm_peak_gflops']} GFLOP/s; "
      f"PyTorch {ver}; {os.cpu_count()} cores")
print(f"{'net':8} {'threads':>7} {'xqz/s':>9} {'speedup':>8} {'%peak':>6} "
      f"{'torch/s':>9} {'speedup':>8} {'xqz/torch':>9}")
base_t = {}
for r in ours["rows"]:
    net, t = r["net"], str(r["threads"])
    tv = tr[t]["train"].get(net, {}).get("256") if tr else None
    if tv is not None and net not in base_t:
        base_t[net] = tv
    ts = f"{tv:9.1f} {tv / base_t[net]:7.2f}x {r['samples_per_s'] / tv:8.2f}x" if tv else f"{'-':>9} {'-':>8} {'-':>9}"
    print(f"{net:8} {t:>7} {r['samples_per_s']:9.1f} {r['speedup']:7.2f}x "
          f"{100 * r['peak_share']:5.0f}% {ts}")
PY
