#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""local-chat.py — a GTK 4 chat with a local model, through libmend.

Speaks the OpenAI Chat Completions format to Ollama on its default port, or
to the endpoint given as the first argument (llama.cpp's server, vLLM, LM
Studio; OpenRouter or OpenAI with OPENAI_API_KEY set). libmend retries what
the server fails for a moment, counts each wait down in the status line, and
keeps the prompts typed meanwhile in the chat's queue.

  python3 examples/local-chat.py [http://localhost:8080/v1/chat/completions]
"""

import os
import sys

import gi

gi.require_versions({"Gtk": "4.0", "Mend": "1"})
from gi.repository import Gtk, Mend  # noqa: E402

URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:11434/v1/chat/completions"


class ChatWindow(Gtk.ApplicationWindow):
    def __init__(self, app):
        super().__init__(application=app, title="Local chat", default_width=640, default_height=480)
        # The widgets.
        self.view = Gtk.TextView(editable=False, cursor_visible=False, wrap_mode=Gtk.WrapMode.WORD_CHAR)
        self.status = Gtk.Label(xalign=0)
        self.entry = Gtk.Entry(placeholder_text="Ask, and press Enter", hexpand=True)
        self.stop = Gtk.Button(label="Stop")
        row = Gtk.Box(spacing=6)
        row.append(self.entry)
        row.append(self.stop)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6,
                      margin_top=6, margin_bottom=6, margin_start=6, margin_end=6)
        box.append(Gtk.ScrolledWindow(child=self.view, vexpand=True))
        box.append(self.status)
        box.append(row)
        self.set_child(box)
        self.buffer = self.view.get_buffer()
        # The end of the widgets. What follows is all libmend asks of an app.
        sender = Mend.HttpSender(uri=URL, model=os.environ.get("MODEL", "llama3.2"))  # Chat Completions
        sender.set_header("Authorization", "Bearer " + os.environ.get("OPENAI_API_KEY", "none"))  # local: any
        sender.connect("text-delta", lambda sender, delta: self.write(delta))
        self.chat = Mend.Chat(sender=sender)
        self.chat.connect("turn-started", self.on_turn_started)
        self.chat.connect("turn-finished", self.on_turn_finished)
        self.entry.connect("activate", self.on_activate)
        self.stop.connect("clicked", lambda button: self.chat.stop())
        self.connect("close-request", lambda window: self.chat.close())

    def write(self, text):
        self.buffer.insert(self.buffer.get_end_iter(), text)

    def on_activate(self, entry):
        if entry.get_text():
            self.chat.submit(entry.get_text(), None)  # queued while a turn runs
        else:
            self.chat.send_next()  # after a give-up: "Continue the current turn"
        entry.set_text("")

    def on_turn_started(self, chat, turn):
        self.write("You: %s\nModel: " % turn.props.prompt)
        turn.connect("waiting", self.on_waiting)

    def on_waiting(self, turn, wait):
        self.status.set_text(wait.describe())  # "Retrying in 4 s (retry 2 of 4)"
        wait.connect("notify::remaining-seconds", lambda wait, pspec: self.status.set_text(wait.describe()))

    def on_turn_finished(self, chat, turn):
        failure = turn.props.last_failure
        self.status.set_text("" if turn.props.state == Mend.TurnState.SUCCEEDED else
                             (failure.props.message if failure else "Stopped") + " — Enter continues")
        self.write("\n")


app = Gtk.Application(application_id="org.example.LocalChat")
app.connect("activate", lambda app: ChatWindow(app).present())
sys.exit(app.run([sys.argv[0]]))
