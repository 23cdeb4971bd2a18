#!/usr/bin/python3
# fake-acp-agent.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A scripted Agent Client Protocol agent for MendAcpAgent's unit tests:
# JSON-RPC 2.0, one message per line, on standard input and output.
#
# Usage: fake-acp-agent.py SCRIPT.json. The script is
#   {"loadSession": BOOL, "newError": ERROR, "prompts": [[ACTION, …], …]}
# ("newError": session/new answers with that JSON-RPC error; "closeStdin":
# after session/new, it stops reading — its standard input closed — and
# exits a moment later; "promptsAfterLoad": the lists a run that loaded a
# session with session/load uses instead of "prompts"; "loadError":
# session/load answers with that JSON-RPC error; "agentInfo": initialize
# answers with it)
# and the Nth session/prompt runs the Nth list of actions (the last one
# again when there are more prompts than lists; an empty list leaves the
# prompt unanswered, whatever session/cancel says):
#   {"update": {...}}                 a session/update with this update
#   {"params_meta": {...}, "update"}  the same, with _meta on the params
#   {"request": M, "params": {...}}   asks the client M, waits for the
#                                     answer, and says it in a message chunk
#                                     "answer: JSON" (or "error: CODE")
#   {"result": {...}}                 answers the prompt
#   {"error": {...}}                  answers the prompt with this error
#   {"replay": NAME}                  answers the prompt as the recorded
#                                     tests/data/claude-code-acp-*/NAME.jsonl
#                                     did: its prompt's updates and requests
#                                     (each answer said as "request" does),
#                                     then its prompt's result or error
#   {"wait_cancel": true}             waits for session/cancel, then
#                                     answers {"stopReason": "cancelled"}
#   {"exit": CODE}                    exits at once
# Each line it reads is appended to $MEND_FAKE_ACP_LOG when set.

import glob
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = open(os.environ["MEND_FAKE_ACP_LOG"], "a") if os.environ.get("MEND_FAKE_ACP_LOG") else None
SESSION = "fake-session-%d" % os.getpid()
pending = []


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read(held=True):
    """The next message: one held back while waiting for another first,
    unless @held is false."""
    if held and pending:
        return pending.pop(0)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    if LOG is not None:
        LOG.write(line)
        LOG.flush()
    return json.loads(line)


def ask(method, params, session):
    """Asks the client @method, waits for its answer, and says it in a
    message chunk: "answer: JSON" or "error: CODE"."""
    send({"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params})
    while True:
        message = read(held=False)
        if message.get("id") == "req-1" and "method" not in message:
            break
        pending.append(message)
    said = ("answer: " + json.dumps(message["result"], sort_keys=True) if "result" in message
            else "error: %d" % message["error"]["code"])
    send({"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": session, "update": {"sessionUpdate": "agent_message_chunk",
                                         "content": {"type": "text", "text": said}}}})


def replay(name, session, prompt_id):
    path = sorted(glob.glob(os.path.join(HERE, "..", "data", "claude-code-acp-*", name + ".jsonl")))[-1]
    in_prompt = None
    for line in open(path):
        record = json.loads(line)
        message = record["message"]
        if record["dir"] == "send" and message.get("method") == "session/prompt":
            in_prompt = message["id"]
            continue
        if in_prompt is None or record["dir"] != "recv":
            continue
        if message.get("method") == "session/update":
            message["params"]["sessionId"] = session
            send(message)
        elif message.get("method") is not None and "id" in message:
            # A request of the agent's: asked again, its answer said.
            params = dict(message.get("params") or {}, sessionId=session)
            ask(message["method"], params, session)
        elif message.get("id") == in_prompt:
            message["id"] = prompt_id
            send(message)
            return


def run(actions, session, prompt_id):
    for action in actions:
        if "update" in action:
            params = {"sessionId": session, "update": action["update"]}
            if "params_meta" in action:
                params["_meta"] = action["params_meta"]
            send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        elif "request" in action:
            ask(action["request"], action.get("params", {}), session)
        elif "result" in action:
            send({"jsonrpc": "2.0", "id": prompt_id, "result": action["result"]})
        elif "error" in action:
            send({"jsonrpc": "2.0", "id": prompt_id, "error": action["error"]})
        elif "replay" in action:
            replay(action["replay"], session, prompt_id)
        elif "wait_cancel" in action:
            held = [m for m in pending if m.get("method") == "session/cancel"]
            for m in held:
                pending.remove(m)
            while not held:
                message = read(held=False)
                if message.get("method") == "session/cancel":
                    break
                pending.append(message)
            send({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "cancelled"}})
        elif "exit" in action:
            sys.exit(action["exit"])


def main():
    with open(sys.argv[1]) as f:
        script = json.load(f)
    prompts = script.get("prompts", [[{"result": {"stopReason": "end_turn"}}]])
    n = 0
    session = None
    loaded = False
    while True:
        message = read()
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": 1,
                      "agentCapabilities": {"loadSession": script.get("loadSession", False)}}
            if "agentInfo" in script:
                result["agentInfo"] = script["agentInfo"]
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "session/new" and "newError" in script:
            send({"jsonrpc": "2.0", "id": message["id"], "error": script["newError"]})
        elif method == "session/new":
            session = SESSION
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": session}})
            if script.get("closeStdin"):
                os.close(0)
                time.sleep(0.2)
                sys.exit(0)
        elif method == "session/load" and "loadError" in script:
            send({"jsonrpc": "2.0", "id": message["id"], "error": script["loadError"]})
        elif method == "session/load":
            session = message["params"]["sessionId"]
            loaded = True
            send({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": session, "update": {"sessionUpdate": "user_message_chunk",
                                                 "content": {"type": "text", "text": "replayed"}}}})
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "session/prompt":
            lists = script["promptsAfterLoad"] if loaded and "promptsAfterLoad" in script else prompts
            actions = lists[min(n, len(lists) - 1)]
            n += 1
            run(actions, session, message["id"])
        elif method == "session/cancel":
            pass
        elif "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
