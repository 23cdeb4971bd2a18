#!/usr/bin/python3
# hostile-acp-agent.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An Agent Client Protocol agent that breaks the protocol on purpose, for
# tests/adversarial/test-attack-acp.c: JSON-RPC 2.0, one message per line,
# on standard input and output.
#
# Usage: hostile-acp-agent.py SCRIPT.json. The script is
#   {"runs": [RUN, …]}
# and the Nth start of the agent plays the Nth RUN (the last one again
# after), counted in the file $MEND_HOSTILE_ACP_COUNT. A RUN is
#   {"initialize": [ACTION, …], "session/new": [ACTION, …],
#    "session/prompt": [[ACTION, …], …]}
# A request runs its list of actions; without one, it is answered as a
# well-behaved agent answers it. The Nth session/prompt runs the Nth list
# (the last one again after). The actions:
#   {"answer": RESULT}   answers the request
#   {"error": ERROR}     answers the request with a JSON-RPC error
#   {"send": MESSAGE}    writes MESSAGE
#   {"update": UPDATE}   a session/update of the session
#   {"raw": TEXT}        writes TEXT and a line end, as they are
#   {"bytes": TEXT}      writes TEXT as Latin-1 (one byte a character,
#                        \u00ff is the byte 0xff) and a line end
#   {"big": N}           a session/update line of at least N bytes
#   {"exact": N}         a session/update line of exactly N bytes, its
#                        line end not counted
#   {"batch": [ACTION, …]}  runs the actions, their lines written at once,
#                        in one write
#   {"stderr": TEXT}     writes TEXT on standard error
#   {"stderr_forever": true}  writes on standard error without end, from
#                        a thread
#   {"wait": METHOD}     reads until a message of METHOD
#   {"wait_reply": ID}   reads until the answer to its own request ID
#   {"hang": true}       reads until standard input ends, answers nothing
#   {"flood": N, "method": M}  writes N requests of method M (ids
#                        "flood-0"…), reading none of their answers; with
#                        "id_bytes": K, each id is K bytes longer
#   {"deaf": true}       reads nothing more, answers nothing, until killed
#   {"sleep": MS}        waits MS milliseconds, reading nothing
#   {"exit": CODE}       exits at once
# In MESSAGE, RESULT and UPDATE, the string "$SESSION" is the session's id
# and "$ID" the request's id. Each line read is appended to
# $MEND_HOSTILE_ACP_LOG.

import json
import os
import sys
import threading
import time

SESSION = "hostile-session"
LOG = open(os.environ["MEND_HOSTILE_ACP_LOG"], "a")


def run_number():
    path = os.environ["MEND_HOSTILE_ACP_COUNT"]
    try:
        with open(path) as f:
            n = int(f.read() or "0")
    except FileNotFoundError:
        n = 0
    with open(path, "w") as f:
        f.write(str(n + 1))
    return n


# The lines of a batch, until it is written.
BATCH = None


def write(text):
    if BATCH is not None:
        BATCH.append(text + "\n")
        return
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def fill(value, request_id):
    if value == "$SESSION":
        return SESSION
    if value == "$ID":
        return request_id
    if isinstance(value, dict):
        return {k: fill(v, request_id) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, request_id) for v in value]
    return value


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    LOG.write(line)
    LOG.flush()
    return json.loads(line)


def stderr_forever():
    chunk = b"e" * 65536
    try:
        while True:
            os.write(2, chunk)
    except OSError:
        os._exit(0)


def act(actions, request_id):
    global BATCH
    for action in actions:
        if "answer" in action:
            write(json.dumps({"jsonrpc": "2.0", "id": request_id,
                              "result": fill(action["answer"], request_id)}))
        elif "error" in action:
            write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": action["error"]}))
        elif "send" in action:
            write(json.dumps(fill(action["send"], request_id)))
        elif "update" in action:
            write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": SESSION, "update": fill(action["update"], request_id)}}))
        elif "raw" in action:
            write(action["raw"])
        elif "bytes" in action:
            sys.stdout.flush()
            sys.stdout.buffer.write(action["bytes"].encode("latin-1") + b"\n")
            sys.stdout.buffer.flush()
        elif "batch" in action:
            BATCH = []
            act(action["batch"], request_id)
            data, BATCH = "".join(BATCH).encode(), None
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        elif "exact" in action:
            message = {"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": SESSION, "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": ""}}}}
            message["params"]["update"]["content"]["text"] = "x" * (action["exact"] - len(json.dumps(message)))
            write(json.dumps(message))
        elif "big" in action:
            write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": SESSION, "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x" * action["big"]}}}}))
        elif "stderr" in action:
            sys.stderr.write(action["stderr"])
            sys.stderr.flush()
        elif "stderr_forever" in action:
            threading.Thread(target=stderr_forever, daemon=True).start()
        elif "wait" in action:
            while read().get("method") != action["wait"]:
                pass
        elif "wait_reply" in action:
            while True:
                message = read()
                if message.get("id") == action["wait_reply"] and "method" not in message:
                    break
        elif "hang" in action:
            while True:
                read()
        elif "flood" in action:
            params = {"sessionId": SESSION, "path": "/etc/hostname",
                      "toolCall": {"toolCallId": "toolu_flood", "title": "read"},
                      "options": [{"optionId": "no", "name": "Reject", "kind": "reject_once"}]}
            padding = "x" * action.get("id_bytes", 0)
            for i in range(action["flood"]):
                write(json.dumps({"jsonrpc": "2.0", "id": "flood-%d-%s" % (i, padding) if padding else "flood-%d" % i,
                                  "method": action["method"], "params": params}))
        elif "deaf" in action:
            while True:
                time.sleep(3600)
        elif "sleep" in action:
            time.sleep(action["sleep"] / 1000)
        elif "exit" in action:
            LOG.close()
            os._exit(action["exit"])


def main():
    with open(sys.argv[1]) as f:
        runs = json.load(f)["runs"]
    run = runs[min(run_number(), len(runs) - 1)]
    defaults = {
        "initialize": [{"answer": {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}}}],
        "session/new": [{"answer": {"sessionId": "$SESSION"}}],
    }
    # By default a prompt is answered: a message chunk, then end_turn.
    prompts = run.get("session/prompt", [[
        {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}}},
        {"answer": {"stopReason": "end_turn"}}]])
    n = 0
    while True:
        message = read()
        method = message.get("method")
        if method is None or "id" not in message:
            continue
        if method == "session/prompt":
            actions = prompts[min(n, len(prompts) - 1)]
            n += 1
        elif method in run or method in defaults:
            actions = run.get(method, defaults.get(method))
        else:
            actions = [{"error": {"code": -32601, "message": "Method not found"}}]
        act(actions, message["id"])


if __name__ == "__main__":
    main()
