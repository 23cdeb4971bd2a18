#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MendQueue and MendQueueItem from Python: the queue as a Gio.ListModel."""

import os
import sys
import unittest
import weakref

sys.path.insert(0, os.path.dirname(__file__))

from mendtest import WALL_START_US, Gio, GLib, Mend, manual_clock  # noqa: E402


class QueueTests(unittest.TestCase):
    def setUp(self):
        self.clock = manual_clock()
        self.queue = Mend.Queue.new(self.clock)
        self.changes = []
        self.queue.connect(
            "items-changed",
            lambda model, pos, removed, added: self.changes.append((pos, removed, added)))

    def texts(self):
        return [item.props.text for item in self.queue]

    def assert_queue_error(self, code, func, *args):
        with self.assertRaises(GLib.Error) as caught:
            func(*args)
        self.assertTrue(caught.exception.matches(Mend.queue_error_quark(), code),
                        caught.exception)
        return caught.exception

    def test_push_insert_front_and_pop(self):
        first = self.queue.push("first", None)
        self.clock.advance(250)
        second = self.queue.push("second", '{"kind":"test"}')
        head = self.queue.insert_front("Continue", None)
        self.assertEqual(self.texts(), ["Continue", "first", "second"])
        self.assertEqual(self.changes, [(0, 0, 1), (1, 0, 1), (0, 0, 1)])
        self.assertEqual(first.props.queued_at, WALL_START_US)
        self.assertEqual(second.props.queued_at, WALL_START_US + 250 * 1000)
        self.assertEqual(second.props.provenance, '{"kind":"test"}')
        self.assertIsNone(first.props.provenance)
        self.assertEqual(len({first.props.id, second.props.id, head.props.id}), 3)

        self.assertEqual(self.queue.peek(), head)
        popped = self.queue.pop()
        self.assertEqual(popped.get_text(), "Continue")
        self.assertEqual(self.changes[-1], (0, 1, 0))
        self.assertEqual(self.queue.get_length(), 2)
        self.assertEqual(self.queue.props.n_items, 2)

        # pop is transfer full: the item lives as long as Python holds it.
        ref = weakref.ref(popped)
        del popped, head
        self.assertIsNone(ref())

        self.queue.pop()
        self.queue.pop()
        self.assertIsNone(self.queue.pop())
        self.assertIsNone(self.queue.peek())

    def test_list_model(self):
        for text in ("a", "b", "c"):
            self.queue.push(text, None)
        self.assertIsInstance(self.queue, Gio.ListModel)
        self.assertEqual(self.queue.get_item_type(), Mend.QueueItem.__gtype__)
        self.assertEqual(self.queue.get_n_items(), 3)
        self.assertEqual(len(self.queue), 3)
        self.assertEqual(self.texts(), ["a", "b", "c"])
        self.assertEqual(self.queue[1].props.text, "b")
        self.assertIsNone(self.queue.get_item(3))

    def test_remove_replace_and_find(self):
        a = self.queue.push("a", None)
        b = self.queue.push("b", None)
        notified = []
        b.connect("notify::text", lambda item, pspec: notified.append(item.props.text))

        self.assertTrue(self.queue.replace_text(b.props.id, "edited\r\nline"))
        self.assertEqual(notified, ["edited\nline"])
        self.assertIs(self.queue.find(b.props.id), b)
        self.assertEqual(self.changes[-1], (1, 1, 1))

        self.assertTrue(self.queue.remove(a.props.id))
        self.assertEqual(self.changes[-1], (0, 1, 0))
        self.assertIsNone(self.queue.find(a.props.id))
        self.assert_queue_error(Mend.QueueError.NOT_FOUND, self.queue.remove, a.props.id)
        self.assert_queue_error(Mend.QueueError.NOT_FOUND,
                                self.queue.replace_text, "nope", "x")

    def test_full_queue_refuses_and_stays_unchanged(self):
        self.queue.props.max_items = 2
        self.queue.push("a", None)
        self.queue.push("b", None)
        self.assertEqual(self.queue.get_length(), self.queue.props.max_items)
        before = list(self.changes)

        error = self.assert_queue_error(Mend.QueueError.FULL, self.queue.push, "c", None)
        self.assertIn("2", error.message)
        self.assert_queue_error(Mend.QueueError.FULL, self.queue.insert_front, "c", None)
        self.assertEqual(self.changes, before)
        self.assertEqual(self.texts(), ["a", "b"])

    def test_blank_and_too_large_text(self):
        for blank in ("", "   ", "\r\n\t", "\u00a0\u3000", None):
            self.assert_queue_error(Mend.QueueError.BLANK, self.queue.push, blank, None)

        self.queue.props.max_item_bytes = 4
        self.assertEqual(self.queue.push("ab\r\nc", None).props.text, "ab\nc")
        error = self.assert_queue_error(Mend.QueueError.TOO_LARGE,
                                        self.queue.push, "abcde", None)
        self.assertEqual(error.message, "The message is 5 bytes; at most 4 fit in the queue")
        # Four bytes in one character fit; a fifth byte does not.
        self.queue.push("\U0001F600", None)
        self.assert_queue_error(Mend.QueueError.TOO_LARGE, self.queue.push, "\U0001F600!", None)

        self.assertEqual(self.changes, [(0, 0, 1), (1, 0, 1)])

    def test_default_clock(self):
        queue = Mend.Queue(clock=None)
        self.assertIs(queue.props.clock, Mend.Clock.get_default())
        self.assertEqual(queue.props.max_items, Mend.QUEUE_DEFAULT_MAX_ITEMS)
        self.assertEqual(queue.props.max_item_bytes, Mend.QUEUE_DEFAULT_MAX_ITEM_BYTES)


if __name__ == "__main__":
    unittest.main(verbosity=2)
