#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gtk-chat.py — libmend in a GTK 4 window, from Python.

A chat whose model upstream fails now and then. libmend retries each turn,
and every wait is a Mend.RetryWait that this window draws as a banner with a
live countdown, "Retry now" and "Stop". Follow-ups typed meanwhile wait in the
chat's Mend.Queue (a Gio.ListModel in a Gtk.ListView: click a row to edit it,
✕ to remove it); a failed turn never eats them. Subagents that a transient
error killed are listed with their resume countdown and a Retry button.

By default it talks to a flaky model server embedded in this process, on
loopback: the first turn meets two 529s and then answers, the third gives up
after five 503s, the fourth meets a 429. --url sends to a real endpoint:

  gtk-chat.py --url https://api.anthropic.com/v1/messages \\
      --header 'x-api-key: …' --header 'anthropic-version: 2023-06-01'

From the build tree:
  GI_TYPELIB_PATH=_build/introspection LD_LIBRARY_PATH=_build/lib \\
      python3 examples/gtk-chat.py
"""

import argparse
import json
import os
import sys

# Loopback needs no proxy; without this GIO may consult a proxy resolver first.
os.environ.setdefault("GIO_USE_PROXY_RESOLVER", "dummy")

import gi  # noqa: E402

for namespace, version in [("Gdk", "4.0"), ("Gtk", "4.0"), ("Graphene", "1.0"),
                           ("Soup", "3.0"), ("Mend", "1")]:
    gi.require_version(namespace, version)
from gi.repository import Gdk, Gio, GLib, Graphene, Gtk, Mend, Pango, Soup  # noqa: E402


OK = (200, None, None)
ERROR = '{"type":"error","error":{"type":"%s","message":"%s"}}'
OVERLOADED = ERROR % ("overloaded_error", "Overloaded")
NO_ACCOUNTS = ERROR % ("api_error", "no non-exhausted claude accounts available")
RATE_LIMITED = ERROR % ("rate_limit_error", "Rate limited")

# The embedded server's replies, one script per turn, then round again:
# (status, JSON error body, Retry-After seconds). The Retry-After hints make
# the waits long enough to watch; libmend's own first delays are 250 ms, 500 ms…
TURN_SCRIPTS = [
    [(529, OVERLOADED, "4"), (529, OVERLOADED, "3"), OK],
    [OK],
    [(503, NO_ACCOUNTS, None)] * 5,        # gives up: Continue heads the queue
    [(429, RATE_LIMITED, "5"), OK],
]

# The stream-json lines (Claude Code's format) of an agent whose subagent dies
# on a 503, fed to a Mend.StreamObserver just like a real agent's output.
TASK = {"type": "system", "task_id": "a7c41f", "tool_use_id": "toolu_01"}
TASK_STARTED = dict(TASK, subtype="task_started", description="Push relay for GCP lane bundles")
TASK_FAILED = dict(TASK, subtype="task_notification", status="failed",
                   summary="API Error: 503 no non-exhausted claude accounts available")
TASK_DONE = dict(TASK, subtype="task_notification", status="completed", summary="Relay pushed")

CSS = """
.banner { background: #fdf0c8; border-bottom: 1px solid #d8b64a; padding: 8px 12px; }
.banner-title { font-weight: bold; font-size: 1.15em; }
.heading { font-weight: bold; margin-top: 6px; }
"""


class FlakyServer:
    """A model API on 127.0.0.1 that streams Anthropic-style server-sent events."""

    def __init__(self):
        self.server = Soup.Server()
        self.server.add_handler("/v1/messages", self.serve)
        self.server.listen_local(0, Soup.ServerListenOptions.IPV4_ONLY)
        self.url = f"http://127.0.0.1:{self.server.get_uris()[0].get_port()}/v1/messages"
        self.turns = {}        # Idempotency-Key → the replies left for that turn
        self.n_turns = 0

    def serve(self, server, msg, path, query):
        # Every attempt of a turn carries the same Idempotency-Key, so the
        # script follows turns, not requests.
        key = msg.get_request_headers().get_one("Idempotency-Key") or ""
        body = json.loads(msg.get_request_body().flatten().get_data() or b"{}")
        prompt = body.get("messages", [{}])[0].get("content", "")
        resume = "SendMessage" in prompt           # a subagent resume prompt
        if key not in self.turns:
            script = [OK] if resume else TURN_SCRIPTS[self.n_turns % len(TURN_SCRIPTS)]
            self.turns[key], self.n_turns = list(script), self.n_turns + (not resume)
        status, error, retry_after = self.turns[key].pop(0) if self.turns[key] else OK
        msg.set_status(status, None)
        if error is not None:
            if retry_after:
                msg.get_response_headers().append("Retry-After", retry_after)
            msg.set_response("application/json", Soup.MemoryUse.COPY, error.encode())
            return
        # Stream the answer a word at a time, as a model would.
        answer = "Resuming it with SendMessage." if resume else f"Done: “{prompt[:60]}”. Green."
        events = [("message_start", {"type": "message_start"})]
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": word + " "}})
                   for word in answer.split(" ")]
        events.append(("message_stop", {"type": "message_stop"}))
        msg.get_response_headers().set_encoding(Soup.Encoding.CHUNKED)
        msg.get_response_headers().set_content_type("text/event-stream", None)
        msg.pause()
        GLib.timeout_add(60, self.stream, msg, events)

    def stream(self, msg, events):
        name, data = events.pop(0)
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        msg.get_response_body().append_bytes(GLib.Bytes.new(chunk))
        if not events:
            msg.get_response_body().complete()
        msg.unpause()          # writes what was appended, then waits for more
        return bool(events)


def label(**props):
    return Gtk.Label(xalign=0, ellipsize=Pango.EllipsizeMode.END, **props)


def box(*children, vertical=False, **props):
    orientation = Gtk.Orientation.VERTICAL if vertical else Gtk.Orientation.HORIZONTAL
    container = Gtk.Box(orientation=orientation, **props)
    for child in children:
        container.append(child)
    return container


def list_view(model, setup, bind, unbind=None):
    factory = Gtk.SignalListItemFactory()
    factory.connect("setup", setup)
    factory.connect("bind", bind)
    if unbind:
        factory.connect("unbind", unbind)
    view = Gtk.ListView(model=Gtk.NoSelection(model=model), factory=factory)
    return Gtk.ScrolledWindow(vexpand=True, child=view)


class ChatWindow:
    def __init__(self, app, opts):
        self.app, self.opts = app, opts
        self.wait = None           # the turn's current Mend.RetryWait, if any
        self.tick_id = 0
        self.subagent_rows = {}    # bound Gtk.ListItem → its status label

        self.server = None if opts.url else FlakyServer()
        self.sender = Mend.HttpSender.new(opts.url or self.server.url)
        for header in opts.header:
            name, _, value = header.partition(":")
            self.sender.set_header(name.strip(), value.strip())
        self.sender.connect("content", self.on_content)

        # The chat owns the queue, the turn and its retries, and the subagents.
        self.chat = Mend.Chat(sender=self.sender, id="gtk-chat")
        self.chat.connect("turn-started", self.on_turn_started)
        self.chat.connect("turn-finished", self.on_turn_finished)
        self.chat.connect("notify::lifecycle", lambda *args: self.update_status())
        self.chat.props.queue.connect("items-changed", lambda *args: self.update_status())
        self.subagents = self.chat.props.subagents
        self.subagents.connect("waiting", lambda *args: self.ensure_tick())
        self.observer = Mend.StreamObserver.new(self.chat)

        self.build_ui()
        self.update_status()

    def build_ui(self):
        provider = Gtk.CssProvider()
        if hasattr(provider, "load_from_string"):      # GTK ≥ 4.12
            provider.load_from_string(CSS)
        else:
            provider.load_from_data(CSS.encode())
        Gtk.StyleContext.add_provider_for_display(
            Gdk.Display.get_default(), provider, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION)

        # The banner: shown only while the turn waits to retry.
        self.banner_title = label(css_classes=["banner-title"])
        self.banner_detail = label(css_classes=["dim-label"])
        self.banner_progress = Gtk.ProgressBar()
        retry_now = Gtk.Button(label="Retry now", valign=Gtk.Align.CENTER,
                               css_classes=["suggested-action"])
        retry_now.connect("clicked", lambda b: self.chat.props.turn
                          and self.chat.props.turn.retry_now())
        stop = Gtk.Button(label="Stop", valign=Gtk.Align.CENTER, css_classes=["destructive-action"])
        stop.connect("clicked", lambda b: self.chat.stop())
        self.banner = box(box(self.banner_title, self.banner_detail, self.banner_progress,
                              vertical=True, hexpand=True, spacing=2),
                          retry_now, stop, spacing=12, visible=False, css_classes=["banner"])

        # The transcript: prompts, streamed answers, what became of each turn.
        self.transcript = Gtk.TextView(editable=False, cursor_visible=False,
                                       wrap_mode=Gtk.WrapMode.WORD_CHAR,
                                       left_margin=10, right_margin=10, top_margin=8)
        self.transcript.get_buffer().create_tag("prompt", weight=700)
        self.transcript.get_buffer().create_tag("note", foreground="#77767b")

        # The side: the queue (Mend.Queue is a Gio.ListModel of Mend.QueueItem)
        # and the subagents (Mend.SubagentRetry, a Gio.ListModel of Mend.Subagent).
        self.queue_heading = label(css_classes=["heading"])
        side = box(self.queue_heading,
                   list_view(self.chat.props.queue, self.queue_setup, self.queue_bind),
                   label(label="Subagents", css_classes=["heading"]),
                   list_view(self.subagents, self.subagent_setup, self.subagent_bind,
                             lambda f, list_item: self.subagent_rows.pop(list_item, None)),
                   vertical=True, spacing=4, margin_start=8, margin_end=8, margin_bottom=8)
        if self.server is not None:
            fail = Gtk.Button(label="Simulate a subagent failing on a 503")
            fail.connect("clicked", lambda b: self.feed_agent(TASK_STARTED, TASK_FAILED))
            side.append(fail)
        panes = Gtk.Paned(vexpand=True, position=560, shrink_end_child=False,
                          start_child=Gtk.ScrolledWindow(child=self.transcript), end_child=side)

        # The composer. Send with an empty composer sends the queue's head:
        # after a Stop or a give-up the queue waits for the user to say so.
        self.entry = Gtk.Entry(hexpand=True, placeholder_text="Ask, or queue a follow-up…")
        self.entry.connect("activate", self.on_send)
        self.send_button = Gtk.Button(label="Send")
        self.send_button.connect("clicked", self.on_send)
        self.status = Gtk.Label(css_classes=["dim-label"])
        composer = box(self.entry, self.send_button, self.status, spacing=6,
                       margin_start=8, margin_end=8, margin_top=8, margin_bottom=8)

        self.window = Gtk.ApplicationWindow(application=self.app, title="libmend chat",
                                            default_width=900, default_height=600,
                                            child=box(self.banner, panes, composer, vertical=True))
        self.window.connect("close-request", lambda w: self.chat.close() or False)

    # Queue rows: Gtk.EditableLabel is click to edit, Enter to commit, Escape to cancel.

    def queue_setup(self, factory, list_item):
        text = Gtk.EditableLabel(hexpand=True, tooltip_text="Click to edit")
        text.connect("notify::editing", self.on_queue_edited, list_item)
        remove = Gtk.Button(label="✕", css_classes=["flat"], tooltip_text="Remove from the queue")
        remove.connect("clicked", lambda b: list_item.get_item() and self.chat.props.queue.remove(
            list_item.get_item().props.id))
        list_item.set_child(box(text, remove, spacing=4))

    def queue_bind(self, factory, list_item):
        list_item.get_child().get_first_child().set_text(list_item.get_item().props.text)

    def on_queue_edited(self, text, pspec, list_item):
        item = list_item.get_item()
        if text.props.editing or item is None:
            return
        # Back to the composer: the row may go away when its item is sent, and
        # GTK 4.8's EditableLabel trips over being removed while it has focus.
        focus = self.window.get_focus()
        if focus is not None and (focus == text or focus.is_ancestor(text)):
            self.entry.grab_focus()
        if text.get_text() == item.props.text:
            return
        try:
            # The queue normalizes the text, and refuses a blank or huge one.
            self.chat.props.queue.replace_text(item.props.id, text.get_text())
        except GLib.Error as e:
            self.status.set_text(e.message)
            text.set_text(item.props.text)

    # Subagent rows: Mend.SubagentRetry re-announces a subagent (items-changed)
    # whenever it changes, so bind runs again on every change of state.

    def subagent_setup(self, factory, list_item):
        retry = Gtk.Button(label="Retry", valign=Gtk.Align.CENTER)
        retry.connect("clicked", self.on_subagent_retry, list_item)
        list_item.set_child(box(box(label(), label(css_classes=["dim-label"]),
                                    vertical=True, hexpand=True), retry, spacing=6))

    def subagent_bind(self, factory, list_item):
        subagent = list_item.get_item()
        texts = list_item.get_child().get_first_child()
        texts.get_first_child().set_text(subagent.props.name or subagent.props.id)
        texts.get_next_sibling().set_sensitive(subagent.props.retryable)
        self.subagent_rows[list_item] = texts.get_last_child()
        self.refresh_subagent(list_item)

    def refresh_subagent(self, list_item):
        subagent = list_item.get_item()
        text = subagent.props.state.value_nick
        if subagent.props.retry is not None:
            text += " · " + subagent.props.retry.describe()
        elif subagent.props.state == Mend.SubagentState.FAILED and subagent.props.failure:
            text += " · " + subagent.props.failure.props.message
        self.subagent_rows[list_item].set_text(text)

    def on_subagent_retry(self, button, list_item):
        try:
            self.subagents.retry(list_item.get_item().props.id)   # one click, one attempt
        except GLib.Error as e:
            self.status.set_text(e.message)

    def feed_agent(self, *lines):
        for line in lines:
            self.observer.feed_line(json.dumps(line), -1)
        return GLib.SOURCE_REMOVE

    # The chat's signals

    def note(self, text, tag="note"):
        buf = self.transcript.get_buffer()
        if buf.get_char_count() == 0:
            text = text.lstrip("\n")
        buf.insert_with_tags_by_name(buf.get_end_iter(), text, *([tag] if tag else []))
        self.transcript.scroll_to_mark(buf.get_insert(), 0, False, 0, 0)
        buf.place_cursor(buf.get_end_iter())

    def on_turn_started(self, chat, turn):
        # Once per turn, never per attempt: retries add no second user line.
        provenance = json.loads(turn.props.provenance or "{}")
        if provenance.get("kind") == "subagent_retry":
            self.note(f"\n↻ asking the agent to resume subagent {provenance['subagentId']}\n")
            if self.server is not None:        # the scripted agent resumes it
                self.feed_agent(TASK_STARTED)
        else:
            self.note(f"\n› {turn.props.prompt}\n", "prompt")
        turn.connect("waiting", self.on_waiting)
        turn.connect("resumed", lambda t, n: self.note(
            f"↻ attempt {n} of {t.props.max_attempts}, same prompt\n"))

    def on_waiting(self, turn, wait):
        failure = wait.props.failure
        self.note(f"✗ attempt {turn.props.attempt}: {failure.props.message} "
                  f"({failure.props.kind.value_nick})\n")
        self.wait = wait
        wait.connect("fired", lambda w: self.tick())
        wait.connect("cancelled", lambda w: self.tick())
        self.ensure_tick()

    def on_content(self, sender, turn, event):
        # A streamed event, or the whole body of an answer that is not a stream.
        try:
            data = json.loads(event)
        except ValueError:
            return self.note(event, None)
        text = data.get("delta", {}).get("text")
        if text is None and data.get("content"):                   # Anthropic, whole
            text = data["content"][0].get("text")
        if text is None and data.get("choices"):                   # OpenAI style
            choice = data["choices"][0]
            text = (choice.get("delta") or choice.get("message") or {}).get("content")
        if text:
            self.note(text, None)

    def on_turn_finished(self, chat, turn):
        self.wait = None
        state, n, failure = turn.props.state, turn.props.attempt, turn.props.last_failure
        attempts = f"{n} attempt{'s' if n > 1 else ''}"
        if state == Mend.TurnState.SUCCEEDED:
            self.note(f"\n✓ answered after {attempts}\n")
        elif state == Mend.TurnState.STOPPED:
            self.note("■ stopped: no retry, the queue is kept (Send sends its head)\n")
        else:
            self.note(f"✗ gave up after {attempts}: {failure.props.message if failure else ''}\n")
        if self.server is not None and "subagent_retry" in (turn.props.provenance or ""):
            # The scripted agent's resumed subagent finishes a little later.
            GLib.timeout_add_seconds(3, self.feed_agent, TASK_DONE)
        self.tick()

    def ensure_tick(self):
        if self.tick_id == 0:
            self.tick_id = GLib.timeout_add(250, self.on_tick)
        self.tick()

    def on_tick(self):
        if self.tick():
            return GLib.SOURCE_CONTINUE
        self.tick_id = 0
        return GLib.SOURCE_REMOVE

    def tick(self):
        """Redraws every countdown; says whether any wait is still pending."""
        wait = self.wait
        waiting = wait is not None and wait.props.state == Mend.RetryWaitState.PENDING
        self.banner.set_visible(waiting)
        if waiting:
            # describe() is translated and says e.g. "Retrying in 4 s (retry 1 of 4)".
            self.banner_title.set_text("⟳ " + wait.describe())
            failure = wait.props.failure
            self.banner_detail.set_text(f"{Mend.reason_to_nick(wait.props.reason)} · "
                                        f"{failure.props.message if failure else ''}")
            self.banner_progress.set_fraction(
                1 - wait.get_remaining_ms() / max(wait.props.delay_ms, 1))
        for list_item in self.subagent_rows:
            self.refresh_subagent(list_item)
            retry = list_item.get_item().props.retry
            waiting |= retry is not None and retry.props.state == Mend.RetryWaitState.PENDING
        return waiting

    def update_status(self):
        lifecycle = self.chat.props.lifecycle
        self.status.set_text(lifecycle.value_nick)
        self.send_button.set_label("Queue" if lifecycle == Mend.Lifecycle.BUSY else "Send")
        self.queue_heading.set_text(f"Queued follow-ups ({self.chat.props.queue.get_n_items()})")

    def on_send(self, widget):
        text = self.entry.get_text()
        try:
            if not text.strip():
                if not self.chat.send_next():
                    self.status.set_text("nothing to send")
                return
            self.chat.submit(text, None)       # runs now when idle, else queues
            self.entry.set_text("")
        except GLib.Error as e:
            self.status.set_text(e.message)

    # --screenshot: drive one retry, then render the window into a PNG

    def start_screenshot(self):
        self.chat.submit("Fix the failing build", None)
        self.chat.submit("Then update the changelog", None)     # queued: a turn runs
        self.feed_agent(TASK_STARTED, TASK_FAILED)
        GLib.timeout_add(100, self.check_screenshot_state)
        GLib.timeout_add(int(self.opts.timeout * 1000), self.quit, 1, "no countdown in time")

    def check_screenshot_state(self):
        if not (self.wait and self.banner.get_visible() and self.chat.props.queue.get_n_items()):
            return GLib.SOURCE_CONTINUE
        # A Gtk.WidgetPaintable draws the widget's last painted frame: render
        # right after GTK has painted the banner.
        self.paint_handler = self.window.get_frame_clock().connect("after-paint", self.on_painted)
        self.window.queue_draw()
        return GLib.SOURCE_REMOVE

    def on_painted(self, clock):
        clock.disconnect(self.paint_handler)
        if not save_png(self.window, self.opts.screenshot):
            return self.quit(1, f"cannot write {self.opts.screenshot}")
        self.quit(0, f"saved {self.opts.screenshot}: {self.banner_title.get_text()}")

    def quit(self, status, message):
        print(f"gtk-chat: {message}", file=sys.stderr if status else sys.stdout)
        self.app.exit_status = status
        self.app.quit()
        return GLib.SOURCE_REMOVE


def save_png(window, path):
    """Renders the window's last painted frame into a PNG file."""
    width, height = window.get_width(), window.get_height()
    snapshot = Gtk.Snapshot()
    Gtk.WidgetPaintable.new(window).snapshot(snapshot, width, height)
    if gi.version_info >= (3, 47):          # render nodes are usable from 3.47
        rect = Graphene.Rect().init(0, 0, width, height)
        return window.get_renderer().render_texture(snapshot.to_node(), rect).save_to_png(path)
    # Older PyGObject (3.42 in Debian 12) cannot hold a Gsk.RenderNode, so the
    # same three calls go through ctypes, on the objects' C pointers.
    import ctypes
    lib, ptr = ctypes.CDLL("libgtk-4.so.1"), ctypes.c_void_p
    lib.gtk_snapshot_to_node.restype = lib.gsk_renderer_render_texture.restype = ptr
    lib.gsk_renderer_render_texture.argtypes = [ptr, ptr, ptr]
    lib.gdk_texture_save_to_png.argtypes = [ptr, ctypes.c_char_p]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ptr, [ctypes.py_object, ctypes.c_char_p]
    node = lib.gtk_snapshot_to_node(ptr(pointer(snapshot.__gpointer__, None)))
    texture = lib.gsk_renderer_render_texture(pointer(window.get_renderer().__gpointer__, None),
                                              node, (ctypes.c_float * 4)(0, 0, width, height))
    return lib.gdk_texture_save_to_png(texture, os.fsencode(path))    # leaks one frame; we quit


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a real model endpoint (default: an embedded flaky server)")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="a header for every request to --url (repeatable)")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="drive one retry against the embedded server, save the window "
                             "as a PNG once the countdown shows, and quit")
    parser.add_argument("--timeout", type=float, default=30, metavar="S",
                        help="with --screenshot: exit 1 unless the countdown shows within S s")
    opts = parser.parse_args()
    if opts.screenshot and opts.url:
        parser.error("--screenshot runs against the embedded server; drop --url")

    # NON_UNIQUE: every run is its own instance (tests may run side by side).
    app = Gtk.Application(application_id="org.example.MendChat",
                          flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.exit_status = 0

    def on_activate(app):
        win = ChatWindow(app, opts)
        win.window.present()
        if opts.screenshot:
            win.start_screenshot()

    app.connect("activate", on_activate)
    app.run([sys.argv[0]])          # the options are ours, not GApplication's
    return app.exit_status


if __name__ == "__main__":
    sys.exit(main())
