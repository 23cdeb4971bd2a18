#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendRetryWait and MendManualClock from Python: virtual time, no sleeps."""

import os
import sys
import unittest
import weakref

sys.path.insert(0, os.path.dirname(__file__))

from gi.repository import GObject  # noqa: E402
from mendtest import WALL_START_US, Gio, GLib, Mend, manual_clock  # noqa: E402


class RetryWaitTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()

    def test_fires_once_at_its_deadline(self):
        wait = Mend.RetryWait.new(self.clock, 4000, 2, 4, Mend.Reason.CAPACITY)
        fired = []
        wait.connect("fired", lambda w: fired.append(w.props.attempt))
        self.assertEqual(wait.describe(), "Retrying in 4 s (retry 2 of 4)")
        self.clock.advance(3999)
        self.assertEqual(fired, [])
        self.assertEqual(wait.get_remaining_ms(), 1)
        self.clock.advance(1)
        self.assertEqual(fired, [2])
        self.assertFalse(wait.fire_now())
        self.assertEqual(wait.props.state, Mend.RetryWaitState.FIRED)

    def test_countdown_notifies_a_handler_that_never_reads(self):
        wait = Mend.RetryWait.new(self.clock, 3000, 1, 4, Mend.Reason.RATE_LIMIT)
        seen = []
        wait.connect("notify::remaining-seconds", lambda w, _: seen.append(w.describe()))
        for _ in range(30):
            self.clock.advance(100)
        self.assertEqual(seen, ["Retrying in 2 s (retry 1 of 4)", "Retrying in 1 s (retry 1 of 4)",
                                "Retrying now (retry 1 of 4)"])

    def test_description_binds_to_a_label(self):
        wait = Mend.RetryWait.new(self.clock, 2000, 1, 4, Mend.Reason.CAPACITY)
        # Any writable string property stands for a label's text here.
        label = Mend.Chat(clock=self.clock)
        texts = []
        label.connect("notify::continue-prompt", lambda c, _: texts.append(c.props.continue_prompt))
        binding = wait.bind_property("description", label, "continue-prompt",
                                     GObject.BindingFlags.SYNC_CREATE)
        self.assertEqual(label.props.continue_prompt, "Retrying in 2 s (retry 1 of 4)")
        self.clock.advance(1000)
        self.clock.advance(1000)
        self.assertEqual(texts, ["Retrying in 2 s (retry 1 of 4)", "Retrying in 1 s (retry 1 of 4)",
                                 "Retrying now (retry 1 of 4)"])
        binding.unbind()
        label.close()

    def test_to_json_uses_wall_clock_ms(self):
        wait = Mend.RetryWait.new(self.clock, 4000, 2, 4, Mend.Reason.CAPACITY)
        self.assertEqual(
            wait.to_json(),
            '{"attempt":2,"of":4,"reason":"capacity","nextAt":%d}'
            % (WALL_START_US // 1000 + 4000))
        self.assertEqual(wait.props.next_at, WALL_START_US + 4000 * 1000)

    def test_cancel_never_fires(self):
        wait = Mend.RetryWait.new(self.clock, 100, 1, 4, Mend.Reason.TIMEOUT)
        events = []
        wait.connect("fired", lambda w: events.append("fired"))
        wait.connect("cancelled", lambda w: events.append("cancelled"))
        self.assertTrue(wait.cancel())
        self.assertFalse(wait.cancel())
        self.clock.advance(1000)
        self.assertEqual(events, ["cancelled"])

    def test_run_async_with_cancellable(self):
        wait = Mend.RetryWait.new(self.clock, 60000, 1, 4, Mend.Reason.SERVER)
        cancellable = Gio.Cancellable()
        loop = GLib.MainLoop()
        results = []

        def done(source, result):
            try:
                source.run_finish(result)
                results.append("fired")
            except GLib.Error as error:
                results.append(error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED))
            loop.quit()

        wait.run_async(cancellable, done)
        cancellable.cancel()
        loop.run()
        self.assertEqual(results, [True])
        self.assertEqual(wait.props.state, Mend.RetryWaitState.CANCELLED)

    def test_run_async_fires_in_virtual_time(self):
        wait = Mend.RetryWait.new(self.clock, 5 * 60 * 1000, 4, 4, Mend.Reason.CAPACITY)
        loop = GLib.MainLoop()
        results = []

        def done(source, result):
            results.append(source.run_finish(result))
            loop.quit()

        wait.run_async(None, done)
        self.assertTrue(self.clock.advance_to_next())
        loop.run()
        self.assertEqual(results, [True])

    def test_dropped_wait_is_finalized_and_leaves_no_timer(self):
        wait = Mend.RetryWait.new(self.clock, 100, 1, 4, Mend.Reason.EMPTY)
        ref = weakref.ref(wait)
        self.assertEqual(self.clock.get_n_pending(), 1)
        del wait
        self.assertIsNone(ref())
        self.assertEqual(self.clock.get_n_pending(), 0)

    def test_clock_runs_callbacks_in_deadline_order(self):
        order = []
        self.clock.add_timeout(300, lambda *a: order.append("c"))
        self.clock.add_timeout(100, lambda *a: order.append("a"))
        self.clock.add_timeout(200, lambda *a: order.append("b"))
        self.clock.advance(1000)
        self.assertEqual(order, ["a", "b", "c"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
