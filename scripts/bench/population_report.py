#!/usr/bin/env python3
"""population_report.py: the report of a population run (scripts/bench/population.sh).

  population_report.py pick CAMPAIGN       prints "CONTROL_NET BEST_NET BEST_SLOT" from the
                                           campaign's members.txt: the control member's
                                           latest net, and the latest net of the member
                                           rated highest in the last round ("none" when no
                                           member other than the control was rated)
  population_report.py report RUN [--write-docs]
                                           writes RUN/report.md and RUN/population.svg
                                           (each setting of each member over time, from
                                           population.log) from RUN/run.json, RUN/match.json
                                           and RUN/campaign/; --write-docs also appends the
                                           report to docs/results.md and copies the chart
                                           to docs/img/population.svg

Slots are 1-based, as `xqz population` shows them.
"""
import json
import math
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine_time_report import fmt_elo, match_estimate  # noqa: E402  (one Elo estimate)

SETTINGS = ("lr_scale", "l2", "value_weight", "batch")
LOG_SCALE = {"lr_scale", "l2", "batch"}
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
           "#7b4173", "#3182bd"]


def members_table(camp):
    """members.txt as (control slot 0-based or -1, [dict per slot])."""
    control, slots = -1, []
    with open(os.path.join(camp, "members.txt")) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "table":
                kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
                control = int(kv.get("control", -1))
            elif words[0] == "slot":
                kv = dict(w.split("=", 1) for w in words[2:] if "=" in w)
                slots.append(kv)
    return control, slots


def pick(camp):
    control, slots = members_table(camp)
    if control < 0 or control >= len(slots):
        print("none none 0")
        return
    best, best_elo = None, -math.inf
    for i, m in enumerate(slots):
        if i == control or m.get("rated") != "1" or int(m.get("net", "0"), 16) == 0:
            continue
        elo = float(m["elo"])
        if elo > best_elo:
            best, best_elo = i, elo
    if best is None:
        print("%s none 0" % slots[control]["net"])
        return
    print("%s %s %d" % (slots[control]["net"], slots[best]["net"], best + 1))


def read_log(camp):
    """population.log's lines as dicts, in order (a line that does not parse is skipped)."""
    path = os.path.join(camp, "population.log")
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def settings_of(d, key="settings"):
    s = d.get(key)
    return s if isinstance(s, dict) else {k: d[k] for k in SETTINGS if k in d}


def svg_chart(ratings, t0):
    """A panel per setting: each member's value at each round (x: minutes)."""
    W, PH, L, R, T = 760, 150, 70, 20, 24
    H = T + len(SETTINGS) * (PH + 30)
    pts = {}
    for r in ratings:
        m = r.get("member", 0)
        if m <= 0:
            continue  # the best net has no settings
        s = settings_of(r)
        for k in SETTINGS:
            if k in s:
                pts.setdefault(k, {}).setdefault(m, []).append(((r["time"] - t0) / 60.0, float(s[k])))
    tmax = max([p[0] for k in pts for m in pts[k] for p in pts[k][m]] + [1.0])
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif"'
         ' font-size="12">' % (W, H), '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="16">each member\'s settings at each round (x: minutes)</text>' % L]
    for i, k in enumerate(SETTINGS):
        y0 = T + i * (PH + 30) + 10
        vals = [p[1] for m in pts.get(k, {}) for p in pts[k][m]]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        log = k in LOG_SCALE and lo > 0
        f = (lambda v: math.log10(v)) if log else (lambda v: v)
        a, b = f(lo), f(hi)
        if b - a < 1e-12:
            a, b = a - 0.5, b + 0.5

        def X(t):
            return L + (W - L - R) * t / tmax

        def Y(v, a=a, b=b, f=f, y0=y0):
            return y0 + PH - PH * (f(v) - a) / (b - a)
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
                 % (L, y0, W - L - R, PH))
        o.append('<text x="4" y="%d">%s%s</text>' % (y0 + 14, k, " (log)" if log else ""))
        o.append('<text x="4" y="%d" fill="#666">%.3g</text>' % (y0 + PH, lo))
        o.append('<text x="4" y="%d" fill="#666">%.3g</text>' % (y0 + 28, hi))
        for m, p in sorted(pts.get(k, {}).items()):
            c = COLOURS[(m - 1) % len(COLOURS)]
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                     % (c, " ".join("%.1f,%.1f" % (X(t), Y(v)) for t, v in p)))
            t, v = p[-1]
            o.append('<text x="%.1f" y="%.1f" fill="%s">%d</text>' % (X(t) + 3, Y(v), c, m))
    o.append("</svg>")
    return "\n".join(o) + "\n"


def report(run, write_docs):
    camp = os.path.join(run, "campaign")
    meta = json.load(open(os.path.join(run, "run.json")))
    log = read_log(camp)
    ratings = [r for r in log if r.get("type") == "rating"]
    copies = [r for r in log if r.get("type") == "exploit"]
    t0 = min([r["time"] for r in ratings] + [0]) if ratings else 0
    rounds = max([r.get("round", 0) for r in ratings] + [0])
    lines = ["### Population: %d trainers, %d minutes (%s, commit %s)" %
             (meta["members"], meta["minutes"], meta["started"][:10], meta["commit"]), "",
             "Command: `scripts/bench/population.sh --minutes %d --members %d --games %d"
             " --sims %d --interval %d`; member 1 is the control (default settings, never"
             " copies); %d cores shared by the coordinator, the members and one worker." %
             (meta["minutes"], meta["members"], meta["games"], meta["sims"], meta["interval"],
              meta["cores"]), ""]
    wargs = meta.get("worker_args", "").split()
    if "--replay" in wargs:
        rec = wargs[wargs.index("--replay") + 1]
        mins = wargs[wargs.index("--replay-minutes") + 1] if "--replay-minutes" in wargs else "0"
        lines[-1:-1] = ["The worker replayed the recording `%s` instead of self-play"
                        " (`POP_WORKER_ARGS=\"--replay %s --replay-minutes %s\"`, docs/population.md,"
                        " \"Measuring without the self-play cost\")." % (rec, rec, mins)]
    mpath = os.path.join(run, "match.json")
    if os.path.exists(mpath):
        m = json.load(open(mpath))
        w, d, l = m["wins"], m["draws"], m["losses"]
        score, elo, lo, hi = match_estimate(m)
        verdict = ("meets the goal (at least 60%, the interval above 50%)"
                   if score >= 0.6 and lo > 0 else "does not meet the goal (at least 60%, the"
                   " interval above 50%)")
        lines += ["- Best member (%d, net %s) against the control (net %s): **%.1f%% (%d-%d-%d),"
                  " Elo %s [%s, %s]** in %d games at %d simulations; %s." %
                  (m["best_slot"], m["best_net"][:8], m["control_net"][:8], 100 * score, w, d,
                   l, fmt_elo(elo), fmt_elo(lo), fmt_elo(hi), w + d + l, meta["sims"], verdict)]
    else:
        lines += ["- No final match: no member other than the control was rated."]
    lines += ["- Rounds decided: %d; copies (exploit and explore): %d." % (rounds, len(copies))]
    summ = os.path.join(run, "summary.txt")
    if os.path.exists(summ):
        lines += ["", "```", open(summ).read().rstrip(), "```"]
    if copies:
        lines += ["", "Lineage (member <- donor, the settings it took):", "",
                  "| round | member | donor | generation | after |", "|---|---|---|---|---|"]
        for c in copies:
            a = settings_of(c, "after")
            lines.append("| %s | %s | %s | %s | %s |" % (
                c.get("round"), c.get("member"), c.get("donor"), c.get("generation"),
                ", ".join("%s %.3g" % (k, float(a[k])) for k in SETTINGS if k in a)))
    lines.append("")
    text = "\n".join(lines)
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(run, "population.svg"), "w") as f:
        f.write(svg_chart(ratings, t0))
    print(text)
    if write_docs:
        with open("docs/results.md", "a") as f:
            f.write("\n" + text + "\n![settings over time](img/population.svg)\n")
        os.makedirs("docs/img", exist_ok=True)
        shutil.copy(os.path.join(run, "population.svg"), "docs/img/population.svg")


def main(argv):
    if len(argv) >= 2 and argv[0] == "pick":
        pick(argv[1])
    elif len(argv) >= 2 and argv[0] == "report":
        report(argv[1], "--write-docs" in argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
