#!/usr/bin/env bash
# nn_vs_torch.sh: times xqzero's network (xqz bench nn) and the same architecture in
# PyTorch (nn_torch.py, Debian's python3-torch) on the same threads in one invocation,
# and prints our rate, PyTorch's and the ratio for every row (inference positions/s at
# batch 1..256, training samples/s at batch 256, default 6x64 and large 10x128 nets).
# The two run alternately --rounds times (default 2) and each row keeps each side's best
# rate, so a burst of load on a shared machine does not favour one side.
#
# Instruction set: OpenBLAS honours OPENBLAS_CORETYPE, PyTorch's oneDNN does not. When
# OPENBLAS_CORETYPE names an AVX2 core (Haswell, Zen: how the benchmark host emulates the
# AVX2-only Zen 3 lab machines), --isa match (the default) also limits PyTorch to AVX2
# (ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY) and builds xqz with -march=znver3 in
# build-bench-avx2/, so both sides run the lab machines' instruction set. --isa native lets
# each side use everything the host has (xqz: -march=native, in build-bench-native/, and
# OPENBLAS_CORETYPE unset so OpenBLAS picks its own kernels).
# usage: scripts/bench/nn_vs_torch.sh [--threads N] [--quick] [--rounds R] [--isa match|native]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
threads=1
rounds=2
isa=match
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) [ $# -ge 2 ] || { echo "nn_vs_torch.sh: --threads needs a value" >&2; exit 2; }
               threads="$2"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --isa) [ $# -ge 2 ] || { echo "nn_vs_torch.sh: --isa needs match or native" >&2; exit 2; }
           isa="$2"; shift 2 ;;
    --rounds) [ $# -ge 2 ] || { echo "nn_vs_torch.sh: --rounds needs a value" >&2; exit 2; }
              rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nn_vs_torch.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$threads$rounds" in ''|*[!0-9]*) echo "nn_vs_torch.sh: --threads and --rounds want numbers" >&2; exit 2 ;; esac

case "$isa" in match|native) ;; *) echo "nn_vs_torch.sh: --isa wants match or native" >&2; exit 2 ;; esac

"$root/scripts/bootstrap.sh" --bench

torch_env=()
xqz_env=(-u OPENBLAS_CORETYPE)
cflags=()
build="$root/build-bench-native"
isa_note="native (xqz -march=native, OpenBLAS's own kernel choice; PyTorch unrestricted)"
if [ "$isa" = match ]; then
  xqz_env=()
  case "${OPENBLAS_CORETYPE:-}" in
    [Hh]aswell|[Zz]en|HASWELL|ZEN)
      torch_env=(ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2)
      cflags=(-DXQZ_NATIVE=OFF "-DCMAKE_C_FLAGS=-march=znver3")
      build="$root/build-bench-avx2"
      isa_note="AVX2 (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE; xqz -march=znver3; PyTorch ONEDNN_MAX_CPU_ISA=AVX2)" ;;
    *) build="$root/build-bench"; isa_note="host default (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})" ;;
  esac
fi
if [ ! -x "$build/tools/xqz" ] || [ -n "$(find "$root/common" "$root/tools" -newer "$build/tools/xqz" -name '*.[ch]' -print -quit)" ]; then
  echo "building xqz (Release) in $build" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF "${cflags[@]}" >/dev/null
  cmake --build "$build" -j"$(nproc)" --target xqz >/dev/null
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds: xqz bench nn --threads $threads ${quick[*]}" >&2
  env "${xqz_env[@]}" OPENBLAS_NUM_THREADS="$threads" "$build/tools/xqz" bench nn --json --threads "$threads" \
    "${quick[@]}" > "$tmp/ours.$r.json"
  echo "round $r/$rounds: PyTorch (torch.set_num_threads($threads))" >&2
  env "${torch_env[@]}" OMP_NUM_THREADS="$threads" /usr/bin/python3 "$here/nn_torch.py" --threads "$threads" \
    "${quick[@]}" > "$tmp/torch.$r.json"
done

/usr/bin/python3 - "$tmp" "$rounds" "$isa_note" <<'PY'
import json, sys
d, rounds, isa_note = sys.argv[1], int(sys.argv[2]), sys.argv[3]
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
print(f"instruction set: {isa_note}")
print(f"{'net':8} {'mode':6} {'batch':>5} {'xqzero/s':>10} {'torch/s':>10} {'ratio':>7}")
for mode in ("infer", "train"):
    for net, rows in ours[mode].items():
        for batch, rate in rows.items():
            t = torch[mode].get(net, {}).get(batch)
            if t is None:
                continue
            print(f"{net:8} {mode:6} {batch:>5} {rate:10.1f} {t:10.1f} {rate / t:6.2f}x")
PY
