#!/bin/sh
# Runs one libFuzzer harness for MEND_FUZZ_SECONDS (default 20) from a copy
# of its seed corpus, so that the source tree is never written to. Fails on
# any crash, leak, timeout or sanitizer report; the input that caused it is
# kept in ARTIFACT-DIR.
#
# usage: run-fuzzer.sh HARNESS SEED-DIR ARTIFACT-DIR [LSAN-SUPPRESSIONS] [LIBFUZZER-OPTION…]
set -eu

if [ $# -lt 3 ]; then
  echo "usage: $0 HARNESS SEED-DIR ARTIFACT-DIR [LSAN-SUPPRESSIONS] [LIBFUZZER-OPTION…]" >&2
  exit 2
fi

harness=$1
seeds=$2
artifacts=$3
shift 3
supp=
if [ $# -gt 0 ]; then
  supp=$1
  shift
fi
seconds=${MEND_FUZZ_SECONDS:-20}

work=$(mktemp -d "${TMPDIR:-/tmp}/mend-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/corpus" "$artifacts"
cp -R "$seeds/." "$work/corpus/"

# GLib through malloc, so that LeakSanitizer sees leaked objects (the
# harness would re-execute itself to get this, too).
export G_SLICE=always-malloc
export G_DEBUG=gc-friendly
unset G_MESSAGES_DEBUG
export LC_ALL=C.UTF-8
export LANGUAGE=

# UBSan stops at its first report, so that libFuzzer keeps the input.
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -n "$supp" ]; then
  export LSAN_OPTIONS="suppressions=$supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi

log="$work/fuzz.log"
status=0
"$harness" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$artifacts/" \
  "$@" \
  "$work/corpus" >"$log" 2>&1 || status=$?

# Progress lines are many; keep the start, the end and any report.
sed -n '1,/INITED/p' "$log"
grep -E 'ERROR|WARNING|runtime error|Test unit written|SUMMARY|fuzz: ' "$log" || true
tail -n 25 "$log"

if [ "$status" -ne 0 ] || grep -qE 'runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer' "$log"; then
  echo "FAILED: $(basename "$harness") (exit $status); the input is in $artifacts/" >&2
  echo "Replay: $harness $artifacts/<crash-file>" >&2
  exit 1
fi

echo "OK: $(basename "$harness"), ${seconds} s"
