#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs examples/gtk-chat.py under Xvfb with --screenshot, once with --light
# and once with --dark: each run submits a prompt and a queued follow-up to
# the embedded flaky server, waits for the retry countdown (the first reply
# is a 529) and saves the window as a PNG, kept as the test's artifacts.
# Checks that each PNG is a real picture and that the dark one is dark and
# the light one light (mean luminance, read back with GdkPixbuf). Then runs
# it with --acp --one-turn: the backend menu switched to Claude Code (ACP),
# one prompt goes end to end through the real claude-code-acp adapter
# ($MEND_CLAUDE_CODE_ACP, else the one tools/setup.sh installed; a missing
# adapter skips that part, and fails it with MEND_REQUIRE_AGENTS=1), offline against the example's embedded server:
# its two 529s come back as JSON-RPC errors, libmend retries the prompt in
# the same session, and the third attempt's streamed answer is the one the
# server wrote.
#
# Usage: test-gtk-chat.sh TYPELIB_DIR LIB_DIR PYTHON APP LIGHT.png DARK.png
# Exit 77 (skipped) without xvfb-run or without GTK 4 and libadwaita for PYTHON.

set -u

if [ $# -ne 6 ]; then
  echo "usage: $0 TYPELIB_DIR LIB_DIR PYTHON APP LIGHT.png DARK.png" >&2
  exit 2
fi
typelib_dir=$1 lib_dir=$2 python=$3 app=$4 light=$5 dark=$6

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed"
  exit 77
fi

for typelib in Gtk:4.0 Adw:1 GdkPixbuf:2.0; do
  name=${typelib%:*} version=${typelib#*:}
  if ! "$python" -c "import gi; gi.require_version('$name', '$version')" 2>/dev/null; then
    echo "SKIP: no $name $version for $python (gir1.2-gtk-4.0, gir1.2-adw-1, gir1.2-gdkpixbuf-2.0)"
    exit 77
  fi
done

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

# shot STYLE FILE: runs the app with --STYLE, checks that FILE is a real PNG.
shot() {
  mkdir -p "$(dirname "$2")"
  rm -f "$2"
  output=$(xvfb-run -a -s "-screen 0 1280x800x24" $bus \
    "$python" "$app" "--$1" --screenshot "$2" --timeout 30 2>&1)
  status=$?
  echo "$output"
  # PyGObject prints an exception in a signal handler and carries on.
  case $output in
    *Traceback*) echo "FAIL: gtk-chat.py --$1 raised an exception" >&2; exit 1 ;;
  esac
  if [ $status -ne 0 ]; then
    echo "FAIL: gtk-chat.py --$1 exited with status $status" >&2
    exit 1
  fi
  # The app saves only once the banner is revealed over a non-empty queue,
  # and says what the countdown read.
  case $output in
    *"saved $2: Retrying in "*) ;;
    *) echo "FAIL: gtk-chat.py --$1 did not report a countdown" >&2; exit 1 ;;
  esac

  if [ ! -f "$2" ]; then
    echo "FAIL: no screenshot at $2" >&2
    exit 1
  fi

  size=$(wc -c < "$2")
  if [ "$size" -le 5120 ]; then
    echo "FAIL: $2 is only $size bytes" >&2
    exit 1
  fi

  if command -v file >/dev/null 2>&1; then
    case $(file -b "$2") in
      "PNG image data"*) ;;
      *) echo "FAIL: $2 is not a PNG: $(file -b "$2")" >&2; exit 1 ;;
    esac
  elif [ "$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
    echo "FAIL: $2 has no PNG signature" >&2
    exit 1
  fi
  echo "$2: $size bytes"
}

shot light "$light"
shot dark "$dark"

# Mean luminance (Rec. 709, 0 to 1) of each screenshot. Adwaita's light
# window and view backgrounds are near white and its dark ones near black,
# so whatever widgets are on top the light shot stays above 0.6 and the
# dark one below 0.4; a hard-coded light colour in the dark style, or a
# dark style that did not apply, moves them.
"$python" - "$light" "$dark" <<'PY' || exit 1
import sys
import gi
gi.require_version("GdkPixbuf", "2.0")
from gi.repository import GdkPixbuf

def luminance(path):
    pixbuf = GdkPixbuf.Pixbuf.new_from_file(path)
    data, stride = pixbuf.get_pixels(), pixbuf.get_rowstride()
    width, height, channels = pixbuf.get_width(), pixbuf.get_height(), pixbuf.get_n_channels()
    totals = [0, 0, 0]
    for y in range(height):
        row = data[y * stride:y * stride + width * channels]
        for c in range(3):
            totals[c] += sum(row[c::channels])
    r, g, b = (t / (255 * width * height) for t in totals)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b

light, dark = luminance(sys.argv[1]), luminance(sys.argv[2])
print(f"mean luminance: light {light:.3f}, dark {dark:.3f}")
if light < 0.6:
    sys.exit(f"FAIL: the light screenshot is too dark ({light:.3f} < 0.6)")
if dark > 0.4:
    sys.exit(f"FAIL: the dark screenshot is too light ({dark:.3f} > 0.4)")
PY

# The ACP backend, end to end through the real adapter: skipped when it is
# not installed, unless CI requires it.
srcdir=$(dirname "$0")/../..
adapter=${MEND_CLAUDE_CODE_ACP:-$srcdir/.agents/claude-code-acp/node_modules/.bin/claude-code-acp}
if ! "$python" -c \
     "import gi; gi.require_version('Mend', '1'); from gi.repository import Mend; Mend.AcpAgent" 2>/dev/null; then
  echo "PASS: $light, $dark; no ACP turn: this libmend was built with -Dacp=disabled"
  exit 0
fi
if [ ! -x "$adapter" ] && [ "${MEND_REQUIRE_AGENTS:-0}" != 1 ]; then
  echo "PASS: $light, $dark; the ACP turn is skipped: no claude-code-acp at $adapter (run tools/setup.sh)"
  exit 0
fi
output=$(xvfb-run -a -s "-screen 0 1280x800x24" $bus \
  "$python" "$app" --acp --one-turn --timeout 45 2>&1)
status=$?
echo "$output"
case $output in
  *Traceback*) echo "FAIL: gtk-chat.py --acp raised an exception" >&2; exit 1 ;;
esac
if [ $status -ne 0 ]; then
  echo "FAIL: gtk-chat.py --acp --one-turn exited with status $status" >&2
  exit 1
fi
# The words the embedded server streamed, through Claude Code and ACP
# updates into the window's transcript.
case $output in
  *"answered after 3 attempts through Claude Code (ACP), Claude Code started 1 time: Done: “Fix the failing build”. Green."*) ;;
  *) echo "FAIL: gtk-chat.py --acp did not answer after two retries in one session" >&2; exit 1 ;;
esac

echo "PASS: $light, $dark, one turn over ACP${bus:+ (under $bus)}"
exit 0
