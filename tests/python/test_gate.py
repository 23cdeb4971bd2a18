#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendGate from Python: chats sharing an upstream share its outage."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, Soup, manual_clock  # noqa: E402


class GateTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()
        self.gate = Mend.Gate.new(self.clock)
        # Always online: the tests drive the upstream, not the network.
        self.gate.set_network_monitor(None)
        self.attempts = []
        self.records = []
        self.chats = []
        for i in range(4):
            chat = Mend.Chat(clock=self.clock, id=f"chat-{i}", gate=self.gate,
                             policy=Mend.ErrorPolicy(jitter=Mend.Jitter.NONE))
            chat.connect("turn-started", self.on_turn_started)
            chat.connect("record", lambda c, text: self.records.append(json.loads(text)))
            self.chats.append(chat)

    def tearDown(self):
        for chat in self.chats:
            chat.close()

    def on_turn_started(self, chat, turn):
        turn.connect("attempt", lambda t, n, c: self.attempts.append((chat.props.id, n)))

    def test_a_hint_holds_the_other_chats_without_spending_attempts(self):
        self.chats[0].submit("first", None)
        headers = Soup.MessageHeaders.new(Soup.MessageHeadersType.RESPONSE)
        headers.append("Retry-After", "30")
        self.chats[0].props.turn.fail(Mend.Failure.new_from_http(429, headers, None))

        for chat in self.chats[1:]:
            chat.submit("next", None)
            turn = chat.props.turn
            self.assertEqual(turn.props.state, Mend.TurnState.WAITING)
            self.assertTrue(turn.props.wait.props.held)
            self.assertTrue(turn.props.wait.describe().startswith("Waiting for the service to recover"))
        self.assertEqual(self.attempts, [("chat-0", 1)])
        self.assertIn("held", [r["outcome"] for r in self.records])

        self.clock.advance(29000)
        self.assertEqual(len(self.attempts), 1)
        self.clock.advance(3000)
        # The first chat retries; each held chat runs its first attempt,
        # not a second one.
        self.assertEqual(sorted(self.attempts[1:]),
                         [("chat-0", 2), ("chat-1", 1), ("chat-2", 1), ("chat-3", 1)])

    def test_a_lone_chat_is_never_held(self):
        chat = self.chats[0]
        chat.submit("alone", None)
        for _ in range(4):
            chat.props.turn.fail(Mend.Failure.new_from_http(503, None, None))
            wait = chat.props.turn.props.wait
            self.assertFalse(wait.props.held)
            self.clock.advance(wait.props.delay_ms)
        self.assertEqual(self.gate.props.state, Mend.GateState.CLOSED)
        self.assertEqual([n for _, n in self.attempts], [1, 2, 3, 4, 5])


if __name__ == "__main__":
    unittest.main()
