# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared set-up for libmend's PyGObject tests: the typelib built in the tree."""

import gi

gi.require_version("GLib", "2.0")
gi.require_version("Gio", "2.0")
gi.require_version("Soup", "3.0")
gi.require_version("Mend", "1")

from gi.repository import Gio, GLib, Mend, Soup  # noqa: E402,F401

WALL_START_US = 1764500000000000


def manual_clock():
    return Mend.ManualClock.new(WALL_START_US)


def run_by_hand(turn):
    """The app's attempt handler when the test ends each attempt itself
    (turn.succeed(), turn.fail()): a turn with no sender and no handler
    of "attempt" fails at once, as nothing would ever end its attempts."""
    turn.connect("attempt", lambda turn, attempt, cancellable: None)


def run_turns_by_hand(chat):
    """Every turn of chat, a chat with no sender, is run by the test."""
    chat.connect("turn-started", lambda chat, turn: run_by_hand(turn))
