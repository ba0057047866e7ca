#!/usr/bin/env bash
# nn_vs_torch.sh: times xqzero's network (xqz bench nn) and the same architecture in
# PyTorch (nn_torch.py, Debian's python3-torch) on the same threads in one invocation,
# and prints our rate, PyTorch's and the ratio for every row (inference positions/s at
# batch 1..256, training samples/s at batch 256, default 6x64 and large 10x128 nets).
# The two run alternately --rounds times (default 2) and each row keeps each side's best
# rate, so a burst of load on a shared machine does not favour one side.
# usage: scripts/bench/nn_vs_torch.sh [--threads N] [--quick] [--rounds R]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
threads=1
rounds=2
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) [ $# -ge 2 ] || { echo "nn_vs_torch.sh: --threads needs a value" >&2; exit 2; }
               threads="$2"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --rounds) [ $# -ge 2 ] || { echo "nn_vs_torch.sh: --rounds needs a value" >&2; exit 2; }
              rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nn_vs_torch.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$threads$rounds" in ''|*[!0-9]*) echo "nn_vs_torch.sh: --threads and --rounds want numbers" >&2; exit 2 ;; esac

"$root/scripts/bootstrap.sh" --bench

build="$root/build-bench"
if [ ! -x "$build/tools/xqz" ] || [ -n "$(find "$root/common" "$root/tools" -newer "$build/tools/xqz" -name '*.[ch]' -print -quit)" ]; then
  echo "building xqz (Release) in $build" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target xqz >/dev/null
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds: xqz bench nn --threads $threads ${quick[*]}" >&2
  OPENBLAS_NUM_THREADS="$threads" "$build/tools/xqz" bench nn --json --threads "$threads" \
    "${quick[@]}" > "$tmp/ours.$r.json"
  echo "round $r/$rounds: PyTorch (torch.set_num_threads($threads))" >&2
  OMP_NUM_THREADS="$threads" /usr/bin/python3 "$here/nn_torch.py" --threads "$threads" \
    "${quick[@]}" > "$tmp/torch.$r.json"
done

/usr/bin/python3 - "$tmp" "$rounds" <<'PY'
import json, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def best(prefix):
    runs = [json.load(open(f"{d}/{prefix}.{r}.json")) for r in range(1, rounds + 1)]
    out = runs[0]
    for run in runs[1:]:
        for mode in ("infer", "train"):
            for net, rows in run[mode].items():
                for b, v in rows.items():
                    out[mode][net][b] = max(out[mode][net][b], v)
        if "sgemm_peak_gflops" in run:
            out["sgemm_peak_gflops"] = max(out["sgemm_peak_gflops"], run["sgemm_peak_gflops"])
    return out
ours, torch = best("ours"), best("torch")
print(f"threads {ours['threads']}; best of {rounds} alternating rounds; sgemm peak "
      f"{ours['sgemm_peak_gflops']} GFLOP/s (OpenBLAS core {ours.get('openblas_core', '?')}); "
      f"PyTorch {torch['torch']}")
print(f"{'net':8} {'mode':6} {'batch':>5} {'xqzero/s':>10} {'torch/s':>10} {'ratio':>7}")
for mode in ("infer", "train"):
    for net, rows in ours[mode].items():
        for batch, rate in rows.items():
            t = torch[mode].get(net, {}).get(batch)
            if t is None:
                continue
            print(f"{net:8} {mode:6} {batch:>5} {rate:10.1f} {t:10.1f} {rate / t:6.2f}x")
PY
