#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-local-chat.py — examples/local-chat.py, used as a person would.
#
# Starts a loopback OpenAI Chat Completions server (Ollama's and llama.cpp's
# format: `data: {"choices":[{"delta":{"content":…}}]}` lines, then
# `data: [DONE]`) whose first answer is a 503 with Retry-After: 2, and runs
# the example's own Gtk.Application against it. Like a user, it types a
# prompt into the entry and presses Enter, types a follow-up while the first
# turn waits, and reads what the window shows: the status line must count
# the wait down (2 s, then 1 s) and the text view must show both answers;
# the server must have been asked three times, the follow-up with the first
# exchange in its history. Nothing of the example's or libmend's objects is
# touched but the widgets.
#
# Also checks the docs' promise: the "A GTK 4 chat with a local model"
# section of docs/http.md shows this very file, and it has at most 40
# lines of code beyond the widgets.
#
# usage: test-local-chat.py SRCDIR   (under xvfb-run; see tests/examples/meson.build)

import http.server
import runpy
import json
import os
import re
import sys
import threading

srcdir = sys.argv[1]
example = os.path.join(srcdir, "examples", "local-chat.py")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


# --- The docs' promise, read from the page.
source = open(example, encoding="utf-8").read()
page = open(os.path.join(srcdir, "docs", "http.md"), encoding="utf-8").read()
section = page[page.index("## A GTK 4 chat with a local model"):]
end = section.find("\n## ", 1)
section = section[:end] if end >= 0 else section
block = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S)
check(block is not None and block.group(1) == source,
      "docs/http.md's section does not show examples/local-chat.py as it is")

code = source.split('"""', 2)[2]        # after the module's docstring
widgets = re.search(r"# The widgets\.\n.*?# The end of the widgets\..*?\n", code, re.S)
check(widgets is not None, "no widget block marked in the example")
rest = code.replace(widgets.group(0), "") if widgets else code
lines = [line for line in rest.splitlines() if line.strip() and not line.strip().startswith("#")]
print("# %d lines of code beyond the widgets" % len(lines))
check(len(lines) <= 40, "%d lines of code beyond the widgets (docs/http.md says at most 40)" % len(lines))

# --- The server.
ANSWERS = ["Hello from the local model.", "Still here."]
requests = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        requests.append((self.path, body))
        if len(requests) == 1:
            # Ollama's answer while a model loads or the server is full.
            data = b'{"error":{"message":"server busy, please try again","type":"server_error"}}'
            self.send_response(503)
            self.send_header("Retry-After", "2")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        text = ANSWERS[min(len(requests) - 2, len(ANSWERS) - 1)]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for i, word in enumerate(re.findall(r"\S+\s*", text)):
            chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body["model"],
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": word} if i == 0
                                  else {"content": word}, "finish_reason": None}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        last = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body["model"],
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n")
        self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/v1/chat/completions" % server.server_address[1]

# --- The example, run as its own program, watched through its widgets.
import gi  # noqa: E402

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402

statuses = []
shown = {"text": "", "exit": None}


def buffer_text(view):
    buffer = view.get_buffer()
    return buffer.get_text(buffer.get_start_iter(), buffer.get_end_iter(), False)


def find(widget, kind):
    """The widgets of @kind under @widget, in order."""
    found = [widget] if isinstance(widget, kind) else []
    child = widget.get_first_child()
    while child is not None:
        found += find(child, kind)
        child = child.get_next_sibling()
    return found


def type_and_enter(entry, text):
    entry.set_text(text)
    entry.emit("activate")


def on_shown():
    """Once the example's window is up: what a person would do."""
    app = Gio.Application.get_default()
    window = app.get_active_window() if app else None
    if window is None:
        return GLib.SOURCE_CONTINUE
    entry = find(window, Gtk.Entry)[0]
    view = find(window, Gtk.TextView)[0]
    status = [label for label in find(window, Gtk.Label) if label.get_parent() is window.get_child()][0]

    def on_status(label, pspec):
        if label.get_text() and (not statuses or statuses[-1] != label.get_text()):
            statuses.append(label.get_text())
            if len(statuses) == 1:
                type_and_enter(entry, "And again?")  # typed while the first turn waits

    def on_changed(buffer):
        shown["text"] = buffer_text(view)
        if shown["text"].count("Model: ") == 2 and ANSWERS[1] in shown["text"]:
            GLib.idle_add(window.close)

    status.connect("notify::label", on_status)
    view.get_buffer().connect("changed", on_changed)
    type_and_enter(entry, "Say hello")
    return GLib.SOURCE_REMOVE


def on_watchdog():
    failures.append("the window did not show both answers within 30 s")
    Gio.Application.get_default().quit()
    return GLib.SOURCE_REMOVE


GLib.idle_add(on_shown)
GLib.timeout_add_seconds(30, on_watchdog)
sys.argv = [example, url]
try:
    runpy.run_path(example, run_name="__main__")
except SystemExit as exit:
    shown["exit"] = exit.code
server.shutdown()

# --- What the user saw.
check(shown["exit"] == 0, "the example exited with %r" % shown["exit"])
check(all(answer in shown["text"] for answer in ANSWERS), "the window showed: %r" % shown["text"])
countdown = [s for s in statuses if s.startswith("Retrying in")]
print("# status line:", statuses)
check(any("2 s" in s for s in countdown) and any("1 s" in s for s in countdown),
      "the status line did not count the wait down from 2 s to 1 s: %r" % statuses)
check(len(requests) == 3, "the server was asked %d times, not 3" % len(requests))
if len(requests) == 3:
    history = requests[2][1]["messages"]
    roles = [m["role"] for m in history]
    check(roles == ["user", "assistant", "user"], "the follow-up's history: %r" % roles)
    check(history[1].get("content") == ANSWERS[0], "the first answer kept: %r" % history[1])
    check(history[2].get("content") == "And again?", "the follow-up's prompt: %r" % history[2])
    check(requests[0][1]["model"] == "llama3.2" and requests[0][1].get("stream") is True,
          "the first request: %r" % requests[0][1])

for message in failures:
    print("not ok:", message)
print("ok" if not failures else "FAILED")
sys.exit(1 if failures else 0)
