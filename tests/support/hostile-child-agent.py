#!/usr/bin/env python3
# hostile-child-agent.py — an agent whose processes misbehave, for test-agent-life.c
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: hostile-child-agent.py PROTOCOL BEHAVIOUR DIR
#
# PROTOCOL is stream-json (a user message per line on stdin) or acp (JSON-RPC:
# initialize and session/new are answered). At the first prompt the agent does
# BEHAVIOUR, writing what the test needs to know into DIR (its own pid in
# DIR/agent.pid first):
#
#   grandchild     forks a process that keeps stdout and stderr open for five
#                  minutes (DIR/tool.pid), and exits
#   ignore-term    ignores SIGTERM, starts a tool that ignores it too
#                  (DIR/tool.pid), never answers (DIR/ready)
#   term-children  starts a tool (DIR/tool.pid); on SIGTERM ends it, writes
#                  DIR/term and exits; never answers (DIR/ready)
#   fork-loop      ignores SIGTERM and forks a new process that goes on while
#                  the old one exits, again and again (DIR/ready after a few)

import json
import os
import signal
import sys
import time


def write_file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def start_tool(directory, ignore_term):
    pid = os.fork()
    if pid == 0:
        if ignore_term:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(60)
    write_file(directory, "tool.pid", str(pid))
    return pid


def behave(behaviour, directory):
    # The agent's pid: its process group's too.
    write_file(directory, "agent.pid", str(os.getpid()))
    if behaviour == "grandchild":
        pid = os.fork()
        if pid == 0:
            # Holds the agent's stdout and stderr open.
            time.sleep(300)
            os._exit(0)
        write_file(directory, "tool.pid", str(pid))
        os._exit(0)

    if behaviour == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        start_tool(directory, True)
        write_file(directory, "ready", "")
        while True:
            time.sleep(60)

    if behaviour == "term-children":
        tool = start_tool(directory, True)

        def on_term(signum, frame):
            os.kill(tool, signal.SIGKILL)
            os.waitpid(tool, 0)
            write_file(directory, "term", "")
            os._exit(0)

        signal.signal(signal.SIGTERM, on_term)
        write_file(directory, "ready", "")
        while True:
            time.sleep(60)

    if behaviour == "fork-loop":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        n = 0
        while True:
            if os.fork() != 0:
                os._exit(0)
            n += 1
            if n == 5:
                write_file(directory, "ready", "")
            time.sleep(0.005)

    sys.exit("unknown behaviour " + behaviour)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("stream-json", "acp"):
        sys.exit(__doc__)
    protocol, behaviour, directory = sys.argv[1:]

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if protocol == "stream-json":
            if message.get("type") == "user":
                behave(behaviour, directory)
            continue
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"],
                  "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "hostile-1"}})
        elif method == "session/prompt":
            behave(behaviour, directory)


if __name__ == "__main__":
    main()
