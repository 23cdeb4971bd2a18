#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendHttpSender's text and conversation from Python, against a SoupServer
on loopback: text-delta, answer, the transcript a retried turn leaves."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, Soup, manual_clock  # noqa: E402

OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


def stream(*pieces):
    """A Messages event stream of one text block in these pieces."""
    events = [{"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
               for p in pieces]
    events += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


class TranscriptTests(unittest.TestCase):
    def setUp(self):
        self.replies = []          # (status, content type, body), in order
        self.bodies = []
        self.server = Soup.Server()
        self.server.add_handler("/v1/messages", self.serve)
        self.server.listen_local(0, Soup.ServerListenOptions.IPV4_ONLY)
        port = self.server.get_uris()[0].get_port()
        self.clock = manual_clock()
        self.sender = Mend.HttpSender(uri=f"http://127.0.0.1:{port}/v1/messages")
        self.chat = Mend.Chat(clock=self.clock, policy=Mend.ErrorPolicy(jitter=Mend.Jitter.NONE),
                              sender=self.sender, id="py-transcript")
        self.deltas = []
        self.answers = []
        self.sender.connect("text-delta", lambda sender, delta: self.deltas.append(delta))
        self.sender.connect("notify::answer", lambda sender, pspec: self.answers.append(sender.props.answer))

    def tearDown(self):
        self.chat.close()
        self.server.disconnect()

    def serve(self, server, msg, path, query):
        self.bodies.append(json.loads(msg.get_request_body().flatten().get_data()))
        status, content_type, body = self.replies.pop(0)
        msg.set_status(status, None)
        msg.set_response(content_type, Soup.MemoryUse.COPY, body.encode())

    def run_until(self, done):
        context = GLib.MainContext.default()
        deadline = GLib.get_monotonic_time() + 20 * 1000000
        while not done():
            self.assertLess(GLib.get_monotonic_time(), deadline, "no answer in time")
            context.iteration(True)

    def idle(self):
        return self.chat.props.turn is None

    def test_text_deltas_join_to_the_answer(self):
        self.replies.append((200, "text/event-stream", stream("Two ", "tests ", "fail.")))
        self.assertIsNone(self.sender.get_answer())
        self.chat.submit("Why is CI red?", None)
        self.run_until(self.idle)
        self.assertEqual(self.deltas, ["Two ", "tests ", "fail."])
        self.assertEqual("".join(self.deltas), self.sender.props.answer)
        self.assertEqual(self.answers, ["Two tests fail."])

    def test_json_answer_is_one_delta(self):
        message = {"id": "msg_1", "type": "message", "role": "assistant",
                   "content": [{"type": "text", "text": "Done."}]}
        self.replies.append((200, "application/json", json.dumps(message)))
        self.chat.submit("Fix it", None)
        self.run_until(self.idle)
        self.assertEqual(self.deltas, ["Done."])
        self.assertEqual(self.sender.get_answer(), "Done.")

    def test_retried_turn_is_in_the_next_request_once(self):
        self.replies += [(529, "application/json", OVERLOADED),
                         (200, "text/event-stream", stream("Two tests fail.")),
                         (200, "text/event-stream", stream("Fixed."))]
        transcript = self.sender.props.transcript
        self.chat.submit("Why is CI red?", None)
        self.run_until(lambda: len(self.bodies) == 1 and self.chat.props.turn.props.wait is not None)
        self.clock.advance(250)
        self.run_until(self.idle)
        self.chat.submit("Fix it", None)
        self.run_until(self.idle)

        self.assertEqual(self.bodies[0], self.bodies[1])
        self.assertEqual(self.bodies[2]["messages"], [
            {"role": "user", "content": "Why is CI red?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Two tests fail."}]},
            {"role": "user", "content": "Fix it"},
        ])
        self.assertEqual(transcript.get_n_messages(), 4)
        self.assertEqual(json.loads(transcript.to_json())[2:], [
            {"role": "user", "content": "Fix it"},
            {"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]},
        ])

        # Saved with the chat, restored into a new chat and sender.
        state = json.loads(self.chat.save_state())
        self.assertIn("senderState", state)
        sender = Mend.HttpSender(uri=self.sender.props.uri)
        chat = Mend.Chat(clock=self.clock, sender=sender, id="py-transcript")
        chat.restore_state(json.dumps(state))
        self.assertEqual(sender.props.transcript.to_json(), transcript.to_json())
        self.assertEqual(json.loads(sender.save_state()), json.loads(state["senderState"]))
        chat.close()

        # A bad transcript is refused, and the old one kept.
        before = transcript.to_json()
        with self.assertRaises(GLib.Error) as raised:
            transcript.load_json('[{"role":"assistant","content":"x"}]')
        self.assertIn("message 1", raised.exception.message)
        self.assertEqual(transcript.to_json(), before)
        transcript.trim(1)
        self.assertEqual(transcript.props.n_messages, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
