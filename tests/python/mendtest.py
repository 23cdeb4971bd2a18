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
