#!/usr/bin/env bash
# ab.sh: one `xqz bench` measured at two commits in the same run. Builds each commit
# (Release, in its own git worktree under the output directory), then runs the same bench
# command with each binary in turn, in ABBA order for --rounds rounds so that a drift of the
# box (heat, another process) falls on both, and prints each row's figure at both commits
# with the ratio of the medians. Run it on an idle box: it is a timed benchmark.
#
# usage: scripts/bench/ab.sh [--rounds N] [--metric KEY] [--out DIR] BASE HEAD -- BENCH ARGS...
#   BASE, HEAD  commits (anything git rev-parse takes: a hash, main, HEAD~3)
#   BENCH ARGS  an `xqz bench` command that takes --json and prints {"rows":[...]},
#               e.g. `train --sizes tiny,default --threads 1 --seconds 5`
#   --rounds N  ABBA rounds (default 3: each commit runs 2N times)
#   --metric K  the row field compared (default samples_per_s); the other fields that are
#               strings or whole numbers name the row (net, threads)
#   --out DIR   builds and raw outputs (default bench-runs/ab-DATE)
# Example (issue 50: the trainer's step before and after samples lost their text round trip):
#   scripts/bench/ab.sh 5b99b3a~1 5b99b3a -- train --sizes tiny,default --threads 1 --seconds 5
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "ab.sh: $*" >&2; exit 2; }
rounds=3 metric=samples_per_s out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --rounds|--metric|--out)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --rounds) rounds=$2 ;; --metric) metric=$2 ;;
        --out) case "$2" in /*) out=$2 ;; *) out=$here/$2 ;; esac ;;
      esac
      shift 2 ;;
    --) shift; break ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || { usage >&2; die "needs BASE HEAD -- BENCH ARGS"; }
base=$1 head=$2
shift 2
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || die "needs the bench command after --"
case "$rounds" in ''|*[!0-9]*|0) die "--rounds must be a whole number of at least 1" ;; esac
base_sha=$(git rev-parse --verify "$base^{commit}" 2>/dev/null) || die "no commit '$base'"
head_sha=$(git rev-parse --verify "$head^{commit}" 2>/dev/null) || die "no commit '$head'"
out=${out:-bench-runs/ab-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

build() { # build SHA: a Release xqz of that commit, in $out/src-SHA
  local src=$out/src-${1:0:12}
  if [ ! -x "$src/build/tools/xqz" ]; then
    [ -d "$src" ] || git worktree add --detach "$src" "$1" >/dev/null 2>&1 ||
      die "git worktree add $src $1 failed"
    echo "== building ${1:0:12} in $src/build" >&2
    cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null
    cmake --build "$src/build" -j"$(nproc)" --target xqz >/dev/null
  fi
  echo "$src/build/tools/xqz"
}
# The worktrees go when the script ends (their builds with them); git forgets them too.
cleanup() {
  local d
  for d in "$out"/src-*; do
    [ -d "$d" ] && git worktree remove --force "$d" 2>/dev/null
  done
  true
}
trap cleanup EXIT
bin_a=$(build "$base_sha")
bin_b=$(build "$head_sha")

{
  echo "# ab.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# A = $base ($(git log -1 --format='%h %s' "$base_sha" | cut -c1-80))"
  echo "# B = $head ($(git log -1 --format='%h %s' "$head_sha" | cut -c1-80))"
  echo "# xqz bench $* --json, $rounds ABBA rounds"
} | tee "$out/run.txt"
for r in $(seq 1 "$rounds"); do
  for who in A B B A; do
    bin=$bin_a; [ "$who" = B ] && bin=$bin_b
    echo "== round $r: $who" >&2
    "$bin" bench "$@" --json >"$out/raw.$r.$who.$RANDOM.json"
  done
done
python3 - "$out" "$metric" <<'EOF' | tee -a "$out/run.txt"
import glob, json, os, statistics, sys
out, metric = sys.argv[1], sys.argv[2]
vals = {}
for path in sorted(glob.glob(os.path.join(out, "raw.*.json"))):
    who = path.split(".")[-3]
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        for row in json.loads(line).get("rows", []):
            if metric not in row:
                continue
            key = ", ".join(f"{k} {v}" for k, v in row.items()
                            if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)))
            vals.setdefault(key, {"A": [], "B": []})[who].append(float(row[metric]))
if not vals:
    sys.exit(f"ab.sh: no row has the field '{metric}'")
print(f"| row | A median {metric} | B median {metric} | B/A | runs each |")
print("|---|---|---|---|---|")
for key, v in vals.items():
    a, b = statistics.median(v["A"]), statistics.median(v["B"])
    print(f"| {key} | {a:.1f} | {b:.1f} | {b / a:.3f}x | {len(v['A'])} |")
EOF
