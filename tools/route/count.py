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
for i, a in enumerate(addrs):
    fn, loc = out[2 * i], out[2 * i + 1]
    where[a] = (fn, os.path.basename(loc.split(":")[0]))

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

# The same by part of the library: the files of one class and its helpers
# count as one place; the JSON and translation helpers count as none.
PARTS = {
    "failure": ("mend-failure.c", "mend-failure-parse.c", "mend-classifier.c", "mend-classifier-rules.c",
                "mend-redact.c"),
    "policy": ("mend-error-policy.c", "mend-error-policy-rules.c", "mend-verdict.c"),
    # The countdown board is the clock's: kept on it, private to it.
    "clock": ("mend-clock.c", "mend-manual-clock.c", "mend-timer-queue.c", "mend-countdown.c"),
    "subagents": ("mend-subagent-retry.c", "mend-subagent-scheduler.c", "mend-subagent-list.c",
                  "mend-subagent.c", "mend-subagent-retry-state.c"),
    "chat": ("mend-chat.c", "mend-chat-host.c", "mend-chat-state.c"),
    "queue": ("mend-queue.c", "mend-queue-item.c"),
}
# Files of no class, whose functions any class calls as it would GLib's:
# the JSON and translation helpers, the thread rule every object checks,
# and the table of a failure's default kind (the failure's own kind and a
# policy's classify read it).
STRICT_HELPERS = ("mend-json.c", "mend-i18n.c")
HELPERS = STRICT_HELPERS + ("mend-owner.c", "mend-failure-kind.c")


def part(f):
    for name, files in PARTS.items():
        if f in files:
            return name
    return f


def by_part(helpers):
    stack = []
    visited = []
    calls = back = 0
    lines = []
    for d, a in entries:
        d = int(d)
        fn, f = where[a]
        if not counted(fn, f) or f in helpers:
            continue
        p = part(f)
        while stack and stack[-1][0] >= d:
            stack.pop()
        caller = stack[-1][1] if stack else None
        if caller is not None and caller != p and not accessor(fn):
            again = p in visited
            calls += 1
            back += again
            lines.append(f"  {caller} → {p}: {fn}{'  (back)' if again else ''}")
        if p not in visited:
            visited.append(p)
        stack.append((d, p))
    return lines, calls, back


lines, calls, back = by_part(HELPERS)
print("\nBy part (" + ", ".join(f"{k}: {len(v)} files" for k, v in PARTS.items()) + "):")
print("\n".join(lines))
print(f"calls from one part to another, without accessors: {calls}, {back} of them back into a part already visited")
route = (calls, back)
_, calls, back = by_part(STRICT_HELPERS)
print(f"the same with the thread rule and the default-kind table as places of their own: {calls}, {back} back")
if limits and (route[0] > limits[0] or route[1] > limits[1]):
    print(f"over the budget of {limits[0]} calls and {limits[1]} back")
    sys.exit(1)
