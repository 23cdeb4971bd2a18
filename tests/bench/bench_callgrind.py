#!/usr/bin/python3
# Instruction counts under callgrind, each against the naive way and the
# floor in the same run, and the targets they must meet (exit status 1 when
# one is not). Deterministic, unlike time on a shared machine.
#
# usage: bench_callgrind.py BUILDDIR [--deltas N] [--only NAME,…]
#
# "stream": per streamed text delta, every wire format, the server sending
# each event as an HTTP chunk of its own, all at once (as model servers do):
# a turn of N + 1 deltas minus a turn of 1, for libmend (a MendHttpSender
# under a MendChat), the naive client (libsoup + a JsonParser per event),
# the floor (memchr () over the stream's bytes, no I/O) and libsoup's floor
# (the same chunks read as the sender reads them, then memchr (): what any
# libsoup client pays).
#
# Prints RESULT lines as the benchmarks do (tools/bench reads them).

import argparse
import os
import re
import subprocess
import sys

FORMATS = ("messages", "chat", "responses", "gemini")

# Targets: libmend per delta at most this many times the naive client's,
# and at most this many times the floor's.
STREAM_NAIVE_MAX = 0.10
STREAM_FLOOR_MAX = 30.0


def callgrind_ir(argv):
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, G_SLICE="always-malloc", GIO_USE_PROXY_RESOLVER="dummy"))
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not m:
        sys.exit("bench_callgrind: callgrind failed: " + proc.stderr[-800:])
    return int(m.group(1))


def per_delta(argv_of, n):
    """(Ir of a turn of n + 1 deltas − Ir of a turn of 1) ÷ n."""
    return (callgrind_ir(argv_of(n + 1)) - callgrind_ir(argv_of(1))) / n


def run_stream(builddir, n, chunks, failures):
    exe = os.path.join(builddir, "tests", "bench", "bench-http")
    server = subprocess.Popen([exe, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, G_SLICE="always-malloc"))
    try:
        m = re.match(r"PORT (\d+)", server.stdout.readline())
        if not m:
            sys.exit("bench_callgrind: the HTTP bench's server did not start")
        port = m.group(1)
        for fmt in FORMATS:
            ir = {}
            for who in ("mend", "naive", "soup"):
                ir[who] = per_delta(lambda k: [exe, "--only", who, fmt, str(k), port, chunks], n)
            floor = per_delta(lambda k: [exe, "--only", "floor", fmt, str(k)], n) - \
                per_delta(lambda k: [exe, "--only", "none", fmt, str(k)], n)
            over_naive = ir["mend"] / ir["naive"]
            over_floor = ir["mend"] / floor
            print("RESULT stream_callgrind format=%s chunks=%s deltas=%d mend_ir=%.1f naive_ir=%.1f "
                  "floor_ir=%.1f soup_ir=%.1f over_naive=%.3f over_floor=%.1f over_soup=%.2f"
                  % (fmt, chunks, n, ir["mend"], ir["naive"], floor, ir["soup"], over_naive, over_floor,
                     ir["mend"] / ir["soup"]), flush=True)
            if chunks == "events":
                if over_naive > STREAM_NAIVE_MAX:
                    failures.append("stream %s: %.3f× naive > %.2f×" % (fmt, over_naive, STREAM_NAIVE_MAX))
                if over_floor > STREAM_FLOOR_MAX:
                    failures.append("stream %s: %.1f× the floor > %.0f×" % (fmt, over_floor, STREAM_FLOOR_MAX))
    finally:
        server.stdin.close()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("builddir")
    parser.add_argument("--deltas", type=int, default=1000)
    parser.add_argument("--chunks", default="events")
    parser.add_argument("--only", default="stream")
    args = parser.parse_args()
    only = args.only.split(",")
    failures = []

    if "stream" in only:
        for chunks in args.chunks.split(","):
            run_stream(args.builddir, args.deltas, chunks, failures)

    for f in failures:
        print("bench_callgrind: target not met: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
