#!/usr/bin/env python3
# Writes the seed corpora in corpus/<harness>/: small, real-shaped inputs.
# Run from anywhere; it rewrites the files it owns (seed-*) and leaves
# others (inputs a fuzzing run found worth keeping) alone.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(harness, name, data):
    directory = os.path.join(HERE, "corpus", harness)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(directory, "seed-" + name), "wb") as f:
        f.write(data)


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def anthropic(kind, message):
    return compact({"type": "error", "error": {"type": kind, "message": message}})


def openai(message, kind, code=None, param=None):
    return compact({"error": {"message": message, "type": kind, "param": param, "code": code}})


def google(code, message, status):
    return compact({"error": {"code": code, "message": message, "status": status}})


OVERLOADED = anthropic("overloaded_error", "Overloaded")
CREDIT = ("Your credit balance is too low to access the Anthropic API. "
          "Please go to Plans & Billing to upgrade or purchase credits.")
SPEND = ("You have reached your specified API usage limits. "
         "You will regain access on 2025-11-01 at 00:00 UTC.")
GATEWAY_EXHAUSTED = ("no non-exhausted claude accounts available; next account frees up in "
                     "47m (retry after 2820s) (error type server_error, HTTP 503)")
OPENAI_TPM = ("Rate limit reached for gpt-4o in organization org-x1y2z3 on tokens per "
              "min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in "
              "1.5s. Visit https://platform.openai.com/account/rate-limits to learn more.")
OPENAI_QUOTA = openai("You exceeded your current quota, please check your plan and billing "
                      "details. For more information on this error, read the docs: "
                      "https://platform.openai.com/docs/guides/error-codes/api-errors.",
                      "insufficient_quota", "insufficient_quota")

# Error bodies: shared by the HTTP and text harnesses.
BODIES = {
    "anthropic-overloaded": OVERLOADED,
    "anthropic-rate-limit": anthropic("rate_limit_error",
                                      "Number of request tokens has exceeded your per-minute rate limit"),
    "anthropic-api-error": anthropic("api_error", "Internal server error"),
    "anthropic-auth": anthropic("authentication_error", "invalid x-api-key"),
    "anthropic-permission": anthropic("permission_error",
                                      "Your API key does not have permission to use the specified resource."),
    "anthropic-not-found": anthropic("not_found_error", "model: claude-opus-9"),
    "anthropic-too-long": anthropic("invalid_request_error",
                                    "prompt is too long: 210000 tokens > 200000 maximum"),
    "anthropic-credit": anthropic("invalid_request_error", CREDIT),
    "anthropic-spend": anthropic("invalid_request_error", SPEND),
    "anthropic-request-too-large": anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    "openai-quota": OPENAI_QUOTA,
    "openai-tpm": openai(OPENAI_TPM, "tokens", "rate_limit_exceeded"),
    "openai-key": openai("Incorrect API key provided: sk-abc***xyz. You can find your API key at "
                         "https://platform.openai.com/account/api-keys.",
                         "invalid_request_error", "invalid_api_key"),
    "openai-context": openai("This model's maximum context length is 128000 tokens. However, your "
                             "messages resulted in 130000 tokens.", "invalid_request_error",
                             "context_length_exceeded", "messages"),
    "openai-server": openai("The server had an error while processing your request. Sorry about that!",
                            "server_error"),
    "openai-overloaded": openai("That model is currently overloaded with other requests. You can retry "
                                "your request.", "server_error"),
    "google-unavailable": google(503, "The model is overloaded. Please try again later.", "UNAVAILABLE"),
    "google-exhausted": google(429, "Resource exhausted. Please try again later.", "RESOURCE_EXHAUSTED"),
    "google-key": google(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
    "openrouter-credits": compact({"error": {"message": "Insufficient credits. Add more using "
                                             "https://openrouter.ai/credits", "code": 402}}),
    "validation": compact({"detail": [{"loc": ["body", "model"], "msg": "field required",
                                       "type": "value_error.missing"}]}),
    "cloudflare-502": ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 "
                       "Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>"),
    "nginx-413": "<html><head><title>413 Request Entity Too Large</title></head></html>",
    "truncated-json": '{"type":"error","error":{"type":"overloaded_er',
    "gateway-text": GATEWAY_EXHAUSTED,
    "plain-not-found": "Not Found",
    "empty-error": '{"error":{}}',
    "new-error-type": compact({"type": "error", "error": {"type": "brand_new_error", "message": "?"}}),
    "nested": '{"error":' * 70 + '1' + '}' * 70,
}

# Error texts, as agents print them.
TEXTS = {
    "api-529": "API Error: 529 " + OVERLOADED,
    "api-503-gateway": "API Error: 503 " + GATEWAY_EXHAUSTED,
    "api-500": "API Error: 500 " + anthropic("api_error", "Internal server error"),
    "api-400-unique": "API Error: 400 messages.3: tool_use ids must be unique (error type invalid_request_error)",
    "econnreset": "Connection error: ECONNRESET",
    "fetch-failed": "TypeError: fetch failed",
    "socket-hang-up": "Error: socket hang up",
    "usage-limit": "You've hit your usage limit \u00b7 resets 3pm (Europe/Berlin)",
    "claude-limit": "Claude AI usage limit reached|1764511200",
    "interrupted": "[Request interrupted by user]",
    "aborted": "Request was aborted.",
    "empty-response": "The model returned an empty response.",
    "upstream-reset": ("upstream connect error or disconnect/reset before headers. reset reason: "
                       "connection failure"),
    "gateway-timeout": "504 Gateway Timeout",
    "unauthorized": "Error: 401 Unauthorized",
    "too-many": "429 Too Many Requests",
    "client-closed": "499 Client Closed Request",
    "openai-tpm": OPENAI_TPM,
    "retry-in-days": "Rate limited. Try again in 2 days 3 hours 12 minutes and 5 seconds.",
    "retry-after-ms": "Server busy, retry after 250ms",
    "retry-huge": "retry after 99999999999999999999999999 seconds",
    "retry-float": "retrying in 1e308 hours",
    "status-in-number": "error 15000 happened, not 500",
    "codex": "stream error: stream disconnected before completion: Transport error: error decoding response body",
    "codex-429": ("exceeded retry limit, last status: 429 Too Many Requests, request id: "
                  "8f2c1a3e-1b2c-4d5e-9f00-123456789abc"),
    "url": "Error: 503 see https://status.anthropic.com/incidents/503-overloaded for details",
    "long": "API Error: 500 " + "x" * 5000,
    "utf8-cut": "API Error: 503 " + "\u00e9" * 2100,
    "invalid-utf8": b"API Error: 503 \xff\xfe overloaded \xc3",
}


def http_seed(status, flags, retry_after=None, retry_after_ms=None, should_retry=None, body=b""):
    out = struct.pack(">HB", status, flags)
    if flags & 1:
        out += retry_after.encode() + b"\n"
    if flags & 2:
        out += retry_after_ms.encode() + b"\n"
    if flags & 4:
        out += should_retry.encode() + b"\n"
    if isinstance(body, str):
        body = body.encode()
    return out + body


def http_seeds():
    s = http_seed
    seeds = {
        "529-overloaded": s(529, 4, should_retry="true", body=OVERLOADED),
        "503-retry-after-30": s(503, 1, retry_after="30", body=BODIES["google-unavailable"]),
        "429-retry-after-ms": s(429, 2 | 1, retry_after="2", retry_after_ms="1500.5",
                                body=BODIES["anthropic-rate-limit"]),
        "429-date": s(429, 1, retry_after="Sun, 30 Nov 2025 10:54:20 GMT", body=BODIES["openai-tpm"]),
        "503-date-past": s(503, 1, retry_after="Wed, 21 Oct 2015 07:28:00 GMT", body=""),
        "503-date-rfc850": s(503, 1, retry_after="Sunday, 30-Nov-25 11:00:00 GMT", body="Service Unavailable"),
        "503-date-asctime": s(503, 1, retry_after="Sun Nov 30 11:00:00 2025", body="Service Unavailable"),
        "503-retry-after-huge": s(503, 1, retry_after="99999999999999999999999", body=""),
        "503-retry-after-junk": s(503, 1 | 32, retry_after=" 12abc ", body=""),
        "500-retry-after-ms-nan": s(500, 2, retry_after_ms="nan", body=BODIES["anthropic-api-error"]),
        "500-retry-after-ms-neg": s(500, 2, retry_after_ms="-5", body=OVERLOADED),
        "500-retry-after-ms-inf": s(500, 2, retry_after_ms="1e400", body=""),
        "529-should-retry-false": s(529, 4, should_retry="false", body=OVERLOADED),
        "400-should-retry-True": s(400, 4, should_retry="True", body=BODIES["anthropic-too-long"]),
        "400-credit": s(400, 0, body=BODIES["anthropic-credit"]),
        "401-key": s(401, 0, body=BODIES["anthropic-auth"]),
        "403-permission": s(403, 0, body=BODIES["anthropic-permission"]),
        "404-not-found": s(404, 0, body=BODIES["anthropic-not-found"]),
        "402-openrouter": s(402, 0, body=BODIES["openrouter-credits"]),
        "429-quota": s(429, 0, body=OPENAI_QUOTA),
        "429-google": s(429, 0, body=BODIES["google-exhausted"]),
        "400-google-key": s(400, 0, body=BODIES["google-key"]),
        "422-validation": s(422, 0, body=BODIES["validation"]),
        "502-cloudflare": s(502, 0, body=BODIES["cloudflare-502"]),
        "413-nginx": s(413, 0, body=BODIES["nginx-413"]),
        "503-truncated": s(503, 0, body=BODIES["truncated-json"]),
        "503-gateway-text": s(503, 0, body=GATEWAY_EXHAUSTED),
        "200-empty": s(200, 0, body=""),
        "200-no-body": s(200, 16, body=""),
        "204-no-headers": s(204, 8 | 16, body=""),
        "200-overloaded": s(200, 0, body=OVERLOADED),
        "500-overloaded": s(500, 0, body=OVERLOADED),
        "520-cloudflare": s(520, 0, body="error code: 520"),
        "499": s(499, 16),
        "409": s(409, 0, body=""),
        "0-transport": s(0, 8, body=""),
        "500-nested": s(500, 0, body=BODIES["nested"]),
        "500-invalid-utf8": s(500, 0, body=b"\xff\xfe{\"error\":1}\xc3"),
        "500-long-text": s(500, 0, body="overloaded " * 900),
    }
    for name, data in seeds.items():
        write("fuzz-http", name, data)


def stream_seeds():
    session = "9f6d7a1e-7e0e-4c1a-8a55-2d5a0c1f3b11"

    def line(obj):
        return compact(obj)

    def init():
        return line({"type": "system", "subtype": "init", "cwd": "/src", "session_id": session,
                     "tools": ["Task", "Bash", "Read"], "mcp_servers": [],
                     "model": "claude-sonnet-4-5", "permissionMode": "default",
                     "apiKeySource": "none", "uuid": "u-1"})

    def delta(text):
        return line({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
                                                       "delta": {"type": "text_delta", "text": text}},
                     "session_id": session, "parent_tool_use_id": None, "uuid": "u-3"})

    def assistant(text):
        return line({"type": "assistant", "message": {"id": "msg_01", "type": "message", "role": "assistant",
                                                      "content": [{"type": "text", "text": text}]},
                     "parent_tool_use_id": None, "session_id": session})

    def success(text="Done."):
        return line({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1234,
                     "duration_api_ms": 1100, "num_turns": 2, "result": text, "session_id": session,
                     "total_cost_usd": 0.0123, "usage": {"input_tokens": 12, "output_tokens": 34},
                     "uuid": "u-2"})

    def error_result(status, text, subtype="success"):
        obj = {"type": "result", "subtype": subtype, "is_error": True, "duration_ms": 2100,
               "result": text, "session_id": session}
        if status is not None:
            obj["api_error_status"] = status
        return line(obj)

    def started(task_id, tool_use_id, description, parent=None):
        obj = {"type": "system", "subtype": "task_started", "task_id": task_id,
               "tool_use_id": tool_use_id, "description": description, "session_id": session,
               "uuid": "u-4"}
        if parent is not None:
            obj["parent_tool_use_id"] = parent
        return line(obj)

    def notification(task_id, status, summary):
        return line({"type": "system", "subtype": "task_notification", "task_id": task_id,
                     "status": status, "summary": summary, "session_id": session})

    def updated(task_id, patch):
        return line({"type": "system", "subtype": "task_updated", "task_id": task_id,
                     "patch": patch, "session_id": session})

    summary_503 = ("API Error: 503 no non-exhausted claude accounts available for model "
                   "claude-sonnet-4-5 (error type server_error, HTTP 503)")
    api_529 = "API Error: 529 " + OVERLOADED

    seeds = {
        "turn-success": ["@submit Review the relay", init(), delta("Hel"), delta("lo"),
                         assistant("Hello"), success()],
        "turn-529-retry": ["@submit Review the relay", init(), error_result(529, api_529),
                           "@advance 1000", init(), success()],
        "turn-529-exhausted": ["@submit Go", error_result(529, api_529), "@fire",
                               error_result(529, api_529), "@fire", error_result(529, api_529),
                               "@fire", error_result(529, api_529), "@fire",
                               error_result(529, api_529), "@submit Next", "@next"],
        "turn-400": ["@submit Go", error_result(400, "API Error: 400 messages.3: tool_use ids must be "
                                                     "unique (error type invalid_request_error)")],
        "turn-usage-limit": ["@submit Go", "@submit Queued", error_result(None, "You've hit your usage "
                                                                             "limit \u00b7 resets 3pm")],
        "turn-error-member": ["@submit Go", line({"type": "result", "subtype": "error_during_execution",
                                                  "is_error": True, "error": "Connection error: ECONNRESET"})],
        "turn-errors-array": ["@submit Go", line({"type": "result", "subtype": "error_during_execution",
                                                  "is_error": True, "errors": ["", 5, "Request timed out"]})],
        "turn-subtype-only": ["@submit Go", line({"type": "result", "subtype": "error_max_turns",
                                                  "is_error": True})],
        "turn-stop-retry": ["@submit Go", error_result(503, summary_503), "@stop", "@next", "@retry"],
        "turn-output-partial": ["@submit Go", delta("x"), "@output", error_result(529, api_529)],
        "turn-retry-hint": ["@submit Go", error_result(503, "API Error: 503 " + GATEWAY_EXHAUSTED),
                            "@retry", success()],
        "external-turn": [init(), "@submit Later", delta("thinking"), success(), init(),
                          error_result(529, "Overloaded")],
        "subagent-failed-503": [started("a7c41e2", "toolu_01", "Push relay for GCP lane bundles"),
                                notification("a7c41e2", "failed", summary_503), "@advance 25000",
                                success(), started("a7c41e2", "toolu_02", "Push relay for GCP lane bundles"),
                                notification("a7c41e2", "completed", "Done")],
        "subagent-resume-cycle": [started("b1", "toolu_11", "Index the repo"),
                                  notification("b1", "failed", api_529), "@fire", "@fire",
                                  error_result(529, api_529), "@fire", success(),
                                  notification("b1", "failed", api_529), "@fire", success()],
        "subagent-stopped": [started("a7c41e2", "toolu_01", "Push relay"),
                             notification("a7c41e2", "stopped", "Stopped by the user")],
        "subagent-400": [started("c3", "toolu_03", "Bad"),
                         notification("c3", "failed", "API Error: 400 invalid_request_error")],
        "subagent-updated": [started("a7c41e2", "toolu_01", "Push relay"),
                             updated("a7c41e2", {"description": "Renamed"}),
                             updated("a7c41e2", {"status": "running"}),
                             updated("a7c41e2", {"status": "failed", "error": "Connection error: ECONNRESET"}),
                             updated("a7c41e2", {"status": "killed"})],
        "subagent-updated-completed": [started("d4", "toolu_04", "Lint"),
                                       updated("d4", {"status": "failed", "summary": summary_503}),
                                       "@resume toolu_04", updated("d4", {"status": "completed"})],
        "subagent-nested": [started("n1", "toolu_09", "Nested", parent="toolu_01"),
                            line({"type": "system", "subtype": "task_started", "task_id": "t1",
                                  "tool_use_id": "toolu_10", "parent_tool_use_id": None})],
        "subagent-manual-retry": [started("e5", "toolu_05", 'Evil "name"\n\u202e'),
                                  notification("e5", "failed", api_529), "@resume e5", "@resume toolu_05",
                                  "@close", "@resume e5"],
        "subagent-during-turn": ["@submit Go", started("f6", "toolu_06", "Helper"),
                                 notification("f6", "failed", summary_503), "@advance 60000",
                                 success(), "@fire", success()],
        "provenance": ["@prov " + compact({"kind": "subagent_retry", "subagentId": "toolu_01",
                                           "agentId": "a7c41e2", "attempt": 1, "promptId": "p-1"}),
                       "@prov {\"kind\":", "@prov [1,2,3]", success()],
        "deltas-only": [delta("a"), delta("\"system\""), delta("\"result\"")],
        "bad-lines": ['{"type":"result"', '{"type":"system","subtype":5}', '["system","result"]',
                      '{"type":"result","is_error":"yes"}', '{"type":"result","api_error_status":999}',
                      '{"type":"result","api_error_status":"529"}',
                      '{"type":"system","subtype":"task_started","task_id":""}',
                      '{"type":"system","subtype":"task_notification","task_id":"x","status":1}',
                      '{"type":"system","subtype":"task_updated","task_id":"x","patch":[]}',
                      '"result"', '{"type":null,"x":"system"}', "\r", ""],
        "deep": ['{"type":"system","subtype":"init","x":' + "[" * 100 + "]" * 100 + "}"],
        "long-line": ["@max 64", init(), "@max 1048576", init()],
        "closed": ["@submit Go", "@close", success(), init(), "@submit After", "@next"],
        "crlf": ["@submit Go", success() + "\r"],
    }
    for name, lines in seeds.items():
        write("fuzz-stream", name, "\n".join(lines) + "\n")
    write("fuzz-stream", "invalid-utf8",
          b'@submit Go\n{"type":"result","is_error":true,"result":"\xff\xfe \\"system\\""}\n')


def policy_seeds():
    seeds = {
        "empty-object": "{}",
        "full": compact({"maxRetries": 4, "baseDelayMs": 250, "maxDelayMs": 30000, "multiplier": 2.0,
                         "jitter": "full", "jitterMs": 100, "delays": None, "retryAfterMaxMs": 60000,
                         "staggerMs": 0, "retryPartial": False}),
        "resume-preset": compact({"preset": "resume", "maxRetries": 6}),
        "turn-preset": compact({"preset": "turn", "jitter": "decorrelated"}),
        "delays": compact({"delays": [20000, 45000, 90000, 180000], "maxRetries": 10}),
        "delays-empty": compact({"delays": []}),
        "additive": compact({"jitter": "additive", "jitterMs": 86400000, "maxDelayMs": 86400000}),
        "equal": compact({"jitter": "equal", "multiplier": 100, "maxRetries": 1000}),
        "none": compact({"jitter": "none", "multiplier": 1}),
        "stagger": compact({"staggerMs": 5000, "retryPartial": True}),
        "float-int": '{"maxRetries": 3.0, "baseDelayMs": 1e3}',
        "bad-fraction": '{"maxRetries": 3.5}',
        "bad-negative": '{"baseDelayMs": -1}',
        "bad-huge": '{"maxDelayMs": 1e300}',
        "bad-key": '{"maxRetry": 4}',
        "bad-jitter": '{"jitter": "sometimes"}',
        "bad-preset": '{"preset": "fast"}',
        "bad-preset-type": '{"preset": 1}',
        "bad-multiplier": '{"multiplier": 0.5}',
        "bad-delays-item": '{"delays": [1, "2"]}',
        "bad-delays-long": compact({"delays": list(range(1001))}),
        "bad-type-bool": '{"retryPartial": "yes"}',
        "not-object": "[1, 2, 3]",
        "not-json": "maxRetries = 4",
        "truncated": '{"maxRetries": 4, "jitter": "fu',
        "nested-deep": "[" * 100 + "]" * 100,
        "duplicate-keys": '{"maxRetries": 1, "maxRetries": 2000}',
        "unicode-key": '{"max\\u0052etries": 2}',
        "comment": '/* policy */ {"maxRetries": 2}',
        "empty": "",
        "rules": compact({"maxRetries": 2, "rules": [
            {"phrase": "Pool drained", "reason": "capacity", "source": "our gateway"},
            {"phrase": "tokens for this month", "reason": "usage-limit"}]}),
        "rules-empty": compact({"rules": []}),
        "rules-chinese": compact({"rules": [{"phrase": "通道  已满", "reason": "rate-limit"}]}),
        "bad-rules-reason": compact({"rules": [{"phrase": "x", "reason": "busy"}]}),
        "bad-rules-blank": compact({"rules": [{"phrase": " \t ", "reason": "capacity"}]}),
        "bad-rules-key": compact({"rules": [{"phrase": "x", "reason": "capacity", "rank": "code"}]}),
        "bad-rules-type": compact({"rules": {"phrase": "x"}}),
    }
    for name, text in seeds.items():
        write("fuzz-policy", name, text)


# The rules loader: byte 0 bit 0 asks for the order line; the built-in
# file itself, small files, malformed lines; and, line by line, phrases
# for an app's rules.
def rules_seeds():
    # The head of the built-in file: its order line and its first rows.
    with open(os.path.join(HERE, "..", "..", "lib", "failure", "rules", "classifier-rules.txt"), "rb") as f:
        write("fuzz-rules", "built-in", b"\x01" + b"".join(f.readlines()[:120]))
    order = "order usage-limit cancelled auth permission bad-request unknown capacity rate-limit timeout transport empty server\n"
    seeds = {
        "small": (1, order + 'words  specific  capacity  "pool drained"  our gateway\n'
                  'token  code  rate-limit  "pool_busy"  our gateway\n'
                  'TOKEN  code  timeout  "ETIMEDOUT"  Node errno\n'
                  'infix  code  usage-limit  "PerDay"  gemini-cli\n'
                  'status status capacity "503" RFC 9110\nstatus status bad-request "4xx" RFC 9110\n'),
        "app-lines": (6, "pool drained\nour gateway\nTOKENS for THIS   month\n\n余额不足\n"),
        "escapes": (0, 'words specific server "say \\"no\\" \\\\ again" quoted\n'),
        "crlf": (0, "# comment\r\nwords decisive usage-limit \"spent\" src\r\n"),
        "bad-rank": (0, 'words specifik capacity "busy" src\n'),
        "bad-quote": (0, 'words specific capacity "busy src\n'),
        "bad-order": (1, "order capacity capacity\n"),
        "bad-status": (0, 'status status capacity "600" src\n'),
        "url-phrase": (2, "a https://example.com/x b\nsrc\n"),
    }
    for name, (flags, text) in seeds.items():
        write("fuzz-rules", name, bytes([flags]) + text.encode())


# The classifier's paths, from the real failures under tests/data/failures:
# provider codes as tokens in Python reprs and escaped JSON, Google quota ids
# and RetryInfo, a JSON retry_after, limit-versus-requested numbers, line
# wraps inside a hint, fail-closed DNS and certificate words.
CLASSIFIER_TEXTS = {
    "repr-overloaded": ("API Error: Error code: 529 - {'type': 'error', 'error': {'type': "
                        "'overloaded_error', 'message': 'Overloaded'}}"),
    "quota-ids": ("429 RESOURCE_EXHAUSTED. {'quotaId': 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier'}, "
                  "{'quotaId': 'GenerateRequestsPerDayPerProjectPerModel-FreeTier'}, "
                  "{'@type': 'type.googleapis.com/google.rpc.RetryInfo', 'retryDelay': '47s'}"),
    "escaped-json": ('[API Error: {"error":{"message":"{\\n  \\"error\\": {\\n    \\"code\\": 429,\\n'
                     '    \\"status\\": \\"RESOURCE_EXHAUSTED\\",\\n    \\"retryDelay\\": \\"26s\\"'
                     '\\n  }\\n}\\n","code":429,"status":"Too Many Requests"}}]'),
    "retry-after-json": '{"ok":false,"error_code":429,"parameters":{"retry_after":120}}',
    "total-retry-delay": '$metadata: {"httpStatusCode":429,"attempts":3,"totalRetryDelay":274}',
    "limit-requested": ("Rate limit reached for model `llama3-70b-8192` on tokens per minute (TPM): "
                        "Limit 7000, Used 0, Requested ~12,903. Please try again in 50.597142857s."),
    "limit-no-number": "Token limit (500,000 per day) exceeded. Used: 508,311 tokens.",
    "wrapped-hint": "Please try\nagain in 1.984999999s. Need more tokens?",
    "reset-after": "[API Error: You have exhausted your capacity on this model. Your quota will reset after 2h52m39s.]",
    "wrapper-status": "sub-agent error: API error (400): Our servers are currently overloaded.",
    "catch-all": ('litellm.BadRequestError: DeepseekException - {"error":{"message":"Insufficient Balance",'
                  '"type":"unknown_error","param":null,"code":"invalid_request_error"}}'),
    "enotfound": "getaddrinfo ENOTFOUND bedrock-runtime.undefined.amazonaws.com",
    "certificate": ("Cannot connect to host api.openai.com:443 ssl:True [SSLCertVerificationError: (1, "
                    "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed')]"),
    "session-limit": "You've hit your session limit \u00b7 resets 12:50am (America/Los_Angeles)",
    "many-tokens": " ".join(["RESOURCE_EXHAUSTED", "ThrottlingException", "invalid_request_error"] * 300),
    "limit-huge": "Limit 1, Requested " + "9" * 400,
    "longer-words": ("{'error': 'Too Many Requests', 'message': 'You have exceeded your usage limits. "
                     "Please try again later or contact Fireworks to explore dedicated capacity.'}"),
    "chinese-arrears": 'Error code: 429, with error text {"error":{"code":"1113","message":"您的账户已欠费，请充值后重试。"}}',
    "timeout-cause": "fetch failed | Headers Timeout Error (UND_ERR_HEADERS_TIMEOUT)",
}


def text_seeds():
    for name, text in CLASSIFIER_TEXTS.items():
        write("fuzz-text", "classifier-" + name, text.encode().decode("unicode_escape")
              if "\\u" in text else text)
    # Byte 0 picks the domain (0 GIO, 1 resolver, 2 TLS, 3 soup session,
    # 4 file, 5 the app's own), byte 1 the code plus 8; the whole input is
    # also error text.
    for name, text in TEXTS.items():
        write("fuzz-text", name, text)
    for name in ("anthropic-overloaded", "openai-quota", "google-unavailable", "cloudflare-502"):
        write("fuzz-text", "body-" + name, BODIES[name])
    errors = {
        "gio-cancelled": (0, 19, "Operation was cancelled"),
        "gio-timed-out": (0, 24, "Socket I/O timed out"),
        "gio-refused": (0, 39, "Could not connect: Connection refused"),
        "gio-closed": (0, 44, "Connection closed by peer"),
        "gio-failed": (0, 0, "Error receiving data: Connection reset by peer"),
        "resolver-temporary": (1, 1, "Temporary failure in name resolution"),
        "tls-eof": (2, 6, "TLS connection closed unexpectedly"),
        "soup-parsing": (3, 0, "Could not parse HTTP response"),
        "soup-redirects": (3, 2, "Too many redirects"),
        "file-noent": (4, 4, "No such file or directory"),
        "app-529": (5, 9, "API Error: 529 " + OVERLOADED),
    }
    for name, (domain, code, message) in errors.items():
        write("fuzz-text", "error-" + name, bytes([domain, code + 8]) + message.encode())


def hidden(open_, levels, close, comment=("/*", "*/")):
    """Nesting between two comments that each hold a quote: a scan blind to
    comments takes the nesting for the inside of a string."""
    start, end = comment
    return (open_ + start + '"' + end + "[" * levels + "]" * levels +
            start + '"' + end + close)


def hostile_seeds():
    # JSON that tries to get past the scan before the recursive parser.
    texts = {
        "comment-hides-quote": hidden("[", 80, "]"),
        "line-comment-hides-quote": hidden("[", 80, "]", ("//", "\n")),
        "hash-comment": '{"a": 1 # "\n}',
        "single-quotes": "{'a': ['[[[[']}",
        "escaped-quote": '["\\\"[[[[", 1]',
        "unterminated-string": '["[[[[',
        "nested-64": "[" * 64 + "]" * 64,
        "nested-65": "[" * 65 + "]" * 65,
        "objects-64": '{"a":' * 63 + "1" + "}" * 63,
        "many-values": "[" + "0," * 3000 + "0]",
        "two-values": "{} {}",
        "nul-in-string": b'["a\x00b"]',
        "raw-nul": b'[1,\x00[[[[]]]]]',
        "utf8-outside": '[1] \u00e9'.encode().decode("unicode_escape"),
        "scalar": "1e400",
    }
    for name, text in texts.items():
        write("fuzz-json", name, text)

    write("fuzz-policy", "comment-hides-nesting", hidden('{"delays":[', 80, "]}"))
    write("fuzz-policy", "line-comment-hides-nesting", hidden('{"delays":[', 80, "]}", ("//", "\n")))
    write("fuzz-state", "comment-hides-nesting", hidden('{"version":1,"lifecycle":"ready","queue":[', 80, "]}"))
    write("fuzz-state", "many-values", '{"version":1,"lifecycle":"ready","queue":[' + "0," * 3000 + "0]}")
    write("fuzz-stream", "comment-hides-nesting",
          "@submit Go\n" + hidden('{"type":"result","is_error":true,"x":[', 80, "]}") + "\n")
    write("fuzz-text", "comment-hides-nesting", "API Error: 529 " + hidden('{"type":"error","error":', 80, "}"))
    write("fuzz-http", "529-comment-hides-nesting",
          http_seed(529, 0, body=hidden('{"type":"error","error":', 80, "}")))

    # Server-sent events: byte 0 the chunk size - 1, byte 1 the caps.
    anthropic_stream = (
        "event: message_start\n"
        'data: {"type":"message_start","message":{"id":"msg_1"}}\n\n'
        "event: content_block_delta\n"
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
        ": keep-alive\n\n"
        "event: stop\n"
        'data: {"type":"message_stop"}\n\n')
    sse = {
        "anthropic": (0, 0o77, anthropic_stream),
        "anthropic-crlf": (6, 0o77, anthropic_stream.replace("\n", "\r\n")),
        "anthropic-cr": (2, 0o77, anthropic_stream.replace("\n", "\r")),
        "error-event": (15, 0o66, 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n'),
        "multi-line-data": (3, 0o55, "data: [1,\ndata: 2]\n\ndata:no-space\n\n"),
        "no-newline": (31, 0o11, "data: " + "x" * 600),
        "long-event": (7, 0o12, "data: " + "y" * 20 + "\n" * 1 + ("data: " + "z" * 20 + "\n") * 40),
        "no-end": (0, 0o33, "event: content_block_delta\ndata: {\"type\":"),
        "hidden-nesting": (63, 0o77, "event: content_block_delta\ndata: " + hidden("[", 80, "]") + "\n\n"),
        "stop-then-more": (1, 0o77, "event: stop\ndata: 1\n\nevent: after\ndata: 2\n\n"),
    }
    for name, (chunk, caps, stream) in sse.items():
        write("fuzz-sse", name, bytes([chunk, caps]) + stream.encode())


def dialect_seeds():
    def chunk(delta, finish=None):
        return "data: " + compact({"object": "chat.completion.chunk",
                                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    def event(kind, **members):
        return "event: " + kind + "\ndata: " + compact(dict({"type": kind}, **members)) + "\n\n"

    tool = [{"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": ""}}]
    seeds = {
        # 0 Messages, 1 Chat Completions, 2 Responses; then the chunk size.
        "messages": (0, 7,
                     "event: content_block_start\n"
                     'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
                     "event: content_block_delta\n"
                     'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
                     "event: content_block_start\n"
                     'data: {"type":"content_block_start","index":1,"content_block":'
                     '{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}\n\n'
                     "event: content_block_delta\n"
                     'data: {"type":"content_block_delta","index":1,"delta":'
                     '{"type":"input_json_delta","partial_json":"{\\"path\\":1}"}}\n\n'
                     'event: message_stop\ndata: {"type":"message_stop"}\n\n'),
        "chat": (1, 13, chunk({"role": "assistant", "content": "Hello"}) + chunk({}, "stop")
                 + 'data: {"choices":[],"usage":{"total_tokens":3}}\n\n' + "data: [DONE]\n\n"),
        "chat-tool-call": (1, 255, chunk({"tool_calls": tool})
                           + chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]})
                           + chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"a\"}"}}]})
                           + chunk({}, "tool_calls") + "data: [DONE]\n\n"),
        "chat-error": (1, 3, 'data: {"error":{"message":"overloaded","type":"server_error","code":503}}\n\n'),
        "chat-whole": (1, 255, compact({"choices": [{"message": {"role": "assistant", "content": "Hi",
                                                                 "tool_calls": tool}, "finish_reason": "stop"}]})),
        "responses": (2, 17, event("response.output_text.delta", output_index=0, content_index=0, delta="Hel")
                      + event("response.output_item.added", output_index=1,
                              item={"type": "function_call", "call_id": "call_9", "name": "ls", "arguments": ""})
                      + event("response.function_call_arguments.delta", output_index=1, delta="{}")
                      + event("response.completed", response={"status": "completed"})),
        "responses-failed": (2, 255, event("response.failed", response={"status": "failed",
                                                                         "error": {"code": "server_error"}})),
        "responses-whole": (2, 255, compact({"status": "completed", "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "Hi"}]},
            {"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"}]})),
    }
    for name, (dialect, size, stream) in seeds.items():
        write("fuzz-dialects", name, bytes([dialect, size]) + stream.encode())


if __name__ == "__main__":
    hostile_seeds()
    policy_seeds()
    rules_seeds()
    http_seeds()
    text_seeds()
    stream_seeds()
    dialect_seeds()
