#!/bin/sh
# Installs every Debian 12 package that libmend's build, tests and examples need.
# Idempotent; run as root (or through sudo).
set -eu

packages="
  build-essential pkg-config meson ninja-build gettext
  libglib2.0-dev libglib2.0-bin libjson-glib-dev libsoup-3.0-dev
  gobject-introspection libgirepository1.0-dev
  gir1.2-glib-2.0 gir1.2-json-1.0 gir1.2-soup-3.0 gir1.2-gtk-4.0
  gir1.2-adw-1 gir1.2-gdkpixbuf-2.0
  valac python3 python3-gi gi-docgen python3-tenacity python3-backoff
  clang libclang-rt-14-dev valgrind binutils
  xvfb xauth dbus-daemon
"

missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "setup: every package is installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo "$0" "$@"
  fi
  echo "setup: these packages are missing and installing them needs root:$missing" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
