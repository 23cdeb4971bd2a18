#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The deprecated names from Python: each still does what its new name
does, and the typelib marks it deprecated, so that PyGObject warns."""

import json
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, manual_clock, run_turns_by_hand  # noqa: E402

GATEWAY_503 = ("API Error: 503 no non-exhausted claude accounts available "
               "(error type server_error, HTTP 503)")


class DeprecatedNamesTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()

    def deprecated(self, call, *args):
        """call (*args), which must warn that it is deprecated."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call(*args)
        self.assertTrue(any(issubclass(w.category, DeprecationWarning) for w in caught),
                        "%s does not warn" % call.__name__)
        return result

    def test_subagent_retry_methods(self):
        resume = Mend.ErrorPolicy.new_for_resume()
        resume.props.stagger_ms = 0
        chat = Mend.Chat(clock=self.clock, resume_policy=resume, id="py")
        run_turns_by_hand(chat)
        retry = chat.props.subagents
        resumed = []
        prompts = []
        retry.connect("resumed", lambda r, sub: resumed.append(sub.props.id))
        chat.connect("turn-started", lambda c, turn: prompts.append(turn.props.prompt))

        sub = self.deprecated(retry.started, "toolu_1", "agent-a", "Survey the tree")
        self.assertIs(sub, retry.lookup("toolu_1"))
        self.assertEqual(sub.props.state, Mend.SubagentState.RUNNING)
        self.deprecated(retry.failed, "agent-a", Mend.Failure.new_from_text(GATEWAY_503))
        self.assertEqual(sub.props.state, Mend.SubagentState.FAILED)
        self.assertEqual(json.loads(sub.to_json())["retry"]["attempt"], 1)

        self.assertTrue(self.deprecated(retry.retry, "toolu_1"))
        self.assertEqual(len(prompts), 1)
        with self.assertRaises(GLib.Error) as caught:
            self.deprecated(retry.retry, "toolu_1")
        self.assertTrue(caught.exception.matches(Mend.retry_error_quark(), Mend.RetryError.BUSY))

        self.deprecated(retry.resumed, "agent-a")
        self.assertEqual(sub.props.state, Mend.SubagentState.RUNNING)
        self.assertEqual(resumed, ["toolu_1"])
        self.deprecated(retry.ended, "toolu_1", Mend.SubagentState.COMPLETED)
        self.assertEqual(sub.props.state, Mend.SubagentState.COMPLETED)
        self.assertFalse(sub.props.retryable)
        chat.close()

    def test_retry_wait_of(self):
        wait = Mend.RetryWait.new(self.clock, 4000, 2, 4, Mend.Reason.CAPACITY)
        self.assertEqual(self.deprecated(wait.get_of), 4)
        self.assertEqual(wait.props.of, 4)
        wait = Mend.RetryWait(clock=self.clock, delay_ms=1000, attempt=1, of=5)
        self.assertEqual(wait.get_max_retries(), 5)
        self.assertEqual(wait.props.max_retries, 5)

    def test_stream_observer_counters(self):
        chat = Mend.Chat(clock=self.clock, id="py")
        observer = Mend.StreamObserver.new(chat)
        observer.feed_line('{"type":"system","subtype":"init","session_id":"s-1"}', -1)
        observer.feed_line("not json", -1)
        observer.feed_line('{"type":"result","subtype":"success"', -1)
        # Read, never notified; the cut result parsed and ignored, the text
        # neither.
        self.assertEqual(observer.props.n_lines, 3)
        self.assertEqual(observer.props.n_parsed, 2)
        self.assertEqual(observer.props.n_ignored, 1)
        chat.close()

    def test_failure_new_from_http_at(self):
        failure = self.deprecated(Mend.Failure.new_from_http_at, 503, None, None, self.clock)
        self.assertEqual(failure.props.reason, Mend.Reason.CAPACITY)
        self.assertEqual(failure.props.status, 503)

    def test_acp_agent_n_cancels(self):
        if not hasattr(Mend, "AcpAgent"):
            self.skipTest("libmend was built without MendAcpAgent (-Dacp=disabled)")
        agent = Mend.AcpAgent.new(["true"])
        self.assertEqual(self.deprecated(agent.get_n_cancels), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
