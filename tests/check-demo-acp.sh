#!/bin/sh
# Runs mend-demo --acp fast (Claude Code's ACP adapter) and checks that every
# scenario shows what it promises.
# usage: check-demo-acp.sh MEND-DEMO
set -eu
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if ! out=$("$1" --acp --speed 50 2>"$err"); then
  # An agent that is not installed skips the test, unless CI requires it.
  if grep -q "run tools/setup.sh" "$err" && [ "${MEND_REQUIRE_AGENTS:-0}" != 1 ]; then
    echo "SKIP: $(cat "$err")"
    exit 77
  fi
  cat "$err" >&2
  [ -n "${out:-}" ] && printf '%s\n' "$out" >&2
  exit 1
fi
status=0
for expected in \
  "API Error: 529" \
  "succeeded after 3 attempts" \
  "queue [“Continue the current turn”, “Post the release notes”]" \
  "■ Stop (while the agent writes): session/cancel" \
  "■ stopped after 1 attempt" \
  "subagent “Survey the tree” runs (agent id" \
  "started 1 time, 1 session/cancel sent" \
  "every queued item was kept"
do
  if ! printf '%s\n' "$out" | grep -qF "$expected"; then
    echo "mend-demo --acp did not show: $expected" >&2
    status=1
  fi
done
[ $status -eq 0 ] || printf '%s\n' "$out" >&2
exit $status
