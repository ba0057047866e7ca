#!/usr/bin/env python3
"""precision_learning_report.py: the report of scripts/bench/precision_learning.sh
(standard library only).

  precision_learning_report.py report OUT PRECISION   writes OUT/report.md and prints it

OUT holds two learning runs (fp32/ and b/, each a scripts/bench/learning.sh run directory)
and matches.jsonl: one line per checkpoint minute, {"minute", "a", "b", "result"}, the
result an `xqz arena` JSON line from arm B's point of view.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine_time_report import fmt_elo, match_estimate  # noqa: E402  (one Elo estimate)
from learning_report import promotions  # noqa: E402


def last_progress(run):
    """The worker's and the trainer's last counters in a run's logs: games, positions,
    trainer steps, and the precision the worker said it ran."""
    out = {"games": None, "steps": None, "precision": None}
    camp = os.path.join(run, "campaign")
    try:
        with open(os.path.join(camp, "worker.log"), errors="replace") as f:
            for line in f:
                m = re.search(r"\bprecision=(\w+)", line)
                if m:
                    out["precision"] = m.group(1)
                m = re.search(r"\bgames=(\d+)", line)
                if m:
                    out["games"] = int(m.group(1))
    except OSError:
        pass
    try:
        with open(os.path.join(camp, "trainer.log"), errors="replace") as f:
            for line in f:
                m = re.search(r"\bstep=(\d+)", line)
                if m:
                    out["steps"] = int(m.group(1))
    except OSError:
        pass
    return out


def match_line(d, precision):
    r = d.get("result")
    if not r:
        return "| %s | %s | %s | failed | | |" % (d["minute"], os.path.basename(d["b"])[:8],
                                                   os.path.basename(d["a"])[:8])
    w, dr, l = r["wins"], r["draws"], r["losses"]
    score, elo, lo, hi = match_estimate(r)
    verdict = ("%s ahead" % precision if lo > 0 else "fp32 ahead" if hi < 0 else
               "no difference shown")
    return "| %s | %s | %s | %.1f%% (+%d =%d -%d) | %s [%s, %s] | %s |" % (
        d["minute"], os.path.basename(d["b"])[:8], os.path.basename(d["a"])[:8], 100 * score,
        w, dr, l, fmt_elo(elo), fmt_elo(lo), fmt_elo(hi), verdict)


def report(out, precision):
    arms = [("fp32", os.path.join(out, "fp32")), (precision, os.path.join(out, "b"))]
    lines = ["# Low-precision self-play against fp32, two learning runs side by side", ""]
    run = json.load(open(os.path.join(arms[0][1], "run.json")))
    lines += ["%d minutes each, one core each (taskset), started together; %s." % (
        run["minutes"], run.get("cpu", "?")), ""]
    lines += ["| arm | worker precision (its log) | self-play games | trainer steps |"
              " promotions |", "|---|---|---|---|---|"]
    for name, path in arms:
        p = last_progress(path)
        lines.append("| %s | %s | %s | %s | %d |" % (
            name, p["precision"] or "?", p["games"] if p["games"] is not None else "?",
            p["steps"] if p["steps"] is not None else "?", len(promotions(path))))
    lines += ["", "Head to head at the same minute: the newest net each arm had promoted by"
              " then, both played in fp32, paired four-ply openings with colours swapped;"
              " score and Elo are arm %s's, the interval 95%%." % precision, "",
              "| minute | %s net | fp32 net | score | Elo [95%%] | verdict |" % precision,
              "|---|---|---|---|---|---|"]
    try:
        with open(os.path.join(out, "matches.jsonl")) as f:
            for line in f:
                if line.strip():
                    lines.append(match_line(json.loads(line), precision))
    except OSError:
        lines.append("| (no matches played) | | | | | |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    print(text, end="")


def main(argv):
    if len(argv) == 4 and argv[1] == "report":
        report(argv[2], argv[3])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
