#!/bin/sh
# Runs mend-demo --agent fast (the real Claude Code CLI) and checks that every
# scenario shows what it promises.
# usage: check-demo-agent.sh MEND-DEMO
set -eu
. "$(dirname "$0")/check-demo-common.sh"
run_demo "$1" --agent --speed 50
status=0
for expected in \
  "Claude Code is retrying (529, 1 of 1)" \
  "succeeded after 3 attempts" \
  "queue [“Continue the current turn”, “Post the release notes”]" \
  "■ Stop (while Claude Code retries on its own)" \
  "subagent “Survey the tree” runs" \
  "(a resume prompt, provenance" \
  "subagent “Survey the tree” completed" \
  "started 1 time;" \
  "every queued item was kept"
do
  if ! printf '%s\n' "$out" | grep -qF "$expected"; then
    echo "mend-demo --agent did not show: $expected" >&2
    status=1
  fi
done
[ $status -eq 0 ] || printf '%s\n' "$out" >&2
exit $status
