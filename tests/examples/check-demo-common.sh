# check-demo-common.sh — what check-demo-agent.sh and check-demo-acp.sh share
# (sourced): run mend-demo with the arguments given, its output in $out; an
# agent that is not installed skips the test (exit 77), unless
# MEND_REQUIRE_AGENTS=1, as CI sets.
run_demo () {
  err=$(mktemp)
  trap 'rm -f "$err"' EXIT
  if ! out=$("$@" 2>"$err"); then
    if grep -q "run tools/setup.sh" "$err" && [ "${MEND_REQUIRE_AGENTS:-0}" != 1 ]; then
      echo "SKIP: $(cat "$err")"
      exit 77
    fi
    cat "$err" >&2
    [ -n "${out:-}" ] && printf '%s\n' "$out" >&2
    exit 1
  fi
}
