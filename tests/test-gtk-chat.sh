#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs examples/gtk-chat.py under Xvfb with --screenshot: it submits a prompt
# and a queued follow-up to its embedded flaky server, waits for the retry
# countdown (the first reply is a 529) and saves the window as a PNG, which
# is kept as the test's artifact.
#
# Usage: test-gtk-chat.sh TYPELIB_DIR LIB_DIR PYTHON APP SCREENSHOT.png
# Exit 77 (skipped) without xvfb-run or without GTK 4 for PYTHON.

set -u

if [ $# -ne 5 ]; then
  echo "usage: $0 TYPELIB_DIR LIB_DIR PYTHON APP SCREENSHOT.png" >&2
  exit 2
fi
typelib_dir=$1 lib_dir=$2 python=$3 app=$4 shot=$5

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed"
  exit 77
fi

if ! "$python" -c 'import gi; gi.require_version("Gtk", "4.0")' 2>/dev/null; then
  echo "SKIP: no GTK 4 for $python (gir1.2-gtk-4.0)"
  exit 77
fi

GI_TYPELIB_PATH=$typelib_dir${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}
LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The cairo renderer and X11 work everywhere Xvfb does; no accessibility bus.
GSK_RENDERER=cairo GDK_BACKEND=x11 NO_AT_BRIDGE=1 GTK_A11Y=none
export GI_TYPELIB_PATH LD_LIBRARY_PATH GSK_RENDERER GDK_BACKEND NO_AT_BRIDGE GTK_A11Y
unset WAYLAND_DISPLAY

# GtkApplication wants a session bus and warns without one (fatal under
# G_DEBUG=fatal-warnings): give it a private one when dbus-run-session exists.
bus=
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] && command -v dbus-run-session >/dev/null 2>&1; then
  bus=dbus-run-session
fi

mkdir -p "$(dirname "$shot")"
rm -f "$shot"
xvfb-run -a -s "-screen 0 1280x800x24" $bus \
  "$python" "$app" --screenshot "$shot" --timeout 30
status=$?
if [ $status -ne 0 ]; then
  echo "FAIL: gtk-chat.py exited with status $status" >&2
  exit 1
fi

if [ ! -f "$shot" ]; then
  echo "FAIL: no screenshot at $shot" >&2
  exit 1
fi

size=$(wc -c < "$shot")
if [ "$size" -le 5120 ]; then
  echo "FAIL: $shot is only $size bytes" >&2
  exit 1
fi

if command -v file >/dev/null 2>&1; then
  case $(file -b "$shot") in
    "PNG image data"*) ;;
    *) echo "FAIL: $shot is not a PNG: $(file -b "$shot")" >&2; exit 1 ;;
  esac
elif [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
  echo "FAIL: $shot has no PNG signature" >&2
  exit 1
fi

echo "PASS: $shot ($size bytes${bus:+, under $bus})"
exit 0
