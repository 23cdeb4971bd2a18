#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The corpus of real failures (tests/data/failures), run from Python.

Every case is made into a MendFailure through the typelib — from its text,
its HTTP status, headers and body, or its GError — and classified by the
default MendErrorPolicy. The corpus is split by the first byte of the
SHA-256 of each case's id (even: the rules half, odd: the check half; see
the corpus's README). For each half the report gives kind and reason
accuracy, the confusion table, how many cases that must not be retried
were retried and the share of limits classified as limits; the bars are
the C test's (tests/failure/test-failure-corpus.c). The check half's mismatches
are listed only when MEND_CORPUS_SHOW_CHECK=1.
"""

import collections
import glob
import hashlib
import re
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import Gio, GLib, Mend, Soup  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "..", "data", "failures")
KINDS = ["transient", "permanent", "limit", "stopped"]

# The bars, as in tests/failure/test-failure-corpus.c: the on the check
# half's clear cases, the floor measured so far on all its cases.
RULES_KIND_PERCENT_MIN = 100.0
RULES_NEVER_RETRIED_MAX = 0
CHECK_KIND_PERCENT_MIN = 95.0       # clear cases
CHECK_NEVER_RETRIED_MAX = 0         # clear cases
CHECK_LIMIT_PERCENT_MIN = 90.0      # clear cases
CHECK_ALL_KIND_PERCENT_MIN = 94.0   # all cases; target 95
CHECK_ALL_NEVER_RETRIED_MAX = 5     # all cases; target 0
CHECK_ALL_LIMIT_PERCENT_MIN = 89.4  # all cases; target 90


def half_of(case_id):
    """The split: the first byte of the SHA-256 of the id, even or odd."""
    return "rules" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "check"


def is_gathered(case_id, family):
    return re.fullmatch(re.escape(family) + r"-g[0-9]+", case_id) is not None

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


def failure_from_case(case):
    if case["input"] == "text":
        return Mend.Failure.new_from_text(case["text"])
    if case["input"] == "http":
        headers = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        for name, value in case["headers"].items():
            headers.append(name, value)
        body = case.get("body")
        data = GLib.Bytes.new(body.encode()) if body is not None else None
        return Mend.Failure.new_from_http(case["status"], headers, data)
    quark, codes = DOMAINS[case["domain"]]
    error = GLib.Error.new_literal(quark(), case["message"],
                                   int(enum_by_nick(codes, case["code"])))
    return Mend.Failure.new_from_error(error)


def run_corpus():
    policy = Mend.ErrorPolicy.new()
    results = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.jsonl"))):
        family = os.path.basename(path)[:-len(".jsonl")]
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    continue
                case = json.loads(line)
                failure = failure_from_case(case)
                results.append({
                    "case": case,
                    "family": family,
                    "half": half_of(case["id"]),
                    "gathered": is_gathered(case["id"], family),
                    "kind": Mend.failure_kind_to_nick(policy.classify(failure)),
                    "reason": Mend.reason_to_nick(failure.props.reason),
                    "hint": failure.props.retry_after_ms,
                    "rule": failure.props.rule,
                })
    return results


def percent(part, whole):
    return 100.0 if whole == 0 else 100.0 * part / whole


def score(results):
    s = collections.Counter()
    s["table"] = collections.Counter()
    for r in results:
        case = r["case"]
        clear = "ambiguous" not in case
        kind_right = r["kind"] == case["kind"]
        reason_right = r["reason"] == case["reason"]
        s["n"] += 1
        s["clear"] += clear
        s["table"][(case["kind"], r["kind"])] += 1
        s["kind_right"] += kind_right
        s["kind_right_clear"] += kind_right and clear
        s["reason_right"] += reason_right
        s["reason_right_clear"] += reason_right and clear
        if case["kind"] != "transient":
            s["never"] += 1
            s["never_retried"] += r["kind"] == "transient"
            s["never_retried_clear"] += r["kind"] == "transient" and clear
        if case["kind"] == "limit":
            s["limits"] += 1
            s["limits_as_limit"] += r["kind"] == "limit"
            s["limits_clear"] += clear
            s["limits_as_limit_clear"] += r["kind"] == "limit" and clear
    return s


def report_half(title, results):
    s = score(results)
    lines = ["%s: %d cases (%d clear)" % (title, s["n"], s["clear"]),
             "  kind right:   %d of %d (%.1f %%); clear %d of %d (%.1f %%)" % (
                 s["kind_right"], s["n"], percent(s["kind_right"], s["n"]),
                 s["kind_right_clear"], s["clear"], percent(s["kind_right_clear"], s["clear"])),
             "  reason right: %d of %d (%.1f %%); clear %d of %d (%.1f %%)" % (
                 s["reason_right"], s["n"], percent(s["reason_right"], s["n"]),
                 s["reason_right_clear"], s["clear"], percent(s["reason_right_clear"], s["clear"])),
             "  must not be retried, retried: %d of %d; clear %d" % (
                 s["never_retried"], s["never"], s["never_retried_clear"]),
             "  limits classified limit: %d of %d (%.1f %%); clear %d of %d" % (
                 s["limits_as_limit"], s["limits"], percent(s["limits_as_limit"], s["limits"]),
                 s["limits_as_limit_clear"], s["limits_clear"]),
             "  expected \\ got " + "".join("%11s" % k for k in KINDS)]
    for want in KINDS:
        lines.append("  %-14s" % want + "".join("%11d" % s["table"][(want, got)] for got in KINDS))
    return lines


def report(results):
    families = collections.Counter(r["family"] for r in results)
    lines = ["corpus: %d cases in %d families" % (len(results), len(families))]
    lines += ["  %-16s %3d" % item for item in sorted(families.items())]
    rules = [r for r in results if r["half"] == "rules"]
    check = [r for r in results if r["half"] == "check"]
    lines += report_half("rules half", rules)
    lines += report_half("check half (the estimate)", check)
    lines += report_half("check half, gathered cases only", [r for r in check if r["gathered"]])
    shown = rules + (check if os.environ.get("MEND_CORPUS_SHOW_CHECK") == "1" else [])
    for r in shown:
        case = r["case"]
        if r["kind"] != case["kind"] or r["reason"] != case["reason"]:
            lines.append("%s %s %s: want %s/%s, got %s/%s by %s" % (
                r["half"], "~" if "ambiguous" in case else "!", case["id"],
                case["kind"], case["reason"], r["kind"], r["reason"], r["rule"]))
    return "\n".join(lines)


class FailureCorpusTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results = run_corpus()
        print(report(cls.results), file=sys.stderr)

    def half(self, name):
        return [r for r in self.results if r["half"] == name]

    def test_corpus_has_six_hundred_sourced_cases_from_thirty_families(self):
        self.assertGreaterEqual(len(self.results), 600)
        self.assertGreaterEqual(len({r["family"] for r in self.results}), 30)
        self.assertEqual(len({r["case"]["id"] for r in self.results}), len(self.results))
        for r in self.results:
            self.assertTrue(r["case"]["source"])
            self.assertTrue(r["case"]["why"])
            self.assertTrue(r["rule"])

    def test_split_matches_the_c_test(self):
        # A fixed example of the rule, so that both tests split alike.
        self.assertEqual(half_of("anthropic-001"),
                         "rules" if hashlib.sha256(b"anthropic-001").digest()[0] % 2 == 0 else "check")
        self.assertGreater(len(self.half("rules")), len(self.results) // 3)
        self.assertGreater(len(self.half("check")), len(self.results) // 3)

    def test_rules_half_kinds(self):
        s = score(self.half("rules"))
        self.assertGreaterEqual(percent(s["kind_right"], s["n"]), RULES_KIND_PERCENT_MIN)
        self.assertLessEqual(s["never_retried"], RULES_NEVER_RETRIED_MAX)

    def test_refusals_and_limits_are_never_retried(self):
        for r in self.results:
            if r["reason"] in ("auth", "permission", "usage-limit", "billing"):
                self.assertNotEqual(r["kind"], "transient")

    def test_check_half_meets_the_bars(self):
        s = score(self.half("check"))
        self.assertGreaterEqual(percent(s["kind_right_clear"], s["clear"]), CHECK_KIND_PERCENT_MIN)
        self.assertLessEqual(s["never_retried_clear"], CHECK_NEVER_RETRIED_MAX)
        self.assertGreaterEqual(percent(s["limits_as_limit_clear"], s["limits_clear"]),
                                CHECK_LIMIT_PERCENT_MIN)
        self.assertGreaterEqual(percent(s["kind_right"], s["n"]), CHECK_ALL_KIND_PERCENT_MIN)
        self.assertLessEqual(s["never_retried"], CHECK_ALL_NEVER_RETRIED_MAX)
        self.assertGreaterEqual(percent(s["limits_as_limit"], s["limits"]), CHECK_ALL_LIMIT_PERCENT_MIN)

    def test_rules_half_server_hints_are_read(self):
        wrong = [r["case"]["id"] for r in self.half("rules")
                 if "retryAfterMs" in r["case"] and r["hint"] != r["case"]["retryAfterMs"]]
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
