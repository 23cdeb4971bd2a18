#!/usr/bin/python3
# record-acp.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Records the Agent Client Protocol traffic of Zed's claude-code-acp
# adapter in scenarios of the ACP tests, against tests/model-server.py,
# into tests/data/claude-code-acp-VERSION/SCENARIO.jsonl: one JSON object
# per line, {"dir": "send" | "recv", "message": {…}}. Run it again after
# bumping the adapter in tools/setup.sh, and review the diff: the
# recordings show which shapes MendAcpAgent reads.
#
# Usage: tests/record-acp.py [SCENARIO…]   (MEND_CLAUDE_CODE_ACP overrides the adapter)
#
# Session ids, tool call ids, paths and timings vary from run to run; they
# are kept as the adapter wrote them. The available_commands_update and
# the models list, long and irrelevant here, are kept too.

import json
import os
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADAPTER = os.environ.get("MEND_CLAUDE_CODE_ACP") or os.path.join(
    ROOT, ".agents/claude-code-acp/node_modules/.bin/claude-code-acp")

TASK_PROMPT = "Survey the source tree and list the modules"


def rule(match, answer, times=0):
    return {"match": match, "times": times, "answer": answer}


# name: (rules, prompts, seconds to read after the last answer, cancel after s)
SCENARIOS = {
    "success": ([rule(None, {"kind": "text", "text": "Hello."})], ["Say hello"], 0, None),
    "529-error": ([rule(None, {"kind": "status", "status": 529})], ["Fix the build"], 0, None),
    "401-error": ([rule(None, {"kind": "status", "status": 401})], ["Fix the build"], 0, None),
    "cancel": ([rule(None, {"kind": "hang"})], ["Fix the build"], 0, 3),
    "background-task": ([rule("Start the survey", {"kind": "task", "description": "Survey the tree",
                                                   "prompt": TASK_PROMPT}, 1),
                         rule(TASK_PROMPT, {"kind": "status", "status": 503}),
                         rule(None, {"kind": "text", "text": "The survey runs in the background."})],
                        ["Start the survey in the background", "Is the survey done?"], 8, None),
    "foreground-task": ([rule("Run the survey", {"kind": "tool_use", "name": "Task", "input": {
                             "description": "Survey the tree", "prompt": TASK_PROMPT,
                             "subagent_type": "general-purpose"}}, 1),
                         rule(TASK_PROMPT, {"kind": "status", "status": 503}),
                         rule(None, {"kind": "text", "text": "The survey failed."})],
                        ["Run the survey now"], 0, None),
    "permission": ([rule("Clean the build", {"kind": "tool_use", "name": "Bash", "input": {
                        "command": "rm -rf build", "description": "Remove the build directory"}}, 1),
                    rule(None, {"kind": "text", "text": "I did not remove it."})],
                   ["Clean the build"], 0, None),
}


class Agent:
    def __init__(self, env, cwd, out):
        self.proc = subprocess.Popen([ADAPTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.out = out
        self.next_id = 0
        self.buf = b""

    def send(self, message):
        self.out.write(json.dumps({"dir": "send", "message": message}) + "\n")
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def read(self, until_id=None, seconds=60.0, on_message=None):
        end = time.time() + seconds
        while time.time() < end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                message = json.loads(line)
                self.out.write(json.dumps({"dir": "recv", "message": message}) + "\n")
                if on_message:
                    on_message(message)
                if until_id is not None and message.get("id") == until_id and "method" not in message:
                    return message
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk
        return None


def record(name, version):
    rules, prompts, linger, cancel_after = SCENARIOS[name]
    with tempfile.TemporaryDirectory() as home:
        rules_path = os.path.join(home, "rules.json")
        with open(rules_path, "w") as f:
            json.dump(rules, f)
        server = subprocess.Popen([sys.executable, os.path.join(HERE, "model-server.py"), rules_path],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        port = int(server.stdout.readline())
        env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8",
               "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
               "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "CLAUDE_CODE_MAX_RETRIES": "0", "IS_SANDBOX": "1"}
        out_dir = os.path.join(HERE, "data", "claude-code-acp-" + version)
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, name + ".jsonl"), "w") as out:
            agent = Agent(env, home, out)
            agent.read(agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}}))
            reply = agent.read(agent.call("session/new", {"cwd": home, "mcpServers": []}))
            session = reply["result"]["sessionId"]

            # As MendAcpAgent does by default: the reject_once option.
            def deny(message):
                if message.get("method") == "session/request_permission":
                    options = [o["optionId"] for o in message["params"].get("options", [])
                               if o.get("kind") == "reject_once"]
                    outcome = ({"outcome": "selected", "optionId": options[0]} if options
                               else {"outcome": "cancelled"})
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

            for prompt in prompts:
                pid = agent.call("session/prompt", {"sessionId": session,
                                                    "prompt": [{"type": "text", "text": prompt}]})
                if cancel_after is not None:
                    agent.read(seconds=cancel_after, on_message=deny)
                    agent.send({"jsonrpc": "2.0", "method": "session/cancel",
                                "params": {"sessionId": session}})
                agent.read(pid, on_message=deny)
            if linger:
                agent.read(seconds=linger, on_message=deny)
            agent.proc.kill()
            agent.proc.wait()
        server.stdin.close()
        server.wait()


def main():
    with open(os.path.join(os.path.dirname(ADAPTER), "..", "@zed-industries", "claude-code-acp",
                           "package.json")) as f:
        version = json.load(f)["version"]
    for name in sys.argv[1:] or SCENARIOS:
        print("recording", name, file=sys.stderr)
        record(name, version)


if __name__ == "__main__":
    main()
