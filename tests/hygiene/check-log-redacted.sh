#!/bin/sh
# check-log-redacted.sh LIBDIR
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every line libmend logs goes through the redaction of its failures: the
# library logs with mend_debug () and its kin (lib/mend-redact-private.h),
# never with g_debug (), g_info (), g_message (), g_warning (),
# g_critical () or g_log () straight. Comment lines (doc examples) do not
# count.
set -eu
libdir=$1

found=$(grep -n -E '\<g_(debug|info|message|warning|critical|log|log_structured)[[:space:]]*\(' \
          $(find "$libdir" -name "*.[ch]") |
        grep -v -E '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)' |
        grep -v -E '^[^:]*mend-redact\.c:' || true)

if [ -n "$found" ]; then
  echo "These log without redaction (use mend_debug () and its kin):"
  echo "$found"
  exit 1
fi
