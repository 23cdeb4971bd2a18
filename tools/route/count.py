#!/usr/bin/env python3
# count.py — reads route-trace's entries, maps them to functions and files,
# and counts the calls that cross from one file of the library to another,
# and of those the ones that go back into a file the route visited already.
import os
import subprocess
import sys

# With MAX-CALLS and MAX-BACK it exits 1 when the route by part takes more.
exe, trace = sys.argv[1], sys.argv[2]
limits = [int(n) for n in sys.argv[3:5]]
entries = [line.split() for line in open(trace)]
addrs = sorted({a for _, a in entries})
out = subprocess.run(["addr2line", "-f", "-e", exe] + addrs, capture_output=True, text=True, check=True).stdout.split("\n")
where = {}
layer = {}
for i, a in enumerate(addrs):
    fn, loc = out[2 * i], out[2 * i + 1]
    path = loc.split(":")[0]
    where[a] = (fn, os.path.basename(path))
    # A file's part is its layer: its folder under lib/.
    rel = path.split("/lib/", 1)[-1] if "/lib/" in path else path
    # The generated enum types, at lib/'s root, are built into base/.
    layer[os.path.basename(path)] = rel.split("/", 1)[0] if "/" in rel else "base"

def counted(fn, f):
    """A function of the library's own .c files, not a type check."""
    return f.endswith(".c") and not fn.endswith("_get_type")


def accessor(fn):
    return any(part in fn for part in ("_get_", "_is_", "_ref", "_unref", "_dup_")) or \
        fn.endswith(("_dispose", "_finalize", "_get_property", "_set_property"))


stack = []          # (depth, file) of counted functions
stack_all = []
visited = []
calls = back = 0
route = []
calls_no_acc = back_no_acc = 0
for d, a in entries:
    d = int(d)
    fn, f = where[a]
    if not counted(fn, f):
        continue
    while stack and stack[-1][0] >= d:
        stack.pop()
    caller = stack[-1][1] if stack else None
    if caller is not None and caller != f:
        again = f in visited
        calls += 1
        back += again
        if not accessor(fn):
            calls_no_acc += 1
            back_no_acc += again
            route.append(f"{'  ' * min(d - 1, 20)}{caller} → {f}: {fn}{'  (back)' if again else ''}")
    if f not in visited:
        visited.append(f)
    stack.append((d, f))

print("\n".join(route))
print(f"\n{len(visited)} files of lib/ on the route.")
print(f"calls from one .c file of lib/ to another: {calls}, {back} of them back into a file already visited")
print(f"the same without accessors (get/is/ref/unref/dup, dispose, finalize, properties): "
      f"{calls_no_acc}, {back_no_acc} back")

# The same by part of the library: a part is a layer, a folder of lib/.
# base/ (JSON, translation, redaction, the thread rule) is what every
# layer calls as it would call GLib: it counts as no place, except in the
# strict reading.
def part(f):
    return layer.get(f, f)


# Lowest first: a call to a higher layer can only be a signal's handler or
# a callback, as a direct one would not link.
ORDER = ["base", "clock", "failure", "retry", "turn", "subagents", "chat", "stream", "http", "agent", "acp"]


def upward(caller, callee):
    return caller in ORDER and callee in ORDER and ORDER.index(callee) > ORDER.index(caller)


def by_part(helpers):
    stack = []
    visited = []
    calls = back = up = 0
    lines = []
    for d, a in entries:
        d = int(d)
        fn, f = where[a]
        p = part(f)
        if not counted(fn, f) or p in helpers:
            continue
        while stack and stack[-1][0] >= d:
            stack.pop()
        caller = stack[-1][1] if stack else None
        if caller is not None and caller != p and not accessor(fn):
            again = p in visited
            calls += 1
            back += again
            up += upward(caller, p)
            lines.append(f"  {caller} → {p}: {fn}{'  (back)' if again else ''}"
                         f"{'  (up: a handler or callback)' if upward(caller, p) else ''}")
        if p not in visited:
            visited.append(p)
        stack.append((d, p))
    return lines, calls, back, up


lines, calls, back, up = by_part(("base",))
parts = sorted({part(f) for f in {where[a][1] for _, a in entries} if f.endswith(".c")})
print("\nBy layer (" + ", ".join(parts) + "):")
print("\n".join(lines))
print(f"calls from one layer to another, without accessors: {calls}, {back} of them back into a layer already visited, "
      f"{up} of them up (signals and callbacks)")
route = (calls, back)
_, calls, back, _ = by_part(())
print(f"the same with base/ as a place of its own: {calls}, {back} back")
if limits and (route[0] > limits[0] or route[1] > limits[1]):
    print(f"over the budget of {limits[0]} calls and {limits[1]} back")
    sys.exit(1)
