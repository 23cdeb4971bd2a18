#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-local-chat.py — examples/local-chat.py, used as a person would.
#
# Runs the example's own Gtk.Application twice, touching nothing but its
# widgets, as a person would: types into the entry and presses Enter, reads
# the status line (the text of libmend-gtk's banner) and the text view,
# clicks the banner's Retry.
#
# 1. Over HTTP, against a loopback OpenAI Chat Completions server (Ollama's
#    and llama.cpp's format): the first answer is a 503 with Retry-After: 2
#    — the status line must count the wait down (2 s, then 1 s), and a
#    follow-up typed meanwhile runs after the answer, the first exchange in
#    its history. Then a prompt that gets a 401: the status line says the
#    key was refused, Retry becomes sensitive, a click runs the turn again
#    and the request carries the user's words once.
# 2. The same file with the line that makes the sender changed to an ACP
#    agent (tests/support/fake-acp-agent.py), nothing else: an overload
#    retried, the answer shown; a refused prompt given up, and Retry asks the
#    agent (which keeps a failed prompt) to continue.
#
# Also checks the docs' promise: the "A GTK 4 chat with a local model"
# section of docs/http.md shows this very file, and it has at most 15
# lines of libmend glue (code beyond the widgets, the imports and the
# application's start).
#
# usage: test-local-chat.py SRCDIR   (under xvfb-run; see tests/examples/meson.build)

import json
import os
import re
import runpy
import sys
import tempfile

srcdir = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_completions_server  # noqa: E402
mode = sys.argv[2] if len(sys.argv) > 2 else None
example = os.path.join(srcdir, "examples", "local-chat.py")

# Each run in a process of its own: a GtkApplication's name stays taken
# while its object lives.
if mode is None:
    import subprocess
    status = 0
    for run in ("http", "acp"):
        status |= subprocess.call([sys.executable, os.path.abspath(__file__), srcdir, run])
    sys.exit(status)
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
BOILERPLATE = re.compile(r"(import |from |gi\.require|URL = |class |    def __init__|        super\(\)\.__init__|"
                         r"app = |app\.connect|sys\.exit\(app)")
glue = [line for line in lines if not BOILERPLATE.match(line)]
print("# %d lines of code beyond the widgets, %d of them libmend glue" % (len(lines), len(glue)))
check(len(glue) <= 15, "%d lines of libmend glue (the issue and docs/http.md say at most 15)" % len(glue))
check(re.search(r"^\s*self\.chat = Mend\.Chat\(sender=http_sender\(\)\)", source, re.M) is not None,
      "no line that makes the chat's sender")
match = re.search(r"(\d+) lines of libmend glue", section)
check(match is not None and int(match.group(1)) == len(glue),
      "docs/http.md gives %s lines of glue, the example has %d" % (match and match.group(1), len(glue)))

# --- The HTTP server.
ANSWERS = ["Hello from the local model.", "Still here.", "Back again."]
requests = []


def answer_for(n):
    """The reply to the @n-th request (from 1): (status, headers, body or text)."""
    if n == 1:
        # Ollama's answer while a model loads or the server is full.
        return 503, {"Retry-After": "2"}, '{"error":{"message":"server busy, please try again","type":"server_error"}}'
    if n == 4:
        return 401, {}, ('{"error":{"message":"Incorrect API key provided: sk-proj-****. You can find your API key at '
                         'https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,'
                         '"code":"invalid_api_key"}}')
    return 200, {}, ANSWERS[{2: 0, 3: 1}.get(n, 2)]


def respond(body):
    requests.append(("/v1/chat/completions", body))
    return answer_for(len(requests))


server, url = chat_completions_server.start(respond)

# --- The example, run as its own program, watched through its widgets.
import gi  # noqa: E402

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


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


def run_example(path, steps, seen):
    """Runs the example at @path; @steps are (name, condition, action)
    taken in order, each once its condition holds of what the window
    shows (seen["text"], seen["statuses"], the Retry button)."""
    seen.update(text="", statuses=[], exit=None, retry_sensitive=[])

    def on_shown():
        app = Gio.Application.get_default()
        window = app.get_active_window() if app else None
        if window is None:
            return GLib.SOURCE_CONTINUE
        entry = find(window, Gtk.Entry)[0]
        view = find(window, Gtk.TextView)[0]
        retry = [b for b in find(window, Gtk.Button) if b.get_label() == "Retry"][0]
        status = [label for label in find(window, Gtk.Label) if label.has_css_class("status-text")][0]
        ui = {"entry": entry, "retry": retry, "window": window}

        def advance(*args):
            seen["text"] = buffer_text(view)
            if status.get_text() and (not seen["statuses"] or seen["statuses"][-1] != status.get_text()):
                seen["statuses"].append(status.get_text())
            seen["retry_sensitive"].append(retry.get_sensitive())
            while steps and steps[0][1](seen, ui):
                name, condition, action = steps.pop(0)
                seen.setdefault("steps", []).append(name)
                GLib.idle_add(lambda action=action: action(ui) and False)

        status.connect("notify::label", advance)
        retry.connect("notify::sensitive", advance)
        retry.connect("map", advance)  # the banner shows it as it slides in
        view.get_buffer().connect("changed", advance)
        advance()
        return GLib.SOURCE_REMOVE

    def on_watchdog():
        failures.append("%s: stuck before step %r within 30 s; the window showed %r, the status %r"
                        % (os.path.basename(path), steps[0][0] if steps else None, seen["text"], seen["statuses"]))
        Gio.Application.get_default().quit()
        return GLib.SOURCE_REMOVE

    GLib.idle_add(on_shown)
    watchdog = GLib.timeout_add_seconds(30, on_watchdog)
    sys.argv = [path, url]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exit:
        seen["exit"] = exit.code
    GLib.source_remove(watchdog) if steps else None


def retry_offered(seen, ui):
    return ui["retry"].get_sensitive() and ui["retry"].get_mapped()


if mode == "http":
    seen = {}
    run_example(example, [
        ("start", lambda seen, ui: True, lambda ui: type_and_enter(ui["entry"], "Say hello")),
        ("follow-up typed while it waits", lambda seen, ui: any("retrying in" in s for s in seen["statuses"]),
         lambda ui: type_and_enter(ui["entry"], "And again?")),
        ("a prompt the server refuses", lambda seen, ui: seen["text"].count("Model: ") == 2 and ANSWERS[1] in seen["text"],
         lambda ui: type_and_enter(ui["entry"], "Fail once")),
        ("Retry clicked", retry_offered, lambda ui: ui["retry"].emit("clicked")),
        ("close", lambda seen, ui: ANSWERS[2] in seen["text"], lambda ui: ui["window"].close()),
    ], seen)
    print("# HTTP, status line:", seen["statuses"])
    check(seen["exit"] == 0, "HTTP: the example exited with %r" % seen["exit"])
    check(all(answer in seen["text"] for answer in ANSWERS), "HTTP: the window showed: %r" % seen["text"])
    countdown = [s for s in seen["statuses"] if "retrying in" in s]
    check(any("2 s" in s for s in countdown) and any("1 s" in s for s in countdown),
          "HTTP: the status line did not count the wait down from 2 s to 1 s: %r" % seen["statuses"])
    check("The API key was refused" in seen["statuses"],
          "HTTP: the status line did not say the key was refused: %r" % seen["statuses"])
    check(not any("{" in s for s in seen["statuses"]), "HTTP: the status line showed JSON: %r" % seen["statuses"])
    check(len(requests) == 5, "HTTP: the server was asked %d times, not 5" % len(requests))
    if len(requests) == 5:
        history = requests[2][1]["messages"]
        check([m["role"] for m in history] == ["user", "assistant", "user"], "HTTP: the follow-up's history: %r" % history)
        check(history[1].get("content") == ANSWERS[0], "HTTP: the first answer kept: %r" % history[1])
        check(history[2].get("content") == "And again?", "HTTP: the follow-up's prompt: %r" % history[2])
        retried = requests[4][1]["messages"]
        print("# HTTP, the Retry's messages:", json.dumps(retried))
        check(requests[3][1]["messages"] == retried, "HTTP: the Retry's request differs from the refused one")
        check([m["content"] for m in retried].count("Fail once") == 1 and retried[-1]["content"] == "Fail once",
              "HTTP: the Retry's messages: %r" % retried)
        check(requests[0][1]["model"] == "llama3.2" and requests[0][1].get("stream") is True,
              "HTTP: the first request: %r" % requests[0][1])
    server.shutdown()

# 2. The same file, its sender an ACP agent: that line changed, nothing else.
# A build without ACP (-Dacp=disabled) has no Mend.AcpAgent to change it to.
if mode == "acp":
    gi.require_version("Mend", "1")
    from gi.repository import Mend  # noqa: E402
    if not hasattr(Mend, "AcpAgent"):
        print("# ACP: skipped, libmend was built without it")
        sys.exit(0)
    home = tempfile.mkdtemp(prefix="local-chat-acp-")
    script = os.path.join(home, "script.json")
    log = os.path.join(home, "agent.log")
    chunk = lambda text: {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}  # noqa: E731
    with open(script, "w") as f:
        json.dump({"prompts": [
            [{"error": {"code": -32603, "message": "Internal error: API Error: 529 "
                        "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}],
            [chunk("Hello from "), chunk("the agent."), {"result": {"stopReason": "end_turn"}}],
            [{"error": {"code": -32603, "message": "Internal error: API Error: 401 "
                        "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"}}],
            [chunk("Back again."), {"result": {"stopReason": "end_turn"}}],
        ]}, f)
    os.environ["MEND_FAKE_ACP_LOG"] = log
    agent = 'Mend.AcpAgent.new([%r, %r, %r])' % (sys.executable, os.path.join(srcdir, "tests", "support", "fake-acp-agent.py"),
                                                script)
    acp_source = re.sub(r"^(\s*self\.chat = Mend\.Chat\(sender=)http_sender\(\)", lambda m: m.group(1) + agent,
                        source, count=1, flags=re.M)
    check(sum(a != b for a, b in zip(acp_source.splitlines(), source.splitlines())) == 1,
          "ACP: more than the sender's line changed")
    acp_example = os.path.join(home, "local-chat-acp.py")
    with open(acp_example, "w") as f:
        f.write(acp_source)
    seen = {}
    run_example(acp_example, [
        ("start", lambda seen, ui: True, lambda ui: type_and_enter(ui["entry"], "Say hello")),
        ("a prompt the agent refuses", lambda seen, ui: "Hello from the agent." in seen["text"],
         lambda ui: type_and_enter(ui["entry"], "Fail once")),
        ("Retry clicked", retry_offered, lambda ui: ui["retry"].emit("clicked")),
        ("close", lambda seen, ui: "Back again." in seen["text"], lambda ui: ui["window"].close()),
    ], seen)
    print("# ACP, status line:", seen["statuses"])
    check(seen["exit"] == 0, "ACP: the example exited with %r" % seen["exit"])
    check("Model: Hello from the agent." in seen["text"] and "Back again." in seen["text"],
          "ACP: the window showed: %r" % seen["text"])
    check("The API key was refused" in seen["statuses"], "ACP: the status line: %r" % seen["statuses"])
    prompts = []
    if os.path.exists(log):
        for line in open(log):
            message = json.loads(line)
            if message.get("method") == "session/prompt":
                prompts.append(" ".join(block.get("text", "") for block in message["params"]["prompt"]))
    print("# ACP, the prompts the agent read:", prompts)
    # The agent kept the prompt the 529 failed: the retry asks it to
    # continue, as the Retry of the refused one does.
    check(prompts == ["Say hello", "Continue the current turn", "Fail once", "Continue the current turn"],
          "ACP: the prompts the agent read: %r" % prompts)

for message in failures:
    print("not ok:", message)
print("ok" if not failures else "FAILED")
sys.exit(1 if failures else 0)
