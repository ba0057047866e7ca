#!/usr/bin/python3
"""Checks that the include graph has no circle across folders (issue 50, "floors").

Draws the graph of `#include "..."` between the project's files, one node per module (a
.c and its .h are one node, named by its path without the suffix), and finds its strongly
connected components (Tarjan). A circle inside one folder is a module's own business; a
circle whose files lie in different folders means a room that was meant to sit below
another includes it back (the bottom floor of coordinator/ including coord.h, say), so the
script names it, with one path around it, and exits 1.

An include is resolved as the compiler does: next to the including file first, then the
include directories of its target (common/ for every file, coordinator/ for the
coordinator's, the repository root for the tools).

Usage: scripts/check_includes.py [REPO_ROOT]   (default: the folder above scripts/)
Run by ctest as `include_cycles`.
"""
import os
import re
import sys

FOLDERS = ["common", "coordinator", "worker", "trainer", "tools"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files(root):
    files = set()
    for top in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    files.add(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def include_dirs(path):
    """The directories a quoted include of `path` is searched in, after its own."""
    top = path.split(os.sep)[0]
    dirs = ["common"]
    if top == "coordinator":
        dirs.append("coordinator")
    if top == "tools":
        dirs.append("")
    return dirs


def resolve(files, frm, name):
    for d in [os.path.dirname(frm)] + include_dirs(frm):
        cand = os.path.normpath(os.path.join(d, name))
        if cand in files:
            return cand
    return None


def module(path):
    return path[:-2]


def graph(root):
    files = source_files(root)
    g = {}
    for f in sorted(files):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            t = resolve(files, f, m.group(1))
            if t and module(t) != module(f):
                g.setdefault(module(f), set()).add(module(t))
    return g


def components(g):
    """Tarjan's strongly connected components with more than one node (iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def path(g, nodes, src, dst):
    """A shortest path src -> ... -> dst inside nodes (breadth first)."""
    prev, frontier = {src: None}, [src]
    while frontier and dst not in prev:
        nxt = []
        for v in frontier:
            for w in sorted(g.get(v, ())):
                if w in nodes and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    out, v = [], dst
    while v is not None:
        out.append(v)
        v = prev[v]
    return out[::-1]


def circle(g, comp):
    """A closed path through the component that crosses folders: an edge u -> v between
    two folders, then the way back from v to u."""
    nodes = set(comp)
    for u in comp:
        for v in sorted(g.get(u, ())):
            if v in nodes and os.path.dirname(u) != os.path.dirname(v):
                return [u] + path(g, nodes, v, u)
    return comp


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(here)
    g = graph(root)
    crossing = [c for c in components(g) if len({os.path.dirname(x) for x in c}) > 1]
    for c in crossing:
        print("include circle across folders: " + " -> ".join(circle(g, c)))
    if crossing:
        print("A module below another must not include it back: pass what it needs as"
              " arguments, or move the code that needs the upper module up (docs/architecture.md).")
        return 1
    print("include graph: no circle across folders (%d modules)" % len(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
