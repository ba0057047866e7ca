#!/usr/bin/env python3
"""test_summary.py: the closing line of scripts/test.sh, from ctest's JUnit report.

Usage: test_summary.py JUNIT_XML SECONDS [NOTE]
Prints one line: tests passed and failed (with the failed names), skipped with each one's
reason (the last "SKIPPED: ..." line the test printed, else ctest's own message), NOTE
(e.g. which stage stopped the run) and the time taken. A missing or unreadable report is
said as such: the run stopped before the tests.
"""
import sys
import xml.etree.ElementTree as ET


def duration(seconds):
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def skip_reason(case):
    out = case.findtext("system-out") or ""
    reasons = [l[len("SKIPPED:"):].strip() for l in out.splitlines() if l.startswith("SKIPPED:")]
    if reasons:
        return reasons[-1]
    node = case.find("skipped")
    return node.get("message", "no reason printed") if node is not None else "no reason printed"


def summary(path, seconds, note):
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        parts = ["no tests ran"]
    else:
        passed, failed, skipped = [], [], []
        for c in cases:
            status = c.get("status")
            name = c.get("name")
            if status == "run":
                passed.append(name)
            elif status == "notrun" and c.find("skipped") is not None:
                skipped.append(f"{name}: {skip_reason(c)}")
            else:
                failed.append(name)
        parts = [f"{len(passed)} passed",
                 f"{len(failed)} failed" + (f" ({', '.join(failed)})" if failed else ""),
                 f"{len(skipped)} skipped" + (f" ({'; '.join(skipped)})" if skipped else "")]
    if note:
        parts.append(note)
    parts.append(f"{duration(seconds)} in all")
    return "== summary: " + ", ".join(parts)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_summary.py JUNIT_XML SECONDS [NOTE]")
    print(summary(sys.argv[1], float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""))
