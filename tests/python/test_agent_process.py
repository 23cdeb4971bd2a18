#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendAgentProcess from Python: the real Claude Code CLI (tools/setup.sh
installs it; MEND_CLAUDE overrides it) as a chat's sender, against the
scripted model server. A 529 the CLI gives up on is retried by libmend."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, manual_clock  # noqa: E402

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLAUDE = os.environ.get("MEND_CLAUDE") or os.path.join(
    TESTS, "..", ".agents/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude")
WATCHDOG_S = 40


class AgentProcessTests(unittest.TestCase):
    def setUp(self):
        # A missing CLI skips the test, and fails it where CI requires it.
        if not os.access(CLAUDE, os.X_OK):
            missing = "no Claude Code CLI at %s: run tools/setup.sh" % CLAUDE
            if os.environ.get("MEND_REQUIRE_AGENTS") == "1":
                self.fail(missing + " (MEND_REQUIRE_AGENTS=1)")
            self.skipTest(missing)
        self.home = tempfile.TemporaryDirectory()
        rules = [
            {"match": "Fix the build", "times": 1, "answer": {"kind": "status", "status": 529}},
            {"match": None, "times": 0, "answer": {"kind": "text", "text": "Build fixed."}},
        ]
        script = os.path.join(self.home.name, "rules.json")
        with open(script, "w") as f:
            json.dump(rules, f)
        self.server = subprocess.Popen([sys.executable, os.path.join(TESTS, "support", "model-server.py"), script],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        port = self.server.stdout.readline().strip()

        self.agent = Mend.AgentProcess.new_claude_code(CLAUDE)
        self.agent.props.environ = [
            "PATH=" + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME=" + self.home.name,
            "TMPDIR=" + self.home.name,
            "ANTHROPIC_BASE_URL=http://127.0.0.1:" + port,
            "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "CLAUDE_CODE_MAX_RETRIES=0",
            "IS_SANDBOX=1",
        ]
        self.agent.props.cwd = self.home.name
        self.clock = manual_clock()
        self.chat = Mend.Chat(clock=self.clock, sender=self.agent)

    def tearDown(self):
        self.chat.close()
        self.agent.terminate()
        self.server.stdin.close()
        self.server.wait(10)
        self.home.cleanup()

    def test_529_then_success(self):
        finished = []
        self.chat.connect("turn-finished", lambda chat, turn: finished.append(turn))
        self.chat.submit("Fix the build", None)

        context = GLib.MainContext.default()
        deadline = time.monotonic() + WATCHDOG_S
        while not finished:
            self.assertLess(time.monotonic(), deadline, self.agent.dup_stderr())
            if not context.iteration(False):
                if self.clock.get_n_pending() > 0:
                    self.clock.advance_to_next()
                else:
                    time.sleep(0.01)

        turn = finished[0]
        self.assertEqual(turn.props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(turn.props.attempt, 2)
        self.assertEqual(turn.props.last_failure.props.reason, Mend.Reason.CAPACITY)
        self.assertIsNotNone(self.agent.props.session_id)
        self.assertEqual(self.agent.props.n_starts, 1)


if __name__ == "__main__":
    unittest.main()
