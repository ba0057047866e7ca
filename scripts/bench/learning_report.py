#!/usr/bin/env python3
"""learning_report.py: the tables and chart of scripts/bench/learning.sh (standard library
only).

  learning_report.py select RUN [--max-nets K]   prints "net_hex path" of the nets to ladder
  learning_report.py at RUN [MINUTE]            prints "net_hex path minute" of the best
                                                 net at MINUTE of the run (the last one
                                                 promoted by then; default: the last)
  learning_report.py report RUN [--write-docs]   writes RUN/report.md and RUN/learning.svg;
                                                 with --write-docs also the section of
                                                 docs/results.md between the learning
                                                 markers and docs/learning.svg

RUN is a run directory: run.json (start time, settings), campaign/ (promotions.log,
nets/, trainer.log), ladder.jsonl (one arena result per net and opponent) and, if
scripts/bench/confirm.sh ran, confirm.jsonl (the best net's longer matches against the
goal opponents, which then decide the goal verdicts).
"""
import json
import math
import os
import re
import shutil
import sys

GOALS = [("random", 0.95, "goal"), ("greedy", 0.90, "goal"), ("alphabeta:1", 0.50, "goal"),
         ("alphabeta:2", 0.50, "stretch")]
PACE_OPPONENT, PACE_SCORE = "greedy", 0.90  # "minutes to 90% against greedy"
BEGIN, END = "<!-- learning:begin -->", "<!-- learning:end -->"


def promotions(run):
    """Promoted nets in order (net 1 first), each the JSON line of promotions.log."""
    out = []
    with open(os.path.join(run, "campaign", "promotions.log")) as f:
        for line in f:
            line = line.strip()
            if line:
                d = json.loads(line)
                if d.get("promoted"):
                    out.append(d)
    return out


def select(run, k):
    nets = promotions(run)
    if len(nets) <= k:
        return nets
    idx = sorted({round(i * (len(nets) - 1) / (k - 1)) for i in range(k)})
    return [nets[i] for i in idx]


def best_at(run, minute, step=None):
    """The last net promoted at or before minute (None: the run's last), or trained for at
    most step steps (net 1 has none), and its minute."""
    with open(os.path.join(run, "run.json")) as f:
        t0 = json.load(f)["t0"]
    best = None
    for d in promotions(run):
        m = (d["time"] - t0) / 60.0
        if (minute is None or m <= minute) and (step is None or d.get("step", 0) <= step):
            best = (d, m)
    return best


def confirmations(run, net, search="puct"):
    """Results of scripts/bench/confirm.sh for net with that root search, by opponent ({} when
    there are none)."""
    out = {}
    try:
        with open(os.path.join(run, "confirm.jsonl")) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    if d["net"] == net and d.get("search", "puct") == search and d.get("result"):
                        out[d["opponent"]] = d["result"]
    except FileNotFoundError:
        pass
    return out


def short_name(spec):
    if spec.startswith("uci:") and "fairy-stockfish" in spec:
        m = re.search(r"depth=(\d+)", spec)
        return "fairy-sf d%s" % (m.group(1) if m else "?")
    return spec


def ladder_order(spec):
    """Weakest first: random, greedy, alphabeta by depth, external engines, the rest."""
    if spec == "random":
        return (0, 0)
    if spec == "greedy":
        return (1, 0)
    m = re.match(r"alphabeta:(\d+)$", spec)
    if m:
        return (2, int(m.group(1)))
    return (3 if spec.startswith("uci:") else 4, 0)


def trainer_batch(run):
    try:
        with open(os.path.join(run, "campaign", "trainer.log")) as f:
            for line in f:
                m = re.search(r" started .* batch=(\d+)", line)
                if m:
                    return int(m.group(1))
    except OSError:
        pass
    return None


def cell(r):
    if not r:
        return "failed"
    s = "%.0f%%" % (100 * r["score"])
    if r.get("elo") is None:
        return s + " (%s)" % ("+inf" if r["score"] >= 1 else "-inf")
    ci = r.get("elo_ci95")
    return s + " (%+.0f ± %s)" % (r["elo"], "inf" if ci is None else "%.0f" % ci)


def svg_chart(rows, opponents, t0):
    """Two panels: ladder score per opponent, and self-Elo, against wall-clock minutes."""
    W, H, L, R, T = 900, 620, 70, 190, 30
    ph = 240  # panel height
    gap = 70
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf"]
    xs = [(r["time"] - t0) / 60.0 for r in rows]
    xmax = max(xs + [1.0]) * 1.05
    elos = [r["elo"] for r in rows]
    emin, emax = min(elos + [0.0]), max(elos + [1.0])
    pad = (emax - emin) * 0.1 or 50
    emin, emax = emin - pad, emax + pad

    def X(m):
        return L + (W - L - R) * m / xmax

    def Y1(s):
        return T + ph * (1 - s)

    def Y2(e):
        return T + ph + gap + ph * (1 - (e - emin) / (emax - emin))

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>']
    for top, title in ((T, "ladder score (draws count half)"), (T + ph + gap, "self-Elo (sum of gating match Elos, net 1 = 0)")):
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (L, top, W - L - R, ph))
        o.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (L, top - 8, title))
    for s in (0, 0.25, 0.5, 0.75, 1.0):
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (L, W - R, Y1(s), Y1(s)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%d%%</text>' % (L - 6, Y1(s) + 4, 100 * s))
    for i in range(5):
        e = emin + (emax - emin) * i / 4
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (L, W - R, Y2(e), Y2(e)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>' % (L - 6, Y2(e) + 4, e))
    step = max(1, int(math.ceil(xmax / 8 / 5.0)) * 5)
    for m in range(0, int(xmax) + 1, step):
        for base in (T + ph, T + 2 * ph + gap):
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(m), base + 16, m))
    o.append('<text x="%d" y="%d" text-anchor="middle">minutes since the campaign started</text>' % ((L + W - R) / 2, H - 8))
    for j, opp in enumerate(opponents):
        c = colours[j % len(colours)]
        pts = [(X(x), Y1(r["ladder"][opp]["score"])) for x, r in zip(xs, rows) if r["ladder"].get(opp)]
        if pts:
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join("%.1f,%.1f" % p for p in pts)))
            o.extend('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px, py, c) for px, py in pts)
        o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (W - R + 15, W - R + 35, T + 12 + 18 * j, T + 12 + 18 * j, c))
        o.append('<text x="%d" y="%d">%s</text>' % (W - R + 40, T + 16 + 18 * j, short_name(opp)))
    pts = [(X(x), Y2(r["elo"])) for x, r in zip(xs, rows)]
    o.append('<polyline fill="none" stroke="#333" stroke-width="2" points="%s"/>' % " ".join("%.1f,%.1f" % p for p in pts))
    o.extend('<circle cx="%.1f" cy="%.1f" r="3" fill="#333"/>' % p for p in pts)
    o.append("</svg>")
    return "\n".join(o) + "\n"


def report(run, write_docs):
    info = json.load(open(os.path.join(run, "run.json")))
    t0 = info["t0"]
    nets = promotions(run)
    ladder = {}
    with open(os.path.join(run, "ladder.jsonl")) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                ladder.setdefault(d["net"], {})[d["opponent"]] = d["result"]
    opponents = []
    for res in ladder.values():
        for opp in res:
            if opp not in opponents:
                opponents.append(opp)
    opponents.sort(key=ladder_order)
    batch = trainer_batch(run)
    rows = []
    for d in nets:
        if d["net"] in ladder:
            rows.append(dict(d, ladder=ladder[d["net"]]))
    games_each = next((r["games"] for res in ladder.values() for r in res.values() if r), 0)
    md = []
    md.append("| net | promoted at | games | positions trained | self-Elo | " +
              " | ".join(short_name(o) for o in opponents) + " |")
    md.append("|---|---|---|---|---|" + "---|" * len(opponents))
    for r in rows:
        trained = "%d" % (r["step"] * batch) if batch is not None else "step %d" % r["step"]
        md.append("| %s | %.1f min | %s | %s | %+.0f | %s |" % (
            r["net"][:8], (r["time"] - t0) / 60.0, r.get("games", "0" if r.get("first") else "-"),
            trained, r["elo"], " | ".join(cell(r["ladder"].get(o)) for o in opponents)))
    # Goals: the last promoted net within the run, on its confirmation matches
    # (confirm.sh) where there are some, else on its ladder cells.
    best = rows[-1] if rows else None
    confirm = confirmations(run, best["net"], info.get("ladder_search", "puct")) if best else {}
    goal_lines = []
    if best:
        for opp, need, kind in GOALS:
            res, where = confirm.get(opp), "confirmation"
            if res is None:
                res, where = best["ladder"].get(opp), "ladder"
            if res is None:
                continue
            ok = res["score"] >= need
            goal_lines.append("- %s: %s %.1f%% (+%d =%d -%d) against `%s` in %d %s games (needs %.0f%%): **%s**" % (
                kind, best["net"][:8], 100 * res["score"], res["wins"], res["draws"], res["losses"], opp,
                res["games"], where, 100 * need, "met" if ok else "not met"))
    # Pace: when the ladder first saw 90% against greedy, and self-Elo per CPU-hour.
    pace = next((r for r in rows if (r["ladder"].get(PACE_OPPONENT) or {}).get("score", 0) >= PACE_SCORE), None)
    cpu_h = info["minutes"] * info["cores"] / 60.0
    pace_lines = [
        "- minutes to %.0f%% against `%s`: %s" % (
            100 * PACE_SCORE, PACE_OPPONENT,
            "%.1f (%s, the first laddered net there)" % ((pace["time"] - t0) / 60.0, pace["net"][:8])
            if pace else "not reached by a laddered net"),
        "- self-Elo per CPU-hour: %+.0f (the last laddered net's %+.0f over %.1f CPU-hours)" % (
            best["elo"] / cpu_h, best["elo"], cpu_h) if best and cpu_h > 0 else "- self-Elo per CPU-hour: -",
    ]
    # Monotonicity: a promoted net much weaker on the ladder than the one before it.
    drops = []
    for a, b in zip(rows, rows[1:]):
        common = [o for o in opponents if a["ladder"].get(o) and b["ladder"].get(o)]
        if not common:
            continue
        sa = sum(a["ladder"][o]["score"] for o in common) / len(common)
        sb = sum(b["ladder"][o]["score"] for o in common) / len(common)
        if sb < sa - 0.10:
            drops.append("- %s scores %.0f%% on average, %.0f points below %s before it" % (
                b["net"][:8], 100 * sb, 100 * (sa - sb), a["net"][:8]))
    minutes = info["minutes"]
    text = []
    text.append("Run of %s: %d-minute campaign on %d cores (%s), %s." % (
        os.path.basename(os.path.normpath(run)), minutes, info["cores"], info["cpu"], info.get("version", "")))
    text.append("")
    search = info.get("ladder_search", "puct")
    text.append("Command: `scripts/bench/learning.sh --minutes %d --games %d%s`%s" % (
        minutes, games_each, " --search " + search if search != "puct" else "",
        "".join(" %s=\"%s\"" % (k, info[v]) for k, v in (("LEARN_COORD_ARGS", "coordinator_args"),
                                                       ("LEARN_TRAINER_ARGS", "trainer_args")) if info.get(v))))
    text.append("Settings: coordinator defaults%s; trainer defaults%s; one worker `%s`. "
                "Promoted nets: %d (net 1 included); %d laddered, %d games per opponent, "
                "paired openings from `scripts/bench/openings-ladder.txt`." % (
                    " + " + info["coordinator_args"] if info.get("coordinator_args") else "",
                    " + " + info["trainer_args"] if info.get("trainer_args") else "",
                    info["worker_args"], len(nets), len(rows), games_each))
    text.append("")
    text.extend(md)
    text.append("")
    text.append("Cells: score of the net (%s, the ladder's simulations, no noise) and "
                "its Elo ± 95%% interval against that opponent." % (
                    "a Gumbel root search (`gnet:`)" if search == "gumbel" else "PUCT search (`net:`)"))
    text.append("")
    text.append("Goals, best net of the run (the last promoted), on its confirmation matches "
                "(`scripts/bench/confirm.sh`: more games, seed 11) where it has some, else on "
                "its ladder cells:")
    text.extend(goal_lines or ["- no laddered net"])
    text.append("")
    text.append("Pace:")
    text.extend(pace_lines)
    text.append("")
    text.append("Promotion that lost more than 10 ladder points against its parent: " +
                ("none" if not drops else ""))
    text.extend(drops)
    body = "\n".join(text) + "\n"
    svg = svg_chart(rows, opponents, t0) if rows else ""
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write(body)
    with open(os.path.join(run, "learning.svg"), "w") as f:
        f.write(svg)
    print(body)
    if write_docs:
        shutil.copyfile(os.path.join(run, "learning.svg"), "docs/learning.svg")
        path = "docs/results.md"
        doc = open(path).read()
        section = BEGIN + "\n" + body + "\n![learning curve](learning.svg)\n" + END
        if BEGIN in doc and END in doc:
            doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END):]
        else:
            doc = doc.rstrip("\n") + "\n\n## Learning curve (issue 7)\n\n" + section + "\n"
        open(path, "w").write(doc)
        print("wrote docs/results.md and docs/learning.svg")


def main(argv):
    if len(argv) < 3 or argv[1] not in ("select", "at", "report"):
        sys.stderr.write(__doc__)
        return 2
    run = argv[2]
    if argv[1] == "select":
        k = int(argv[argv.index("--max-nets") + 1]) if "--max-nets" in argv else 12
        for d in select(run, max(2, k)):
            print(d["net"], os.path.join(run, "campaign", "nets", d["net"] + ".xqzn"))
        return 0
    if argv[1] == "at":
        if len(argv) > 4 and argv[3] == "--step":
            best = best_at(run, None, int(argv[4]))
        else:
            best = best_at(run, float(argv[3]) if len(argv) > 3 else None)
        if best is None:
            sys.stderr.write("learning_report.py: %s has no promoted net\n" % run)
            return 1
        d, m = best
        print(d["net"], os.path.join(run, "campaign", "nets", d["net"] + ".xqzn"), "%.1f" % m)
        return 0
    report(run, "--write-docs" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
