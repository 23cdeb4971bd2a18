#!/usr/bin/python3
# check-demo-cli.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mend-demo as a command: its exit status, its usage errors (before any
# other output), --url against a loopback model server
# (tests/support/model-server.py) and its German. TAP on standard output.
#
# usage: check-demo-cli.py MEND-DEMO LOCALEDIR DEMO-LOCALEDIR MODEL-SERVER

import json
import os
import subprocess
import sys
import tempfile
import time

demo, localedir, demo_localedir, model_server = sys.argv[1:5]
results = []


def check(name):
    def wrap(fn):
        try:
            fn()
            results.append((name, None))
        except AssertionError as e:
            results.append((name, str(e) or "assertion failed"))
        return fn
    return wrap


def run(*args, env=None, timeout=60):
    full_env = dict(os.environ, LC_ALL="C.UTF-8", LANGUAGE="", GIO_USE_PROXY_RESOLVER="dummy")
    full_env.update(env or {})
    start = time.monotonic()
    p = subprocess.run([demo, *args], capture_output=True, text=True, env=full_env, timeout=timeout)
    return p, time.monotonic() - start


class ModelServer:
    """tests/support/model-server.py with a script of rules, on 127.0.0.1."""

    def __init__(self, rules):
        self.script = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(rules, self.script)
        self.script.close()
        self.proc = subprocess.Popen([sys.executable, model_server, self.script.name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.url = "http://127.0.0.1:%s/v1/messages" % self.proc.stdout.readline().strip()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        os.unlink(self.script.name)


def policy_file(policy):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(policy, f)
    f.close()
    return f.name


def expect(p, status, *texts, stream="stdout"):
    out = getattr(p, stream)
    assert p.returncode == status, "exit %d, not %d\n%s%s" % (p.returncode, status, p.stdout, p.stderr)
    for text in texts:
        assert text in out, "%r not in the %s:\n%s" % (text, stream, out)


@check("/Mend/Demo/story-played-as-scripted-exits-0")
def _():
    p, _ = run("--speed", "50")
    expect(p, 0, "gave up after 5 attempts", "Every scenario played as scripted.")


@check("/Mend/Demo/story-off-script-exits-1")
def _():
    # One retry only: the retry scenario's turn gives up after two 529s.
    policy = policy_file({"maxRetries": 1})
    try:
        p, _ = run("--speed", "50", "-s", "retry", "--policy", policy)
    finally:
        os.unlink(policy)
    expect(p, 1, "A scenario did not play as scripted.")
    expect(p, 1, "the retry scenario did not play as scripted: its turns ended [failed], "
                 "not [succeeded, succeeded]", stream="stderr")


@check("/Mend/Demo/url-success-exits-0")
def _():
    with ModelServer([{"match": None, "answer": {"kind": "text", "text": "Hello from loopback."}}]) as server:
        p, _ = run("--url", server.url, "Say hello")
    expect(p, 0, "Hello from loopback.", "succeeded after 1 attempt")


@check("/Mend/Demo/url-permanent-failure-exits-1")
def _():
    with ModelServer([{"match": None, "answer": {"kind": "status", "status": 401}}]) as server:
        p, _ = run("--url", server.url, "-H", "x-api-key: sk-ant-not-a-key", "Say hello")
    expect(p, 1, "gave up after 1 attempt", "The API key was refused")


@check("/Mend/Demo/url-retries-used-up-exits-1")
def _():
    policy = policy_file({"maxRetries": 2, "baseDelayMs": 10, "jitter": "none"})
    try:
        with ModelServer([{"match": None, "answer": {"kind": "status", "status": 503}}]) as server:
            p, _ = run("--url", server.url, "--policy", policy, "Say hello")
    finally:
        os.unlink(policy)
    expect(p, 1, "gave up after 3 attempts", "no non-exhausted claude accounts")


@check("/Mend/Demo/url-waits-in-real-time")
def _():
    # A 429 with Retry-After: 1, then an answer: at speed 1 the wait takes
    # at least the second the server asked for.
    rules = [{"match": None, "times": 1, "answer": {"kind": "status", "status": 429}},
             {"match": None, "answer": {"kind": "text", "text": "Answered after the wait."}}]
    with ModelServer(rules) as server:
        p, elapsed = run("--url", server.url, "Say hello")
    expect(p, 0, "waits run in real time", "Answered after the wait.", "succeeded after 2 attempts")
    assert elapsed >= 1.0, "the wait took %.2f s, not the server's 1 s" % elapsed
    with ModelServer(rules) as server:
        p, _ = run("--url", server.url, "--speed", "4", "Say hello")
    expect(p, 0, "waits run 4× faster")


class OpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 (as Ollama's /v1 is): a
    streamed Chat Completions answer, or a Responses one, after the shapes
    of OpenAI's API reference. Keeps each request's path, Authorization
    and body."""

    def __init__(self):
        import http.server
        import threading
        requests = self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                requests.append((self.path, self.headers.get("Authorization") or
                                 self.headers.get("x-goog-api-key"), body))
                if "contents" in body:
                    chunks = [{"candidates": [{"content": {"parts": [{"text": "Hello from "}], "role": "model"}}]},
                              {"candidates": [{"content": {"parts": [{"text": "Gemini."}], "role": "model"},
                                               "finishReason": "STOP"}]}]
                    data = "".join("data: %s\r\n\r\n" % json.dumps(c) for c in chunks)
                elif "input" in body:
                    events = [
                        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                         "delta": "Hello from Responses."},
                        {"type": "response.completed", "response": {"status": "completed"}},
                    ]
                    data = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
                else:
                    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello "},
                                            "finish_reason": None}]},
                              {"choices": [{"index": 0, "delta": {"content": "from Ollama."},
                                            "finish_reason": None}]},
                              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
                    data = "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data.encode())))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = "http://127.0.0.1:%d" % self.server.server_address[1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@check("/Mend/Demo/url-chat-completions-answers-on-the-first-request")
def _():
    with OpenAIServer() as server:
        p, _ = run("--url", server.base + "/v1/chat/completions", "Say hello",
                   env={"OPENAI_API_KEY": "sk-test-not-a-key"})
        requests = server.requests
    expect(p, 0, "Hello from Ollama.", "succeeded after 1 attempt")
    assert len(requests) == 1, "%d requests, not 1" % len(requests)
    path, authorization, body = requests[0]
    assert authorization == "Bearer sk-test-not-a-key", authorization
    assert body["messages"] == [{"role": "user", "content": "Say hello"}], body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}, body


@check("/Mend/Demo/url-responses-answers-on-the-first-request")
def _():
    with OpenAIServer() as server:
        p, _ = run("--url", server.base + "/v1/responses", "Say hello")
        requests = server.requests
    expect(p, 0, "Hello from Responses.", "succeeded after 1 attempt")
    assert len(requests) == 1 and requests[0][2]["input"] == [{"role": "user", "content": "Say hello"}], requests


@check("/Mend/Demo/url-gemini-answers-on-the-first-request")
def _():
    with OpenAIServer() as server:
        p, _ = run("--url", server.base + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                   "Say hello", env={"GEMINI_API_KEY": "AIza-test-not-a-key"})
        requests = server.requests
    expect(p, 0, "Hello from Gemini.", "succeeded after 1 attempt")
    assert len(requests) == 1 and requests[0][1] == "AIza-test-not-a-key", requests
    assert requests[0][2]["contents"] == [{"role": "user", "parts": [{"text": "Say hello"}]}], requests


@check("/Mend/Demo/url-dialect-forced")
def _():
    with OpenAIServer() as server:
        p, _ = run("--url", server.base + "/generate", "--dialect", "chat-completions", "Say hello")
        requests = server.requests
    expect(p, 0, "Hello from Ollama.")
    assert requests[0][0] == "/generate" and "messages" in requests[0][2], requests


@check("/Mend/Demo/usage-errors-come-before-any-output")
def _():
    bad_policy = policy_file({"maxRetries": 1, "noSuchKey": 2})
    cases = [
        ["--speed", "0"], ["--speed", "-1"], ["--speed", "1001"], ["--speed", "fast"],
        ["-s", "nope"], ["-s", "nope", "--agent"], ["-s", "nope", "--acp"],
        ["--agent", "--acp"], ["--url", "http://127.0.0.1:9/", "--agent"],
        ["--url", "ftp://example.com/"], ["--url", "not a url"],
        ["--url", "http://127.0.0.1:9/", "-s", "retry"],
        ["--url", "http://127.0.0.1:9/", "-H", "no colon"],
        ["--url", "http://127.0.0.1:9/", "-H", "bad name: value"],
        ["-H", "x-api-key: k"], ["a prompt without --url"],
        ["--dialect", "chat-completions"], ["--url", "http://127.0.0.1:9/", "--dialect", "ollama"],
        ["--policy", "/nonexistent/policy.json"], ["--policy", bad_policy],
        ["--no-such-option"],
    ]
    try:
        for args in cases:
            p, _ = run(*args)
            assert p.returncode == 2, "%s: exit %d, not 2\n%s%s" % (args, p.returncode, p.stdout, p.stderr)
            assert p.stdout == "", "%s printed before its error:\n%s" % (args, p.stdout)
            assert p.stderr.startswith("mend-demo: "), "%s: %r" % (args, p.stderr)
    finally:
        os.unlink(bad_policy)


@check("/Mend/Demo/banner-is-the-first-line")
def _():
    p, _ = run("-s", "retry", "--speed", "50")
    expect(p, 0)
    assert p.stdout.startswith("libmend "), p.stdout


@check("/Mend/Demo/speaks-german-with-LANGUAGE-de")
def _():
    # libmend's catalogue and the demo's own, both built in the tree.
    env = {"LANGUAGE": "de", "MEND_LOCALEDIR": localedir, "MEND_DEMO_LOCALEDIR": demo_localedir}
    p, _ = run("-s", "retry", "--speed", "50", env=env)
    # "Neuer Versuch in 1 s (Versuch 1 von 4)" is libmend's own
    # mend_retry_wait_describe (); the rest is the demo's.
    expect(p, 0, "ein Chat gegen einen unzuverlässigen Modellserver", "Neuer Versuch in ",
           "(Versuch 1 von 4)", "nach 3 Versuchen erfolgreich", "Warteschlange [„Then update the changelog“]",
           "Jedes Szenario lief wie im Drehbuch.")
    assert "succeeded" not in p.stdout and "Retrying" not in p.stdout, p.stdout
    p, _ = run("--help", env=env)
    expect(p, 0, "Die Szenarien auflisten", "Rückgabewert:", "[EINGABE]")
    p, _ = run("--speed", "0", env=env)
    expect(p, 2, "--speed muss eine Zahl über 0", stream="stderr")


print("1..%d" % len(results))
for i, (name, error) in enumerate(results, 1):
    if error is None:
        print("ok %d %s" % (i, name))
    else:
        print("not ok %d %s" % (i, name))
        print("\n".join("# " + line for line in error.splitlines()))
sys.exit(0)
