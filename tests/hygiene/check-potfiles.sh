#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every source file of the library and of mend-demo that marks a string
# for translation is in its POTFILES.in, so that no user-visible string
# is left out of the translations.
#
# usage: check-potfiles.sh SRCDIR
set -eu
cd "$1"
status=0
check () {
  dir=$1 potfiles=$2
  for f in $(find "$dir" -name "*.c" | LC_ALL=C sort); do
    if grep -q '_ \?("' "$f" && ! grep -qx "$f" "$potfiles"; then
      echo "not in $potfiles: $f"
      status=1
    fi
  done
}
check lib po/POTFILES.in
check examples examples/po/POTFILES.in
[ $status -eq 0 ] && echo "every file with translatable strings is listed"
exit $status
