#!/usr/bin/env python3
"""engine_time_report.py: the table, CSV and SVG chart of scripts/bench/engine_time.sh.

  engine_time_report.py line OUT NAME   one line for the pair NAME of OUT/matches.tsv
  engine_time_report.py report OUT      the table on stdout and in OUT/table.md, and
                                        OUT/engine_time.csv, OUT/engine_time.svg

OUT/matches.tsv has one line per pair: kind (time or fs), name, A's ms, B's ms (time
pairs), Fairy-Stockfish's depth (fs pairs), seconds, and the comma-separated `xqz arena`
outputs of its shards (relative to OUT), whose last line is arena's JSON from A's side.
A is the longer time, or the net against Fairy-Stockfish.

The Elo maths are common/search/elo.c's, as `xqz arena` prints them: logistic Elo of the
score; the 95% interval from the pentanomial model over the opening pairs (two games on one
opening with colours swapped) once there are two pairs, else the trinomial one. Two
departures, both named in the ci_model column: when every pair scored alike (the
pentanomial interval has no width) the trinomial interval stands, and a 100% or 0% score,
whose interval elo.c leaves at [inf, inf], gets its known side from the Wilson bound.
Plain Python, no matplotlib: the SVG is written by hand.
"""
import csv
import json
import math
import os
import sys

Z95 = 1.959963984540054
CLIP = 800.0  # the chart's Elo axis ends here; a 100% or 0% score is drawn at the end


def elo_from_score(s):
    if s <= 0:
        return -math.inf
    if s >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0


def estimate(counts, values):
    """elo.c's elo_estimate: (score, elo, lo, hi) of outcomes worth values[i], counts[i]."""
    n = sum(counts)
    if n == 0:
        return 0.5, 0.0, -math.inf, math.inf
    s = sum(c * a for c, a in zip(counts, values)) / n
    var = sum(c * (a - s) ** 2 for c, a in zip(counts, values)) / n
    half = Z95 * math.sqrt(var / n)
    return s, elo_from_score(s), elo_from_score(s - half), elo_from_score(s + half)


def match_estimate(r):
    """(score, elo, lo, hi) of an `xqz arena` result r: the trinomial estimate, with the
    pentanomial interval of its pairs where it has one of some width."""
    score, elo, lo, hi = estimate([r["losses"], r["draws"], r["wins"]], [0, 0.5, 1])
    if sum(r.get("ptnml", [])) >= 2:
        _, _, plo, phi = estimate(r["ptnml"], [0, 0.25, 0.5, 0.75, 1])
        if plo < phi:
            lo, hi = plo, phi
    return score, elo, lo, hi


def read_pairs(out):
    rows = []
    with open(os.path.join(out, "matches.tsv")) as f:
        for line in f:
            kind, name, a_ms, b_ms, depth, secs, outs = line.rstrip("\n").split("\t")
            w = d = l = plies = 0
            ptnml = [0] * 5
            for rel in outs.split(","):
                with open(os.path.join(out, rel)) as g:
                    r = json.loads(g.read().strip().splitlines()[-1])
                w, d, l = w + r["wins"], d + r["draws"], l + r["losses"]
                ptnml = [x + y for x, y in zip(ptnml, r["ptnml"])]
                plies += r["avg_plies"] * r["games"]
            n = w + d + l
            score, elo, lo, hi = estimate([l, d, w], [0, 0.5, 1])
            model = "trinomial"
            if sum(ptnml) >= 2:
                _, _, plo, phi = estimate(ptnml, [0, 0.25, 0.5, 0.75, 1])
                if plo < phi or not 0 < score < 1:
                    lo, hi, model = plo, phi, "pentanomial"
                # else every pair scored alike (2-0-2 as two split pairs, say): the
                # pentanomial interval has no width, so the trinomial one stands.
            if n and not 0 < score < 1:
                # All won or all lost: elo.c's interval is [inf, inf]; the Wilson bound
                # on the score gives the side that is known.
                z2 = Z95 * Z95
                bound = (n + z2 / 2 - Z95 * math.sqrt(z2 / 4)) / (n + z2)  # p = 1
                lo, hi = (elo_from_score(bound), math.inf) if score >= 1 else \
                    (-math.inf, elo_from_score(1 - bound))
                model = "wilson"
            rows.append({
                "kind": kind, "name": name,
                "a": "net %s ms" % a_ms,
                "b": ("net %s ms" % b_ms) if kind == "time" else ("Fairy-Stockfish depth %s" % depth),
                "a_ms": int(a_ms), "b_ms": int(b_ms) if b_ms else "", "depth": int(depth) if depth else "",
                "games": n, "wins": w, "draws": d, "losses": l, "score": score,
                "elo": elo, "elo_lo": lo, "elo_hi": hi, "ci_model": model,
                "ptnml": ptnml, "avg_plies": plies / n if n else 0.0, "seconds": int(secs),
            })
    return rows


def fmt_elo(x):
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return "%+.0f" % x


def row_line(r):
    return ("%s vs %s: %d games, %d-%d-%d (W-D-L), score %.1f%%, Elo %s [%s, %s] (95%%, %s), "
            "%.0f plies a game, %d s" % (r["a"], r["b"], r["games"], r["wins"], r["draws"],
                                         r["losses"], 100 * r["score"], fmt_elo(r["elo"]),
                                         fmt_elo(r["elo_lo"]), fmt_elo(r["elo_hi"]),
                                         r["ci_model"], r["avg_plies"], r["seconds"]))


def ladder(rows):
    """Elo of each time against the shortest: the pairs' Elo added up; the interval's two
    sides added in quadrature (the matches are independent), or, once a pair has an open
    side (a 100% score), the pairs' bounds added up. [(ms, elo, lo, hi)]"""
    tp = [r for r in rows if r["kind"] == "time"]
    if not tp:
        return []
    pts = [(tp[0]["b_ms"], 0.0, 0.0, 0.0)]
    seen = []
    for r in tp:
        seen.append(r)
        e = sum(x["elo"] for x in seen)
        if all(math.isfinite(x["elo"]) for x in seen):
            lo = e - math.sqrt(sum((x["elo"] - x["elo_lo"]) ** 2 for x in seen))
            hi = e + math.sqrt(sum((x["elo_hi"] - x["elo"]) ** 2 for x in seen))
        else:
            lo, hi = sum(x["elo_lo"] for x in seen), sum(x["elo_hi"] for x in seen)
        pts.append((r["a_ms"], e, lo, hi))
    return pts


def table(rows):
    lines = ["| pair | games | W-D-L | score | Elo (95% interval) | plies a game | minutes |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s vs %s | %d | %d-%d-%d | %.1f%% | %s [%s, %s] | %.0f | %.1f |" % (
            r["a"], r["b"], r["games"], r["wins"], r["draws"], r["losses"], 100 * r["score"],
            fmt_elo(r["elo"]), fmt_elo(r["elo_lo"]), fmt_elo(r["elo_hi"]), r["avg_plies"],
            r["seconds"] / 60))
    pts = ladder(rows)
    if pts:
        lines += ["", "| time per move | Elo against %d ms (95%% interval) |" % pts[0][0],
                  "|---|---|"]
        for ms, e, lo, hi in pts:
            lines.append("| %d ms | %s [%s, %s] |" % (ms, fmt_elo(e), fmt_elo(lo), fmt_elo(hi)))
    return "\n".join(lines) + "\n"


def write_csv(path, rows):
    cols = ["kind", "a", "b", "a_ms", "b_ms", "depth", "games", "wins", "draws", "losses",
            "score", "elo", "elo_lo", "elo_hi", "ci_model", "ptnml", "avg_plies", "seconds",
            "a_elo_vs_shortest"]
    cum = {ms: e for ms, e, _, _ in ladder(rows)}
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            v = dict(r)
            v["ptnml"] = " ".join(str(x) for x in r["ptnml"])
            v["a_elo_vs_shortest"] = cum.get(r["a_ms"], "") if r["kind"] == "time" else ""
            for k in ("score", "elo", "elo_lo", "elo_hi", "avg_plies", "a_elo_vs_shortest"):
                if isinstance(v[k], float):
                    v[k] = ("%.4f" % v[k]) if k == "score" else ("%.1f" % v[k])
            w.writerow([v[c] for c in cols])
    os.replace(path + ".tmp", path)


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(x):
    return max(-CLIP, min(CLIP, x))


def panel(x0, title, xlabel, pts, xticks, xpos):
    """One chart panel at x offset x0: pts are (x, elo, lo, hi) with x already a position
    in [0, 1]; xticks are (position, label)."""
    w, h, top, left = 330, 230, 50, 55
    ys = [clip(v) for p in pts for v in p[1:]] + [0.0]
    ymin, ymax = min(ys), max(ys)
    step = 50 if ymax - ymin <= 300 else 100 if ymax - ymin <= 800 else 200
    ymin, ymax = math.floor(ymin / step) * step, math.ceil(ymax / step) * step
    if ymax == ymin:
        ymin, ymax = ymin - step, ymax + step

    def X(p):
        return x0 + left + 15 + p * (w - 30)

    def Y(e):
        return top + (ymax - clip(e)) / (ymax - ymin) * h

    s = ['<text x="%.1f" y="24" font-size="14" text-anchor="middle">%s</text>'
         % (x0 + left + w / 2, esc(title)),
         '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
         % (x0 + left, top, w, h)]
    y = ymin
    while y <= ymax + 1e-9:
        s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>'
                 % (x0 + left, Y(y), x0 + left + w, Y(y), "#444" if y == 0 else "#ddd"))
        s.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%+d</text>'
                 % (x0 + left - 4, Y(y) + 4, y))
        y += step
    for p, lab in xticks:
        s.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>'
                 % (X(p), top + h + 16, esc(lab)))
    s.append('<text x="%.1f" y="%d" font-size="12" text-anchor="middle">%s</text>'
             % (x0 + left + w / 2, top + h + 34, esc(xlabel)))
    s.append('<text x="%d" y="%.1f" font-size="12" text-anchor="middle" '
             'transform="rotate(-90 %d %.1f)">Elo (95%% interval)</text>'
             % (x0 + 14, top + h / 2, x0 + 14, top + h / 2))
    if xpos:
        s.append('<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="%s"/>'
                 % " ".join("%.1f,%.1f" % (X(p[0]), Y(p[1])) for p in pts))
    for p, e, lo, hi in pts:
        s.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1f77b4"/>'
                 % (X(p), Y(lo), X(p), Y(hi)))
        # A point beyond the axis (a 100% or 0% score) is drawn hollow at its edge.
        s.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="#1f77b4">'
                 '<title>%s [%s, %s]</title></circle>'
                 % (X(p), Y(e), "#1f77b4" if abs(e) < CLIP else "white", fmt_elo(e),
                    fmt_elo(lo), fmt_elo(hi)))
    return s


def write_svg(path, rows, note):
    pts = ladder(rows)
    fs = [r for r in rows if r["kind"] == "fs"]
    body = []
    if pts:
        lt = [math.log2(ms) for ms, _, _, _ in pts]
        span = (lt[-1] - lt[0]) or 1.0
        body += panel(0, "Elo against time per move (net vs itself)",
                      "time per move (ms, log scale)",
                      [((math.log2(ms) - lt[0]) / span, e, lo, hi) for ms, e, lo, hi in pts],
                      [((math.log2(ms) - lt[0]) / span, str(ms)) for ms, _, _, _ in pts], True)
    if fs:
        ds = [r["depth"] for r in fs]
        span = max(ds) - min(ds)

        def dpos(d):
            return (d - min(ds)) / span if span else 0.5
        body += panel(420 if pts else 0,
                      "net at %d ms vs Fairy-Stockfish" % fs[0]["a_ms"], "Fairy-Stockfish depth",
                      [(dpos(r["depth"]), r["elo"], r["elo_lo"], r["elo_hi"]) for r in fs],
                      [(dpos(d), str(d)) for d in ds], False)
    width = 840 if pts and fs else 420
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="352" '
           'viewBox="0 0 %d 352" font-family="sans-serif">' % (width, width),
           '<rect width="100%" height="100%" fill="white"/>'] + body + [
           '<text x="10" y="330" font-size="10" fill="#555">%s</text>' % esc(note),
           '<text x="10" y="344" font-size="10" fill="#555">hollow: a 100%% or 0%% score, beyond '
           '+-%d Elo, drawn at the edge</text>' % CLIP, '</svg>']
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(svg) + "\n")
    os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) == 4 and argv[1] == "line":
        for r in read_pairs(argv[2]):
            if r["name"] == argv[3]:
                print("   " + row_line(r))
        return 0
    if len(argv) != 3 or argv[1] != "report":
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[2]
    rows = read_pairs(out)
    if not rows:
        print("engine_time_report.py: no pairs in %s/matches.tsv" % out, file=sys.stderr)
        return 1
    note = "scripts/bench/engine_time.sh"
    try:
        with open(os.path.join(out, "run.txt")) as f:
            note = " ".join(l.strip("# \n") for l in f)[:150]
    except OSError:
        pass
    text = table(rows)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    write_csv(os.path.join(out, "engine_time.csv"), rows)
    write_svg(os.path.join(out, "engine_time.svg"), rows, note)
    print(text, end="")
    print("== wrote %s/table.md, engine_time.csv, engine_time.svg" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
