#!/bin/sh
# Runs mend-demo --acp fast (Claude Code's ACP adapter) and checks that every
# scenario shows what it promises.
# usage: check-demo-acp.sh MEND-DEMO
set -eu
. "$(dirname "$0")/check-demo-common.sh"
run_demo "$1" --acp --speed 50
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
