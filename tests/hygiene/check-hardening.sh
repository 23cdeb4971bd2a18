#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The shared library is linked with full RELRO, as the top meson.build
# asks where the linker takes it: its relocations are read-only after
# start-up (a GNU_RELRO segment) and every symbol is bound at load
# (BIND_NOW).
#
# usage: check-hardening.sh LIBRARY READELF
set -eu
lib=$1
readelf=$2
status=0
if ! "$readelf" -W -l "$lib" | grep -q 'GNU_RELRO'; then
  echo "no GNU_RELRO segment in $lib (link with -Wl,-z,relro)"
  status=1
fi
if ! "$readelf" -W -d "$lib" | grep -q -E 'BIND_NOW|FLAGS_1.*\<NOW\>'; then
  echo "$lib binds its symbols lazily (link with -Wl,-z,now)"
  status=1
fi
[ $status -eq 0 ] && echo "ok: $lib has full RELRO"
exit $status
