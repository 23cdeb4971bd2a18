#!/usr/bin/python3
# model-server.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A scripted Anthropic Messages API on 127.0.0.1 for the end-to-end tests
# that run the real Claude Code CLI. It answers POST /v1/messages (the CLI
# adds ?beta=true) as the CLI expects: server-sent events for a streamed
# answer, the JSON error bodies of the real API for faults, and
# /v1/messages/count_tokens. Anything else is a 404.
#
# Which answer a request gets is scripted: a list of rules, each
#   {"match": TEXT or null, "times": N (0: forever), "answer": {...}}
# The first rule whose match occurs in the request's last user message (its
# text blocks and tool results; the CLI puts its own reminders in the first
# message, so the user's words are looked for in the last) and that has
# answers left is used; with no such rule the answer is a short text.
#
# Answers:
#   {"kind": "text", "text": T}              a streamed text answer
#   {"kind": "status", "status": S}          an error: 529 overloaded, 503 no
#                                            accounts, 429 (retry-after 1, or
#                                            "retry_after": N),
#                                            401 bad key, 400, 500
#   {"kind": "error_after_content"}          text streams, then an SSE error
#   {"kind": "drop"}                         text starts, then the connection
#                                            is closed mid-stream
#   {"kind": "hang"}                         no answer until the client leaves
#   {"kind": "task", "description": D, "prompt": P}
#                                            a Task tool call that starts a
#                                            background general-purpose subagent
#   {"kind": "tool_use", "name": N, "input": {...}}
#                                            any other tool call
#   {"kind": "send_message", "message": M}   a SendMessage tool call to the
#                                            agent id the conversation names
#                                            ("agentId: ID" in a tool result)
#
# Usage: model-server.py [SCRIPT.json]. It prints its port on the first line
# of standard output, and serves until standard input closes (so that it
# never outlives the test that started it). Rules can be added while it
# runs: POST /_rules with a JSON list appends them; GET /_requests returns
# how many model requests each rule answered, and in all.

import json
import os
import re
import socketserver
import sys
import threading
import http.server

MODEL = "claude-sonnet-4-5-20250929"

# The error bodies of the real API (docs.anthropic.com, "Errors"), and the
# 503 a multi-account gateway answers when every account is exhausted.
ERRORS = {
    400: ("invalid_request_error", "messages: text content blocks must be non-empty"),
    401: ("authentication_error", "invalid x-api-key"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "no non-exhausted claude accounts available for model " + MODEL),
    529: ("overloaded_error", "Overloaded"),
}

AGENT_ID = re.compile(r"agentId: ([A-Za-z0-9_-]+)")

lock = threading.Lock()
rules = []
counts = {"requests": 0, "by_rule": []}
tool_counter = [0]
# MEND_MODEL_SERVER_LOG=FILE: what each request was matched against.
LOG = open(os.environ["MEND_MODEL_SERVER_LOG"], "a") if os.environ.get("MEND_MODEL_SERVER_LOG") else None


def add_rules(new_rules):
    with lock:
        for rule in new_rules:
            rules.append({"match": rule.get("match"), "left": rule.get("times", 0) or -1,
                          "answer": rule["answer"]})
            counts["by_rule"].append(0)


def last_user_text(body):
    try:
        request = json.loads(body)
        messages = request["messages"]
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = []
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    texts.append(inner)
                else:
                    texts.extend(b.get("text", "") for b in inner or [] if isinstance(b, dict))
        return "\n".join(texts)
    return ""


def pick(text):
    with lock:
        counts["requests"] += 1
        if LOG is not None:
            LOG.write("--- request %d\n%s\n" % (counts["requests"], text))
            LOG.flush()
        for i, rule in enumerate(rules):
            if rule["left"] == 0:
                continue
            if rule["match"] is not None and rule["match"] not in text:
                continue
            if rule["left"] > 0:
                rule["left"] -= 1
            counts["by_rule"][i] += 1
            return rule["answer"]
    return {"kind": "text", "text": "Done."}


def event(name, data):
    return ("event: %s\ndata: %s\n\n" % (name, json.dumps(data, separators=(",", ":")))).encode()


def message_start():
    return event("message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}})


def text_block(text, index=0):
    return (event("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}) +
            event("content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": text}}) +
            event("content_block_stop", {"type": "content_block_stop", "index": index}))


def message_end(stop_reason):
    return (event("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                    "usage": {"output_tokens": 8}}) +
            event("message_stop", {"type": "message_stop"}))


def tool_use(name, tool_input):
    with lock:
        tool_counter[0] += 1
        tool_id = "toolu_scripted%04d" % tool_counter[0]
    return (message_start() +
            event("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "tool_use", "id": tool_id,
                                                            "name": name, "input": {}}}) +
            event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(tool_input)}}) +
            event("content_block_stop", {"type": "content_block_stop", "index": 0}) +
            message_end("tool_use"))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_requests":
            with lock:
                body = json.dumps(counts).encode()
            self.reply(200, body)
        else:
            self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"Not found"}}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        path = self.path.split("?")[0]
        if path == "/_rules":
            add_rules(json.loads(body))
            self.reply(200, b"{}")
        elif path == "/v1/messages/count_tokens":
            self.reply(200, b'{"input_tokens":12}')
        elif path == "/v1/messages":
            self.answer(pick(last_user_text(body)), body)
        else:
            self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"Not found"}}')

    def answer(self, answer, body):
        kind = answer["kind"]
        if kind == "status":
            status = answer["status"]
            error_type, message = ERRORS.get(status, ("api_error", "Error"))
            retry_after = str(answer.get("retry_after", 1))
            headers = [("retry-after", retry_after)] if status == 429 else []
            self.reply(status, json.dumps({"type": "error", "error": {
                "type": error_type, "message": message}}).encode(), headers=headers)
        elif kind == "text":
            self.reply(200, message_start() + text_block(answer.get("text", "Done.")) +
                       message_end("end_turn"), "text/event-stream")
        elif kind == "error_after_content":
            self.reply(200, message_start() + text_block("Let me look") +
                       event("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                  "message": "Overloaded"}}),
                       "text/event-stream")
        elif kind == "drop":
            # Chunked, so that the client cannot tell the end from a drop by
            # the length; the connection closes with no last chunk.
            part = message_start() + event("content_block_start", {
                "type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
            self.close_connection = True
        elif kind == "hang":
            self.close_connection = True
            while self.rfile.read(1):
                pass
        elif kind == "task":
            self.reply(200, tool_use("Task", {
                "description": answer.get("description", "Survey the tree"),
                "prompt": answer.get("prompt", "Survey the tree"),
                "subagent_type": "general-purpose",
                "run_in_background": True}), "text/event-stream")
        elif kind == "tool_use":
            self.reply(200, tool_use(answer["name"], answer.get("input", {})), "text/event-stream")
        elif kind == "send_message":
            ids = AGENT_ID.findall(body.decode("utf-8", "replace"))
            self.reply(200, tool_use("SendMessage", {
                "to": ids[-1] if ids else "unknown",
                "message": answer.get("message", "Please continue.")}), "text/event-stream")
        else:
            self.reply(500, b'{"type":"error","error":{"type":"api_error","message":"bad script"}}')


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            add_rules(json.load(f))
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    # Serve until the test that started us goes away.
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
