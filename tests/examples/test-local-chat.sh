#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs tests/examples/test-local-chat.py (examples/local-chat.py used as a
# person would, against a loopback Chat Completions server) under Xvfb.
#
# Usage: test-local-chat.sh TYPELIB_DIR LIB_DIR PYTHON SRCDIR
# Exit 77 (skipped) without xvfb-run or without GTK 4 for PYTHON.

set -u

if [ $# -ne 4 ]; then
  echo "usage: $0 TYPELIB_DIR LIB_DIR PYTHON SRCDIR" >&2
  exit 2
fi
typelib_dir=$1 lib_dir=$2 python=$3 srcdir=$4

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed"
  exit 77
fi
if ! "$python" -c "import gi; gi.require_version('Gtk', '4.0')" 2>/dev/null; then
  echo "SKIP: no Gtk 4.0 for $python (gir1.2-gtk-4.0)"
  exit 77
fi

GI_TYPELIB_PATH=$typelib_dir${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}
LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GSK_RENDERER=cairo GDK_BACKEND=x11 NO_AT_BRIDGE=1 GTK_A11Y=none
export GI_TYPELIB_PATH LD_LIBRARY_PATH GSK_RENDERER GDK_BACKEND NO_AT_BRIDGE GTK_A11Y
unset WAYLAND_DISPLAY

# GtkApplication wants a session bus: a private one when dbus-run-session exists.
bus=
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] && command -v dbus-run-session >/dev/null 2>&1; then
  bus=dbus-run-session
fi

output=$(xvfb-run -a -s "-screen 0 1280x800x24" $bus \
  "$python" "$srcdir/tests/examples/test-local-chat.py" "$srcdir" 2>&1)
status=$?
echo "$output" | grep -v '^dbus-daemon'
# PyGObject prints an exception in a signal handler and carries on.
case $output in
  *Traceback*) echo "FAIL: an exception was raised" >&2; exit 1 ;;
esac
exit $status
