#!/usr/bin/python3
# fake-agent.py
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A fake Claude Code for libmend's agent tests: it reads prompts on stdin
# (a stream-json user message, any JSON object with a "prompt" or "text",
# or a plain text line) and answers each with a turn in stream-json on
# stdout: system/init, token deltas as stream_event lines, a result. The
# scenario named on the command line adds a background subagent that fails
# after the turn, and the turn Claude Code then runs on its own to hand the
# notification to the model. Everything is deterministic; it exits at the
# end of stdin.
#
# Scenarios:
#   plain                 every prompt gets a turn, nothing else
#   own-turn              after the first turn, Claude Code runs one of its own
#   turn-529              the first attempt of the first prompt fails with 529
#   agent-503             a subagent fails on the gateway's 503; a prompt that
#                         says SendMessage resumes it, and it completes later
#   agent-reset           the same, on a dropped connection
#   agent-keeps-failing   every resume fails again with a 503
#   agent-bad-request     the subagent fails on a 400: not retryable
#   agent-usage-limit     the subagent hits a usage limit: not retryable
#   crash-mid-turn        dies (exit 1) in the middle of its first turn
#   half-line             writes half a line of its first turn, then exits
#   flood                 answers the first prompt with 100 000 token deltas

import json
import os
import sys
import uuid

SESSION_ID = "5f0c6a4e-2b1d-4c3a-9e8f-0a1b2c3d4e5f"
MODEL = "claude-sonnet-4-5-20250929"
AGENT_ID = "a7c41e2"
AGENT_NAME = "Remote acpmux setup overview for Lawrence"

SUMMARY_503 = (
    "API Error: 503 no non-exhausted claude accounts available for model "
    + MODEL
    + " (error type server_error, HTTP 503)"
)

SUMMARIES = {
    "agent-503": SUMMARY_503,
    "agent-reset": "Connection error: ECONNRESET",
    "agent-keeps-failing": SUMMARY_503,
    "agent-bad-request": (
        "API Error: 400 {\"type\":\"error\",\"error\":{\"type\":"
        "\"invalid_request_error\",\"message\":\"messages.3: tool_use ids "
        "must be unique\"}} (error type invalid_request_error, HTTP 400)"
    ),
    "agent-usage-limit": "You've hit your usage limit \u00b7 resets 3pm",
}

FAULTS = ["crash-mid-turn", "half-line", "flood"]

SCENARIOS = ["plain", "own-turn", "turn-529"] + FAULTS + sorted(SUMMARIES)


class Agent:
    def __init__(self, scenario):
        self.scenario = scenario
        self.counter = 0
        self.prompts = 0
        self.task_state = None  # None, "running", "failed", "completed"
        self.tool_use_counter = 0
        self.failed_529 = False

    # Output

    def next_uuid(self):
        self.counter += 1
        return str(uuid.UUID(int=0x1E5700000000 + self.counter))

    def emit(self, obj):
        sys.stdout.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
        sys.stdout.write("\n")
        sys.stdout.flush()

    def next_tool_use_id(self):
        self.tool_use_counter += 1
        return "toolu_01Fake%04d" % self.tool_use_counter

    def init(self):
        self.emit({
            "type": "system",
            "subtype": "init",
            "cwd": "/home/lawrence/src/acpmux",
            "session_id": SESSION_ID,
            "tools": ["Task", "Bash", "Read", "Edit", "SendMessage"],
            "mcp_servers": [],
            "model": MODEL,
            "permissionMode": "default",
            "slash_commands": ["compact", "review"],
            "apiKeySource": "none",
            "claude_code_version": "2.0.37",
            "output_style": "default",
            "agents": ["general-purpose"],
            "uuid": self.next_uuid(),
        })

    def stream_event(self, event, parent=None):
        self.emit({
            "type": "stream_event",
            "event": event,
            "session_id": SESSION_ID,
            "parent_tool_use_id": parent,
            "uuid": self.next_uuid(),
        })

    def say(self, text, parent=None):
        """A text block streamed token by token, then the whole message."""
        message_id = "msg_01Fake%s" % self.next_uuid()[-8:]
        self.stream_event({
            "type": "message_start",
            "message": {"id": message_id, "type": "message", "role": "assistant",
                        "model": MODEL, "content": [], "stop_reason": None,
                        "usage": {"input_tokens": 12, "output_tokens": 1}},
        }, parent)
        self.stream_event({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}, parent)
        for token in text.split(" "):
            self.stream_event({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": token + " "}},
                              parent)
        self.stream_event({"type": "content_block_stop", "index": 0}, parent)
        self.stream_event({"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": len(text.split(" "))}}, parent)
        self.stream_event({"type": "message_stop"}, parent)
        self.emit({
            "type": "assistant",
            "message": {"id": message_id, "type": "message", "role": "assistant",
                        "model": MODEL,
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": None,
                        "usage": {"input_tokens": 12, "output_tokens": 9}},
            "parent_tool_use_id": parent,
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        })

    def tool_use(self, tool_use_id, name, tool_input):
        self.emit({
            "type": "assistant",
            "message": {"id": "msg_01Fake%s" % self.next_uuid()[-8:], "type": "message",
                        "role": "assistant", "model": MODEL,
                        "content": [{"type": "tool_use", "id": tool_use_id,
                                     "name": name, "input": tool_input}],
                        "stop_reason": None,
                        "usage": {"input_tokens": 20, "output_tokens": 40}},
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        })

    def tool_result(self, tool_use_id, text):
        self.emit({
            "type": "user",
            "message": {"role": "user",
                        "content": [{"tool_use_id": tool_use_id, "type": "tool_result",
                                     "content": text}]},
            "parent_tool_use_id": None,
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        })

    def result(self, text, is_error=False, status=None):
        line = {
            "type": "result",
            "subtype": "success",
            "is_error": is_error,
            "duration_ms": 2310,
            "duration_api_ms": 2207,
            "num_turns": 1,
            "result": text,
            "session_id": SESSION_ID,
            "total_cost_usd": 0.0123,
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 4096, "output_tokens": 42,
                      "service_tier": "standard"},
            "permission_denials": [],
            "uuid": self.next_uuid(),
        }
        if status is not None:
            line["api_error_status"] = status
        self.emit(line)

    def task_started(self, tool_use_id, parent=None):
        line = {
            "type": "system",
            "subtype": "task_started",
            "task_id": AGENT_ID,
            "tool_use_id": tool_use_id,
            "description": AGENT_NAME,
            "task_type": "local_agent",
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        }
        if parent is not None:
            line["parent_tool_use_id"] = parent
        self.emit(line)
        self.task_state = "running"

    def task_notification(self, status, summary):
        self.emit({
            "type": "system",
            "subtype": "task_notification",
            "task_id": AGENT_ID,
            "status": status,
            "summary": summary,
            "output_file": "/tmp/claude/tasks/%s.output" % AGENT_ID,
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        })
        self.task_state = status

    # Turns

    def plain_turn(self, prompt):
        self.init()
        # Token deltas that talk about the system and its result, unquoted
        # and escaped: none of them may cost the observer a parse.
        self.say('Done. The system result is "system" and "result": fine.')
        self.result('Done. The system result is "system" and "result": fine.')

    def own_turn(self, what):
        """Claude Code's own turn, to hand a notification to the model."""
        self.init()
        self.say("The background agent %s. I will report back." % what)
        self.result("The background agent %s." % what)

    def spawn_turn(self):
        """The first turn of an agent scenario: it starts a background
        subagent, which then fails."""
        spawn_id = self.next_tool_use_id()
        self.init()
        self.say("I will run the overview in a background agent.")
        self.tool_use(spawn_id, "Task", {
            "description": AGENT_NAME,
            "prompt": "Write an overview of the remote acpmux setup.",
            "subagent_type": "general-purpose",
            "run_in_background": True,
        })
        self.task_started(spawn_id)
        # The subagent's own subagent: nested, never resumed by the chat.
        self.emit({
            "type": "system",
            "subtype": "task_started",
            "task_id": "nested01",
            "tool_use_id": "toolu_01Nested0001",
            "description": "Nested helper",
            "parent_tool_use_id": spawn_id,
            "session_id": SESSION_ID,
            "uuid": self.next_uuid(),
        })
        self.say("Reading the relay configuration.", parent=spawn_id)
        self.tool_result(spawn_id, "Async agent launched successfully. agentId: %s" % AGENT_ID)
        self.say("The overview runs in the background.")
        self.result("The overview runs in the background.")
        self.fail_task()

    def fail_task(self):
        self.task_notification("failed", SUMMARIES[self.scenario])
        self.own_turn("failed")

    def resume_turn(self):
        resume_id = self.next_tool_use_id()
        self.init()
        self.say("Resuming the background agent.")
        self.tool_use(resume_id, "SendMessage", {
            "to": AGENT_ID,
            "message": "Continue where you stopped.",
        })
        self.task_started(resume_id)
        self.tool_result(resume_id, "Message sent to agent %s." % AGENT_ID)
        self.say("The agent runs again.")
        self.result("The agent runs again.")
        if self.scenario == "agent-keeps-failing":
            self.fail_task()
        else:
            self.task_notification("completed", "Wrote the overview of the remote acpmux setup.")
            self.own_turn("completed")

    def on_prompt(self, prompt):
        self.prompts += 1

        if self.scenario == "crash-mid-turn":
            self.init()
            self.say("Working on it")
            sys.stdout.flush()
            os._exit(1)

        if self.scenario == "half-line":
            self.init()
            sys.stdout.write('{"type":"result","subtype":"success","is_er')
            sys.stdout.flush()
            os._exit(0)

        if self.scenario == "flood" and self.prompts == 1:
            self.init()
            for i in range(100000):
                self.stream_event({"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": "tok%d " % i}})
            self.result("A long answer.")
            return

        if self.scenario == "turn-529" and not self.failed_529:
            self.failed_529 = True
            self.init()
            self.result("API Error: 529 {\"type\":\"error\",\"error\":{\"type\":"
                        "\"overloaded_error\",\"message\":\"Overloaded\"}}",
                        is_error=True, status=529)
            return

        if self.scenario in SUMMARIES:
            if self.task_state is None:
                self.spawn_turn()
                return
            if self.task_state == "failed" and "SendMessage" in prompt:
                self.resume_turn()
                return

        self.plain_turn(prompt)

        if self.scenario == "own-turn" and self.prompts == 1:
            self.own_turn("finished its check")


def prompt_text(line):
    """The text of one prompt line: stream-json input or plain text."""
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    if not isinstance(obj, dict):
        return line
    message = obj.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(block.get("text", "") for block in content
                             if isinstance(block, dict))
    for key in ("prompt", "text"):
        if isinstance(obj.get(key), str):
            return obj[key]
    return line


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.stderr.write("usage: fake-agent.py {%s}\n" % "|".join(SCENARIOS))
        return 2

    agent = Agent(sys.argv[1])
    for line in sys.stdin:
        line = line.rstrip("\r\n")
        if line.strip() == "":
            continue
        agent.on_prompt(prompt_text(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
