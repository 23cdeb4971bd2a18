#!/usr/bin/env python3
# check-no-circles.py — no file of the library calls, however indirectly,
# into a file that calls it
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-no-circles.py NM STATIC-LIBRARY…
#
# The layers' static libraries keep calls between layers going down (an
# upward call does not link); inside a layer, this keeps the files in an
# order too. Reads which object file defines each function (or datum) and
# which it uses (nm), and fails on every circle of calls between files,
# naming the functions that close it. Type functions (*_get_type) are not
# calls.

import subprocess
import sys

nm, libraries = sys.argv[1], sys.argv[2:]
out = subprocess.run([nm, "-A"] + libraries, capture_output=True, text=True, check=True).stdout

defined = {}
called = {}
for line in out.splitlines():
    # "libmend-turn.a:mend-turn.c.o:0000000000000000 T mend_turn_new" or
    # "libmend-turn.a:mend-turn.c.o:                 U mend_gate_report"
    head, _, rest = line.partition(".o:")
    fields = rest.split()
    if len(fields) < 2:
        continue
    obj = head.rsplit(":", 1)[-1] + ".o"
    kind, symbol = fields[-2], fields[-1]
    if kind in ("T", "D", "R", "B"):
        defined[symbol] = obj
    elif kind == "U":
        called.setdefault(obj, set()).add(symbol)

calls = {}
for obj, symbols in called.items():
    for symbol in symbols:
        target = defined.get(symbol)
        if target is not None and target != obj and not symbol.endswith("_get_type"):
            calls.setdefault(obj, {}).setdefault(target, []).append(symbol)

# Tarjan's strongly connected components: each of more than one file is
# a circle.
index, low, stack, on_stack, circles = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in calls.get(v, {}):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        component = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            component.append(w)
            if w == v:
                break
        if len(component) > 1:
            circles.append(sorted(component))


sys.setrecursionlimit(10000)
for obj in sorted(set(calls) | set(defined.values())):
    if obj not in index:
        visit(obj)

files = len(set(defined.values()))
if not files:
    print(f"no functions found in {' '.join(libraries)}", file=sys.stderr)
    sys.exit(1)
for circle in circles:
    print("files that call each other: " + ", ".join(circle), file=sys.stderr)
    for a in circle:
        for b, symbols in sorted(calls.get(a, {}).items()):
            if b in circle:
                print(f"  {a} → {b}: {', '.join(sorted(symbols)[:4])}", file=sys.stderr)
print(f"{files} files, {sum(len(t) for t in calls.values())} calls from one file to another, "
      f"{len(circles)} circles")
sys.exit(1 if circles else 0)
