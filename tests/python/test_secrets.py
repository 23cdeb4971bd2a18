#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Credentials never reach Python in text: a key given to set_header, and
one a build-message handler sends with each request, stay out of the
failures, their GError, the records, the saved state, every log line at
G_MESSAGES_DEBUG=all, and the text of every exception libmend raises,
while the sender lives; the upstream quotes them back in its 401."""

import os
import sys
import unittest

os.environ["G_MESSAGES_DEBUG"] = "all"
sys.path.insert(0, os.path.dirname(__file__))

from mendtest import GLib, Mend, Soup, manual_clock  # noqa: E402

# No known prefix: only their registration catches them.
KEY = "SEEDEDpythonKEY0123456789"
SESSION_KEY = "SEEDEDpythonSESSION0123456789"
N_TURNS = 40


class SecretsTests(unittest.TestCase):
    def setUp(self):
        self.logged = []
        self.handler = GLib.log_set_handler("Mend", GLib.LogLevelFlags.LEVEL_MASK, self.log)
        self.server = Soup.Server()
        self.server.add_handler("/v1/messages", self.serve)
        self.server.listen_local(0, Soup.ServerListenOptions.IPV4_ONLY)
        port = self.server.get_uris()[0].get_port()
        self.sender = Mend.HttpSender(uri=f"http://127.0.0.1:{port}/v1/messages")
        self.sender.set_header("x-api-key", KEY)
        self.sender.connect("build-message", self.build)
        self.records = []
        self.finished = []
        self.chat = Mend.Chat(clock=manual_clock(), policy=Mend.ErrorPolicy(max_retries=0),
                              sender=self.sender, id="py-secrets")
        self.chat.connect("record", lambda chat, json: self.records.append(json))
        self.chat.connect("turn-finished", lambda chat, turn: self.finished.append(turn))

    def tearDown(self):
        self.chat.close()
        self.server.disconnect()
        GLib.log_remove_handler("Mend", self.handler)

    def log(self, domain, level, message, *user_data):
        self.logged.append(message)

    def build(self, sender, message, turn, attempt):
        message.get_request_headers().replace("x-session-id", f"{SESSION_KEY}-{len(self.finished)}")

    def serve(self, server, msg, path, query):
        headers = msg.get_request_headers()
        body = "the key %s of session %s is not valid" % (headers.get_one("x-api-key"),
                                                         headers.get_one("x-session-id"))
        msg.set_status(401, None)
        msg.set_response("text/plain", Soup.MemoryUse.COPY, body.encode())

    def run_until(self, done):
        context = GLib.MainContext.default()
        deadline = GLib.get_monotonic_time() + 20 * 1000000
        while not done():
            self.assertLess(GLib.get_monotonic_time(), deadline, "no answer in time")
            context.iteration(True)

    def assertClean(self, what, text):
        self.assertNotIn(KEY, text or "", what)
        self.assertNotIn(SESSION_KEY, text or "", what)

    def test_keys_never_reach_python_in_text(self):
        for n in range(N_TURNS):
            self.chat.submit("Summarize the build logs", None)
            self.run_until(lambda: len(self.finished) > n)
            failure = self.finished[n].props.last_failure
            self.assertEqual(failure.props.status, 401)
            self.assertIn("[redacted]", failure.props.message)
            self.assertClean("a failure message", failure.props.message)

        # A failure's GError, raised in Python: its text is redacted too.
        error = GLib.Error.new_literal(GLib.quark_from_string("upstream"),
                                       "invalid key %s for %s-%d" % (KEY, SESSION_KEY, N_TURNS - 1), 1)
        failure = Mend.Failure.new_from_error(error)
        self.assertClean("a failure's GError", failure.props.error.message)
        with self.assertRaises(GLib.Error) as raised:
            raise failure.props.error
        self.assertClean("an exception", str(raised.exception))

        # Errors libmend raises that quote the text they were given.
        for text, call in [
            ('{"%s": 1}' % KEY, Mend.ErrorPolicy.new_from_json),
            ('{"maxRetries": %s}' % KEY, Mend.ErrorPolicy.new_from_json),
            ('{"version": 1, %s}' % KEY, self.chat.restore_state),
            (KEY, self.chat.restore_state),
            ('[{"role": "user", "content": %s}]' % KEY, self.sender.restore_state),
        ]:
            with self.assertRaises(GLib.Error) as raised:
                call(text)
            self.assertClean("an exception", str(raised.exception))

        self.assertEqual(len(self.records), N_TURNS)
        for record in self.records:
            self.assertClean("a record", record)
        self.assertClean("saved state", self.chat.save_state())
        self.assertTrue(self.logged)
        for line in self.logged:
            self.assertClean("a log line", line)


if __name__ == "__main__":
    unittest.main()
