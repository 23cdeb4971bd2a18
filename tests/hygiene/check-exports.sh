#!/bin/sh
# Fails if the shared library exports any symbol that is not mend_*.
# usage: check-exports.sh LIBRARY NM
set -eu
lib=$1
nm=${2:-nm}

exported=$("$nm" -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }')
if [ -z "$exported" ]; then
  echo "no exported symbols found in $lib" >&2
  exit 1
fi

stray=$(printf '%s\n' "$exported" | grep -v '^mend_' || true)
if [ -n "$stray" ]; then
  echo "symbols exported outside the mend_ prefix (declare them in a public header with MEND_AVAILABLE_IN_x_y):" >&2
  printf '  %s\n' $stray >&2
  exit 1
fi

echo "ok: $(printf '%s\n' "$exported" | wc -l) symbols, all mend_*"
