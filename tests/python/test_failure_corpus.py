#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The corpus of real failures (tests/data/failures), run from Python.

Every case is made into a MendFailure through the typelib — from its text,
its HTTP status, headers and body, or its GError — and classified by the
default MendErrorPolicy. The confusion table is printed; the promises are
the same as the C test's: nothing that cannot succeed is retried, at most
2 % of the transient cases are missed, every reason is right unless the
case says why it is ambiguous.
"""

import collections
import glob
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import Gio, GLib, Mend, Soup  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "..", "data", "failures")
KINDS = ["transient", "permanent", "limit", "stopped"]

DOMAINS = {
    "g-io-error-quark": (Gio.io_error_quark, Gio.IOErrorEnum),
    "g-resolver-error-quark": (Gio.resolver_error_quark, Gio.ResolverError),
    "g-tls-error-quark": (Gio.tls_error_quark, Gio.TlsError),
    "soup-session-error-quark": (Soup.session_error_quark, Soup.SessionError),
}


# GLib's G_IO_ERROR_CONNECTION_CLOSED is another name of BROKEN_PIPE;
# PyGObject keeps one nick per value.
ALIASES = {"connection-closed": "broken-pipe"}


def enum_by_nick(enum_type, nick):
    nick = ALIASES.get(nick, nick)
    for value in enum_type.__enum_values__.values():
        if value.value_nick == nick:
            return value
    raise KeyError(nick)


def failure_from_case(case, clock):
    if case["input"] == "text":
        return Mend.Failure.new_from_text(case["text"])
    if case["input"] == "http":
        headers = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        for name, value in case["headers"].items():
            headers.append(name, value)
        body = case.get("body")
        data = GLib.Bytes.new(body.encode()) if body is not None else None
        return Mend.Failure.new_from_http_at(case["status"], headers, data, clock)
    quark, codes = DOMAINS[case["domain"]]
    error = GLib.Error.new_literal(quark(), case["message"],
                                   int(enum_by_nick(codes, case["code"])))
    return Mend.Failure.new_from_error(error)


def run_corpus():
    policy = Mend.ErrorPolicy.new()
    clock = Mend.ManualClock.new(1764500000000000)
    results = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl"))):
        family = os.path.basename(path)[:-len(".jsonl")]
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    continue
                case = json.loads(line)
                failure = failure_from_case(case, clock)
                results.append({
                    "case": case,
                    "family": family,
                    "kind": Mend.failure_kind_to_nick(policy.classify(failure)),
                    "reason": Mend.reason_to_nick(failure.props.reason),
                    "hint": failure.props.retry_after_ms,
                    "rule": failure.props.rule,
                })
    return results


def report(results):
    table = collections.Counter((r["case"]["kind"], r["kind"]) for r in results)
    families = collections.Counter(r["family"] for r in results)
    right = sum(r["reason"] == r["case"]["reason"] for r in results)
    lines = ["corpus: %d cases" % len(results)]
    lines += ["  %-14s %3d" % item for item in sorted(families.items())]
    lines.append("expected \\ got " + "".join("%11s" % k for k in KINDS))
    for want in KINDS:
        lines.append("%-14s" % want + "".join("%11d" % table[(want, got)] for got in KINDS))
    lines.append("reason right: %d of %d (%.1f %%)" % (right, len(results),
                                                      100.0 * right / len(results)))
    return "\n".join(lines)


class FailureCorpusTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results = run_corpus()
        print(report(cls.results), file=sys.stderr)

    def test_corpus_has_two_hundred_sourced_cases(self):
        self.assertGreaterEqual(len(self.results), 200)
        for r in self.results:
            self.assertTrue(r["case"]["source"])
            self.assertTrue(r["case"]["why"])
            self.assertTrue(r["rule"])

    def test_never_retries_what_cannot_succeed(self):
        for r in self.results:
            case = r["case"]
            if case["kind"] != "transient" or case["reason"] in ("auth", "permission", "usage-limit"):
                self.assertNotEqual(r["kind"], "transient", case["id"])

    def test_misses_at_most_two_percent_of_transient(self):
        transient = [r for r in self.results if r["case"]["kind"] == "transient"]
        missed = [r["case"]["id"] for r in transient if r["kind"] != "transient"]
        self.assertLessEqual(len(missed) * 100, len(transient) * 2, missed)

    def test_reason_right_unless_ambiguous(self):
        wrong = [r["case"]["id"] for r in self.results
                 if r["reason"] != r["case"]["reason"] and "ambiguous" not in r["case"]]
        self.assertEqual(wrong, [])

    def test_server_hints_are_read(self):
        for r in self.results:
            if "retryAfterMs" in r["case"]:
                self.assertEqual(r["hint"], r["case"]["retryAfterMs"], r["case"]["id"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
