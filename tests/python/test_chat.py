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
