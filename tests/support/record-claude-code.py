#!/usr/bin/python3
# record-claude-code.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Records what the real Claude Code CLI writes in each scenario of the
# stream observer's tests, against tests/support/model-server.py, into
# tests/data/claude-code-VERSION/SCENARIO.jsonl. Run it again after bumping
# the CLI in tools/setup.sh, and review the diff: the recordings are the
# observer's reference.
#
# Usage: tests/support/record-claude-code.py [SCENARIO…]   (MEND_CLAUDE overrides the CLI)
#
# Session ids, uuids, paths and timings vary from run to run; they are kept
# as the CLI wrote them, since the observer must not depend on them.

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLAUDE = os.environ.get("MEND_CLAUDE") or os.path.join(
    ROOT, ".agents/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude")

TASK_PROMPT = "Survey the source tree and list the modules"
NESTED_PROMPT = "Read every header file"

# The Bash tool runs a command without asking only when told to.
ALLOW_BASH = {"args": ["--allowedTools", "Bash"]}
# Signed in with a plan (an OAuth token) rather than an API key: how the
# CLI reads a plan's usage limit. The token is a dummy; it only reaches
# model-server.py.
SIGNED_IN = {"env": {"ANTHROPIC_API_KEY": None, "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-offline"}}


def text(t):
    return {"kind": "text", "text": t}


def status(s, match=None, times=0):
    return {"match": match, "times": times, "answer": {"kind": "status", "status": s}}


# name: (max_retries, rules, prompts, extra seconds to read after the last
# result[, {"args": extra arguments of the CLI, "env": its environment's
# changes, None to unset}])
SCENARIOS = {
    "success": (1, [], ["Say hello"], 0),
    "529-give-up": (2, [status(529)], ["Summarize the diff"], 0),
    "503-no-accounts": (1, [status(503)], ["Summarize the diff"], 0),
    "429-rate-limited": (1, [status(429)], ["Summarize the diff"], 0),
    "401-bad-key": (2, [status(401)], ["Summarize the diff"], 0),
    "error-after-content": (0, [{"match": None, "times": 0,
                                 "answer": {"kind": "error_after_content"}}],
                            ["Summarize the diff"], 0),
    "dropped-mid-stream": (0, [{"match": None, "times": 0, "answer": {"kind": "drop"}}],
                           ["Summarize the diff"], 0),
    "subagent-503": (0, [
        {"match": "Start the survey", "times": 1,
         "answer": {"kind": "task", "description": "Survey the tree", "prompt": TASK_PROMPT}},
        {"match": "with SendMessage to", "times": 1,
         "answer": {"kind": "send_message", "message": "Please continue the survey."}},
        {"match": "Please continue the survey", "times": 0, "answer": text("Survey done.")},
        status(503, match=TASK_PROMPT),
        {"match": "agentId", "times": 0, "answer": text("The survey runs in the background.")},
    ], ["Start the survey in the background", "WAIT",
        "Resume the subagent with SendMessage to its agent id"], 8),
    "background-bash": (0, [
        {"match": "Run the slow check", "times": 1,
         "answer": {"kind": "tool_use", "name": "Bash",
                    "input": {"command": "sleep 1; echo checked", "description": "Run the slow check",
                              "run_in_background": True}}},
    ], ["Run the slow check in the background"], 4),
    # "STOP:" sends the prompt, then interrupts the CLI's turn (the stream-json
    # control request) once it retries on its own.
    "stop-during-retries": (10, [
        {"match": "Draft the postmortem", "times": 0, "answer": {"kind": "text", "text": "Drafted."}},
        status(529, match="Summarize the incident"),
    ], ["STOP:Summarize the incident", "Draft the postmortem"], 0),
    "subagent-401": (0, [
        {"match": "Start the survey", "times": 1,
         "answer": {"kind": "task", "description": "Survey the tree", "prompt": TASK_PROMPT}},
        status(401, match=TASK_PROMPT),
    ], ["Start the survey in the background", "WAIT"], 0),
    # A foreground command that runs past the CLI's 2 s mark is tracked as a
    # task (task_started with is_backgrounded false), and its exit status 7
    # ends it as failed; the tool call waits for it all along.
    "foreground-bash-failed": (0, [
        {"match": "Run the slow check", "times": 1,
         "answer": {"kind": "tool_use", "name": "Bash",
                    "input": {"command": "sleep 3; exit 7", "description": "Run the slow check"}}},
    ], ["Run the slow check"], 0, ALLOW_BASH),
    "background-bash-failed": (0, [
        {"match": "Run the slow check", "times": 1,
         "answer": {"kind": "tool_use", "name": "Bash",
                    "input": {"command": "sleep 1; exit 7", "description": "Run the slow check",
                              "run_in_background": True}}},
    ], ["Run the slow check in the background"], 4, ALLOW_BASH),
    # The subagent's requests meet a plan's five-hour limit (a 429 whose
    # unified rate-limit headers say "rejected").
    "subagent-session-limit": (0, [
        {"match": "Start the survey", "times": 1,
         "answer": {"kind": "task", "description": "Survey the tree", "prompt": TASK_PROMPT}},
        {"match": TASK_PROMPT, "times": 0,
         "answer": {"kind": "status", "status": 429, "limit": "session"}},
        {"match": "agentId", "times": 0, "answer": text("The survey runs in the background.")},
    ], ["Start the survey in the background", "WAIT"], 0, SIGNED_IN),
    # The subagent starts a subagent of its own, whose requests fail with 503;
    # the first one completes.
    "nested-subagent-503": (0, [
        {"match": "Start the survey", "times": 1,
         "answer": {"kind": "task", "description": "Survey the tree", "prompt": TASK_PROMPT}},
        {"match": TASK_PROMPT, "times": 1,
         "answer": {"kind": "task", "description": "Read the headers", "prompt": NESTED_PROMPT}},
        status(503, match=NESTED_PROMPT),
        {"match": "agentId", "times": 0, "answer": text("The survey runs in the background.")},
    ], ["Start the survey in the background", "WAIT"], 4),
}


def user_line(prompt):
    return json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n"


def run(name, max_retries, rules, prompts, linger, options=None):
    options = options or {}
    home = tempfile.mkdtemp(prefix="mend-claude-home-")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(rules, f)
        script = f.name
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "model-server.py"), script],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = server.stdout.readline().strip()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:" + port,
        "ANTHROPIC_API_KEY": "sk-ant-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
        "IS_SANDBOX": "1",
    }
    for key, value in options.get("env", {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    cli = subprocess.Popen([CLAUDE, "-p", "--input-format", "stream-json",
                            "--output-format", "stream-json", "--verbose", *options.get("args", [])],
                           cwd=home, env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    buffer = b""

    def read_until(predicate, timeout):
        nonlocal buffer
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([cli.stdout], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(cli.stdout.fileno(), 65536)
            if not chunk:
                return False
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                lines.append(line.decode())
                if predicate(json.loads(line)):
                    return True
        return False

    for prompt in prompts:
        if prompt == "WAIT":
            # The subagent fails after the turn: wait for the CLI's own turn
            # that hands the notification to the model.
            read_until(lambda o: o.get("type") == "result" and o.get("origin"), 30)
            continue
        stop = prompt.startswith("STOP:")
        if stop:
            prompt = prompt[len("STOP:"):]
        cli.stdin.write(user_line(prompt).encode())
        cli.stdin.flush()
        if stop:
            read_until(lambda o: o.get("subtype") == "api_retry", 30)
            cli.stdin.write((json.dumps({"type": "control_request", "request_id": "stop-1",
                                         "request": {"subtype": "interrupt"}}) + "\n").encode())
            cli.stdin.flush()
        read_until(lambda o: o.get("type") == "result", 60)
    if linger:
        read_until(lambda o: False, linger)
    cli.stdin.close()
    read_until(lambda o: False, 10)
    cli.wait(10)
    server.stdin.close()
    server.wait(5)
    os.unlink(script)
    shutil.rmtree(home, ignore_errors=True)
    return lines


def main():
    version = subprocess.run([CLAUDE, "--version"], capture_output=True, text=True).stdout.split()[0]
    out = os.path.join(HERE, "..", "data", "claude-code-" + version)
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[1:] or SCENARIOS:
        lines = run(name, *SCENARIOS[name])
        with open(os.path.join(out, name + ".jsonl"), "w") as f:
            for line in lines:
                f.write(line + "\n")
        print("%s: %d lines" % (name, len(lines)))


if __name__ == "__main__":
    main()
