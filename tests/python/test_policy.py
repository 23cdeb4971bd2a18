#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendFailure and MendErrorPolicy from Python, through the typelib."""

import gc
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import Gio, GLib, Mend, Soup, run_by_hand  # noqa: E402
from gi.repository import GObject  # noqa: E402


class RetryAuthPolicy(Mend.ErrorPolicy):
    """Retries a refused key too: the classify seam from Python."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def do_classify(self, failure):
        self.seen.append(failure.props.reason)
        if failure.props.reason == Mend.Reason.AUTH:
            return Mend.FailureKind.TRANSIENT
        return Mend.ErrorPolicy.do_classify(self, failure)


class FailureTests(unittest.TestCase):
    def test_gateway_503_text_is_capacity_with_its_hint(self):
        failure = Mend.Failure.new_from_text(
            "API Error: 503 no non-exhausted claude accounts available; "
            "next account frees up in 47m (retry after 2820s)")
        self.assertEqual(failure.props.reason, Mend.Reason.CAPACITY)
        self.assertEqual(failure.props.kind, Mend.FailureKind.TRANSIENT)
        self.assertEqual(failure.props.retry_after_ms, 2820000)
        self.assertEqual(failure.props.status, 503)

    def test_usage_limit_is_limit(self):
        failure = Mend.Failure.new_from_text("You've hit your usage limit")
        self.assertEqual(failure.props.reason, Mend.Reason.USAGE_LIMIT)
        self.assertEqual(failure.props.kind, Mend.FailureKind.LIMIT)

    def test_http_429_with_retry_after(self):
        headers = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        headers.append("Retry-After", "7")
        body = GLib.Bytes.new(json.dumps(
            {"type": "error", "error": {"type": "rate_limit_error",
                                        "message": "Slow down"}}).encode())
        failure = Mend.Failure.new_from_http(429, headers, body)
        self.assertEqual(failure.props.reason, Mend.Reason.RATE_LIMIT)
        self.assertEqual(failure.props.retry_after_ms, 7000)
        self.assertEqual(failure.props.api_error_type, "rate_limit_error")
        self.assertEqual(failure.props.message, "Slow down")

    def test_gerror_cancelled_is_stopped(self):
        error = GLib.Error.new_literal(
            Gio.io_error_quark(), "Operation was cancelled", Gio.IOErrorEnum.CANCELLED)
        failure = Mend.Failure.new_from_error(error)
        self.assertEqual(failure.props.kind, Mend.FailureKind.STOPPED)

    def test_reason_nick(self):
        self.assertEqual(Mend.reason_to_nick(Mend.Reason.RATE_LIMIT), "rate-limit")


class PolicyTests(unittest.TestCase):
    def test_turn_schedule_without_jitter(self):
        policy = Mend.ErrorPolicy.new()
        policy.props.jitter = Mend.Jitter.NONE
        delays = [policy.delay_for(n, None)[0] for n in range(1, 5)]
        self.assertEqual(delays, [250, 500, 1000, 2000])

    def test_resume_schedule(self):
        policy = Mend.ErrorPolicy.new_for_resume()
        self.assertEqual(list(policy.get_delays()), [20000, 45000, 90000, 180000])
        self.assertEqual(policy.props.max_retries, 4)

    def test_keyword_construction(self):
        policy = Mend.ErrorPolicy(max_retries=2, jitter=Mend.Jitter.FULL,
                                  delays=GLib.Variant("au", [100, 200]))
        self.assertEqual(policy.props.max_retries, 2)
        self.assertEqual(list(policy.get_delays()), [100, 200])

    def test_server_hint_above_max_gives_up(self):
        policy = Mend.ErrorPolicy.new()
        failure = Mend.Failure.new_from_text("overloaded (retry after 2820s)")
        delay, server_hint = policy.delay_for(1, failure)
        self.assertEqual(delay, -1)
        self.assertTrue(server_hint)

    def test_do_classify_override_changes_the_verdict(self):
        policy = RetryAuthPolicy()
        auth = Mend.Failure.new_from_http(401, None, None)
        bad = Mend.Failure.new_from_http(400, None, None)
        self.assertEqual(Mend.ErrorPolicy.new().classify(auth), Mend.FailureKind.PERMANENT)
        self.assertEqual(policy.classify(auth), Mend.FailureKind.TRANSIENT)
        self.assertEqual(policy.classify(bad), Mend.FailureKind.PERMANENT)
        self.assertEqual(policy.seen, [Mend.Reason.AUTH, Mend.Reason.BAD_REQUEST])

    def test_json_round_trip(self):
        policy = Mend.ErrorPolicy.new_from_json('{"maxRetries": 6, "jitter": "equal"}')
        self.assertEqual(policy.props.max_retries, 6)
        again = Mend.ErrorPolicy.new_from_json(policy.to_json())
        self.assertEqual(again.to_json(), policy.to_json())
        self.assertEqual(json.loads(policy.to_json())["jitter"], "equal")

    def test_json_error_names_the_key(self):
        with self.assertRaises(GLib.Error) as caught:
            Mend.ErrorPolicy.new_from_json('{"maxRetries": 5000}')
        self.assertTrue(caught.exception.matches(Mend.policy_error_quark(),
                                                 Mend.PolicyError.INVALID))
        self.assertIn("maxRetries", caught.exception.message)

    def test_update_is_all_or_nothing(self):
        policy = Mend.ErrorPolicy.new()
        before = policy.to_json()
        with self.assertRaises(GLib.Error):
            policy.update_from_json('{"maxRetries": 9, "multiplier": "fast"}')
        self.assertEqual(policy.to_json(), before)

    def tearDown(self):
        gc.collect()

class RuleTests(unittest.TestCase):
    """The app's own classifier rules, by call and in the policy's JSON."""

    def test_add_rule_reads_words_the_library_does_not_know(self):
        policy = Mend.ErrorPolicy.new()
        failure = Mend.Failure.new_from_text("gw: upstream pool drained, come back soon")
        self.assertEqual(policy.classify(failure), Mend.FailureKind.PERMANENT)
        self.assertTrue(policy.add_rule("pool drained", Mend.Reason.CAPACITY, "our gateway"))
        self.assertEqual(policy.get_n_rules(), 1)
        self.assertEqual(policy.classify(failure), Mend.FailureKind.TRANSIENT)
        self.assertEqual(policy.get_reason_for(failure), Mend.Reason.CAPACITY)
        # The failure's own facts stay.
        self.assertEqual(failure.props.reason, Mend.Reason.UNKNOWN)
        policy.clear_rules()
        self.assertEqual(policy.classify(failure), Mend.FailureKind.PERMANENT)

    def test_a_rule_outranks_the_built_in_words(self):
        policy = Mend.ErrorPolicy.new()
        failure = Mend.Failure.new_from_text("429 Too Many Requests: monthly tokens spent")
        self.assertEqual(policy.classify(failure), Mend.FailureKind.TRANSIENT)
        policy.add_rule("monthly tokens", Mend.Reason.USAGE_LIMIT, None)
        self.assertEqual(policy.classify(failure), Mend.FailureKind.LIMIT)

    def test_a_blank_rule_is_an_error(self):
        policy = Mend.ErrorPolicy.new()
        with self.assertRaises(GLib.Error) as caught:
            policy.add_rule("   ", Mend.Reason.CAPACITY, None)
        self.assertTrue(caught.exception.matches(Mend.policy_error_quark(),
                                                 Mend.PolicyError.INVALID))
        self.assertEqual(policy.get_n_rules(), 0)

    def test_rules_in_json(self):
        policy = Mend.ErrorPolicy.new_from_json(json.dumps({"rules": [
            {"phrase": "pool drained", "reason": "capacity", "source": "our gateway"}]}))
        failure = Mend.Failure.new_from_text("Pool\n  drained")
        self.assertEqual(policy.classify(failure), Mend.FailureKind.TRANSIENT)
        written = json.loads(policy.to_json())
        self.assertEqual(written["rules"], [
            {"phrase": "pool drained", "reason": "capacity", "source": "our gateway"}])
        with self.assertRaises(GLib.Error) as caught:
            policy.update_from_json('{"rules": [{"phrase": "x", "reason": "busy"}]}')
        self.assertIn("rules[0].reason", caught.exception.message)
        self.assertEqual(policy.get_n_rules(), 1)

    def tearDown(self):
        gc.collect()


class VerdictTests(unittest.TestCase):
    def test_a_failure_of_ones_own_keeps_its_facts(self):
        failure = Mend.Failure(reason=Mend.Reason.CAPACITY, status=529, retry_after_ms=2000)
        self.assertEqual(failure.props.kind, Mend.FailureKind.TRANSIENT)
        self.assertEqual(failure.props.retry_after_ms, 2000)
        flags = Mend.Failure.find_property("partial").flags
        self.assertTrue(flags & GObject.ParamFlags.CONSTRUCT_ONLY)
        self.assertFalse(Mend.Failure.find_property("kind").flags & GObject.ParamFlags.WRITABLE)

    def test_the_turn_keeps_its_policy_verdict(self):
        policy = RetryAuthPolicy()
        policy.props.jitter = Mend.Jitter.NONE
        clock = Mend.ManualClock.new(1764500000000000)
        turn = Mend.Turn(prompt="hi", policy=policy, clock=clock)
        run_by_hand(turn)
        failure = Mend.Failure.new_from_http(401, None, None)
        turn.start(None)
        turn.fail(failure)
        verdict = turn.props.last_verdict
        self.assertEqual(verdict.props.kind, Mend.FailureKind.TRANSIENT)
        self.assertEqual(verdict.props.delay_ms, 250)
        self.assertEqual(verdict.props.attempt, 1)
        self.assertFalse(verdict.props.partial)
        self.assertEqual(turn.get_last_verdict().get_failure(), failure)
        # The failure's own kind is the default reading of its facts.
        self.assertEqual(failure.props.kind, Mend.FailureKind.PERMANENT)
        self.assertEqual(turn.props.state, Mend.TurnState.WAITING)
        turn.stop()

    def test_output_seen_is_the_verdicts_not_the_failures(self):
        clock = Mend.ManualClock.new(1764500000000000)
        turn = Mend.Turn(prompt="hi", clock=clock)
        run_by_hand(turn)
        failure = Mend.Failure.new_from_http(529, None, None)
        turn.start(None)
        turn.note_output()
        turn.fail(failure)
        self.assertEqual(turn.props.last_verdict.props.kind, Mend.FailureKind.PERMANENT)
        self.assertTrue(turn.props.last_verdict.props.partial)
        self.assertEqual(turn.props.last_verdict.props.delay_ms, -1)
        self.assertTrue(turn.props.last_failure.props.partial)
        self.assertFalse(failure.props.partial)
        self.assertEqual(failure.props.kind, Mend.FailureKind.TRANSIENT)

    def tearDown(self):
        gc.collect()


if __name__ == "__main__":
    unittest.main(verbosity=2)
