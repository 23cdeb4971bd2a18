#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gtk-chat.py — libmend in a libadwaita window, from Python.

A chat whose model upstream fails now and then. libmend retries each turn,
and every wait is a Mend.RetryWait that this window draws as a banner whose
countdown is bound to the wait's remaining-seconds, with "Retry now" and
"Stop". Follow-ups typed meanwhile wait in the chat's Mend.Queue (a
Gio.ListModel, shown as a boxed list: edit a row and press Enter, or remove
it); a failed turn never eats them. When a turn gives up a toast says so,
and "Try again" runs that turn again (Mend.Chat.retry: the prompt sent once).
Subagents that a transient error killed are listed with their resume
countdown and a Retry button.

By default it talks to a flaky model server embedded in this process, on
loopback: the first turn meets two 529s and then answers, the third gives up
after five 503s, the fourth meets a 429. --url sends to a real endpoint:

  gtk-chat.py --url https://api.anthropic.com/v1/messages \\
      --header 'x-api-key: …' --header 'anthropic-version: 2023-06-01'

The header bar's backend menu (or --acp) switches to Claude Code over the
Agent Client Protocol: a Mend.AcpAgent runs Zed's claude-code-acp adapter
($MEND_CLAUDE_CODE_ACP, else the one tools/setup.sh installs in .agents/).
Offline by default: the adapter talks to the same embedded server, in a
private home, and leaves every retry to libmend. --acp-online runs it with
your own environment and Claude Code account instead.

From the build tree:
  GI_TYPELIB_PATH=_build/introspection LD_LIBRARY_PATH=_build/lib \\
      python3 examples/gtk-chat.py [--dark]

Needs GTK 4 and libadwaita 1.2 or later (Debian 12: gir1.2-adw-1).
"""

import argparse
import gettext
import json
import locale
import os
import shutil
import sys
import tempfile

# Loopback needs no proxy; without this GIO may consult a proxy resolver first.
os.environ.setdefault("GIO_USE_PROXY_RESOLVER", "dummy")

import gi  # noqa: E402

for namespace, version in [("Gdk", "4.0"), ("Gtk", "4.0"), ("Adw", "1"), ("Graphene", "1.0"),
                           ("Soup", "3.0"), ("Mend", "1")]:
    gi.require_version(namespace, version)
from gi.repository import (Adw, Gio, GLib, GObject, Graphene, Gtk, Mend,  # noqa: E402
                           Pango, Soup)


def _(text):
    """A word libmend already translates, in the user's language.

    The C library's gettext (locale.dgettext) follows the directory libmend
    bound its "libmend-1" domain to; Python's own gettext is the fallback.
    """
    return getattr(locale, "dgettext", gettext.dgettext)("libmend-1", text)


# Human words for libmend's enums. The example's own words are plain English;
# the ones libmend already has go through _().

def reason_words(reason):
    return {
        Mend.Reason.CAPACITY: "Overloaded upstream",
        Mend.Reason.RATE_LIMIT: "Too many requests",
        Mend.Reason.TRANSPORT: "Connection lost",
        Mend.Reason.TIMEOUT: "Timed out",
        Mend.Reason.EMPTY: "Empty answer",
        Mend.Reason.SERVER: "Upstream error",
        Mend.Reason.AUTH: "Key refused",
        Mend.Reason.PERMISSION: "Permission refused",
        Mend.Reason.BAD_REQUEST: "Request refused",
        Mend.Reason.USAGE_LIMIT: "Usage limit reached",
        Mend.Reason.BILLING: "Credit used up",
        Mend.Reason.CANCELLED: _("Stopped"),
    }.get(reason, _("Unknown error"))


def subagent_words(state):
    return {
        Mend.SubagentState.RUNNING: "Running",
        Mend.SubagentState.COMPLETED: "Done",
        Mend.SubagentState.FAILED: "Failed",
        Mend.SubagentState.CANCELLED: "Cancelled",
    }.get(state, "")


def status_words(chat):
    """The chat's state as the header bar's subtitle says it."""
    lifecycle, turn = chat.props.lifecycle, chat.props.turn
    if lifecycle == Mend.Lifecycle.BUSY and turn is not None:
        return {
            Mend.TurnState.RUNNING: "Waiting for the model",
            Mend.TurnState.WAITING: "Waiting to retry",
        }.get(turn.props.state, "Working")
    return {
        Mend.Lifecycle.READY: "Ready",
        Mend.Lifecycle.BUSY: "Working",
        Mend.Lifecycle.ERROR: "Gave up",
        Mend.Lifecycle.CLOSED: "Closed",
    }.get(lifecycle, "")


def attempts_words(n):
    return f"{n} attempt{'s' if n != 1 else ''}"


# The backends the header bar's menu offers, in its order.
BACKEND_HTTP, BACKEND_ACP = "http", "acp"


def backend_words(backend, opts):
    if backend == BACKEND_ACP:
        return "Claude Code (ACP)"
    return "Your endpoint" if opts.url else "Test server"


def request_words(method):
    """What an agent's request to the app asks, in words."""
    return {
        "session/request_permission": "asked for permission to use a tool",
        "fs/read_text_file": "asked to read a file",
        "fs/write_text_file": "asked to write a file",
    }.get(method, f"asked “{method}”")


def adapter_found(path):
    return os.access(path, os.X_OK) or (os.sep not in path and shutil.which(path) is not None)


def default_adapter():
    """claude-code-acp: $MEND_CLAUDE_CODE_ACP, else the one tools/setup.sh
    installs next to this source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("MEND_CLAUDE_CODE_ACP") or os.path.join(
        here, os.pardir, ".agents", "claude-code-acp", "node_modules", ".bin", "claude-code-acp")


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


def user_words(body):
    """The prompt of a Messages API request: the last user message's last
    text block (Claude Code puts its own reminders in blocks of their own)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [block.get("text", "") for block in content or []
                 if isinstance(block, dict) and block.get("type") == "text"
                 and not block.get("text", "").startswith("<system-reminder>")]
        return texts[-1] if texts else ""
    return ""


class FlakyServer:
    """A model API on 127.0.0.1 that streams Anthropic-style server-sent
    events, complete enough for Claude Code too."""

    def __init__(self):
        self.server = Soup.Server()
        self.server.add_handler("/v1/messages", self.serve)
        self.server.listen_local(0, Soup.ServerListenOptions.IPV4_ONLY)
        self.base_url = f"http://127.0.0.1:{self.server.get_uris()[0].get_port()}"
        self.url = self.base_url + "/v1/messages"
        self.turns = {}        # the turn's key → the replies left for that turn
        self.n_turns = 0
        self.last_prompt = None

    def serve(self, server, msg, path, query):
        if path.endswith("/count_tokens"):         # Claude Code asks now and then
            msg.set_status(200, None)
            msg.set_response("application/json", Soup.MemoryUse.COPY, b'{"input_tokens":12}')
            return
        body = json.loads(msg.get_request_body().flatten().get_data() or b"{}")
        prompt = user_words(body)
        # An agent that kept a failed prompt is asked to continue it on a
        # retry: the same turn.
        if prompt == Mend.CHAT_DEFAULT_CONTINUE_PROMPT and self.last_prompt is not None:
            prompt = self.last_prompt
        self.last_prompt = prompt
        # Every attempt of a turn carries the same Idempotency-Key (or, from
        # Claude Code, the same prompt), so the script follows turns, not
        # requests.
        key = msg.get_request_headers().get_one("Idempotency-Key") or "prompt:" + prompt
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
        events = [("message_start", {"type": "message_start", "message": {
                      "id": "msg_flaky", "type": "message", "role": "assistant",
                      "model": body.get("model", "claude-sonnet-4-5"), "content": [],
                      "stop_reason": None, "stop_sequence": None,
                      "usage": {"input_tokens": 12, "output_tokens": 1}}}),
                  ("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})]
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                            "delta": {"type": "text_delta", "text": word + " "}})
                   for word in answer.split(" ")]
        events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                   ("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                      "usage": {"output_tokens": len(answer.split(" "))}}),
                   ("message_stop", {"type": "message_stop"})]
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


def label(text="", css=(), wrap=False, **props):
    widget = Gtk.Label(label=text, xalign=0, css_classes=list(css), **props)
    if wrap:
        widget.set_wrap(True)
        widget.set_wrap_mode(Pango.WrapMode.WORD_CHAR)
    else:
        widget.set_ellipsize(Pango.EllipsizeMode.END)
    return widget


def box(*children, vertical=False, **props):
    orientation = Gtk.Orientation.VERTICAL if vertical else Gtk.Orientation.HORIZONTAL
    container = Gtk.Box(orientation=orientation, **props)
    for child in children:
        container.append(child)
    return container


def list_or_placeholder(model, create_row, title, description):
    """A boxed list of @model's rows, or a status page while @model is empty."""
    rows = Gtk.ListBox(css_classes=["boxed-list"], selection_mode=Gtk.SelectionMode.NONE,
                       valign=Gtk.Align.START, margin_start=6, margin_end=6,
                       margin_top=6, margin_bottom=6)
    rows.bind_model(model, create_row)
    stack = Gtk.Stack(vexpand=True)
    stack.add_named(Gtk.ScrolledWindow(child=rows, hscrollbar_policy=Gtk.PolicyType.NEVER),
                    "list")
    # No icon: two of these share the side pane's height.
    stack.add_named(Adw.StatusPage(title=title, description=description,
                                   css_classes=["compact"]), "empty")

    def update(*args):
        stack.set_visible_child_name("list" if model.get_n_items() else "empty")
    model.connect("items-changed", update)
    update()
    return stack


class ChatWindow:
    """One chat on one backend, drawn in @window (made when None). Switching
    backends makes a new ChatWindow in the same window."""

    def __init__(self, app, opts, backend, window=None):
        self.app, self.opts, self.backend = app, opts, backend
        self.wait = None           # the turn's current Mend.RetryWait, if any
        self.wait_binding = None   # its remaining-seconds → the banner's title
        self.progress = None       # the banner's progress bar animation
        self.answer = None         # the label the streamed answer goes into
        self.screenshot_pending = bool(opts.screenshot)
        self.home = None           # the ACP adapter's private home, offline

        # The embedded server, shared by the backends (None with --url and
        # a real Claude Code).
        if backend == BACKEND_ACP:
            self.server = None if opts.acp_online else app.get_server()
        else:
            self.server = None if opts.url else app.get_server()
        # Scripted subagents (stream-json fed to an observer) only with the
        # test server: over ACP the agent's own updates report them.
        self.simulated = backend == BACKEND_HTTP and self.server is not None
        self.agent = None
        if backend == BACKEND_ACP:
            self.sender = self.agent = self.make_acp_agent()
        else:
            self.sender = Mend.HttpSender.new(opts.url or self.server.url)
            for header in opts.header:
                name, _unused, value = header.partition(":")
                self.sender.set_header(name.strip(), value.strip())
            self.sender.connect("content", self.on_content)

        # The chat owns the queue, the turn and its retries, and the subagents.
        # An agent sender feeds this chat: the chat attaches itself.
        self.chat = Mend.Chat.new_with_sender(self.sender, None)
        self.chat.connect("turn-started", self.on_turn_started)
        self.chat.connect("turn-finished", self.on_turn_finished)
        self.chat.connect("notify::lifecycle", lambda *args: self.update_status())
        self.queue = self.chat.props.queue
        self.queue.connect("items-changed", lambda *args: self.update_status())
        self.subagents = self.chat.props.subagents
        self.observer = Mend.StreamObserver.new(self.chat)

        self.build_ui(window)
        self.update_status()

    def make_acp_agent(self):
        agent = Mend.AcpAgent.new_claude_code(self.opts.acp_adapter)
        if not self.opts.acp_online:
            # Offline: a private home, the embedded server, a key that is not
            # one, and every retry left to libmend (Claude Code's own retries
            # would hide the failures from it).
            self.home = tempfile.mkdtemp(prefix="gtk-chat-acp-")
            env = [f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}", f"HOME={self.home}",
                   "LANG=C.UTF-8", f"ANTHROPIC_BASE_URL={self.server.base_url}",
                   "ANTHROPIC_API_KEY=sk-ant-example-not-a-key",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0"]
            if os.geteuid() == 0:   # the adapter refuses to run as root otherwise
                env.append("IS_SANDBOX=1")
            agent.set_environ(env)
            agent.set_cwd(self.home)
        agent.connect("update", self.on_agent_update)
        agent.connect("request", self.on_agent_request)
        return agent

    def teardown(self):
        """Ends this chat and its agent; the window stays for the next one."""
        self.window.disconnect(self.close_handler)
        self.show_wait(None)
        self.chat.close()
        if self.agent is not None:
            self.agent.terminate()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None

    def build_ui(self, window):
        self.window = window or Adw.ApplicationWindow(application=self.app, title="libmend chat",
                                                      default_width=900, default_height=600)
        self.close_handler = self.window.connect("close-request",
                                                 lambda w: self.chat.close() or False)

        # Actions: the toast's and the header bar's buttons activate them.
        self.try_again = Gio.SimpleAction(name="try-again", enabled=False)
        # Try again applies while the chat says it can retry.
        self.chat.bind_property("can-retry", self.try_again, "enabled", GObject.BindingFlags.SYNC_CREATE)
        self.try_again.connect("activate", self.on_try_again)
        self.window.add_action(self.try_again)
        send_next = Gio.SimpleAction(name="send-next")
        send_next.connect("activate", lambda *args: self.send_next())
        self.window.add_action(send_next)

        self.title = Adw.WindowTitle(title="libmend chat")
        header = Adw.HeaderBar(title_widget=self.title)
        try_again = Gtk.Button(label="Try again", action_name="win.try-again",
                               tooltip_text="Send the prompt that gave up once more")
        self.try_again.bind_property("enabled", try_again, "visible",
                                     GObject.BindingFlags.SYNC_CREATE)
        header.pack_start(try_again)
        # Where prompts go. Switching starts a new chat on the other backend.
        self.backends = [BACKEND_HTTP, BACKEND_ACP]
        self.picker = Gtk.DropDown.new_from_strings([backend_words(b, self.opts)
                                                     for b in self.backends])
        self.picker.set_selected(self.backends.index(self.backend))
        self.picker.set_tooltip_text("Where your prompts go; switching starts a new chat")
        self.picker.connect("notify::selected", self.on_backend_picked)
        header.pack_end(self.picker)

        # The banner: revealed only while the turn waits to retry. (AdwBanner
        # is libadwaita 1.3; this is a card with the same content.)
        self.banner_title = label(css=["heading"])
        self.banner_detail = label(css=["dim-label"])
        self.banner_progress = Gtk.ProgressBar(margin_top=4)
        self.banner_progress.connect("map", self.animate_progress)
        retry_now = Gtk.Button(label="Retry now", valign=Gtk.Align.CENTER,
                               css_classes=["suggested-action"])
        retry_now.connect("clicked", lambda b: self.chat.props.turn
                          and self.chat.props.turn.retry_now())
        stop = Gtk.Button(label="Stop", valign=Gtk.Align.CENTER,
                          tooltip_text="No more retries; the queue is kept")
        stop.connect("clicked", lambda b: self.chat.stop())
        icon = Gtk.Image(icon_name="emblem-synchronizing-symbolic", pixel_size=32,
                         css_classes=["accent"], valign=Gtk.Align.CENTER)
        content = box(icon,
                      box(self.banner_title, self.banner_detail, self.banner_progress,
                          vertical=True, hexpand=True, spacing=2, valign=Gtk.Align.CENTER),
                      retry_now, stop,
                      spacing=12, margin_start=12, margin_end=12, margin_top=12,
                      margin_bottom=12)
        self.banner = Gtk.Revealer(
            transition_type=Gtk.RevealerTransitionType.SLIDE_DOWN,
            child=box(content, css_classes=["card"], margin_start=12, margin_end=12,
                      margin_top=12, margin_bottom=6))
        self.banner.connect("notify::child-revealed", lambda *args: self.maybe_screenshot())

        # The transcript: prompts, streamed answers, what became of each turn.
        self.transcript = box(vertical=True, spacing=6, margin_start=18, margin_end=18,
                              margin_top=12, margin_bottom=12)
        scroller = Gtk.ScrolledWindow(child=self.transcript, vexpand=True,
                                      hscrollbar_policy=Gtk.PolicyType.NEVER)
        scroller.get_vadjustment().connect(       # follow the newest line
            "changed", lambda adj: adj.set_value(adj.get_upper() - adj.get_page_size()))
        self.transcript_stack = Gtk.Stack(css_classes=["view"])
        if self.backend == BACKEND_ACP:
            title, description = "Ask Claude Code", (
                "Claude Code answers through its ACP adapter. When the model's upstream "
                "fails for a moment, the turn is retried in the same session and your "
                "follow-ups keep their place.")
        else:
            title, description = "Ask the model", (
                "When its upstream fails for a moment, the turn is retried and your "
                "follow-ups keep their place.")
        self.transcript_stack.add_named(
            Adw.StatusPage(icon_name="mail-send-symbolic", title=title, description=description),
            "empty")
        self.transcript_stack.add_named(scroller, "transcript")

        # The side: the queue (Mend.Queue is a Gio.ListModel of Mend.QueueItem)
        # and the subagents (Mend.SubagentRetry, a Gio.ListModel of Mend.Subagent).
        self.queue_count = label(css=["dim-label"], hexpand=True)
        side = box(box(label("Queued follow-ups", css=["heading"]), self.queue_count, spacing=6,
                       margin_start=6, margin_end=6),
                   list_or_placeholder(self.queue, self.queue_row, "Nothing queued",
                                       "Messages sent while a turn runs wait here"),
                   label("Subagents", css=["heading"], margin_start=6, margin_end=6),
                   list_or_placeholder(self.subagents, self.subagent_row, "No subagents",
                                       "Subagents that fail for a moment are resumed here"),
                   vertical=True, spacing=6, margin_start=6, margin_end=12, margin_top=12,
                   margin_bottom=12)
        if self.simulated:
            fail = Gtk.Button(label="Simulate a subagent failing on a 503",
                              margin_start=6, margin_end=6)
            fail.connect("clicked", lambda b: self.feed_agent(TASK_STARTED, TASK_FAILED))
            side.append(fail)
        panes = Gtk.Paned(vexpand=True, position=540, shrink_end_child=False,
                          resize_end_child=False,
                          start_child=self.transcript_stack, end_child=side)

        # The composer. Send with an empty composer sends the queue's head:
        # after a Stop or a give-up the queue waits for the user to say so.
        self.entry = Gtk.Entry(hexpand=True, placeholder_text="Ask, or queue a follow-up…")
        self.entry.connect("activate", self.on_send)
        self.send_button = Gtk.Button(label="Send", css_classes=["suggested-action"])
        self.send_button.connect("clicked", self.on_send)
        composer = box(self.entry, self.send_button, spacing=6, margin_start=12,
                       margin_end=12, margin_top=6, margin_bottom=12)

        self.toasts = Adw.ToastOverlay(
            child=box(self.banner, panes, Gtk.Separator(), composer, vertical=True))
        self.window.set_content(box(header, self.toasts, vertical=True))

    def toast(self, title, button=None, action=None):
        # A toast's title is Pango markup; error messages are plain text.
        toast = Adw.Toast(title=GLib.markup_escape_text(title), priority=Adw.ToastPriority.HIGH)
        if button:
            toast.set_button_label(button)
            toast.set_action_name(action)
        self.toasts.add_toast(toast)

    # Queue rows: an AdwEntryRow each; Enter (or its apply button) saves the edit.

    def queue_row(self, item):
        queued_at = GLib.DateTime.new_from_unix_local(item.props.queued_at // 1000000)
        row = Adw.EntryRow(title=f"Queued at {queued_at.format('%H:%M')}",
                           show_apply_button=True, use_markup=False)
        item.bind_property("text", row, "text", GObject.BindingFlags.SYNC_CREATE)
        row.connect("apply", self.on_queue_edited, item.props.id)
        remove = Gtk.Button(icon_name="user-trash-symbolic", valign=Gtk.Align.CENTER,
                            css_classes=["flat"], tooltip_text="Remove from the queue")
        remove.connect("clicked", self.on_queue_remove, item.props.id)
        row.add_suffix(remove)
        return row

    def on_queue_remove(self, button, item_id):
        try:
            self.queue.remove(item_id)
        except GLib.Error as e:        # sent or removed meanwhile
            self.toast(e.message)

    def on_queue_edited(self, row, item_id):
        text = row.get_text()
        # The row is replaced when its item changes: give the focus back first.
        self.entry.grab_focus()
        try:
            # The queue normalizes the text, and refuses a blank or huge one.
            self.queue.replace_text(item_id, text)
        except GLib.Error as e:
            self.toast(e.message)
            item = self.queue.find(item_id)
            if item is not None:
                row.set_text(item.props.text)

    # Subagent rows: Mend.SubagentRetry re-announces a subagent (items-changed)
    # whenever it changes, so each change makes a new row.

    def subagent_row(self, subagent):
        row = Adw.ActionRow(title=subagent.props.name or subagent.props.id, use_markup=False,
                            subtitle_lines=2)
        retry = subagent.props.retry
        if retry is not None and retry.props.state == Mend.RetryWaitState.PENDING:
            state = subagent_words(subagent.props.state)
            # Counts down with the wait; the binding goes with the row.
            retry.bind_property("remaining-seconds", row, "subtitle",
                                GObject.BindingFlags.SYNC_CREATE,
                                lambda binding, seconds: f"{state} · {retry.describe()}")
        elif subagent.props.state == Mend.SubagentState.FAILED and subagent.props.failure:
            row.set_subtitle(f"{subagent_words(subagent.props.state)} · "
                             f"{reason_words(subagent.props.failure.props.reason)}")
        else:
            row.set_subtitle(subagent_words(subagent.props.state))
        button = Gtk.Button(label="Retry", valign=Gtk.Align.CENTER,
                            visible=subagent.props.state != Mend.SubagentState.COMPLETED,
                            sensitive=subagent.props.retryable)
        button.connect("clicked", self.on_subagent_retry, subagent.props.id)
        row.add_suffix(button)
        return row

    def subagent_name(self, subagent_id):
        for i in range(self.subagents.get_n_items()):
            subagent = self.subagents.get_item(i)
            if subagent.props.id == subagent_id:
                return subagent.props.name or subagent_id
        return subagent_id

    def on_subagent_retry(self, button, subagent_id):
        try:
            self.subagents.resume_now(subagent_id)   # one click, one attempt
        except GLib.Error as e:
            self.toast(e.message)

    def feed_agent(self, *lines):
        for line in lines:
            self.observer.feed_line(json.dumps(line), -1)
        return GLib.SOURCE_REMOVE

    # The transcript

    def note(self, text, css=("dim-label",)):
        self.transcript_stack.set_visible_child_name("transcript")
        line = label(text, css=css, wrap=True)
        self.transcript.append(line)
        return line

    # The chat's signals

    def on_turn_started(self, chat, turn):
        # Once per turn, never per attempt: retries add no second user line.
        provenance = json.loads(turn.props.provenance or "{}")
        if provenance.get("kind") == "subagent_retry":
            name = self.subagent_name(provenance["subagentId"])
            self.note(f"Asking the agent to resume “{name}”")
            if self.simulated:                 # the scripted agent resumes it
                self.feed_agent(TASK_STARTED)
        else:
            self.note(turn.props.prompt, css=["heading"]).set_margin_top(12)
        self.answer = None
        turn.connect("waiting", self.on_waiting)
        turn.connect("resumed", lambda t, n: self.note(
            f"Attempt {n} of {t.props.max_attempts}, same prompt"))
        turn.connect("notify::state", lambda *args: self.update_status())

    def on_waiting(self, turn, wait):
        failure = wait.props.failure
        self.note(f"Attempt {turn.props.attempt} failed: {reason_words(wait.props.reason)}"
                  f"{' (' + failure.props.message + ')' if failure else ''}")
        self.show_wait(wait)

    def show_wait(self, wait):
        """Shows @wait in the banner, or hides the banner for None."""
        if self.wait_binding is not None:
            self.wait_binding.unbind()
            self.wait_binding = None
        if self.progress is not None:
            self.progress.pause()
            self.progress = None
        self.wait = wait
        self.banner.set_reveal_child(wait is not None)
        if wait is None:
            return
        # describe() is translated and says e.g. "Retrying in 4 s (retry 1 of 4)";
        # the wait notifies remaining-seconds each time the number drops.
        self.wait_binding = wait.bind_property(
            "remaining-seconds", self.banner_title, "label", GObject.BindingFlags.SYNC_CREATE,
            lambda binding, seconds: wait.describe())
        failure = wait.props.failure
        self.banner_detail.set_text(reason_words(wait.props.reason) +
                                    (f" · {failure.props.message}" if failure else ""))
        if self.banner_progress.get_mapped():
            self.animate_progress()
        wait.connect("fired", self.on_wait_ended)
        wait.connect("cancelled", self.on_wait_ended)
        self.maybe_screenshot()

    def animate_progress(self, *args):
        """Fills the bar as the wait runs out, on the frame clock."""
        if self.wait is None or self.progress is not None:
            return
        # An animation only runs on a mapped widget (the revealed banner).
        left, delay = self.wait.get_remaining_ms(), max(self.wait.props.delay_ms, 1)
        self.progress = Adw.TimedAnimation(
            widget=self.banner_progress, value_from=1 - left / delay, value_to=1,
            duration=max(left, 1), easing=Adw.Easing.LINEAR,
            target=Adw.PropertyAnimationTarget.new(self.banner_progress, "fraction"))
        self.progress.play()

    def on_wait_ended(self, wait):
        if wait is self.wait:
            self.show_wait(None)

    def on_content(self, sender, turn, event):
        # A streamed event, or the whole body of an answer that is not a stream.
        try:
            data = json.loads(event)
        except ValueError:
            data, text = {}, event
        else:
            text = data.get("delta", {}).get("text")
        if text is None and data.get("content"):                   # Anthropic, whole
            text = data["content"][0].get("text")
        if text is None and data.get("choices"):                   # OpenAI style
            choice = data["choices"][0]
            text = (choice.get("delta") or choice.get("message") or {}).get("content")
        if text:
            self.add_answer(text)

    def add_answer(self, text):
        if self.answer is None:
            self.answer = self.note("", css=[])
        self.answer.set_text(self.answer.get_text() + text)

    # Claude Code over ACP: its session/update notifications and its requests

    def on_agent_update(self, agent, kind, update_json):
        update = json.loads(update_json)
        if kind == "agent_message_chunk":
            text = (update.get("content") or {}).get("text")
            if text:
                self.add_answer(text)
        elif kind == "tool_call":
            self.note(f"Claude Code uses a tool: {update.get('title') or 'untitled'}")

    def on_agent_request(self, agent, method, params, request):
        # Unanswered, libmend denies it: this example grants nothing.
        self.note(f"Claude Code {request_words(method)}: refused, this window grants none")
        return False

    def on_backend_picked(self, picker, pspec):
        backend = self.backends[picker.get_selected()]
        if backend == self.backend:
            return
        if backend == BACKEND_ACP and not adapter_found(self.opts.acp_adapter):
            self.toast("Claude Code's ACP adapter is not installed: run tools/setup.sh, "
                       "or set MEND_CLAUDE_CODE_ACP")
            picker.set_selected(self.backends.index(self.backend))
            return
        self.teardown()
        self.app.chat_window = ChatWindow(self.app, self.opts, backend, self.window)

    def on_turn_finished(self, chat, turn):
        self.show_wait(None)
        answer = self.answer.get_text() if self.answer is not None else ""
        self.answer = None
        state, n, failure = turn.props.state, turn.props.attempt, turn.props.last_failure
        resume = "subagent_retry" in (turn.props.provenance or "")
        if state == Mend.TurnState.SUCCEEDED:
            self.note(f"Answered after {attempts_words(n)}", css=["dim-label", "success"])
        elif state == Mend.TurnState.STOPPED:
            self.note("Stopped: no more retries. The queue is kept; Send sends its head.")
        else:
            why = reason_words(failure.props.reason) if failure else _("Unknown error")
            self.note(f"Gave up after {attempts_words(n)}: {why}"
                      f"{' (' + failure.props.message + ')' if failure else ''}", css=["error"])
            if self.queue.get_n_items():
                self.toast(f"Gave up: {why}", "Continue", "win.send-next")
            elif self.chat.props.can_retry and not resume:
                self.toast(f"Gave up: {why}", "Try again", "win.try-again")
            else:
                self.toast(f"Gave up: {why}")
        if self.simulated and resume:
            # The scripted agent's resumed subagent finishes a little later.
            GLib.timeout_add_seconds(3, self.feed_agent, TASK_DONE)
        self.update_status()
        if self.opts.one_turn:
            self.report_one_turn(turn, answer)

    def update_status(self):
        lifecycle = self.chat.props.lifecycle
        self.title.set_subtitle(status_words(self.chat))
        self.send_button.set_label("Queue" if lifecycle == Mend.Lifecycle.BUSY else "Send")
        n = self.queue.get_n_items()
        self.queue_count.set_text(str(n) if n else "")

    def on_try_again(self, action, parameter):
        # The turn that gave up (or was stopped) runs again: its prompt is
        # sent once, and a Continue its give-up queued is taken out.
        try:
            self.chat.retry()
        except GLib.Error as e:
            self.toast(e.message)
        self.update_status()

    def send_next(self):
        if not self.chat.send_next():
            self.toast("Nothing is queued")

    def on_send(self, widget):
        text = self.entry.get_text()
        try:
            if not text.strip():
                return self.send_next()
            self.chat.submit(text, None)       # runs now when idle, else queues
            self.entry.set_text("")
        except GLib.Error as e:
            self.toast(e.message)

    # --one-turn: one prompt on the backend, what became of it, and quit

    def start_one_turn(self):
        self.chat.submit("Fix the failing build", None)
        GLib.timeout_add(int(self.opts.timeout * 1000), self.quit, 1, "no answer in time")

    def report_one_turn(self, turn, answer):
        words = f"after {attempts_words(turn.props.attempt)} through {backend_words(self.backend, self.opts)}"
        if self.agent is not None:
            n = self.agent.props.n_starts
            words += f", Claude Code started {n} time{'s' if n != 1 else ''}"
        if turn.props.state != Mend.TurnState.SUCCEEDED:
            failure = turn.props.last_failure
            return self.quit(1, f"not answered {words}: "
                                f"{failure.props.message if failure else turn.props.state}")
        self.quit(0, f"answered {words}: {answer.strip()}")

    # --screenshot: drive one retry, then render the window into a PNG

    def start_screenshot(self):
        self.feed_agent(TASK_STARTED, TASK_FAILED)
        self.chat.submit("Fix the failing build", None)
        self.chat.submit("Then update the changelog", None)     # queued: a turn runs
        GLib.timeout_add(int(self.opts.timeout * 1000), self.quit, 1, "no countdown in time")

    def maybe_screenshot(self):
        """Saves the screenshot once the banner is fully shown over a queue."""
        if not (self.screenshot_pending and self.wait and self.banner.get_child_revealed()
                and self.queue.get_n_items()):
            return
        self.screenshot_pending = False
        # A Gtk.WidgetPaintable draws the widget's last painted frame: render
        # right after GTK has painted the banner.
        self.paint_handler = self.window.get_frame_clock().connect("after-paint", self.on_painted)
        self.window.queue_draw()

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
    scheme = parser.add_mutually_exclusive_group()
    scheme.add_argument("--dark", action="store_true",
                        help="use the dark style, whatever the system prefers")
    scheme.add_argument("--light", action="store_true",
                        help="use the light style, whatever the system prefers")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="drive one retry against the embedded server, save the window "
                             "as a PNG once the countdown shows, and quit")
    parser.add_argument("--acp", action="store_true",
                        help="start with Claude Code over the Agent Client Protocol as the backend")
    parser.add_argument("--acp-adapter", metavar="PATH", default=default_adapter(),
                        help="the claude-code-acp program (default: $MEND_CLAUDE_CODE_ACP, "
                             "else the one tools/setup.sh installed)")
    parser.add_argument("--acp-online", action="store_true",
                        help="run Claude Code with your own environment and account, "
                             "not against the embedded server")
    parser.add_argument("--one-turn", action="store_true",
                        help="send one prompt on the backend, say what became of it, and quit "
                             "(exit 0 when it was answered)")
    parser.add_argument("--timeout", type=float, default=30, metavar="S",
                        help="with --screenshot or --one-turn: exit 1 unless done within S s")
    opts = parser.parse_args()
    if opts.screenshot and opts.url:
        parser.error("--screenshot runs against the embedded server; drop --url")
    if opts.screenshot and (opts.acp or opts.one_turn):
        parser.error("--screenshot drives the test server's story; drop --acp and --one-turn")
    if opts.acp and not hasattr(Mend, "AcpAgent"):
        parser.error("this libmend was built without the Agent Client Protocol (-Dacp=disabled)")
    if opts.acp and not adapter_found(opts.acp_adapter):
        parser.error(f"no claude-code-acp at {opts.acp_adapter}: run tools/setup.sh, "
                     "or give --acp-adapter PATH")

    # NON_UNIQUE: every run is its own instance (tests may run side by side).
    app = Adw.Application(application_id="org.example.MendChat",
                          flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.exit_status = 0
    app.chat_window = None
    servers = []

    def get_server():
        """The embedded server, started when a backend first needs it."""
        if not servers:
            servers.append(FlakyServer())
        return servers[0]
    app.get_server = get_server

    def on_activate(app):
        if opts.dark or opts.light:
            Adw.StyleManager.get_default().set_color_scheme(
                Adw.ColorScheme.FORCE_DARK if opts.dark else Adw.ColorScheme.FORCE_LIGHT)
        app.chat_window = ChatWindow(app, opts, BACKEND_HTTP)
        if opts.acp:       # as if picked in the header bar's menu
            app.chat_window.picker.set_selected(app.chat_window.backends.index(BACKEND_ACP))
        app.chat_window.window.present()
        if opts.screenshot:
            app.chat_window.start_screenshot()
        elif opts.one_turn:
            app.chat_window.start_one_turn()

    def on_shutdown(app):
        if app.chat_window is not None:       # ends the agent, removes its home
            app.chat_window.teardown()

    app.connect("activate", on_activate)
    app.connect("shutdown", on_shutdown)
    app.run([sys.argv[0]])          # the options are ours, not GApplication's
    return app.exit_status


if __name__ == "__main__":
    sys.exit(main())
