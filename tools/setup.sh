#!/bin/sh
# Installs every Debian 12 package that libmend's build, tests and examples
# need, then the pinned Claude Code CLI and Agent Client Protocol adapter
# that the end-to-end tests run into project-local, git-ignored folders
# (.agents/claude-code, .agents/claude-code-acp). Idempotent. The Debian
# packages need root (or sudo); the agents are installed as the caller.
set -eu
cd "$(dirname "$0")/.."

packages="
  build-essential pkg-config meson ninja-build gettext
  libglib2.0-dev libglib2.0-bin libjson-glib-dev libsoup-3.0-dev
  libjsonrpc-glib-1.0-dev
  gobject-introspection libgirepository1.0-dev
  gir1.2-glib-2.0 gir1.2-json-1.0 gir1.2-soup-3.0 gir1.2-gtk-4.0
  gir1.2-adw-1 gir1.2-gdkpixbuf-2.0
  valac python3 python3-gi gi-docgen python3-tenacity python3-backoff
  clang libclang-rt-14-dev valgrind binutils groff-base
  xvfb xauth dbus-daemon
"

# Node.js and npm from Debian, only when no node is there at all.
command -v node >/dev/null 2>&1 || packages="$packages nodejs"
command -v npm >/dev/null 2>&1 || packages="$packages npm"

# The Claude Code CLI the tests run: the npm package ships the native
# linux-x64 binary as an optional dependency.
claude_code_version=2.1.328
claude_code_dir=.agents/claude-code
# Claude Code over the Agent Client Protocol: Zed's adapter, run by node.
claude_code_acp_version=0.16.2
claude_code_acp_dir=.agents/claude-code-acp

as_root () {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "setup: installing packages needs root:$missing" >&2
    exit 1
  fi
}

missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "setup: every package is installed"
else
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
  "$claude_code_dir/node_modules/@anthropic-ai/claude-code/package.json" 2>/dev/null | head -n 1 || true)
if [ "$installed" = "$claude_code_version" ] &&
   [ -x "$claude_code_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  echo "setup: Claude Code $claude_code_version is installed in $claude_code_dir"
else
  mkdir -p "$claude_code_dir"
  # The wrapper's postinstall is not needed: the tests run the native binary.
  npm install --prefix "$claude_code_dir" --no-audit --no-fund --ignore-scripts \
    --no-save "@anthropic-ai/claude-code@$claude_code_version"
  test -x "$claude_code_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" || {
    echo "setup: the Claude Code binary for linux-x64 did not arrive" >&2
    exit 1
  }
fi

installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
  "$claude_code_acp_dir/node_modules/@zed-industries/claude-code-acp/package.json" 2>/dev/null | head -n 1 || true)
if [ "$installed" = "$claude_code_acp_version" ] &&
   [ -x "$claude_code_acp_dir/node_modules/.bin/claude-code-acp" ]; then
  echo "setup: claude-code-acp $claude_code_acp_version is installed in $claude_code_acp_dir"
else
  mkdir -p "$claude_code_acp_dir"
  npm install --prefix "$claude_code_acp_dir" --no-audit --no-fund --ignore-scripts \
    --no-save "@zed-industries/claude-code-acp@$claude_code_acp_version"
  test -x "$claude_code_acp_dir/node_modules/.bin/claude-code-acp" || {
    echo "setup: claude-code-acp did not arrive" >&2
    exit 1
  }
fi
