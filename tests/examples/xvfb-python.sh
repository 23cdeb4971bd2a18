#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs a Python test of a GTK 4 window under Xvfb, through the build's
# typelibs: tests/examples/test-local-chat.py (examples/local-chat.py used
# as a person would) and tests/gtk/test-gtk-widgets.py (libmend-gtk's
# widgets).
#
# Usage: xvfb-python.sh TYPELIB_PATH LIBRARY_PATH PYTHON SCRIPT [ARG…]
#   (each PATH one folder or several, colon-separated)
# Exit 77 (skipped) without xvfb-run or without GTK 4 for PYTHON.

set -u

if [ $# -lt 4 ]; then
  echo "usage: $0 TYPELIB_PATH LIBRARY_PATH PYTHON SCRIPT [ARG…]" >&2
  exit 2
fi
typelib_path=$1 library_path=$2 python=$3
shift 3

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed"
  exit 77
fi
if ! "$python" -c "import gi; gi.require_version('Gtk', '4.0')" 2>/dev/null; then
  echo "SKIP: no Gtk 4.0 for $python (gir1.2-gtk-4.0)"
  exit 77
fi

GI_TYPELIB_PATH=$typelib_path${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}
LD_LIBRARY_PATH=$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GSK_RENDERER=cairo GDK_BACKEND=x11 NO_AT_BRIDGE=1 GTK_A11Y=none
export GI_TYPELIB_PATH LD_LIBRARY_PATH GSK_RENDERER GDK_BACKEND NO_AT_BRIDGE GTK_A11Y
unset WAYLAND_DISPLAY

# GtkApplication wants a session bus: a private one when dbus-run-session exists.
bus=
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] && command -v dbus-run-session >/dev/null 2>&1; then
  bus=dbus-run-session
fi

output=$(xvfb-run -a -s "-screen 0 1280x800x24" $bus "$python" "$@" 2>&1)
status=$?
echo "$output" | grep -v '^dbus-daemon'
# PyGObject prints an exception in a signal handler and carries on.
case $output in
  *Traceback*) echo "FAIL: an exception was raised" >&2; exit 1 ;;
esac
exit $status
