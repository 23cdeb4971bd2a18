#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attacks from Python, through the bindings as an app uses them: a key
echoed in an error body cut inside it, stream-json written by Python's
own json.dumps and with every letter of its strings a \\u escape,
hostile saved state for an agent, gates asked for from Python threads,
and an ACP agent that breaks the protocol while Python handlers
terminate it, answer it or stop the chat from a nested loop."""

import json
import os
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, manual_clock  # noqa: E402

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHDOG_S = 20


def run_until(clock, done):
    context = GLib.MainContext.default()
    deadline = time.monotonic() + WATCHDOG_S
    while not done():
        assert time.monotonic() < deadline, "watchdog"
        if not context.iteration(False):
            if clock is not None and clock.get_n_pending() > 0:
                clock.advance_to_next()
            else:
                time.sleep(0.005)


class CutKeyTests(unittest.TestCase):
    def test_error_body_cut_inside_a_long_token(self):
        token = "".join("%03dq" % i for i in range(150))
        sender = Mend.HttpSender.new("http://127.0.0.1:9/v1/messages")
        sender.set_header("Authorization", "Bearer " + token)
        limit = Mend.HTTP_SENDER_MAX_ERROR_BODY_BYTES
        for offset in (8, len(token) // 2, len(token) - 8):
            body = '{"detail": "'
            while len(body) + len(token) + 11 < limit - offset:
                body += "bad token %s " % token
            body += "." * (limit - offset - len(body)) + token + ' is refused"}'
            failure = Mend.Failure.new_from_http(401, None, GLib.Bytes.new(body.encode()))
            message = failure.props.message
            for i in range(len(token) - 8):
                self.assertNotIn(token[i:i + 8], message, "cut %d bytes into the token" % offset)


class StreamJsonTests(unittest.TestCase):
    def test_text_of_lines_python_writes(self):
        clock = manual_clock()
        chat = Mend.Chat(clock=clock)
        observer = Mend.StreamObserver.new(chat)
        texts = []
        chat.connect("text-delta", lambda chat, turn, text: texts.append(text))
        chat.submit("Say hello", None)
        delta = {"type": "stream_event", "parent_tool_use_id": None,
                 "event": {"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": "Hel"}}}
        observer.feed_line(json.dumps(delta), -1)
        delta["event"]["delta"]["text"] = "lo"
        observer.feed_line(json.dumps(dict(reversed(list(delta.items())))), -1)
        observer.feed_line(json.dumps({"type": "assistant", "parent_tool_use_id": None, "message": {
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Hello"}]}}), -1)
        observer.feed_line(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                                       "result": "Hello", "session_id": "s-1"}, indent=None,
                                      separators=(" , ", " : ")), -1)
        self.assertEqual("".join(texts), "Hello")
        self.assertIsNone(chat.props.turn)
        chat.close()

    def test_lines_with_letters_as_escapes(self):
        def escaped(message):
            # Every letter of every string a \u escape, as JSON allows.
            return _escape_letters(json.dumps(message))

        clock = manual_clock()
        chat = Mend.Chat(clock=clock)
        observer = Mend.StreamObserver.new(chat)
        statuses = []
        chat.connect("turn-started", lambda chat, turn: turn.connect(
            "notify::agent-status", lambda turn, pspec: statuses.append(turn.props.agent_status)))
        chat.submit("Fix the build", None)
        observer.feed_line(escaped({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10,
                                    "retry_delay_ms": 500, "error_status": 529, "error": "overloaded"}), -1)
        self.assertEqual(len(statuses), 1)
        self.assertTrue(observer.feed_line(escaped({"type": "result", "subtype": "success", "is_error": False,
                                                    "result": "Done", "session_id": "s-1"}), -1))
        self.assertIsNone(chat.props.turn)
        chat.close()


def _escape_letters(text):
    out, in_string, i = [], False, 0
    while i < len(text):
        c = text[i]
        if in_string and c == "\\":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            in_string = not in_string
        out.append("\\u%04x" % ord(c) if in_string and c.isascii() and c.isalpha() else c)
        i += 1
    return "".join(out)


@unittest.skipUnless(hasattr(Mend, "AgentProcess"), "a build without the agent senders")
class SavedAgentTests(unittest.TestCase):
    def setUp(self):
        self.agent = Mend.AgentProcess.new(["/bin/true"])
        self.agent.props.resume_option = "--resume"
        self.chat = Mend.Chat(clock=manual_clock(), sender=self.agent)

    def tearDown(self):
        self.chat.close()

    def state(self, sender_state, subagents=None):
        state = json.loads(self.chat.save_state())
        state["senderState"] = sender_state
        if subagents is not None:
            state["subagents"] = subagents
        return json.dumps(state)

    def test_refused_restore_changes_no_session(self):
        for session in (None, "s-own"):
            self.agent.set_session_id(session)
            with self.assertRaises(GLib.Error):
                self.chat.restore_state(self.state(json.dumps({"sessionId": "s-foreign"}), [42]))
            self.assertEqual(self.agent.props.session_id, session)

    def test_hostile_sender_states(self):
        self.agent.set_session_id("s-own")
        for sender_state in ("", "null", "[]", '{"sessionId": 7}', '{"sessionId": {"a": 1}}',
                             '{"sessionId": "s"} {}', '{"sessionId": "s" // no\n}'):
            with self.assertRaises(GLib.Error):
                self.chat.restore_state(self.state(sender_state))
            self.assertEqual(self.agent.props.session_id, "s-own")


class GateThreadTests(unittest.TestCase):
    def test_gates_from_python_threads(self):
        uri = "https://python-gate.example/v1/messages"
        gates = {}

        def worker(name):
            context = GLib.MainContext.new()
            context.push_thread_default()
            try:
                gate = Mend.Gate.get_for_uri(uri)
                assert Mend.Gate.get_for_uri(uri + "?again") is gate
                assert gate.props.state == Mend.GateState.CLOSED
                gates[name] = gate
            finally:
                context.pop_thread_default()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(len(gates), 4)
        self.assertEqual(len({id(gate) for gate in gates.values()}), 4)
        ours = Mend.Gate.get_for_uri("HTTPS://Python-Gate.example:443/other")
        self.assertNotIn(ours, gates.values())
        self.assertIs(ours, Mend.Gate.get_for_uri(uri))


def chunk(text):
    return {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}


END_TURN = [chunk("Done."), {"answer": {"stopReason": "end_turn"}}]


def permission(request_id):
    return {"send": {"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission", "params": {
        "sessionId": "$SESSION", "toolCall": {"toolCallId": "toolu_1", "title": "rm -rf build"},
        "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}}


@unittest.skipUnless(hasattr(Mend, "AcpAgent"), "a build without ACP")
class HostileAcpTests(unittest.TestCase):
    def start(self, script):
        self.home = tempfile.TemporaryDirectory()
        path = os.path.join(self.home.name, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.agent = Mend.AcpAgent.new([sys.executable, os.path.join(TESTS, "support", "hostile-acp-agent.py"), path])
        self.agent.props.cwd = self.home.name
        self.log = os.path.join(self.home.name, "log")
        self.agent.setenv("MEND_HOSTILE_ACP_LOG", self.log)
        self.agent.setenv("MEND_HOSTILE_ACP_COUNT", os.path.join(self.home.name, "count"))
        self.clock = manual_clock()
        self.chat = Mend.Chat(clock=self.clock, sender=self.agent)
        self.finished = []
        self.chat.connect("turn-finished", lambda chat, turn: self.finished.append(turn))

    def tearDown(self):
        self.chat.close()
        self.agent.terminate()
        self.home.cleanup()

    def read_log(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def test_request_ids_of_every_type_answered_from_python(self):
        ids = [True, 0, -1, 1.5, "", "é\n", {}, {"a": [1, None]}, [], [1, "a"], 2 ** 63 - 1]
        actions = []
        for request_id in ids:
            actions += [permission(request_id), {"wait_reply": request_id}]
        self.start({"runs": [{"session/prompt": [actions + END_TURN]}]})
        asked = []

        def on_request(agent, method, params, request):
            asked.append(method)
            self.assertTrue(agent.respond(request, json.dumps({"outcome": {"outcome": "selected", "optionId": "yes"}})))
            return True

        self.agent.connect("request", on_request)
        self.chat.submit("Fix the build", None)
        run_until(self.clock, lambda: self.finished)
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(len(asked), len(ids))
        answered = [m["id"] for m in self.read_log() if "result" in m]
        self.assertEqual(answered, ids)

    def test_update_handler_terminates_the_agent_then_nests_a_loop(self):
        self.start({"runs": [{"session/prompt": [[chunk("Working"), chunk("Not read")] + END_TURN]}, {}]})
        kinds = []

        def on_update(agent, kind, data):
            kinds.append(json.loads(data)["content"]["text"])
            if len(kinds) == 1:
                agent.terminate()
                loop = GLib.MainLoop()
                GLib.timeout_add(200, loop.quit)
                loop.run()

        self.agent.connect("update", on_update)
        self.chat.submit("Fix the build", None)
        run_until(self.clock, lambda: self.finished)
        self.assertEqual(kinds, ["Working"])
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.FAILED)
        self.assertTrue(self.finished[0].props.last_failure.props.partial)
        self.chat.submit("Post the notes", None)
        run_until(self.clock, lambda: len(self.finished) == 2)
        self.assertEqual(self.finished[1].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(self.agent.props.n_starts, 2)

    def test_request_handler_stops_the_chat_in_a_nested_loop(self):
        self.start({"runs": [{"session/prompt": [[permission("perm-1"), {"wait": "session/cancel"},
                                                  {"answer": {"stopReason": "cancelled"}}], END_TURN]}, {}]})

        def on_request(agent, method, params, request):
            if self.finished:
                return False
            loop = GLib.MainLoop()

            def stop():
                self.chat.stop()
                loop.quit()
                return GLib.SOURCE_REMOVE

            GLib.timeout_add(50, stop)
            loop.run()
            return False

        self.agent.connect("request", on_request)
        self.chat.submit("Fix the build", None)
        run_until(self.clock, lambda: self.finished)
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.STOPPED)
        self.chat.submit("Post the notes", None)
        run_until(self.clock, lambda: len(self.finished) == 2)
        self.assertEqual(self.finished[1].props.state, Mend.TurnState.SUCCEEDED)
        answers = [m for m in self.read_log() if m.get("id") == "perm-1"]
        self.assertEqual(len(answers), 1)

    def test_deep_and_unicode_lines(self):
        deep = "[" * 100 + "]" * 100
        line = ('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "hostile-session", '
                '"update": %s}}' % deep)
        self.start({"runs": [{"session/prompt": [
            [{"raw": line}, chunk("half an emoji \ud83d"), {"wait": "session/cancel"},
             {"answer": {"stopReason": "cancelled"}}],
            END_TURN]}]})
        self.chat.submit("Fix the build", None)
        run_until(self.clock, lambda: self.finished)
        failure = self.finished[0].props.last_failure
        self.assertIn("deeper than 64", failure.props.message)
        self.chat.submit("Try again", None)
        run_until(self.clock, lambda: len(self.finished) == 2)
        self.assertEqual(self.finished[1].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(self.agent.props.n_starts, 1)


if __name__ == "__main__":
    unittest.main()
