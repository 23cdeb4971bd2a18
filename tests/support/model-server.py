#!/usr/bin/python3
# model-server.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A scripted model API on 127.0.0.1 for the end-to-end tests that run real
# agents. It speaks three providers' APIs, each as its agent expects:
#
#   Anthropic Messages   POST /v1/messages (Claude Code adds ?beta=true), and
#                        /v1/messages/count_tokens
#   Gemini               POST /v1beta/models/M:streamGenerateContent?alt=sse
#                        (server-sent GenerateContentResponse objects) and
#                        POST /v1beta/models/M:generateContent (one object)
#   OpenAI Responses     POST /v1/responses (server-sent response.* events)
#
# with each provider's own error bodies for faults. Anything else is a 404.
#
# Which answer a request gets is scripted: a list of rules, each
#   {"match": TEXT, [TEXT, …] or null, "times": N (0: forever), "answer": {...},
#    "api": "messages" | "gemini" | "responses" (optional: any)}
# The first rule whose match (any one of a list) occurs in the request's
# last user message (its
# text and tool results; the agents put their own context in earlier
# messages, so the user's words are looked for in the last) and that has
# answers left is used; with no such rule the answer is a short text.
#
# Gemini CLI also asks for JSON of its own with :generateContent (its model
# router's classifier, and other checks): such a request — one whose
# generationConfig asks for application/json — is a side request. Rules do
# not answer it, unless a rule says "side": true; it is answered with an
# object that fits the schema it sent, and counted apart. So are the title
# requests of today's ACP adapters: claude-agent-acp's Messages request
# with no tools that quotes the prompt in <session> tags, and codex-acp's
# Responses request that begins "Your task is to generate a very short
# title"; each is answered with a short title.
#
# Answers (in each API's own shape):
#   {"kind": "text", "text": T}              a streamed text answer
#   {"kind": "empty"}                        a stream that completes with no
#                                            text at all
#   {"kind": "status", "status": S}          an error: 529 overloaded, 503, 429
#                                            (retry-after 1, or "retry_after":
#                                            N; "limit": "quota" for a quota
#                                            that is used up rather than a
#                                            rate), 401 bad key, 400, 403,
#                                            404, 500, 504; in the Messages
#                                            API "limit": "quota" (with any
#                                            status, 400 as the API sends it)
#                                            is a credit balance used up, and
#                                            "limit": "session" (with 429) a
#                                            subscription's five-hour limit
#                                            reached: the unified rate-limit
#                                            headers say "rejected", resetting
#                                            in "resets_in" seconds (3 hours)
#   {"kind": "error_after_content"}          text streams, then an error in
#                                            the stream
#   {"kind": "failed", "code": C}            a stream whose first event is a
#                                            failure: a Responses
#                                            response.failed with error code C
#                                            (server_is_overloaded, or
#                                            insufficient_quota…), a Messages
#                                            error event, a Gemini error object
#   {"kind": "drop"}                         the stream starts, then the
#                                            connection is closed mid-stream:
#                                            with "after_text": true after a
#                                            first text ("Let me look"), with
#                                            false before any content (after
#                                            message_start, response.created,
#                                            or the headers); without it the
#                                            Messages API's stream is cut after
#                                            an empty content_block_start,
#                                            Gemini's and Responses' after the
#                                            text; "pause_ms": N (Messages)
#                                            waits that long between the text
#                                            and the cut
#   {"kind": "hang"}                         no answer until the client leaves
# and, for the Messages API only:
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
# how many model requests each rule answered, and in all:
#   {"requests": N, "by_rule": [N, …], "by_api": {"messages": N, "gemini": N,
#    "responses": N}, "side_requests": N}
# where "requests" and "by_api" count the requests rules were asked about
# (the chat's), and "side_requests" Gemini CLI's requests for JSON.
# GET /_requests/N (1-based, in the order of "requests") returns the body
# of that request as it came, for a test to see what the model was sent;
# POST /_rules/N/retire (N 0-based) uses rule N up, as if its times were
# spent: the upstream recovered.

import json
import os
import re
import socketserver
import sys
import threading
import time
import http.server

MODEL = "claude-sonnet-4-5-20250929"
GEMINI_MODEL = "gemini-2.5-pro"

# The error bodies of the real API (docs.anthropic.com, "Errors"), and the
# 503 a multi-account gateway answers when every account is exhausted.
# A credit balance used up is a 400 of its own words (as the API answered
# it in anthropics/claude-code issue 66314, quoted in
# tests/data/failures/anthropic.jsonl, anthropic-008).
CREDIT_BALANCE = ("invalid_request_error", "Your credit balance is too low to access the Anthropic API. "
                  "Please go to Plans & Billing to upgrade or purchase credits.")
ERRORS = {
    400: ("invalid_request_error", "messages: text content blocks must be non-empty"),
    401: ("authentication_error", "invalid x-api-key"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "no non-exhausted claude accounts available for model " + MODEL),
    529: ("overloaded_error", "Overloaded"),
}

# The Gemini API's error bodies: Google's error model, {"error": {"code":
# HTTP status, "message", "status": the google.rpc.Code name, "details"}}
# (https://cloud.google.com/apis/design/errors; the codes and statuses the
# Gemini API answers: https://ai.google.dev/gemini-api/docs/troubleshooting).
# The 503's text is what Gemini CLI 0.61.0 showed for the real API's, the
# 500's and the quota texts are the real API's as quoted in
# tests/data/failures/gemini.jsonl (google-gemini/gemini-cli issues 8437,
# 1905; googleapis/python-genai issue 2044).
GEMINI_ERRORS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access "
          "token, login cookie or other valid authentication credential."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "models/%s is not found for API version v1beta, or is not supported for "
          "generateContent." % GEMINI_MODEL),
    429: ("RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing "
          "details. For more information on this error, head to: "
          "https://ai.google.dev/gemini-api/docs/rate-limits."),
    500: ("INTERNAL", "An internal error has occurred. Please retry or report in "
          "https://developers.generativeai.google/guide/troubleshooting"),
    503: ("UNAVAILABLE", "This model is currently experiencing high demand. Spikes in demand are "
          "usually temporary. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}

# A 429's details: google.rpc.QuotaFailure names the quota, google.rpc.RetryInfo
# says when to come back (googleapis/googleapis, google/rpc/error_details.proto;
# Gemini CLI reads both in packages/core/src/utils/googleQuotaErrors.ts: a
# quota id with PerDay is used up for the day, PerMinute retried).
def gemini_quota_details(limit, retry_after):
    per = "PerDay" if limit == "quota" else "PerMinute"
    details = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequests%sPerProjectPerModel-FreeTier" % per,
            "quotaDimensions": {"location": "global", "model": GEMINI_MODEL},
            "quotaValue": "250" if limit == "quota" else "10"}]},
        {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
    ]
    if limit != "quota":
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": "%ds" % retry_after})
    return details


# The OpenAI API's error bodies, {"error": {"message", "type", "param",
# "code"}} (https://platform.openai.com/docs/guides/error-codes; the SDK
# reads them in openai/openai-python, src/openai/_exceptions.py). The texts
# are the real API's, as quoted in tests/data/failures/openai.jsonl
# (ChatGPTNextWeb/NextChat issue 4101, MetaGPT issue 523) and in
# ikechan8370/chatgpt-plugin issue 125 (the 503).
OPENAI_MODEL = "gpt-5.4"
OPENAI_ERRORS = {
    400: ("invalid_request_error", None, "Invalid value for 'input': expected a non-empty list."),
    401: ("invalid_request_error", "invalid_api_key",
          "Incorrect API key provided: sk-stub***********key. You can find your API key at "
          "https://platform.openai.com/account/api-keys."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found",
          "The model `%s` does not exist or you do not have access to it." % OPENAI_MODEL),
    429: ("tokens", "rate_limit_exceeded",
          "Rate limit reached for %s in organization org-stub on tokens per min (TPM): Limit 30000, "
          "Used 29937, Requested 385. Please try again in 644ms. Visit "
          "https://platform.openai.com/account/rate-limits to learn more." % OPENAI_MODEL),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None,
          "That model is currently overloaded with other requests. You can retry your request, or "
          "contact us through our help center at help.openai.com if the error persists. (Please "
          "include the request ID 500d9fff2057e4af93a280f67002c342 in your message.)"),
}
OPENAI_QUOTA = ("insufficient_quota", "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details. For more "
                "information on this error, read the docs: "
                "https://platform.openai.com/docs/guides/error-codes/api-errors.")
# A Responses stream's failure: response.failed with the response's error
# {code, message} (https://platform.openai.com/docs/api-reference/responses-streaming;
# the texts as the real API sent them, Wei-Shaw/sub2api issues 5909, 6631,
# and tests/data/failures/openai.jsonl).
OPENAI_FAILED = {
    "server_is_overloaded": "Our servers are currently overloaded. Please try again later.",
    "insufficient_quota": "You exceeded your current quota, please check your plan and billing details.",
    "rate_limit_exceeded": "Rate limit reached for %s. Please try again in 644ms." % OPENAI_MODEL,
    "server_error": "An error occurred while processing your request.",
}

# A subscription's usage limit reached (a Claude Code sign-in with a plan,
# not an API key): the API's 429 with its rate_limit_error, as quoted in
# tests/data/failures/claude-code.jsonl (claude-code-015, anthropics/claude-code
# issue 56219), and the unified rate-limit headers that Claude Code reads to
# tell a plan's limit from a rate: the names as Claude Code 2.1.332 reads them
# (anthropic-ratelimit-unified-status "rejected", -reset in epoch seconds,
# -representative-claim "five_hour" or "seven_day").
SESSION_LIMIT = ("rate_limit_error", "This request would exceed your account's rate limit. Please try again later.")


def session_limit_headers(answer):
    reset = str(int(time.time()) + int(answer.get("resets_in", 3 * 3600)))
    return [("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-reset", reset),
            ("anthropic-ratelimit-unified-representative-claim", "five_hour"),
            ("anthropic-ratelimit-unified-5h-status", "rejected"),
            ("anthropic-ratelimit-unified-5h-reset", reset),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0")]


AGENT_ID = re.compile(r"agentId: ([A-Za-z0-9_-]+)")
GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(streamGenerateContent|generateContent)$")

lock = threading.Lock()
rules = []
counts = {"requests": 0, "by_rule": [], "by_api": {"messages": 0, "gemini": 0, "responses": 0},
          "side_requests": 0}
# The chat's requests' bodies, in order (GET /_requests/N).
bodies = []
tool_counter = [0]
# MEND_MODEL_SERVER_LOG=FILE: what each request was matched against.
LOG = open(os.environ["MEND_MODEL_SERVER_LOG"], "a") if os.environ.get("MEND_MODEL_SERVER_LOG") else None


def add_rules(new_rules):
    with lock:
        for rule in new_rules:
            rules.append({"match": rule.get("match"), "left": rule.get("times", 0) or -1,
                          "answer": rule["answer"], "api": rule.get("api"),
                          "side": bool(rule.get("side", False))})
            counts["by_rule"].append(0)


def parse(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


# What the user said last, in each API's shape

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


# Gemini: contents[] of {role, parts: [{text} | {functionResponse}]}.
def gemini_last_user_text(request, body):
    try:
        contents = request["contents"]
        for content in reversed(contents):
            if content.get("role", "user") != "user":
                continue
            texts = []
            for part in content.get("parts") or []:
                if "text" in part:
                    texts.append(part["text"])
                elif "functionResponse" in part:
                    texts.append(json.dumps(part["functionResponse"]))
            return "\n".join(texts)
    except (KeyError, TypeError, AttributeError):
        pass
    return body.decode("utf-8", "replace")


# Responses: input is a string, or items: messages whose content is a
# string or input_text parts, and function_call_output items.
def responses_last_user_text(request, body):
    try:
        items = request["input"]
        if isinstance(items, str):
            return items
        for item in reversed(items):
            if item.get("type") == "function_call_output":
                output = item.get("output")
                return output if isinstance(output, str) else json.dumps(output)
            if item.get("role") != "user":
                continue
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
    except (KeyError, TypeError, AttributeError):
        pass
    return body.decode("utf-8", "replace")


def pick(text, api="messages", side=False, body=b""):
    with lock:
        if side:
            counts["side_requests"] += 1
        else:
            counts["requests"] += 1
            counts["by_api"][api] += 1
            bodies.append(body)
        if LOG is not None:
            LOG.write("--- %s %d (%s)\n%s\n" % ("side request" if side else "request",
                                               counts["side_requests" if side else "requests"], api, text))
            LOG.flush()
        for i, rule in enumerate(rules):
            if rule["left"] == 0 or rule["side"] != side:
                continue
            if rule["api"] is not None and rule["api"] != api:
                continue
            match = rule["match"]
            if isinstance(match, str) and match not in text:
                continue
            if isinstance(match, list) and not any(m in text for m in match):
                continue
            if rule["left"] > 0:
                rule["left"] -= 1
            counts["by_rule"][i] += 1
            return rule["answer"]
    return None if side else {"kind": "text", "text": "Done."}


# The Messages API's stream

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


# A whole message, for a request that does not stream
# (https://docs.anthropic.com/en/api/messages, the response's shape).
def whole_message(text):
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}] if text is not None else [],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 8}}


def messages_streams(body):
    request = parse(body)
    return not isinstance(request, dict) or request.get("stream") is True


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


# The Gemini API's answers: GenerateContentResponse objects
# (https://ai.google.dev/api/generate-content#generatecontentresponse), one
# per "data:" event of an alt=sse stream.

def gemini_response(text, finish="STOP"):
    candidate = {"content": {"role": "model", "parts": [{"text": text}] if text is not None else []},
                 "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    response = {"candidates": [candidate], "modelVersion": GEMINI_MODEL, "responseId": "scripted"}
    if finish is not None:
        response["usageMetadata"] = {"promptTokenCount": 12, "candidatesTokenCount": 8,
                                     "totalTokenCount": 20}
    return response


def gemini_event(response):
    return ("data: %s\r\n\r\n" % json.dumps(response, separators=(",", ":"))).encode()


def gemini_error(status, answer):
    name, message = GEMINI_ERRORS.get(status, ("UNKNOWN", "Unknown error"))
    error = {"code": status, "message": message, "status": name}
    if status == 429:
        error["details"] = gemini_quota_details(answer.get("limit", "rate"), answer.get("retry_after", 1))
    return {"error": error}


# The answer to a request for JSON: an object with each required property
# of the schema it sent, the first of an enum's values, so that the
# caller's check passes (Gemini CLI's router then picks a model).
def fill_schema(schema):
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type", "object")
    kind = kind.lower() if isinstance(kind, str) else "object"
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: fill_schema(props[name]) for name in schema.get("required", props.keys())
                if name in props}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("number", "integer"):
        return 0
    return "scripted"


def gemini_side_answer(request):
    config = request.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return gemini_response(json.dumps(fill_schema(schema) or {}))


# A title request of today's adapters (see the top of the file).
TITLE_ASK = "Your task is to generate a very short title"


def messages_is_side(request, text):
    return (isinstance(request, dict) and not request.get("tools") and
            text.lstrip().startswith("<session>"))


def responses_is_side(text):
    return text.startswith(TITLE_ASK)


def gemini_wants_json(request):
    config = (request or {}).get("generationConfig") or {}
    return config.get("responseMimeType") == "application/json"


# The Responses API's stream: typed events, each with a sequence number
# (https://platform.openai.com/docs/api-reference/responses-streaming).

class ResponsesStream:
    def __init__(self):
        with lock:
            tool_counter[0] += 1
            self.id = "resp_scripted%04d" % tool_counter[0]
        self.item = "msg_scripted%04d" % tool_counter[0]
        self.sequence = 0

    def event(self, name, data):
        data = dict(data, type=name, sequence_number=self.sequence)
        self.sequence += 1
        return event(name, data)

    def response(self, status, output=(), error=None):
        response = {"id": self.id, "object": "response", "created_at": 1764500000, "status": status,
                    "model": OPENAI_MODEL, "output": list(output), "error": error,
                    "incomplete_details": None}
        if status == "completed":
            response["usage"] = {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                                 "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 0},
                                 "total_tokens": 20}
        return response

    def created(self):
        return self.event("response.created", {"response": self.response("in_progress")})

    def message(self, status, text):
        return {"id": self.item, "type": "message", "status": status, "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}] if text is not None else []}

    def text_start(self):
        part = {"type": "output_text", "text": "", "annotations": []}
        return (self.event("response.output_item.added", {"output_index": 0,
                                                          "item": self.message("in_progress", None)}) +
                self.event("response.content_part.added", {"item_id": self.item, "output_index": 0,
                                                           "content_index": 0, "part": part}))

    def delta(self, text):
        return self.event("response.output_text.delta", {"item_id": self.item, "output_index": 0,
                                                         "content_index": 0, "delta": text})

    def text(self, text):
        part = {"type": "output_text", "text": text, "annotations": []}
        done = self.message("completed", text)
        return (self.text_start() + self.delta(text) +
                self.event("response.output_text.done", {"item_id": self.item, "output_index": 0,
                                                         "content_index": 0, "text": text}) +
                self.event("response.content_part.done", {"item_id": self.item, "output_index": 0,
                                                          "content_index": 0, "part": part}) +
                self.event("response.output_item.done", {"output_index": 0, "item": done}) +
                self.event("response.completed", {"response": self.response("completed", [done])}))

    def empty(self):
        return self.event("response.completed", {"response": self.response("completed")})

    def failed(self, code):
        error = {"code": code, "message": OPENAI_FAILED.get(code, "An error occurred.")}
        return self.event("response.failed", {"response": self.response("failed", error=error)})


def openai_error(status, answer):
    if status == 429 and answer.get("limit") == "quota":
        error_type, code, message = OPENAI_QUOTA
    else:
        error_type, code, message = OPENAI_ERRORS.get(status, ("server_error", None, "Error"))
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


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

    # Chunked, so that the client cannot tell the end from a drop by the
    # length; each part is a chunk of its own, flushed.
    def start_chunked(self, status=200, content_type="text/event-stream"):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def chunk(self, part):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.flush()

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def drop(self, part, pause_ms=0):
        self.start_chunked()
        self.chunk(part)
        # The text read before the cut, not with it, however fast the
        # client reads.
        if pause_ms:
            time.sleep(pause_ms / 1000)
        self.close_connection = True

    def hang(self):
        self.close_connection = True
        while self.rfile.read(1):
            pass

    def not_found(self):
        self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"Not found"}}')

    def do_GET(self):
        asked = re.match(r"^/_requests/([0-9]+)$", self.path)
        if self.path == "/_requests":
            with lock:
                body = json.dumps(counts).encode()
            self.reply(200, body)
        elif asked is not None:
            with lock:
                n = int(asked.group(1))
                body = bodies[n - 1] if 1 <= n <= len(bodies) else None
            if body is None:
                self.not_found()
            else:
                self.reply(200, body)
        else:
            self.not_found()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        path = self.path.split("?")[0]
        gemini = GEMINI_PATH.match(path)
        retire = re.match(r"^/_rules/([0-9]+)/retire$", path)
        if path == "/_rules":
            add_rules(json.loads(body))
            self.reply(200, b"{}")
        elif retire is not None:
            with lock:
                n = int(retire.group(1))
                if n < len(rules):
                    rules[n]["left"] = 0
            self.reply(200, b"{}")
        elif path == "/v1/messages/count_tokens":
            self.reply(200, b'{"input_tokens":12}')
        elif path == "/v1/messages":
            text = last_user_text(body)
            answer = pick(text, side=messages_is_side(parse(body), text), body=body)
            self.answer(answer or {"kind": "text", "text": "Fixing the build"}, body)
        elif gemini is not None:
            request = parse(body)
            side = gemini.group(2) == "generateContent" and gemini_wants_json(request)
            answer = pick(gemini_last_user_text(request, body), "gemini", side, body)
            if answer is None:
                self.reply(200, json.dumps(gemini_side_answer(request)).encode())
            else:
                self.answer_gemini(answer, gemini.group(2) == "streamGenerateContent")
        elif path == "/v1/responses":
            request = parse(body)
            text = responses_last_user_text(request, body)
            answer = pick(text, "responses", responses_is_side(text), body)
            self.answer_responses(answer or {"kind": "text", "text": '{"title": "Fixing the build"}'})
        else:
            self.not_found()

    def answer(self, answer, body):
        kind = answer["kind"]
        if kind == "status":
            status = answer["status"]
            headers = []
            if answer.get("limit") == "quota":
                error_type, message = CREDIT_BALANCE
            elif answer.get("limit") == "session":
                error_type, message = SESSION_LIMIT
                headers = session_limit_headers(answer)
            else:
                error_type, message = ERRORS.get(status, ("api_error", "Error"))
            message = answer.get("message", message)
            retry_after = str(answer.get("retry_after", 1))
            if status == 429:
                headers.append(("retry-after", retry_after))
            self.reply(status, json.dumps({"type": "error", "error": {
                "type": error_type, "message": message}}).encode(), headers=headers)
        elif kind in ("text", "empty") and not messages_streams(body):
            # A request without "stream": true is answered with the whole
            # message, as Claude Code's non-streaming retry of a stream
            # that broke expects.
            text = answer.get("text", "Done.") if kind == "text" else None
            self.reply(200, json.dumps(whole_message(text)).encode())
        elif kind == "text":
            self.reply(200, message_start() + text_block(answer.get("text", "Done.")) +
                       message_end("end_turn"), "text/event-stream")
        elif kind == "empty":
            self.reply(200, message_start() + message_end("end_turn"), "text/event-stream")
        elif kind == "error_after_content":
            self.reply(200, message_start() + text_block("Let me look") +
                       event("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                  "message": "Overloaded"}}),
                       "text/event-stream")
        elif kind == "failed":
            self.reply(200, message_start() +
                       event("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                  "message": "Overloaded"}}),
                       "text/event-stream")
        elif kind == "drop":
            start = message_start()
            if answer.get("after_text") is not False:
                start += event("content_block_start", {
                    "type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}})
            if answer.get("after_text", False):
                start += event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                       "delta": {"type": "text_delta", "text": "Let me look"}})
            self.drop(start, answer.get("pause_ms", 0))
        elif kind == "hang":
            self.hang()
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

    def answer_gemini(self, answer, stream):
        kind = answer["kind"]
        sse = "text/event-stream"
        if kind == "status":
            status = answer["status"]
            headers = [("retry-after", str(answer.get("retry_after", 1)))] if status == 429 else []
            self.reply(status, json.dumps(gemini_error(status, answer), indent=2).encode(), headers=headers)
        elif kind in ("text", "empty"):
            text = answer.get("text", "Done.") if kind == "text" else ""
            if stream:
                self.reply(200, gemini_event(gemini_response(text)), sse)
            else:
                self.reply(200, json.dumps(gemini_response(text)).encode())
        elif kind in ("error_after_content", "failed") and stream:
            # Mid-stream, the API ends with a bare error object in place of
            # an event: the SDK looks for one in each read of the body
            # (googleapis/js-genai, src/_api_client.ts, processStreamResponse).
            self.start_chunked()
            if kind == "error_after_content":
                self.chunk(gemini_event(gemini_response("Let me look", None)))
                # A read of its own, as the error comes later than the text.
                time.sleep(0.1)
            self.chunk(json.dumps(gemini_error(answer.get("status", 503), answer)).encode())
            self.end_chunked()
        elif kind in ("error_after_content", "failed"):
            self.reply(200, json.dumps(gemini_error(answer.get("status", 503), answer)).encode())
        elif kind == "drop":
            if answer.get("after_text", True):
                self.drop(gemini_event(gemini_response("Let me look", None)))
            else:
                # The headers, then nothing: the body ends unfinished.
                self.start_chunked()
                self.close_connection = True
        elif kind == "hang":
            self.hang()
        else:
            self.reply(500, json.dumps({"error": {"code": 500, "message": "bad script",
                                                  "status": "INTERNAL"}}).encode())

    def answer_responses(self, answer):
        kind = answer["kind"]
        sse = "text/event-stream"
        stream = ResponsesStream()
        if kind == "status":
            status = answer["status"]
            headers = [("retry-after", str(answer.get("retry_after", 1)))] if status == 429 else []
            self.reply(status, json.dumps(openai_error(status, answer), indent=2).encode(), headers=headers)
        elif kind == "text":
            self.reply(200, stream.created() + stream.text(answer.get("text", "Done.")), sse)
        elif kind == "empty":
            self.reply(200, stream.created() + stream.empty(), sse)
        elif kind == "error_after_content":
            self.reply(200, stream.created() + stream.text_start() + stream.delta("Let me look") +
                       stream.failed(answer.get("code", "server_is_overloaded")), sse)
        elif kind == "failed":
            self.reply(200, stream.created() + stream.failed(answer.get("code", "server_is_overloaded")), sse)
        elif kind == "drop":
            if answer.get("after_text", True):
                self.drop(stream.created() + stream.text_start() + stream.delta("Let me look"))
            else:
                self.drop(stream.created())
        elif kind == "hang":
            self.hang()
        else:
            self.reply(500, json.dumps(openai_error(500, answer)).encode())


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
