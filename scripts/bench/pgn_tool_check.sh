#!/usr/bin/env bash
# pgn_tool_check.sh: does a real Xiangqi tool load the PGN that `xqz games export` and
# `xqz play`'s save write (issue 52)? The tool is XBoard (Debian package xboard), run
# headless under Xvfb. Each game is loaded the way XBoard loads any game file (-lgf FILE
# -lgi N), with no -variant on the command line, so the file itself must say it is xiangqi.
# XBoard runs it as a one-game match between two stub engines that resign when asked to move
# (XBoard has no "load, save, exit" of its own); it sends them the loaded game, saves it
# back (-sgf) and writes the final position (-spf). Per game, compared with our file:
#   - XBoard loads it: no "Bad FEN", "Bad game file" or illegal move;
#   - the start position XBoard sends the engines (setboard) is the game's [FEN];
#   - the moves XBoard sends the engines, in its coordinates, are our moves, one by one;
#   - the game XBoard saves back has as many plies and [Variant "xiangqi"];
#   - XBoard's final position is the one Fairy-Stockfish reaches replaying our moves
#     (a second, independent replay).
#
# usage: scripts/bench/pgn_tool_check.sh [--games N] [--pgn FILE] [--out DIR] [--seed S]
#   --games N   self-play games to export and check (default 6), from a tiny net made
#               for the check, with --values; two games saved by `xqz play` are added (one
#               from the start position, one from a [FEN] with Black to move)
#   --pgn FILE  check the games of FILE instead (a file `xqz games export` wrote)
#   --out DIR   where the games, XBoard's files and logs go (default
#               bench-runs/pgn-tool-check-DATE)
#   --seed S    seed of the net and of the games (default 1)
#   Environment: XQZ, the xqz binary to use (default: a Release build in build-bench/).
# Installs xboard, xvfb, xauth and fairy-stockfish with apt-get when missing (root or sudo).
# Prints PASS or FAIL per game with the reason; exits 1 if any game fails, 2 on bad usage.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
from_caller() { case "$1" in /*|'') echo "$1" ;; *) echo "$here/$1" ;; esac; }
# shellcheck source=scripts/lib/usage.sh
. scripts/lib/usage.sh
usage() { script_usage scripts/bench/pgn_tool_check.sh; }
die() { echo "pgn_tool_check.sh: $*" >&2; exit 2; }

games=6 pgn="" out="" seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --games|--pgn|--out|--seed)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --games) games=$2 ;; --pgn) pgn=$(from_caller "$2") ;;
        --out) out=$(from_caller "$2") ;; --seed) seed=$2 ;;
      esac
      shift 2 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
case "$games" in ''|*[!0-9]*) die "--games must be a whole number, not '$games'" ;; esac
case "$seed" in ''|*[!0-9]*) die "--seed must be a whole number, not '$seed'" ;; esac
[ -z "$pgn" ] || [ -r "$pgn" ] || die "cannot read $pgn"

# The tool and what runs it headless; Fairy-Stockfish for the second replay.
missing=()
for p in xboard xvfb xauth fairy-stockfish python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "need root or sudo to install: ${missing[*]}"
    SUDO=sudo
  fi
  echo "pgn_tool_check: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
xboard=$(command -v xboard || echo /usr/games/xboard)
fs=$(command -v fairy-stockfish || echo /usr/games/fairy-stockfish)
xb_version=$(dpkg-query -W -f='${Version}' xboard)

[ -n "$out" ] || out=bench-runs/pgn-tool-check-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out" in *[[:space:]]*) die "--out must not contain spaces (XBoard splits engine commands): $out" ;; esac

if [ -z "$pgn" ]; then
  # shellcheck source=scripts/lib/campaign.sh
  . scripts/lib/campaign.sh
  bench_xqz "$here"
  rm -f "$out/net.xqzn" "$out/selfplay.rec" "$out"/play-*.pgn
  "$XQZ" net init --size tiny --seed "$seed" --out "$out/net.xqzn" >/dev/null
  if [ "$games" -gt 0 ]; then
    "$XQZ" selfplay --net "$out/net.xqzn" --games "$games" --sims 8 --seed "$seed" \
      --threads 1 --out "$out/selfplay.rec" >/dev/null 2>&1
    "$XQZ" games export "$out/selfplay.rec" --values --out "$out/games.pgn" 2>/dev/null
  else
    : >"$out/games.pgn"
  fi
  printf 'h2e2\nh0g2\nsave %s\nquit\n' "$out/play-start.pgn" |
    "$XQZ" play --opponent random --seed "$seed" >/dev/null 2>&1
  printf 'b0c2\nsave %s\nquit\n' "$out/play-fen.pgn" |
    "$XQZ" play --opponent random --seed "$seed" \
      --fen "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1" >/dev/null 2>&1
  for f in "$out/play-start.pgn" "$out/play-fen.pgn"; do
    [ -s "$f" ] || die "xqz play did not save $f"
    cat "$f" >>"$out/games.pgn"
  done
  pgn=$out/games.pgn
fi
n=$(grep -c '^\[Game ' "$pgn" || true)
[ "$n" -gt 0 ] || die "no games in $pgn"

# The stub engine: CECP, logs what XBoard sends it, resigns when asked to move.
cat >"$out/stub_engine.py" <<'EOF'
#!/usr/bin/env python3
import sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    log.write(line)
    log.flush()
    w = line.split()
    if not w:
        continue
    if w[0] == "protover":
        print('feature setboard=1 usermove=1 ping=1 myname="stub" variants="xiangqi" '
              'sigint=0 sigterm=0 done=1', flush=True)
    elif w[0] == "ping":
        print("pong " + w[1], flush=True)
    elif w[0] == "go":
        print("resign", flush=True)
    elif w[0] == "quit":
        break
EOF
chmod +x "$out/stub_engine.py"

echo "pgn_tool_check: XBoard $xb_version, $n games of $pgn, files in $out"
fails=0
for i in $(seq 1 "$n"); do
  d=$out/game-$i
  rm -rf "$d"
  mkdir -p "$d"
  # No -variant: the file's [Variant] tag has to make it xiangqi. -xexit: a fatal error
  # exits instead of waiting for a click; -xncp last, as the settings file may set -ncp.
  rc=0
  HOME=$d timeout 30 xvfb-run -a "$xboard" \
    -fcp "$out/stub_engine.py $d/first.log" -scp "$out/stub_engine.py $d/second.log" \
    -mm -lgf "$pgn" -lgi "$i" -td 0 -sgf "$d/xboard.pgn" -spf "$d/xboard.fen" \
    -xexit -saveSettingsOnExit false -debug -nameOfDebugFile "$d/xboard.debug" -xncp \
    >"$d/xboard.out" 2>&1 || rc=$?
  verdict=$(python3 - "$pgn" "$i" "$d" "$fs" "$rc" <<'EOF'
import re, subprocess, sys
pgn, idx, d, fs, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
MOVE = re.compile(r"^[a-i][0-9][a-i][0-9]$")

def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""

def norm(fen):
    """Board and side to move, horse N and elephant B, whatever letters the FEN used."""
    f = fen.split()
    board = f[0].translate(str.maketrans("HEhe", "NBnb"))
    side = "b" if len(f) > 1 and f[1].lower() == "b" else "w"
    return board + " " + side

def movetext_tokens(text):
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r";[^\n]*", " ", text)
    return [t for t in text.split() if not re.match(r"^\d+\.+$", t)
            and t not in ("1-0", "0-1", "1/2-1/2", "*")]

# Our game idx: its FEN and its moves.
games = re.split(r"(?m)^(?=\[Game )", read(pgn))
games = [g for g in games if g.startswith("[Game ")]
g = games[idx - 1]
tags = dict(re.findall(r'(?m)^\[(\w+) "((?:[^"\\]|\\.)*)"\]', g))
fen = tags.get("FEN", START)
body = "\n".join(l for l in g.splitlines() if not l.startswith("["))
ours = [t for t in movetext_tokens(body)]
bad = [t for t in ours if not MOVE.match(t)]
if bad:
    print("FAIL our movetext has non-ICCS tokens: %s" % " ".join(bad[:3])); sys.exit()

errs = []
said = read(d + "/xboard.out") + read(d + "/xboard.debug")
for msg in ("Bad FEN", "Bad game file", "Illegal move", "Ambiguous move", "illegal move"):
    if msg in said:
        errs.append("XBoard says '%s'" % msg)
if rc not in ("0",):
    errs.append("XBoard exited %s" % rc)

# What XBoard sent the first engine: the last setboard/new before the result, the moves.
xfen, xmoves = START, []
for line in read(d + "/first.log").splitlines():
    w = line.split()
    if not w:
        continue
    if w[0] == "result":
        break
    if w[0] == "new":
        xfen, xmoves = START, []
    elif w[0] == "setboard":
        xfen, xmoves = line.split(None, 1)[1], []
    elif w[0] == "usermove":
        xmoves.append(w[1])
if norm(xfen) != norm(fen):
    errs.append("start: XBoard %s, ours %s" % (xfen, fen))
if xmoves != ours:
    k = next((j for j in range(min(len(xmoves), len(ours))) if xmoves[j] != ours[j]),
             min(len(xmoves), len(ours)))
    errs.append("moves differ at ply %d (XBoard %s, ours %s; %d against %d plies)"
                % (k + 1, xmoves[k] if k < len(xmoves) else "-",
                   ours[k] if k < len(ours) else "-", len(xmoves), len(ours)))

# The game XBoard saved back.
saved = read(d + "/xboard.pgn")
if '[Variant "xiangqi"]' not in saved:
    errs.append("XBoard's saved game is not xiangqi")
sbody = "\n".join(l for l in saved.splitlines() if not l.startswith("["))
splies = len(movetext_tokens(sbody))
if splies != len(ours):
    errs.append("XBoard saved %d plies, ours %d" % (splies, len(ours)))

# Its final position against Fairy-Stockfish's replay of our moves (ranks 1-10 there).
xfinal = read(d + "/xboard.fen").strip().splitlines()
up = lambda m: "%s%d%s%d" % (m[0], int(m[1]) + 1, m[2], int(m[3]) + 1)
cmd = ("uci\nsetoption name UCI_Variant value xiangqi\nposition fen %s moves %s\nd\nquit\n"
       % (fen, " ".join(up(m) for m in ours)))
fsout = subprocess.run([fs], input=cmd, capture_output=True, text=True, timeout=60).stdout
fsfen = next((l[5:].strip() for l in fsout.splitlines() if l.startswith("Fen: ")), "")
if not xfinal:
    errs.append("XBoard wrote no final position")
elif not fsfen:
    errs.append("Fairy-Stockfish gave no final position")
elif norm(xfinal[-1]) != norm(fsfen):
    errs.append("final position: XBoard %s, Fairy-Stockfish %s" % (xfinal[-1], fsfen))

what = "%d plies%s" % (len(ours), ", from a [FEN]" if "FEN" in tags else "")
if errs:
    print("FAIL %s: %s" % (what, "; ".join(errs)))
else:
    print("PASS %s, final %s" % (what, norm(fsfen)))
EOF
)
  echo "game $i: $verdict"
  case "$verdict" in PASS*) ;; *) fails=$((fails + 1)) ;; esac
done
if [ "$fails" -gt 0 ]; then
  echo "pgn_tool_check: FAIL, $fails of $n games (XBoard $xb_version; logs in $out/game-N/)"
  exit 1
fi
echo "pgn_tool_check: PASS, all $n games load in XBoard $xb_version and replay the same"
