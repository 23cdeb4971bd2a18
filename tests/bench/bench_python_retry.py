#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPU per retry from Python: libmend (through PyGObject) against the same
loop written with tenacity and with backoff, measured in the same run.

Each of N turns fails twice with a transient error and then succeeds, with
zero delay, so only the machinery is measured. libmend does more per turn
than the peers — a chat, a queue, a turn object, a wait object per retry,
a JSON record per step — so the ratio is what that costs from Python.

usage: bench_python_retry.py [N]
"""

import resource
import sys

import gi

gi.require_version("Mend", "1")
from gi.repository import Mend  # noqa: E402

import backoff  # noqa: E402
import tenacity  # noqa: E402


class Transient(Exception):
    pass


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_mend(n):
    clock = Mend.ManualClock.new(1764500000000000)
    policy = Mend.ErrorPolicy(jitter=Mend.Jitter.NONE, base_delay_ms=0, max_delay_ms=0)
    chat = Mend.Chat(clock=clock, policy=policy)
    failure = Mend.Failure.new_from_http(503, None, None)
    attempts = [0]

    def on_attempt(turn, number, cancellable):
        attempts[0] += 1
        if number < 3:
            turn.fail(failure)
        else:
            turn.succeed()

    chat.connect("turn-started", lambda chat, turn: turn.connect("attempt", on_attempt))

    start = cpu()
    for _ in range(n):
        chat.submit("hello", None)
        while chat.props.turn is not None:
            clock.advance(0)
    elapsed = cpu() - start
    chat.close()
    return elapsed, attempts[0]


def run_tenacity(n):
    attempts = [0]
    state = {"left": 0}

    @tenacity.retry(stop=tenacity.stop_after_attempt(5), wait=tenacity.wait_none(),
                    retry=tenacity.retry_if_exception_type(Transient), reraise=True)
    def turn():
        attempts[0] += 1
        if state["left"] > 0:
            state["left"] -= 1
            raise Transient()
        return True

    start = cpu()
    for _ in range(n):
        state["left"] = 2
        turn()
    return cpu() - start, attempts[0]


def run_backoff(n):
    attempts = [0]
    state = {"left": 0}

    @backoff.on_exception(backoff.constant, Transient, max_tries=5, interval=0, jitter=None)
    def turn():
        attempts[0] += 1
        if state["left"] > 0:
            state["left"] -= 1
            raise Transient()
        return True

    start = cpu()
    for _ in range(n):
        state["left"] = 2
        turn()
    return cpu() - start, attempts[0]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    results = {}
    for name, run in (("mend", run_mend), ("tenacity", run_tenacity), ("backoff", run_backoff)):
        best = None
        for _ in range(3):
            elapsed, attempts = run(n)
            assert attempts == 3 * n, (name, attempts)
            best = elapsed if best is None else min(best, elapsed)
        results[name] = best / (2 * n) * 1e6   # µs of CPU per retry

    print("python: %d turns, each failing twice then succeeding, zero delay; CPU per retry" % n)
    for name in ("mend", "tenacity", "backoff"):
        print("  %-9s %7.2f µs/retry" % (name, results[name]))
    print("  mend / tenacity = %.2f, mend / backoff = %.2f"
          % (results["mend"] / results["tenacity"], results["mend"] / results["backoff"]))
    print("RESULT python n=%d mend_us=%.2f tenacity_us=%.2f backoff_us=%.2f "
          "mend_over_tenacity=%.2f mend_over_backoff=%.2f"
          % (n, results["mend"], results["tenacity"], results["backoff"],
             results["mend"] / results["tenacity"], results["mend"] / results["backoff"]))


if __name__ == "__main__":
    main()
