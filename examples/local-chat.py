#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""local-chat.py — a GTK 4 chat with a local model, through libmend.

Speaks the OpenAI Chat Completions format to Ollama on its default port, or
to the endpoint given as the first argument (llama.cpp's server, vLLM, LM
Studio; OpenRouter or OpenAI with OPENAI_API_KEY set). libmend retries what
the server fails for a moment, and libmend-gtk's banner says so, counting
the wait down, with Retry now and Stop; after a give-up it offers Retry and
the server's own words. The prompts typed meanwhile wait in the chat's
queue, shown above the banner, each with remove and edit. For an agent
instead, change the line that makes the sender, say to
Mend.AcpAgent.new(["claude-code-acp"]): nothing else changes.

  python3 examples/local-chat.py [http://localhost:8080/v1/chat/completions]
"""

import os
import sys

import gi

gi.require_versions({"Gtk": "4.0", "Mend": "1", "MendGtk": "1"})
from gi.repository import Gtk, Mend, MendGtk  # noqa: E402

URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:11434/v1/chat/completions"


def http_sender():  # a local server needs no key, any will do
    sender = Mend.HttpSender(uri=URL, model=os.environ.get("MODEL", "llama3.2"))  # Chat Completions
    sender.set_header("Authorization", "Bearer " + os.environ.get("OPENAI_API_KEY", "none"))
    return sender


class ChatWindow(Gtk.ApplicationWindow):
    def __init__(self, app):
        super().__init__(application=app, title="Local chat", default_width=640, default_height=480)
        self.chat = Mend.Chat(sender=http_sender())  # or Mend.AcpAgent.new(["claude-code-acp"])
        # The widgets.
        self.view = Gtk.TextView(editable=False, cursor_visible=False, wrap_mode=Gtk.WrapMode.WORD_CHAR)
        self.entry = Gtk.Entry(placeholder_text="Ask, and press Enter", hexpand=True)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6,
                      margin_top=6, margin_bottom=6, margin_start=6, margin_end=6)
        for widget in (Gtk.ScrolledWindow(child=self.view, vexpand=True), MendGtk.QueueView(chat=self.chat),
                       MendGtk.StatusBanner(chat=self.chat), self.entry):
            box.append(widget)
        self.set_child(box)
        self.buffer = self.view.get_buffer()
        # The end of the widgets. What follows is all libmend asks of an app.
        self.chat.connect("turn-started", lambda chat, turn: self.write("You: %s\nModel: " % turn.props.prompt))
        self.chat.connect("text-delta", lambda chat, turn, text: self.write(text))
        self.chat.connect("turn-finished", lambda chat, turn: self.write("\n"))
        self.entry.connect("activate", self.on_activate)
        self.connect("close-request", lambda window: self.chat.close())

    def write(self, text):
        self.buffer.insert(self.buffer.get_end_iter(), text)

    def on_activate(self, entry):  # queued while a turn runs; empty, the queue's head after a give-up
        self.chat.submit(entry.get_text()) if entry.get_text() else self.chat.send_next()
        entry.set_text("")


app = Gtk.Application(application_id="org.example.LocalChat")
app.connect("activate", lambda app: ChatWindow(app).present())
sys.exit(app.run([sys.argv[0]]))
