#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendTurn and MendChat from Python: the rules of a failed turn, in virtual time."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, Soup, manual_clock, run_by_hand, run_turns_by_hand  # noqa: E402


class RetryAuthPolicy(Mend.ErrorPolicy):
    """Retries a refused key too, as an app whose keys rotate might."""

    def do_classify(self, failure):
        if failure.props.reason == Mend.Reason.AUTH:
            return Mend.FailureKind.TRANSIENT
        return Mend.ErrorPolicy.do_classify(self, failure)


class ChatTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()
        self.policy = Mend.ErrorPolicy(jitter=Mend.Jitter.NONE)
        self.chat = Mend.Chat(clock=self.clock, policy=self.policy, id="py-chat")
        self.attempts = []
        self.records = []
        self.chat.connect("turn-started", self.on_turn_started)
        self.chat.connect("record", lambda chat, text: self.records.append(json.loads(text)))

    def tearDown(self):
        self.chat.close()

    def on_turn_started(self, chat, turn):
        turn.connect("attempt", lambda t, n, c: self.attempts.append((t.props.prompt, n)))

    def queue_texts(self):
        return [item.props.text for item in self.chat.props.queue]

    def fail(self, status):
        self.chat.props.turn.fail(Mend.Failure.new_from_http(status, None, None))

    def test_retry_keeps_queue_then_promotes_head(self):
        self.chat.submit("first")
        self.chat.submit("A")
        self.chat.submit("B", None)
        self.fail(500)
        self.assertEqual(self.chat.props.lifecycle, Mend.Lifecycle.BUSY)
        self.clock.advance(250)
        self.fail(500)
        self.clock.advance(500)
        self.assertEqual(self.attempts, [("first", 1), ("first", 2), ("first", 3)])
        self.assertEqual(self.queue_texts(), ["A", "B"])
        self.chat.props.turn.succeed()
        self.assertEqual(self.chat.props.turn.props.prompt, "A")
        self.assertEqual(self.queue_texts(), ["B"])
        outcomes = [r["outcome"] for r in self.records]
        self.assertEqual(outcomes, ["scheduled", "fired", "scheduled", "fired"])

    def test_give_up_inserts_continue(self):
        self.chat.submit("first")
        self.chat.submit("A")
        for delay in (250, 500, 1000, 2000):
            self.fail(503)
            self.clock.advance(delay)
        self.fail(503)
        self.assertEqual(self.chat.props.lifecycle, Mend.Lifecycle.ERROR)
        self.assertEqual(self.queue_texts(), ["Continue the current turn", "A"])
        self.assertEqual(self.records[-1]["outcome"], "exhausted")

    def test_retry_after_a_give_up_and_the_state_to_bind(self):
        statuses, texts = [], []
        self.chat.connect("notify::status-text", lambda chat, pspec: statuses.append(chat.props.status_text))
        self.chat.connect("text-delta", lambda chat, turn, text: texts.append((turn.props.prompt, text)))
        self.assertFalse(self.chat.props.can_retry)
        with self.assertRaises(GLib.Error) as raised:
            self.chat.retry()
        self.assertTrue(raised.exception.matches(Mend.retry_error_quark(), Mend.RetryError.NOT_RETRYABLE))
        self.chat.submit("first")  # no provenance: left out
        with self.assertRaises(GLib.Error) as raised:
            self.chat.retry()
        self.assertTrue(raised.exception.matches(Mend.retry_error_quark(), Mend.RetryError.BUSY))
        self.fail(401)
        self.assertEqual(self.chat.props.lifecycle, Mend.Lifecycle.ERROR)
        self.assertEqual(self.queue_texts(), [])  # nothing queued: no Continue
        self.assertTrue(self.chat.props.can_retry)
        self.assertEqual(self.chat.props.last_failure.props.reason, Mend.Reason.AUTH)
        self.assertEqual(self.chat.props.last_failure.describe(), "The API key was refused")
        self.assertEqual(statuses[-1], "The API key was refused")
        failed = self.chat.props.last_failure
        self.chat.retry()
        turn = self.chat.props.turn
        self.assertEqual(turn.props.prompt, "first")
        self.assertIsNotNone(turn.props.retry_of)
        self.assertFalse(self.chat.props.can_retry)
        self.assertIs(self.chat.props.last_failure, failed)  # kept until a success
        turn.add_text("Hello")
        self.assertEqual(texts, [("first", "Hello")])
        turn.succeed()
        self.assertIsNone(self.chat.props.last_failure)
        self.assertEqual(self.chat.props.status_text, "")
        self.assertEqual(self.attempts, [("first", 1), ("first", 1)])

    def test_quick_waits_leave_the_status_alone(self):
        statuses = []
        self.chat.connect("notify::status-text", lambda chat, pspec: statuses.append(chat.props.status_text))
        self.chat.submit("first")
        self.fail(503)  # 250 ms: quick
        self.assertIsNotNone(self.chat.props.wait)
        self.assertIs(self.chat.props.wait, self.chat.props.turn.props.wait)
        self.assertEqual(statuses, [])
        self.chat.props.quiet_wait_ms = 0
        self.clock.advance(250)
        self.fail(503)  # 500 ms, shown now
        self.assertEqual(statuses[-1], "The service is overloaded — retrying in 1 s (retry 2 of 4)")
        self.clock.advance(500)
        self.assertIsNone(self.chat.props.wait)

    def test_nicks_and_schedules_per_reason(self):
        self.assertEqual(Mend.turn_state_to_nick(Mend.TurnState.WAITING), "waiting")
        self.assertEqual(Mend.lifecycle_to_nick(Mend.Lifecycle.BUSY), "busy")
        self.assertEqual(Mend.gate_state_to_nick(Mend.GateState.HALF_OPEN), "half-open")
        self.assertEqual(Mend.reason_to_nick(Mend.Reason.RATE_LIMIT), "rate-limit")
        policy = Mend.ErrorPolicy(jitter=Mend.Jitter.NONE)
        limited = Mend.Failure.new_from_http(429, None, None)
        self.assertEqual(policy.delay_for(1, limited)[0], 5000)
        policy.set_schedule_for_reason(Mend.Reason.RATE_LIMIT, '{"delays": [10000, 20000]}')
        self.assertEqual(policy.delay_for(2, limited)[0], 20000)
        self.assertEqual(json.loads(policy.dup_schedule_for_reason(Mend.Reason.RATE_LIMIT)), {"delays": [10000, 20000]})
        with self.assertRaises(GLib.Error):
            policy.set_schedule_for_reason(Mend.Reason.RATE_LIMIT, '{"staggerMs": 1}')
        policy.set_schedule_for_reason(Mend.Reason.RATE_LIMIT, None)
        self.assertIsNone(policy.dup_schedule_for_reason(Mend.Reason.RATE_LIMIT))

    def test_stop_keeps_queue(self):
        self.chat.submit("first")
        self.chat.submit("A")
        self.fail(529)
        self.chat.stop()
        self.clock.advance(60000)
        self.assertEqual(self.chat.props.lifecycle, Mend.Lifecycle.READY)
        self.assertEqual(len(self.attempts), 1)
        self.assertEqual(self.queue_texts(), ["A"])
        self.assertTrue(self.chat.send_next())
        self.assertEqual(self.chat.props.turn.props.prompt, "A")

    def test_retry_after_waits_exactly(self):
        self.chat.submit("first")
        headers = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        headers.append("Retry-After", "7")
        self.chat.props.turn.fail(Mend.Failure.new_from_http(429, headers, None))
        wait = self.chat.props.turn.props.wait
        self.assertEqual(wait.props.delay_ms, 7000)
        self.assertTrue(wait.props.server_hint)
        self.assertEqual(wait.describe(), "Retrying in 7 s (retry 1 of 4)")

    def test_do_classify_changes_what_the_turn_retries(self):
        chat = Mend.Chat(clock=self.clock, policy=RetryAuthPolicy(jitter=Mend.Jitter.NONE))
        run_turns_by_hand(chat)
        chat.submit("first", None)
        chat.props.turn.fail(Mend.Failure.new_from_http(401, None, None))
        self.assertEqual(chat.props.turn.props.state, Mend.TurnState.WAITING)

        self.chat.submit("first")
        self.fail(401)
        self.assertEqual(self.chat.props.lifecycle, Mend.Lifecycle.ERROR)
        chat.close()

    def test_submit_errors(self):
        with self.assertRaises(GLib.Error) as caught:
            self.chat.submit("   ", None)
        self.assertTrue(caught.exception.matches(Mend.queue_error_quark(), Mend.QueueError.BLANK))
        self.chat.close()
        with self.assertRaises(GLib.Error) as caught:
            self.chat.submit("hello", None)
        self.assertTrue(caught.exception.matches(Mend.retry_error_quark(), Mend.RetryError.CLOSED))


class TurnTests(unittest.TestCase):
    def test_finished_once_and_late_answers_ignored(self):
        clock = manual_clock()
        turn = Mend.Turn(prompt="hi", clock=clock)
        run_by_hand(turn)
        finished = []
        turn.connect("finished", lambda t, state: finished.append(state))
        turn.start(None)
        turn.stop()
        turn.succeed()
        turn.fail(Mend.Failure.new_from_http(503, None, None))
        self.assertEqual(finished, [Mend.TurnState.STOPPED])


class NothingRunsTests(unittest.TestCase):
    def test_a_turn_with_nothing_to_run_it_fails_at_once(self):
        # No sender and no "attempt" handler: the turn gives up at once,
        # saying why, and keeps the queue. Its warning (said once) is not
        # fatal here.
        fatal = GLib.log_set_always_fatal(GLib.LogLevelFlags.LEVEL_ERROR)
        try:
            chat = Mend.Chat(clock=manual_clock())
            ended = []
            chat.connect("turn-finished", lambda chat, turn: ended.append(turn))
            chat.begin_external_turn()
            chat.submit("first", None)
            chat.submit("A", None)
            chat.end_external_turn()
        finally:
            GLib.log_set_always_fatal(fatal)
        self.assertEqual(len(ended), 1)
        self.assertEqual(ended[0].props.state, Mend.TurnState.FAILED)
        error = ended[0].props.last_failure.get_error()
        self.assertTrue(error.matches(Mend.retry_error_quark(), Mend.RetryError.NO_SENDER))
        self.assertIn("no sender", error.message)
        self.assertEqual(chat.props.lifecycle, Mend.Lifecycle.ERROR)
        queue = chat.props.queue
        self.assertEqual([queue.get_item(i).props.text for i in range(queue.get_n_items())],
                         ["Continue the current turn", "A"])
        chat.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
