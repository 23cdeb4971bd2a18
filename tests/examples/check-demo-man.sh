#!/bin/sh
# mend-demo(1): `meson install --destdir` puts it in share/man/man1 beside
# the program in bin, it renders without a warning, and it documents every
# option that `mend-demo --help` lists.
# usage: check-demo-man.sh BUILDDIR MAN-PAGE MEND-DEMO
set -eu
builddir=$1 page=$2 demo=$3
destdir=$(mktemp -d)
trap 'rm -rf "$destdir"' EXIT
status=0

meson install -C "$builddir" --destdir "$destdir" --no-rebuild --quiet >/dev/null
installed=$(find "$destdir" -path '*/share/man/man1/mend-demo.1' -type f)
if [ -z "$installed" ]; then
  echo "meson install put no share/man/man1/mend-demo.1 under $destdir:" >&2
  (cd "$destdir" && find . -type f | sort) >&2
  exit 1
fi
if [ -z "$(find "$destdir" -path '*/bin/mend-demo' -type f)" ]; then
  echo "meson install put no bin/mend-demo" >&2
  status=1
fi
if ! cmp -s "$installed" "$page"; then
  echo "the installed page differs from $page" >&2
  status=1
fi

# groff prints a warning for any macro or escape it cannot make sense of.
warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$installed" 2>&1)
if [ -n "$warnings" ]; then
  printf 'groff warns about mend-demo.1:\n%s\n' "$warnings" >&2
  status=1
fi

# Every long option of --help is in the page (as roff writes it: \-\-name).
for option in $(LC_ALL=C.UTF-8 LANGUAGE= "$demo" --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z-]*\).*/\2/p'); do
  roff=$(printf '%s' "$option" | sed 's/-/\\\\-/g')
  if ! grep -q "\\\\-\\\\-$roff" "$page"; then
    echo "mend-demo(1) does not document --$option" >&2
    status=1
  fi
done
exit $status
