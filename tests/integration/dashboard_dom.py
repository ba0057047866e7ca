#!/usr/bin/env python3
"""dashboard_dom.py DOM_FILE CHECK: one assertion on the dashboard's DOM as headless
chromium dumps it (test_dashboard.sh). Exit 0 when it holds; else 1, printing what was
found. The DOM is read into a small tree (html.parser), queried by element id."""
import re
import sys
from html.parser import HTMLParser

VOID = {"meta", "link", "br", "img", "input", "hr", "col", "source", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids, self.own = tag, attrs, parent, [], []

    def text(self):
        return "".join(self.own[:1]) + "".join(k.text() + "".join(k.tail) for k in self.kids)

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()

    def classes(self):
        return self.attrs.get("class", "").split()


class Tree(HTMLParser):
    def __init__(self):
        super().__init__()
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.ids = {}

    def handle_starttag(self, tag, attrs):
        n = Node(tag, dict(attrs), self.cur)
        n.tail = []
        self.cur.kids.append(n)
        if "id" in n.attrs:
            self.ids[n.attrs["id"]] = n
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        if self.cur.kids:
            self.cur.kids[-1].tail.append(data)
        else:
            self.cur.own.append(data)


Node.tail = []
t = Tree()
t.feed(open(sys.argv[1], encoding="utf-8").read())
what = sys.argv[2]


def node(i):
    n = t.ids.get(i)
    if n is None:
        sys.exit(f"  {what}: no element #{i}")
    return n


def text(i):
    return " ".join(node(i).text().split())


def points(i, cls=None):
    return [c for c in node(i).walk() if c.tag == "circle" and "pt" in c.classes()
            and (cls is None or cls in c.classes())]


def rows(i):
    """Body rows of table #i as lists of cell texts."""
    body = [c for c in node(i).walk() if c.tag == "tbody"][0]
    return [[" ".join(td.text().split()) for td in tr.kids if td.tag == "td"]
            for tr in body.kids if tr.tag == "tr"]


def number(i):
    return int(text(i).replace(",", ""))


checks = {}
found = {}


def check(f):
    checks[f.__name__.replace("_", "-")] = f
    return f


@check
def elo_points():
    return len(points("elo-chart")) >= 2


@check
def loss_points():
    return len(points("loss-chart")) >= 3  # total, policy and value


@check
def worker_row():
    r = [r for r in rows("workers") if "dash-w1" in r]
    return len(r) == 1 and int(r[0][4].replace(",", "")) > 0


@check
def match_rows():
    return sum(1 for r in rows("matches") if "promoted" in r) >= 2


@check
def headline():
    return "camp" in text("headline") and "threshold" in text("headline")


@check
def balance():
    state = text("balance-state")
    return any(k in state for k in ("filling", "no-trainer", "balanced", "trainer-bound",
                                    "worker-bound")) and "/ R 4" in text("balance")


# Issue 21, item 5: one check per contradiction the page showed.
@check
def last_gating_agrees():
    """The header's gating is the open match, or the newest decided one of the table."""
    line, open_box = text("campaign-line"), text("open-match")
    found["line"] = line
    if "candidate" in open_box:
        return "gating: match open" in line
    decided = rows("matches")
    return bool(decided) and f"gating: net {decided[0][0]}:" in line and "none yet" not in line


@check
def elo_axis_and_net1():
    """Net 1 plotted (a point per promoted net plus one), x ticks distinct whole steps."""
    pts = points("elo-chart")
    promoted = sum(1 for r in rows("matches") if "promoted" in r)
    ticks = [" ".join(x.text().split()) for x in node("elo-chart").walk()
             if x.tag == "text" and "xtick" in x.classes()]
    found.update(points=len(pts), promoted=promoted, ticks=ticks)
    titles = [" ".join(c.text().split()) for c in pts]
    whole = all(re.fullmatch(r"[0-9][0-9,]*", x) for x in ticks)
    return (len(pts) == promoted + 1 and any(s.startswith("net 1:") for s in titles)
            and whole and len(set(ticks)) == len(ticks) and 2 <= len(ticks) <= 8)


@check
def promotions_agree():
    """"nets promoted" counts the table's promoted rows; the chart never says none."""
    promoted = sum(1 for r in rows("matches") if "promoted" in r)
    found.update(stat=text("stat-nets-promoted"), promoted=promoted)
    return number("stat-nets-promoted") == promoted and "no promotions" not in text("elo-chart")


@check
def gating_state_agrees():
    """The gating stat says open exactly when a match bar is shown; the mode is labelled."""
    opened = "candidate" in text("open-match")
    found.update(match=text("stat-gating-match"), mode=text("stat-gating-mode"))
    return (text("stat-gating-match") == ("open" if opened else "none open")
            and node("stat-gating-mode").parent is not None)


@check
def trainer_step_kept():
    found["step"] = text("stat-trainer-step")
    return number("stat-trainer-step") > 0


@check
def throughput_charts():
    found.update(games=len(points("games-chart")), positions=len(points("positions-chart")))
    return len(points("games-chart")) >= 2 and len(points("positions-chart")) >= 2


@check
def anchor_chart():
    found.update(greedy=len(points("anchor-chart", "s-a0")),
                 ab=len(points("anchor-chart", "s-a1")), legend=text("anchor-legend"))
    return (len(points("anchor-chart", "s-a0")) >= 1 and len(points("anchor-chart", "s-a1")) >= 1
            and "greedy" in text("anchor-legend") and "alphabeta:1" in text("anchor-legend")
            and re.search(r"best net: [0-9]+% vs greedy, [0-9]+% vs alphabeta:1",
                          text("campaign-line")) is not None)


# Issue 49: a campaign read at a glance.
@check
def time_charts():
    found.update(elo=len(points("elo-time-chart")), anchors=len(points("anchor-time-chart")),
                 ticks=text("elo-time-chart")[:80])
    # Net 1 and the promotions, on a clock axis ("14:05"), and the anchors by time.
    return (len(points("elo-time-chart")) >= 2 and len(points("anchor-time-chart")) >= 2
            and re.search(r"[0-9]{2}:[0-9]{2}", text("elo-time-chart")) is not None)


@check
def progress_panel():
    p = text("progress")
    found.update(progress=p)
    return all(k in p for k in ("next candidate", "gating match ends", "next anchor match",
                                "run ends"))


@check
def worker_figures():
    r = [r for r in rows("workers") if "dash-w1" in r]
    found.update(row=r)
    return (len(r) == 1 and int(r[0][5].replace(",", "")) > 0 and r[0][9].endswith("ago")
            and r[0][11].split()[0] in ("playing", "idle", "paused"))


# Issue 48: a population's panels (test_dashboard_population.sh), shown only with one.
def shown(i):
    return "hidden" not in node(i).attrs


@check
def population_hidden():
    found.update(shown=[i for i in ("population", "population-settings", "population-lineage")
                        if shown(i)])
    return not found["shown"]


@check
def population_panel():
    line = text("population-line")
    found.update(line=line, rows=rows("population-members"))
    return (shown("population") and re.match(r"4 members \([0-9]+ alive\), round 0, share 25%",
                                             line) is not None
            and len(rows("population-members")) >= 1)


@check
def population_lineage():
    r = rows("population-events")
    found.update(rows=r)
    # The newest first: round 2 (member 3 copied member 1), then round 1.
    return (shown("population-lineage") and len(r) == 2 and r[0][1] == "2"
            and r[0][2] == "3 ← 1" and "lr_scale 1 → 1.2" in r[0][7] and r[1][2] == "2 ← 4")


@check
def population_charts():
    n = {k: len(points("pop-chart-" + k)) for k in ("lr_scale", "l2", "value_weight", "batch")}
    found.update(points=n, legend=text("population-legend"))
    # Two points per event (before and after), members 2 and 3 in the legend.
    return (shown("population-settings") and all(v >= 4 for v in n.values())
            and len(points("pop-chart-lr_scale", "s-p2")) >= 2
            and "member 2" in text("population-legend") and "member 3" in text("population-legend"))


if what not in checks:
    sys.exit(f"unknown check {what}")
ok = checks[what]()
if not ok:
    print(f"  {what}: found {found}")
sys.exit(0 if ok else 1)
