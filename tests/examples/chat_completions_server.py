# SPDX-License-Identifier: LGPL-2.1-or-later
"""chat_completions_server.py — a loopback OpenAI Chat Completions server
(Ollama's and llama.cpp's format) for the tests that run a GTK window
against a model: test-local-chat.py and tests/gtk/test-gtk-widgets.py.

start(respond) serves on 127.0.0.1 at a free port: respond(body), given
each request's JSON body, returns (status, headers, text). A 200 streams
the text word by word as server-sent events, then [DONE]; any other status
sends the text as the JSON error body, with the headers given.
"""

import http.server
import json
import re
import threading


def start(respond):
    """Returns (server, url); server.shutdown () stops it."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, headers, text = respond(body)
            if status != 200:
                data = text.encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
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
    return server, "http://127.0.0.1:%d/v1/chat/completions" % server.server_address[1]
