#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendSubagentRetry from Python: a subagent a 503 failed is resumed in its chat."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, manual_clock, run_turns_by_hand  # noqa: E402

GATEWAY_503 = ("API Error: 503 no non-exhausted claude accounts available "
               "(error type server_error, HTTP 503)")


class SubagentTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()
        resume = Mend.ErrorPolicy.new_for_resume()
        resume.props.stagger_ms = 0
        self.chat = Mend.Chat(clock=self.clock, resume_policy=resume, id="py")
        run_turns_by_hand(self.chat)
        self.retry = self.chat.props.subagents
        self.records = []
        self.prompts = []
        self.retry.connect("record", lambda r, text: self.records.append(json.loads(text)))
        self.chat.connect("turn-started",
                          lambda chat, turn: self.prompts.append(
                              (turn.props.prompt, json.loads(turn.props.provenance or "null"))))

    def tearDown(self):
        self.chat.close()

    def fail(self, agent_id, text=GATEWAY_503):
        self.retry.note_failed(agent_id, Mend.Failure.new_from_text(text))

    def test_resumed_in_its_chat(self):
        sub = self.retry.note_started("toolu_1", "agent-a", "Remote setup overview")
        self.fail("agent-a")
        entry = json.loads(sub.to_json())
        self.assertEqual(entry["retry"]["reason"], "capacity")
        self.assertEqual(entry["retry"]["attempt"], 1)
        self.assertTrue(entry["retryable"])

        self.clock.advance(20000)
        prompt, provenance = self.prompts[0]
        self.assertIn("SendMessage to agent-a", prompt)
        self.assertEqual(provenance["kind"], "subagent_retry")
        self.assertEqual(provenance["subagentId"], "toolu_1")

        self.retry.note_started("toolu_send", "agent-a", None)
        self.assertEqual(sub.props.state, Mend.SubagentState.RUNNING)
        self.assertFalse(sub.props.retryable)
        self.assertEqual([r["outcome"] for r in self.records], ["scheduled", "fired"])

    def test_stop_skips_and_stays_retryable(self):
        sub = self.retry.note_started("toolu_1", "agent-a", "x")
        self.fail("agent-a")
        self.chat.stop()
        self.clock.advance(3600000)
        self.assertEqual(self.prompts, [])
        self.assertEqual(self.records[-1]["skipped"], "stopped")
        self.assertTrue(sub.props.retryable)

    def test_on_demand_retry_and_busy(self):
        self.retry.note_started("toolu_1", "agent-a", "x")
        self.fail("agent-a", "API Error: 400 invalid_request_error")
        self.assertIsNone(self.retry.lookup("toolu_1").props.retry)
        self.assertTrue(self.retry.resume_now("toolu_1"))
        with self.assertRaises(GLib.Error) as caught:
            self.retry.resume_now("toolu_1")
        self.assertTrue(caught.exception.matches(Mend.retry_error_quark(), Mend.RetryError.BUSY))

    def test_list_model(self):
        for i in range(3):
            self.retry.note_started("toolu_%d" % i, "agent-%d" % i, "task %d" % i)
        self.assertEqual([s.props.id for s in self.retry], ["toolu_0", "toolu_1", "toolu_2"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
