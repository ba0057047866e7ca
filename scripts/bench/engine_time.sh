#!/usr/bin/env bash
# engine_time.sh: does the engine grow stronger with time (issue 52 item 3)? Plays a net
# through the engine protocol, `xqz engine` driven by `xqz arena uci:...` as a GUI drives it,
# at several times per move in a round robin of adjacent steps (each time against the one
# below it), and against Fairy-Stockfish at fixed depths at one time per move. Paired
# openings with colours swapped (scripts/bench/openings-ladder.txt), the same openings for
# every pair.
#
# usage: scripts/bench/engine_time.sh [--times MS,MS,...] [--games N] [--depths D,D-D|none]
#          [--fs-movetime MS] [--parallel P] [--threads T] [--net FILE] [--fs COMMAND]
#          [--seed S] [--out DIR]
#   --times        times per move of the round robin, in ms (default 100,400,1600); each
#                  adjacent pair plays (400 against 100, 1600 against 400); one time: none
#   --games N      games per pair, even, a multiple of 2*P (default 40)
#   --depths       Fairy-Stockfish depths, e.g. 1-5 or 1,3,5 (default 1-5); none: no ladder
#   --fs-movetime  the net's time per move against Fairy-Stockfish (default 1000)
#   --parallel P   games at once, each shard on its own openings (default 1). Each game has
#                  one engine thinking at a time, so P games want P free cores; with more
#                  games than free cores a movetime buys fewer simulations than it would
#                  alone, which lowers the whole time axis and handicaps the net (at
#                  movetime) against Fairy-Stockfish (at fixed depth, unaffected but slower)
#   --threads T    the engine's Threads (default 1)
#   --net FILE     the net (default nets/xqzero.xqzn, the shipped one)
#   --fs COMMAND   Fairy-Stockfish (default: fairy-stockfish on PATH, or
#                  /usr/games/fairy-stockfish, Debian's, which scripts/bootstrap.sh installs)
#   --seed S       seed of the engines and of the opening order (default 1)
#   --out DIR      where the table (table.md), engine_time.csv, engine_time.svg and the
#                  matches' logs go (default bench-runs/engine-time-DATE)
#   Environment: XQZ, the xqz binary to use (default: a Release build in build-bench/).
# Prints each pair's score (W-D-L, Elo with its 95% interval: pentanomial over the opening
# pairs, as `xqz arena` prints it) and the Elo of each time against the shortest.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
# Paths given on the command line, and XQZ, are the caller's; the script runs in the repo.
from_caller() { case "$1" in /*|'') echo "$1" ;; *) echo "$here/$1" ;; esac; }

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "engine_time.sh: $*" >&2; exit 2; }
times=100,400,1600 games=40 depths=1-5 fs_ms=1000 parallel=1 threads=1 seed=1
net=nets/xqzero.xqzn fs="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --times|--games|--depths|--fs-movetime|--parallel|--threads|--net|--fs|--seed|--out)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --times) times=$2 ;; --games) games=$2 ;; --depths) depths=$2 ;;
        --fs-movetime) fs_ms=$2 ;; --parallel) parallel=$2 ;; --threads) threads=$2 ;;
        --net) net=$(from_caller "$2") ;; --fs) fs=$2 ;; --seed) seed=$2 ;;
        --out) out=$(from_caller "$2") ;;
      esac
      shift 2 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

whole() { # whole NAME VALUE MIN: VALUE is a whole number >= MIN
  case "$2" in ''|*[!0-9]*) die "$1 must be a whole number, not '$2'" ;; esac
  [ "$2" -ge "$3" ] || die "$1 must be at least $3, not $2"
}
whole --games "$games" 2
whole --fs-movetime "$fs_ms" 1
whole --parallel "$parallel" 1
whole --threads "$threads" 1
whole --seed "$seed" 0
if [ $((games % (2 * parallel))) -ne 0 ]; then
  die "--games must be a multiple of 2 * --parallel ($((2 * parallel))): each shard plays" \
    "whole pairs; not $games"
fi
# The times, ascending and distinct.
IFS=, read -r -a tlist <<<"$times"
for t in "${tlist[@]}"; do whole "a time in --times" "$t" 1; done
mapfile -t tlist < <(printf '%s\n' "${tlist[@]}" | sort -nu)
[ ${#tlist[@]} -ge 1 ] || die "--times needs at least one time"
# The depths: a list of numbers and ranges, or none.
dlist=()
if [ "$depths" != none ] && [ -n "$depths" ]; then
  IFS=, read -r -a parts <<<"$depths"
  for p in "${parts[@]}"; do
    if [[ $p =~ ^([0-9]+)-([0-9]+)$ ]]; then
      for ((d = BASH_REMATCH[1]; d <= BASH_REMATCH[2]; d++)); do dlist+=("$d"); done
    else
      whole "a depth in --depths" "$p" 1
      dlist+=("$p")
    fi
  done
  for d in "${dlist[@]}"; do
    if [ "$d" -lt 1 ] || [ "$d" -gt 100 ]; then die "depths run from 1 to 100, not $d"; fi
  done
fi
[ ${#tlist[@]} -ge 2 ] || [ ${#dlist[@]} -ge 1 ] ||
  die "nothing to play: one time and no depths"

# The engines are run by xqz arena's uci player, which splits its command at spaces and
# takes the part after the last ':' as the limit: no spaces or colons in these paths.
plain_path() { case "$2" in *[[:space:]:]*) die "$1 '$2' has a space or ':'; use a path without" ;; esac; }
[ -f "$net" ] || die "no net at $net (--net)"
net=$(cd "$(dirname "$net")" && pwd)/$(basename "$net")
plain_path --net "$net"
if [ ${#dlist[@]} -gt 0 ]; then
  if [ -z "$fs" ]; then
    fs=$(command -v fairy-stockfish || true)
    [ -n "$fs" ] || fs=/usr/games/fairy-stockfish
  fi
  command -v "$fs" >/dev/null ||
    die "no Fairy-Stockfish at '$fs': run scripts/bootstrap.sh (apt-get install fairy-stockfish), or give --fs, or --depths none"
  plain_path --fs "$fs"
fi
# shellcheck source=scripts/lib/campaign.sh
. scripts/lib/campaign.sh
bench_xqz "$here"
plain_path XQZ "$XQZ"
"$XQZ" net info "$net" >/dev/null 2>&1 || die "$net is not a net xqz can read ($XQZ net info $net)"
[ -n "$out" ] || out=bench-runs/engine-time-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
export OPENBLAS_NUM_THREADS=1

# The shards' openings: line i of the ladder's goes to shard i mod P, so no two shards
# start a game the same way.
grep -v '^\s*\(#\|$\)' scripts/bench/openings-ladder.txt |
  awk -v d="$out/logs" -v p="$parallel" '{print > (d "/openings." (NR - 1) % p)}'
engine="uci:$XQZ engine --net $net --threads $threads --seed $seed"
: >"$out/matches.tsv"
{
  echo "# engine_time.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores"
  echo "# net $(basename "$net"), Threads $threads, $games games a pair, $parallel at once; load at the start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/run.txt"

# play KIND NAME A_MS B_MS DEPTH SPEC_A SPEC_B: one pair, its games in P shards at once;
# appends its line to matches.tsv (kind, name, a_ms, b_ms, depth, seconds, shard outputs).
play() {
  local kind=$1 name=$2 a_ms=$3 b_ms=$4 depth=$5 a=$6 b=$7 k t0 fail=0 outs=""
  local pids=()
  t0=$SECONDS
  echo "== $name: $games games, $parallel at once (logs: $out/logs/$name.*)"
  for ((k = 0; k < parallel; k++)); do
    "$XQZ" arena "$a" "$b" --games $((games / parallel)) --seed "$seed" \
      --openings "$out/logs/openings.$k" >"$out/logs/$name.$k.out" 2>"$out/logs/$name.$k.err" &
    pids+=($!)
    outs+="${outs:+,}logs/$name.$k.out"
  done
  for k in "${pids[@]}"; do wait "$k" || fail=1; done
  if [ "$fail" -ne 0 ]; then
    echo "engine_time.sh: a match of $name failed:" >&2
    tail -n 3 "$out/logs/$name".*.err >&2
    exit 1
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$a_ms" "$b_ms" "$depth" \
    $((SECONDS - t0)) "$outs" >>"$out/matches.tsv"
  python3 scripts/bench/engine_time_report.py line "$out" "$name"
}

cat "$out/run.txt"
echo "== net $net, xqz $XQZ, Threads $threads, seed $seed"
echo "== times ${tlist[*]} ms; Fairy-Stockfish ${fs:-none} at depths ${dlist[*]:-none}, net at $fs_ms ms"
for ((i = 1; i < ${#tlist[@]}; i++)); do
  lo=${tlist[i - 1]} hi=${tlist[i]}
  play time "net${hi}-vs-net${lo}" "$hi" "$lo" "" "$engine:movetime=$hi" "$engine:movetime=$lo"
done
for d in "${dlist[@]}"; do
  play fs "net${fs_ms}-vs-fs${d}" "$fs_ms" "" "$d" "$engine:movetime=$fs_ms" "uci:$fs:depth=$d"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/run.txt"
python3 scripts/bench/engine_time_report.py report "$out"
