#!/bin/sh
# Runs mend-demo fast and checks that every scenario shows what it promises.
# usage: check-demo.sh MEND-DEMO
set -eu
out=$("$1" --speed 50)
status=0
for expected in \
  "succeeded after 3 attempts" \
  "queue [“Then update the changelog”]" \
  "queue [“Continue the current turn”, “Post the release notes”]" \
  "■ Stop" \
  "Usage limit reached — continues at" \
  "runs again" \
  "every queued item was kept"
do
  if ! printf '%s\n' "$out" | grep -qF "$expected"; then
    echo "mend-demo did not show: $expected" >&2
    status=1
  fi
done
[ $status -eq 0 ] || printf '%s\n' "$out" >&2
exit $status
