#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A Mend.Sender written in Python: success, a transient GError (retried),
a permanent failure (not retried) and a Stop, through Mend.Chat.

The pattern is Python's usual one: do_send_async makes a Gio.Task with
(self, cancellable, callback, user_data) — libmend's PyGObject override
(bindings/python/gi/overrides/Mend.py) makes that work — and
do_send_finish returns None for a success, a Mend.Failure for a failure
the turn's policy reads, or raises the task's GError. The form without
user_data works too."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from gi.repository import GObject  # noqa: E402
from mendtest import Gio, GLib, Mend, manual_clock  # noqa: E402


class ScriptedSender(GObject.Object, Mend.Sender):
    """Answers each attempt from a script: "ok", "reset" (a dropped
    connection), "401", or "hang" (until the attempt is cancelled)."""

    def __init__(self, script):
        super().__init__()
        self.script = list(script)
        self.prompts = []

    def new_task(self, cancellable, callback, user_data):
        return Gio.Task.new(self, cancellable, callback, user_data)

    def do_send_async(self, turn, attempt, io_priority, cancellable, callback, user_data):
        task = self.new_task(cancellable, callback, user_data)
        task.set_return_on_cancel(True)
        self.prompts.append((turn.props.prompt, attempt))
        step = self.script.pop(0)
        if step == "ok":
            task.return_value(None)
        elif step == "reset":
            task.return_error(GLib.Error.new_literal(Gio.io_error_quark(), "Connection reset by peer",
                                                     Gio.IOErrorEnum.CONNECTION_CLOSED))
        elif step == "401":
            task.return_value(Mend.Failure.new_from_http(401, None, None))
        # "hang": the cancellable ends it, with G_IO_ERROR_CANCELLED.

    def do_send_finish(self, result):
        ok, value = result.propagate_value()
        return value


class TwoArgumentSender(ScriptedSender):
    """The task made without user_data, as before the override."""

    def new_task(self, cancellable, callback, user_data):
        return Gio.Task.new(self, cancellable, callback)


class SenderTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()
        self.finished = []

    def chat(self, sender):
        chat = Mend.Chat(clock=self.clock, sender=sender)
        chat.connect("turn-finished", lambda c, t: self.finished.append(t))
        return chat

    def run_loop(self):
        while GLib.MainContext.default().iteration(False):
            pass

    def test_success(self):
        sender = ScriptedSender(["ok"])
        chat = self.chat(sender)
        chat.submit("Fix the build", None)
        self.run_loop()
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(sender.prompts, [("Fix the build", 1)])
        chat.close()

    def test_transient_error_is_retried_with_the_same_prompt(self):
        sender = ScriptedSender(["reset", "ok"])
        chat = self.chat(sender)
        chat.submit("Fix the build", None)
        self.run_loop()
        turn = chat.props.turn
        self.assertEqual(turn.props.state, Mend.TurnState.WAITING)
        self.assertEqual(turn.props.last_failure.props.reason, Mend.Reason.TRANSPORT)
        self.clock.advance_to_next()
        self.run_loop()
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(sender.prompts, [("Fix the build", 1), ("Fix the build", 2)])
        chat.close()

    def test_permanent_failure_gives_up_and_keeps_the_follow_up(self):
        sender = ScriptedSender(["401"])
        chat = self.chat(sender)
        chat.submit("Fix the build", None)
        # The answer comes from the loop: the follow-up queues meanwhile.
        chat.submit("Then the changelog", None)
        self.run_loop()
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.FAILED)
        self.assertEqual(self.finished[0].props.last_failure.props.reason, Mend.Reason.AUTH)
        self.assertEqual(len(sender.prompts), 1)
        self.assertEqual(chat.props.lifecycle, Mend.Lifecycle.ERROR)
        queue = chat.props.queue
        self.assertEqual([queue.get_item(i).props.text for i in range(queue.get_n_items())],
                         ["Continue the current turn", "Then the changelog"])
        chat.close()

    def test_the_task_without_user_data_works_too(self):
        sender = TwoArgumentSender(["reset", "ok"])
        chat = self.chat(sender)
        chat.submit("Fix the build", None)
        self.run_loop()
        self.clock.advance_to_next()
        self.run_loop()
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.SUCCEEDED)
        self.assertEqual(len(sender.prompts), 2)
        chat.close()

    def test_stop_cancels_the_attempt(self):
        sender = ScriptedSender(["hang"])
        chat = self.chat(sender)
        chat.submit("Fix the build", None)
        chat.stop()
        self.run_loop()
        self.assertEqual(self.finished[0].props.state, Mend.TurnState.STOPPED)
        self.assertEqual(chat.props.lifecycle, Mend.Lifecycle.READY)
        chat.close()


if __name__ == "__main__":
    unittest.main()
