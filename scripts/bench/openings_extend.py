#!/usr/bin/env python3
"""openings_extend.py: longer opening lines for matches of many games between deterministic
engines. Each input line (startpos m1 ... mk) is extended by PLIES more moves, each drawn at
random (seeded) from the legal moves that Fairy-Stockfish (/usr/games/fairy-stockfish, the
project's rules oracle) lists, COUNT times, keeping only distinct lines. Two nets that play
without noise repeat a game whenever they replay an opening with the same colours; the ladder's
88 two-ply lines give 176 distinct games, this gives COUNT times as many.

usage: openings_extend.py IN OUT [--plies 2] [--count 6] [--seed 1]
"""
import argparse
import random
import subprocess
import sys


def to_fsf(move):  # ours: ranks 0..9; Fairy-Stockfish's UCI: ranks 1..10
    return "%s%d%s%d" % (move[0], int(move[1]) + 1, move[2], int(move[3]) + 1)


def _parse(move):
    # a file letter, a rank of 1 or 2 digits, a file letter, a rank
    i = 1
    while move[i].isdigit():
        i += 1
    r1, f2, r2 = int(move[1:i]), move[i], int(move[i + 1:])
    return "%s%d%s%d" % (move[0], r1 - 1, f2, r2 - 1)


class Oracle:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name UCI_Variant value xiangqi")

    def send(self, s):
        self.p.stdin.write(s + "\n")

    def wait(self, token):
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("openings_extend.py: fairy-stockfish ended early")
            if line.startswith(token):
                return lines
            lines.append(line.strip())

    def legal(self, moves):
        self.send("position startpos moves " + " ".join(to_fsf(m) for m in moves))
        self.send("go perft 1")
        out = self.wait("Nodes searched")
        return sorted(_parse(l.split(":")[0]) for l in out if ":" in l and l[0].isalpha())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--plies", type=int, default=2)
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--oracle", default="/usr/games/fairy-stockfish")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    oracle = Oracle(a.oracle)
    lines = []
    for raw in open(a.inp):
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        words = raw.split()
        if words[0] != "startpos":
            sys.exit("openings_extend.py: only startpos lines, not: " + raw)
        base = words[1:]
        seen = set()
        for _ in range(a.count * 20):
            if len(seen) == a.count:
                break
            moves = list(base)
            for _ in range(a.plies):
                legal = oracle.legal(moves)
                if not legal:
                    break
                moves.append(rng.choice(legal))
            seen.add(tuple(moves))
        lines.extend(sorted(seen))
    with open(a.out, "w") as f:
        f.write("# %s: %s extended by %d random legal plies (seed %d), %d lines of each;\n"
                % (a.out.split("/")[-1], a.inp.split("/")[-1], a.plies, a.seed, a.count))
        f.write("# made by scripts/bench/openings_extend.py.\n")
        for m in lines:
            f.write("startpos " + " ".join(m) + "\n")
    print("%d lines to %s" % (len(lines), a.out))


if __name__ == "__main__":
    main()
