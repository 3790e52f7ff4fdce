#!/usr/bin/env bash
# Installs the pinned Claude Code CLI for the end-to-end tests in tests/e2e/claude/ and prints the
# path of its `claude` binary on stdout (nothing else goes to stdout, so callers can capture it:
#   SCRUB_CLAUDE_BIN="$(.ci/install-claude.sh)").
# Idempotent: a prefix that already holds the pinned version is reused without touching the network.
# Never fails the build: without npm, or when the install fails (offline, registry down), it warns on
# stderr, prints nothing and exits 0; the tests marked `claude` then skip.
#
# Environment:
#   CLAUDE_CODE_VERSION   version to install (default: the one the tests were written against)
#   SCRUB_CLAUDE_PREFIX   npm prefix to install into (default: $XDG_CACHE_HOME or ~/.cache, then
#                         scrubber-ci/claude-<version>)
set -uo pipefail

version="${CLAUDE_CODE_VERSION:-2.1.332}"
prefix="${SCRUB_CLAUDE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/scrubber-ci/claude-$version}"
bin="$prefix/bin/claude"

warn() { echo "install-claude: $*" >&2; }

installed_version() {
  # The package's own manifest, not `claude --version`: that would start the CLI.
  local manifest="$prefix/lib/node_modules/@anthropic-ai/claude-code/package.json"
  [ -f "$manifest" ] || return 1
  # sed, not node: the binary is native, so a working install needs no node to be reused.
  sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

if [ -x "$bin" ] && [ "$(installed_version)" = "$version" ]; then
  echo "$bin"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  warn "node/npm not found; Claude Code end-to-end tests will skip"
  exit 0
fi

mkdir -p "$prefix" || { warn "cannot create $prefix; tests will skip"; exit 0; }
warn "installing @anthropic-ai/claude-code@$version into $prefix"
# --ignore-scripts is not used: the package's postinstall fetches the native binary for this platform.
if ! npm install --global --prefix "$prefix" --no-fund --no-audit --loglevel=error \
  "@anthropic-ai/claude-code@$version" >&2; then
  warn "npm install failed; Claude Code end-to-end tests will skip"
  exit 0
fi

if [ ! -x "$bin" ] || [ "$(installed_version)" != "$version" ]; then
  warn "install finished but $bin (version $version) is missing; tests will skip"
  exit 0
fi
echo "$bin"
