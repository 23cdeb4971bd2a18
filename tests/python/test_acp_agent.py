#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendAcpAgent from Python, against the scripted ACP agent
tests/support/fake-acp-agent.py replaying claude-code-acp's recorded 529: the chat
code is the one any other sender gets, and the agent's requests are
answered from Python."""

import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, manual_clock  # noqa: E402

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHDOG_S = 20

PERMISSION = {"request": "session/request_permission", "params": {
    "sessionId": "s", "toolCall": {"toolCallId": "t1", "title": "rm -rf build"},
    "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}


def run_until(chat, clock, done):
    """The same loop drives a chat whatever its sender."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + WATCHDOG_S
    while not done():
        assert time.monotonic() < deadline, "watchdog"
        if not context.iteration(False):
            if clock.get_n_pending() > 0:
                clock.advance_to_next()
            else:
                time.sleep(0.005)


class AcpAgentTests(unittest.TestCase):
    def start(self, script):
        self.home = tempfile.TemporaryDirectory()
        path = os.path.join(self.home.name, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.agent = Mend.AcpAgent.new([sys.executable, os.path.join(TESTS, "support", "fake-acp-agent.py"), path])
        self.agent.props.cwd = self.home.name
        self.clock = manual_clock()
        self.chat = Mend.Chat(clock=self.clock, sender=self.agent)
        self.finished = []
        self.updates = []
        self.chat.connect("turn-finished", lambda chat, turn: self.finished.append(turn))
        self.agent.connect("update", lambda agent, kind, data: self.updates.append((kind, json.loads(data))))

    def tearDown(self):
        self.chat.close()
        self.agent.terminate()
        self.home.cleanup()

    def test_recorded_529_then_success(self):
        self.start({"prompts": [[{"replay": "529-error"}], [{"replay": "success"}]]})
        self.chat.submit("Fix the build", None)
        run_until(self.chat, self.clock, lambda: self.finished)

        turn = self.finished[0]
        self.assertEqual(turn.props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(turn.props.attempt, 2)
        self.assertEqual(turn.props.last_failure.props.reason, Mend.Reason.CAPACITY)
        self.assertEqual(self.agent.props.stop_reason, "end_turn")
        self.assertIn(("agent_message_chunk",
                       {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello."}}),
                      self.updates)

    def test_permission_answered_from_python(self):
        self.start({"prompts": [[PERMISSION, {"result": {"stopReason": "end_turn"}}]]})
        asked = []

        def on_request(agent, method, params, request):
            asked.append((method, json.loads(params)["toolCall"]["title"]))
            GLib.idle_add(lambda: agent.respond(request, json.dumps(
                {"outcome": {"outcome": "selected", "optionId": "yes"}})) and False)
            return True

        self.agent.connect("request", on_request)
        self.chat.submit("Clean the build", None)
        run_until(self.chat, self.clock, lambda: self.finished)

        self.assertEqual(asked, [("session/request_permission", "rm -rf build")])
        said = [u["content"]["text"] for kind, u in self.updates if kind == "agent_message_chunk"]
        self.assertIn('answer: {"outcome": {"optionId": "yes", "outcome": "selected"}}', said)


class AcpProfileTests(unittest.TestCase):
    """What libmend knows of an agent, and an app's own profile."""

    def test_known_and_default(self):
        gemini = Mend.AcpProfile.lookup("gemini-cli")
        self.assertEqual(gemini.props.name, "gemini-cli")
        self.assertFalse(gemini.props.keeps_failed_prompt)
        self.assertTrue(gemini.props.restreams_partial)
        unknown = Mend.AcpProfile.lookup("an-agent-nobody-knows")
        self.assertEqual(unknown.props.name, "default")
        self.assertTrue(unknown.props.keeps_failed_prompt)
        self.assertFalse(unknown.props.notice_prefixes)

    def test_apps_profile(self):
        profile = Mend.AcpProfile(name="my-agent", keeps_failed_prompt=False)
        profile.set_notice_prefixes(["Warning: ", ""])
        self.assertEqual(profile.get_notice_prefixes(), ["Warning: "])
        agent = Mend.AcpAgent.new(["true"])
        agent.set_profile(profile)
        self.assertIs(agent.props.profile, profile)


if __name__ == "__main__":
    unittest.main()
