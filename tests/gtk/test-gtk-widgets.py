#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-gtk-widgets.py — MendGtk.StatusBanner and MendGtk.QueueView, used as
# a person would, against a loopback OpenAI Chat Completions server.
#
# A window holds the banner, the queue view and an entry; each prompt is
# typed into the entry and Enter pressed, each button activated as a click
# would. What the server answers depends on the prompt:
#
#   quick   a 503 without a hint, then the answer: retried in under a
#           second, the banner never shows
#   busy    a 503 with Retry-After: 2: the banner shows the wait ticking
#           (2 s, then 1 s), and hides when the answer comes
#   slow    a 503 with Retry-After: 30: "Retry now" runs it at once; the
#           follow-ups typed meanwhile are rows in order, one removed,
#           one edited
#   refused a 401 the first time: the banner says the key was refused,
#           Details shows the server's text, the Continue row is marked
#           apart, and Retry runs the turn again
#   quota   a 429 insufficient_quota: the banner shows the limit
#   stop    a 503 with Retry-After: 30: Stop ends it, the banner hides
#   held    another chat on the same MendGate saw Retry-After: 30: the
#           banner, given this chat, says the service is awaited, Stop
#
# Then the banner's buttons in German, in a process of its own.
#
# Each state is saved as a PNG in OUTDIR and checked not to be blank; the
# banner's light and dark screenshots go there too (docs/ has copies).
#
# usage: test-gtk-widgets.py OUTDIR   (under xvfb-run; see meson.build)

import ctypes
import os
import subprocess
import sys
import time

import gi

gi.require_versions({"Gtk": "4.0", "GdkPixbuf": "2.0", "Graphene": "1.0", "Mend": "1", "MendGtk": "1"})
from gi.repository import GdkPixbuf, GLib, Graphene, Gtk, Mend, MendGtk  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import chat_completions_server  # noqa: E402

outdir = sys.argv[1] if len(sys.argv) > 1 else "."
if len(sys.argv) > 2 and sys.argv[2] == "german":
    # The widgets' words in German, from the catalogue built in the tree.
    banner = MendGtk.StatusBanner()
    found, stack = [], [banner]
    while stack:
        widget = stack.pop()
        if isinstance(widget, Gtk.Button) and widget.get_label():
            found.append(widget.get_label())
        child = widget.get_first_child()
        while child is not None:
            stack.append(child)
            child = child.get_next_sibling()
    expected = ["Details", "Erneut versuchen", "Jetzt erneut versuchen", "Stopp"]
    print("# German buttons:", sorted(found))
    sys.exit(0 if sorted(found) == expected else 1)
os.makedirs(outdir, exist_ok=True)
failures = []
test_number = 0


def check(condition, message):
    global test_number
    test_number += 1
    print("%s %d - %s" % ("ok" if condition else "not ok", test_number, message))
    if not condition:
        failures.append(message)
    return condition


# --- The server: what it answers depends on the prompt and how often it was asked.
asked = {}
QUOTA = ('{"error":{"message":"You exceeded your current quota, please check your plan and billing details.",'
         '"type":"insufficient_quota","param":null,"code":"insufficient_quota"}}')
REFUSED = ('{"error":{"message":"Incorrect API key provided: sk-proj-****.","type":"invalid_request_error",'
           '"param":null,"code":"invalid_api_key"}}')
BUSY = '{"error":{"message":"server busy, please try again","type":"server_error"}}'


def answer_for(prompt, n):
    if prompt == "quick" and n == 1:
        return 503, {}, BUSY
    if prompt == "busy" and n == 1:
        return 503, {"Retry-After": "2"}, BUSY
    if prompt in ("slow", "stop", "hinted") and n == 1:
        return 503, {"Retry-After": "30"}, BUSY
    if prompt == "refused" and n == 1:
        return 401, {}, REFUSED
    if prompt == "quota":
        return 429, {}, QUOTA
    return 200, {}, "Answer to %s." % prompt


def respond(body):
    # A turn after a give-up carries the failed prompt too, in the same message.
    prompt = body["messages"][-1]["content"].split("\n")[-1]
    asked[prompt] = asked.get(prompt, 0) + 1
    return answer_for(prompt, asked[prompt])


server, url = chat_completions_server.start(respond)


# --- Helpers: the main loop, the widget tree, screenshots.
context = GLib.MainContext.default()
GLib.timeout_add(20, lambda: True)  # the loop wakes up while a test waits


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        context.iteration(True)


def spin_until(condition, what, timeout=15):
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            check(False, "within %d s: %s" % (timeout, what))
            return False
        context.iteration(True)
    return True


def descendants(widget):
    found = [widget]
    child = widget.get_first_child()
    while child is not None:
        found += descendants(child)
        child = child.get_next_sibling()
    return found


def with_class(widget, css_class, kind=Gtk.Widget):
    return [w for w in descendants(widget) if isinstance(w, kind) and w.has_css_class(css_class)]


def button(widget, label):
    return [w for w in descendants(widget) if isinstance(w, Gtk.Button) and w.get_label() == label][0]


def shown(widget):
    """Visible on screen: mapped, and every revealer above it revealed."""
    if not widget.get_mapped():
        return False
    parent = widget
    while parent is not None:
        if isinstance(parent, Gtk.Revealer) and not parent.get_child_revealed():
            return False
        parent = parent.get_parent()
    return True


# PyGObject cannot hold a GskRenderNode: the node is made and rendered
# through GTK's C API.
gtk_c = ctypes.CDLL("libgtk-4.so.1")
gtk_c.gtk_snapshot_to_node.restype = ctypes.c_void_p
gtk_c.gtk_snapshot_to_node.argtypes = [ctypes.c_void_p]
gtk_c.gsk_renderer_render_texture.restype = ctypes.c_void_p
gtk_c.gsk_renderer_render_texture.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
gtk_c.gdk_texture_save_to_png.restype = ctypes.c_bool
gtk_c.gdk_texture_save_to_png.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
gtk_c.gsk_render_node_unref.argtypes = [ctypes.c_void_p]
gtk_c.g_object_unref.argtypes = [ctypes.c_void_p]
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def pointer(gobject):
    return ctypes.pythonapi.PyCapsule_GetPointer(gobject.__gpointer__, None)


def render_to_png(snapshot, renderer, path):
    node = gtk_c.gtk_snapshot_to_node(pointer(snapshot))
    if node is None:
        return False
    texture = gtk_c.gsk_renderer_render_texture(pointer(renderer), node, None)
    gtk_c.gdk_texture_save_to_png(texture, path.encode())
    gtk_c.g_object_unref(texture)
    gtk_c.gsk_render_node_unref(node)
    return True


def render(widget, path, background):
    """Renders @widget as it is now into @path; returns how many distinct
    colours the picture has."""
    width, height = widget.get_width(), widget.get_height()
    snapshot = Gtk.Snapshot()
    if background:
        found, color = widget.get_style_context().lookup_color("theme_bg_color")
        if found:
            snapshot.append_color(color, Graphene.Rect().init(0, 0, width, height))
    Gtk.WidgetPaintable.new(widget).snapshot(snapshot, width, height)
    if not render_to_png(snapshot, widget.get_native().get_renderer(), path):
        return 0
    pixbuf = GdkPixbuf.Pixbuf.new_from_file(path)
    pixels = pixbuf.get_pixels()
    n, stride = pixbuf.get_n_channels(), pixbuf.get_rowstride()
    return len({pixels[y * stride + x * n:y * stride + x * n + n]
                for y in range(0, pixbuf.get_height(), 2) for x in range(0, pixbuf.get_width(), 2)})


def screenshot(widget, name, background=True):
    """Saves @widget as it is now as OUTDIR/@name.png; checks the picture
    is not blank (more than one distinct colour)."""
    path = os.path.join(outdir, name + ".png")
    if not check(widget.get_width() > 0 and widget.get_height() > 0, "%s: the widget has a size" % name):
        return None
    # A widget caught between a change and its next frame draws nothing
    # yet: a few frames' grace.
    for attempt in range(10):
        spin(0.1)
        colors = render(widget, path, background)
        if colors > 1:
            break
    check(colors > 1, "screenshot %s is not blank (%d colours, %dx%d)"
          % (name, colors, widget.get_width(), widget.get_height()))
    return path


# --- The window: a person's view of a chat.
chat = Mend.Chat(sender=Mend.HttpSender(uri=url, model="test-model"))
banner = MendGtk.StatusBanner(chat=chat)
queue_view = MendGtk.QueueView(chat=chat)
entry = Gtk.Entry(placeholder_text="Ask, and press Enter")
transcript = Gtk.Label(xalign=0, wrap=True, vexpand=True, valign=Gtk.Align.START)
# Enter sends the text, or with none the queue's head (after a give-up or a Stop).
entry.connect("activate", lambda e: (chat.submit(e.get_text(), None) if e.get_text() else chat.send_next(),
                                     e.set_text("")))
chat.connect("text-delta", lambda c, turn, text: transcript.set_label(transcript.get_label() + text))
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6,
              margin_top=6, margin_bottom=6, margin_start=6, margin_end=6)
for widget in (banner, transcript, queue_view, entry):
    box.append(widget)
window = Gtk.Window(title="MendGtk widgets", default_width=640, default_height=360, child=box)
window.present()

status = with_class(banner, "status-text", Gtk.Label)[0]
revealer = [w for w in descendants(banner) if isinstance(w, Gtk.Revealer)][0]
retry_now, stop, retry, details = (button(banner, "Retry now"), button(banner, "Stop"),
                                   button(banner, "Retry"), button(banner, "Details"))
texts = []
status.connect("notify::label", lambda *a: texts.append(status.get_label()))
revealed = []
revealer.connect("notify::reveal-child", lambda *a: revealed.append(revealer.get_reveal_child()))


def type_and_enter(text):
    entry.grab_focus()
    entry.set_text(text)
    entry.emit("activate")


def click(widget):
    """Clicks @widget if a person could: shown and sensitive."""
    if not (shown(widget) and widget.is_sensitive()):
        return False
    widget.emit("clicked")
    return True


def idle():
    return chat.props.turn is None


def rows():
    return [w for w in descendants(queue_view) if isinstance(w, Gtk.ListBoxRow)]


spin_until(lambda: window.get_mapped(), "the window is mapped")
spin(0.3)

# Idle: no banner.
check(not revealer.get_reveal_child() and not shown(status), "idle: the banner is hidden")
check(not shown(queue_view.get_first_child()), "idle: the empty queue takes no room")
screenshot(window, "gtk-idle")

# quick: a retry under the quiet threshold never shows the banner.
revealed.clear()
type_and_enter("quick")
spin_until(lambda: asked.get("quick") == 2 and idle(), "the quick retry answered")
check(asked.get("quick") == 2, "quick: asked twice (one retry)")
check(True not in revealed and not revealer.get_reveal_child(), "quick: the banner never showed: %r" % revealed)
check("Answer to quick." in transcript.get_label(), "quick: the answer is shown")

# busy: the banner shows the wait, ticking, and hides on success.
texts.clear()
type_and_enter("busy")
spin_until(lambda: revealer.get_child_revealed(), "the banner shows the wait")
check("retrying in" in status.get_label(), "busy: the banner says it retries: %r" % status.get_label())
check(shown(retry_now) and shown(stop) and not shown(retry), "busy: Retry now and Stop are offered, not Retry")
check(banner.has_css_class("waiting"), "busy: the banner has the .waiting style class")
screenshot(window, "gtk-waiting")
screenshot(banner, "gtk-banner-light")
Gtk.Settings.get_default().props.gtk_application_prefer_dark_theme = True
spin(0.2)
screenshot(banner, "gtk-banner-dark")
Gtk.Settings.get_default().props.gtk_application_prefer_dark_theme = False
spin_until(lambda: idle() and not revealer.get_reveal_child(), "the busy turn answered and the banner hid")
ticks = [t for t in texts if "retrying in" in t]
check(any("2 s" in t for t in ticks) and any("1 s" in t for t in ticks),
      "busy: the wait ticked from 2 s to 1 s: %r" % ticks)
check("Answer to busy." in transcript.get_label(), "busy: the answer is shown")

# slow: follow-ups queue as rows, one is removed; Retry now runs the wait at once.
type_and_enter("slow")
spin_until(lambda: revealer.get_child_revealed(), "the banner shows the long wait")
for text in ("refused", "follow-up two", "follow-up three"):
    type_and_enter(text)
spin(0.1)
labels = [r.get_first_child().get_first_child().get_text() for r in rows()]
check(labels == ["refused", "follow-up two", "follow-up three"], "slow: the queue's rows in order: %r" % labels)
check(all(with_class(r, "remove", Gtk.Button) and with_class(r, "edit", Gtk.Button) for r in rows()),
      "slow: each row has remove and edit buttons")
check(all(b.get_tooltip_text() for r in rows() for b in with_class(r, "remove", Gtk.Button)),
      "slow: the remove buttons say what they do")
screenshot(window, "gtk-queue")
check(click(with_class(rows()[1], "remove", Gtk.Button)[0]), "slow: the second row's remove button can be clicked")
spin(0.1)
labels = [r.get_first_child().get_first_child().get_text() for r in rows()]
check(labels == ["refused", "follow-up three"], "slow: remove took the second row out: %r" % labels)
check([i.props.text for i in chat.props.queue] == ["refused", "follow-up three"],
      "slow: and the item out of the chat's queue")
blanked = rows()[0].get_first_child().get_first_child()
blanked.start_editing()
blanked.set_text("   ")
blanked.stop_editing(True)
spin(0.1)
check([i.props.text for i in chat.props.queue] == ["refused", "follow-up three"] and
      rows()[0].get_first_child().get_first_child().get_text() == "refused",
      "slow: a blank edit is refused, the row keeps the text")
editable = rows()[1].get_first_child().get_first_child()
check(click(with_class(rows()[1], "edit", Gtk.Button)[0]) and editable.get_editing(), "slow: Edit starts editing the text")
editable.set_text("follow-up 3")
editable.stop_editing(True)  # Enter
spin(0.1)
check([i.props.text for i in chat.props.queue] == ["refused", "follow-up 3"], "slow: the edit changed the queued text")
labels = [r.get_first_child().get_first_child().get_text() for r in rows()]
check(labels == ["refused", "follow-up 3"], "slow: and the row shows it: %r" % labels)
started = time.monotonic()
check(click(retry_now), "slow: Retry now can be clicked")

# refused: the follow-up after it gives up; Continue is marked apart; Retry runs it again.
spin_until(lambda: idle() and asked.get("refused") == 1, "the refused follow-up gave up")
check(time.monotonic() - started < 10, "slow: Retry now did not wait the 30 s")
check("Answer to slow." in transcript.get_label(), "slow: the answer is shown")
spin_until(lambda: revealer.get_child_revealed(), "the banner shows the give-up")
check(status.get_label() == "The API key was refused", "refused: the banner's sentence: %r" % status.get_label())
check(shown(retry) and retry.get_sensitive() and not shown(retry_now) and not shown(stop),
      "refused: Retry is offered, not Retry now or Stop")
check(banner.has_css_class("gave-up"), "refused: the banner has the .gave-up style class")
details_label = with_class(banner, "details", Gtk.Label)[0]
check(shown(details) and not shown(details_label), "refused: Details is offered, the server's text hidden")
check(click(details), "refused: Details can be clicked")
spin_until(lambda: shown(details_label), "Details shows the server's text")
check("Incorrect API key provided" in details_label.get_label(), "refused: Details shows the server's own text")
continue_rows = [r for r in rows() if r.has_css_class("continue")]
check(len(rows()) == 2 and rows()[0] in continue_rows, "refused: the Continue row heads the queue, marked apart")
check(continue_rows and any(isinstance(w, Gtk.Label) and w.get_label() == "Continue" for w in descendants(continue_rows[0])),
      "refused: the Continue row says what it is")
check(continue_rows and not with_class(continue_rows[0], "edit"), "refused: the Continue row is not editable")
screenshot(window, "gtk-gave-up")
screenshot(banner, "gtk-banner-gave-up")
check(click(retry), "refused: Retry can be clicked")
spin_until(lambda: asked.get("follow-up 3") == 1 and idle(), "the Retry and the edited follow-up answered")
check(asked.get("refused") == 2, "refused: Retry asked the server again")
check("Answer to refused." in transcript.get_label(), "refused: the Retry's answer is shown")
spin_until(lambda: not revealer.get_reveal_child(), "the banner hides after the Retry succeeds")
check(not rows(), "refused: the queue is empty, Continue taken out by the Retry")

# quota: a usage limit.
type_and_enter("quota")
spin_until(lambda: idle() and revealer.get_child_revealed(), "the banner shows the limit")
check(banner.has_css_class("limit"), "quota: the banner has the .limit style class")
check("limit" in status.get_label(), "quota: the banner says it is a limit: %r" % status.get_label())
screenshot(window, "gtk-limit")

# stop: Stop during a wait ends it, and the banner hides.
type_and_enter("stop")
type_and_enter("")  # after the give-up, the queue waits for Enter
spin_until(lambda: shown(stop), "the banner offers Stop during the wait")
check(click(stop), "stop: Stop can be clicked")
spin_until(lambda: idle() and not revealer.get_reveal_child(), "the banner hides after Stop")
check(asked.get("stop") == 1, "stop: no further attempt after Stop")

# held: a wait the chats' gate holds (another member saw Retry-After: 30)
# says so; the banner, given that chat instead, offers Stop, not Retry now.
gate = Mend.Gate.new(None)
hinted = Mend.Chat(sender=Mend.HttpSender(uri=url, model="test-model"), gate=gate)
held_chat = Mend.Chat(sender=Mend.HttpSender(uri=url, model="test-model"), gate=gate)
hinted.submit("hinted", None)
spin_until(lambda: hinted.props.wait is not None, "the other member waits on the server's hint")
banner.props.chat = held_chat
check(banner.props.chat == held_chat and not revealer.get_reveal_child(), "held: the banner follows its new chat, idle")
held_chat.submit("held", None)
spin_until(lambda: revealer.get_child_revealed(), "the banner shows the held wait")
check(status.get_label().startswith("Waiting for the service to recover"), "held: the banner says the service is awaited: %r"
      % status.get_label())
check(banner.has_css_class("held") and shown(stop) and not shown(retry_now) and not shown(retry),
      "held: the .held style class, Stop offered, not Retry now or Retry")
screenshot(window, "gtk-held")
check(click(stop), "held: Stop can be clicked")
spin_until(lambda: held_chat.props.turn is None and not revealer.get_reveal_child(), "the banner hides after Stop")
check("held" not in asked, "held: the held turn never reached the server")
hinted.stop()
spin_until(lambda: hinted.props.turn is None, "the other member stopped")
hinted.close()
held_chat.close()

# German: the widgets speak the user's language (LANGUAGE=de).
german = subprocess.call([sys.executable, os.path.abspath(__file__), outdir, "german"],
                         env=dict(os.environ, LANGUAGE="de"))
check(german == 0, "german: the banner's buttons are in German")

# Taken apart cleanly: the chat outlives the widgets.
window.destroy()
spin(0.1)
chat.close()
server.shutdown()
print("1..%d" % test_number)
sys.exit(1 if failures else 0)
