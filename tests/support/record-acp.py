#!/usr/bin/python3
# record-acp.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Records the Agent Client Protocol traffic of a real ACP agent in
# scenarios of the ACP tests, against tests/support/model-server.py (which speaks
# each agent's provider API), into tests/data/AGENT-VERSION/SCENARIO.jsonl:
# one JSON object per line, {"dir": "send" | "recv", "message": {…}}. Run it
# again after bumping an agent in tools/setup.sh, and review the diff: the
# recordings show which shapes MendAcpAgent reads.
#
# Usage: tests/support/record-acp.py [--agent AGENT] [SCENARIO…]
#   AGENT: claude-code-acp (the default; MEND_CLAUDE_CODE_ACP overrides it),
#          claude-agent-acp (MEND_CLAUDE_AGENT_ACP), gemini-cli (MEND_GEMINI),
#          codex-acp (MEND_CODEX_ACP)
# Each agent runs offline as the C tests launch it (tests/support/mend-test-agents.c):
# a private HOME, its own retries off.
#
# Session ids, tool call ids, paths and timings vary from run to run; they
# are kept as the agent wrote them. The available_commands_update and the
# models list, long and irrelevant here, are kept too.

import json
import os
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODULES = os.path.join(ROOT, ".agents")


def agent_path(env_name, default):
    return os.environ.get(env_name) or os.path.join(MODULES, default)


def package_version(path):
    with open(path) as f:
        return json.load(f)["version"]


TASK_PROMPT = "Survey the source tree and list the modules"


def rule(match, answer, times=0):
    return {"match": match, "times": times, "answer": answer}


# name: (rules, prompts, seconds to read after the last answer, cancel after s)
CLAUDE_SCENARIOS = {
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

# What every agent is recorded in: an answer, a 503, a 429 (a rate limit
# and, where the API tells them apart, a quota used up), and the prompt
# after a failed one (a 503, then the answer) with a few seconds more.
COMMON_SCENARIOS = {
    "success": CLAUDE_SCENARIOS["success"],
    "503-error": ([rule(None, {"kind": "status", "status": 503})], ["Fix the build"], 0, None),
    "429-error": ([rule(None, {"kind": "status", "status": 429})], ["Fix the build"], 0, None),
    "429-quota": ([rule(None, {"kind": "status", "status": 429, "limit": "quota"})],
                  ["Fix the build"], 0, None),
    "prompt-after-503": ([rule(None, {"kind": "status", "status": 503}, 1),
                          rule(None, {"kind": "text", "text": "Build fixed."})],
                         ["Fix the build", "Fix the build"], 3, None),
    # What follows a false end_turn: the prompts after it, each answered
    # by its own rule, so that whose answer streams when shows.
    "prompts-after-503": ([rule("Fix the build", {"kind": "status", "status": 503}, 1),
                           rule("Fix the build", {"kind": "text", "text": "Build fixed."}),
                           rule("Update the changelog", {"kind": "text", "text": "Changelog updated."}),
                           rule("Tag the release", {"kind": "text", "text": "Release tagged."})],
                          ["Fix the build", "Fix the build", "Update the changelog", "Tag the release"], 3, None),
}

# Codex alone: a model it has no metadata for (MEND_RECORD_CODEX_MODEL
# names it) makes it write a warning as a message chunk.
CODEX_SCENARIOS = {
    "unknown-model-warning": COMMON_SCENARIOS["success"],
}


def claude_env(home, port):
    return {"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0", "IS_SANDBOX": "1"}


def gemini_env(home, port):
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                               "maxAttempts": 1},
                   "privacy": {"usageStatisticsEnabled": False},
                   "telemetry": {"enabled": False}}, f)
    return {"TMPDIR": home, "GEMINI_API_KEY": "stub-gemini-key-not-a-key",
            "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port,
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"}


def codex_env(home, port):
    codex_home = os.path.join(home, ".codex")
    os.makedirs(codex_home)
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        f.write("""model = "%s"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:%d/v1"
env_key = "STUB_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000

[analytics]
enabled = false

[otel]
exporter = "none"

[history]
persistence = "none"
""" % (os.environ.get("MEND_RECORD_CODEX_MODEL", "gpt-5.4"), port))
    return {"TMPDIR": home, "CODEX_HOME": codex_home, "STUB_OPENAI_API_KEY": "stub-openai-key-not-a-key",
            "RUST_LOG": "warn", "NO_COLOR": "1"}


# name: (argv, its package.json, environment, scenarios)
def agents():
    claude_code_acp = agent_path("MEND_CLAUDE_CODE_ACP", "claude-code-acp/node_modules/.bin/claude-code-acp")
    claude_agent_acp = agent_path("MEND_CLAUDE_AGENT_ACP", "claude-agent-acp/node_modules/.bin/claude-agent-acp")
    gemini = agent_path("MEND_GEMINI", "gemini-cli/node_modules/.bin/gemini")
    codex_acp = agent_path("MEND_CODEX_ACP",
                           "codex-acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp")
    claude_common = {k: v for k, v in COMMON_SCENARIOS.items() if k != "429-quota"}
    return {
        "claude-code-acp": ([claude_code_acp],
                            os.path.join(os.path.dirname(claude_code_acp), "..", "@zed-industries",
                                         "claude-code-acp", "package.json"),
                            claude_env, CLAUDE_SCENARIOS),
        "claude-agent-acp": ([claude_agent_acp],
                             os.path.join(os.path.dirname(claude_agent_acp), "..", "@zed-industries",
                                          "claude-agent-acp", "package.json"),
                             claude_env, claude_common),
        "gemini-cli": ([gemini, "--acp"],
                       os.path.join(os.path.dirname(gemini), "..", "@google", "gemini-cli", "package.json"),
                       gemini_env, COMMON_SCENARIOS),
        "codex-acp": ([codex_acp],
                      os.path.join(os.path.dirname(codex_acp), "..", "..", "codex-acp", "package.json"),
                      codex_env, dict(COMMON_SCENARIOS, **CODEX_SCENARIOS)),
    }


class Agent:
    def __init__(self, argv, env, cwd, out):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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


def record(agent, name, version):
    argv, _, make_env, scenarios = agents()[agent]
    rules, prompts, linger, cancel_after = scenarios[name]
    with tempfile.TemporaryDirectory() as home:
        rules_path = os.path.join(home, "rules.json")
        with open(rules_path, "w") as f:
            json.dump(rules, f)
        server = subprocess.Popen([sys.executable, os.path.join(HERE, "model-server.py"), rules_path],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        port = int(server.stdout.readline())
        env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8"}
        env.update(make_env(home, port))
        out_dir = os.path.join(HERE, "..", "data", agent + "-" + version)
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, name + ".jsonl"), "w") as out:
            agent_proc = Agent(argv, env, home, out)
            agent_proc.read(agent_proc.call("initialize", {"protocolVersion": 1, "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}}))
            reply = agent_proc.read(agent_proc.call("session/new", {"cwd": home, "mcpServers": []}))
            session = reply["result"]["sessionId"]

            # As MendAcpAgent does by default: the reject_once option.
            def deny(message):
                if message.get("method") == "session/request_permission":
                    options = [o["optionId"] for o in message["params"].get("options", [])
                               if o.get("kind") == "reject_once"]
                    outcome = ({"outcome": "selected", "optionId": options[0]} if options
                               else {"outcome": "cancelled"})
                    agent_proc.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

            for prompt in prompts:
                pid = agent_proc.call("session/prompt", {"sessionId": session,
                                                         "prompt": [{"type": "text", "text": prompt}]})
                if cancel_after is not None:
                    agent_proc.read(seconds=cancel_after, on_message=deny)
                    agent_proc.send({"jsonrpc": "2.0", "method": "session/cancel",
                                     "params": {"sessionId": session}})
                agent_proc.read(pid, on_message=deny)
                # As libmend's backoff would, in real time.
                if os.environ.get("MEND_RECORD_PAUSE"):
                    agent_proc.read(seconds=float(os.environ["MEND_RECORD_PAUSE"]), on_message=deny)
            if linger:
                agent_proc.read(seconds=linger, on_message=deny)
            agent_proc.proc.kill()
            agent_proc.proc.wait()
        server.stdin.close()
        server.wait()


def main():
    args = sys.argv[1:]
    agent = "claude-code-acp"
    if args[:1] == ["--agent"] and len(args) > 1:
        agent, args = args[1], args[2:]
    if agent not in agents():
        sys.exit("record-acp.py: no agent %s (%s)" % (agent, ", ".join(agents())))
    _, package, _, scenarios = agents()[agent]
    version = package_version(package)
    for name in args or scenarios:
        print("recording", agent, version, name, file=sys.stderr)
        record(agent, name, version)


if __name__ == "__main__":
    main()
