#!/bin/sh
# Install scrubber for this user and register it with Claude Code.
#
#   ./install.sh [scrub install options]     e.g. ./install.sh --recipient age1… --status-line
#
# - creates scrubber's own Python environment (no sudo, the system Python is left alone) at
#   $SCRUB_VENV, default ${XDG_DATA_HOME:-~/.local/share}/scrubber/venv, and installs this
#   checkout into it (running the script again upgrades it);
# - links `scrub` into ~/.local/bin;
# - runs `scrub install "$@"`: writes a default policy if there is none and merges the hooks into
#   Claude Code's settings.json ($CLAUDE_CONFIG_DIR, default ~/.claude), with a backup.
#   Running it twice registers once; `scrub uninstall` takes it back.
# Options are those of `scrub install` (see `scrub install --help`); --dry-run shows the
# settings diff without changing the settings (the environment is still created).
# `./install.sh --help` prints the usage and the environment variables (PYTHON, SCRUB_VENV,
# XDG_DATA_HOME) and does nothing else.
set -eu

usage() {
  cat <<'EOF_USAGE'
Usage: ./install.sh [scrub install options]     e.g. ./install.sh --recipient age1... --status-line

Installs scrubber for this user (no sudo) and registers it with Claude Code:
  1. creates scrubber's own Python environment and installs this checkout into it
     (running the script again upgrades it);
  2. links `scrub` into ~/.local/bin;
  3. runs `scrub install [options]`: writes a default policy if there is none and merges the
     hooks into Claude Code's settings.json, with a backup (`scrub uninstall` takes it back).

Options are those of `scrub install` (after installing: `scrub install --help`); --dry-run
shows the settings diff without changing the settings (the environment is still created).

Environment:
  PYTHON             the interpreter to build the environment with (default: python3; 3.11+)
  SCRUB_VENV         where the environment goes
                     (default: $XDG_DATA_HOME/scrubber/venv)
  XDG_DATA_HOME      base of the default SCRUB_VENV (default: ~/.local/share)
  CLAUDE_CONFIG_DIR  Claude Code's config directory (default: ~/.claude)
  SCRUB_HOME         scrubber's own folder (default: $CLAUDE_CONFIG_DIR/scrubber)

-h, --help           print this and do nothing else
EOF_USAGE
}

for arg in "$@"; do
  case $arg in
    -h|--help) usage; exit 0 ;;
    --) break ;;
  esac
done

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
venv=${SCRUB_VENV:-$data_home/scrubber/venv}
bin_dir=$HOME/.local/bin
python=${PYTHON:-python3}

say() { printf 'install.sh: %s\n' "$*" >&2; }

if ! command -v "$python" >/dev/null 2>&1; then
  say "no $python found; install Python 3.11 or newer (or set PYTHON=/path/to/python3.11)"
  exit 2
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  say "$("$python" -V 2>&1) is too old: scrubber needs Python 3.11 or newer (set PYTHON=...)"
  exit 2
fi

if [ ! -x "$venv/bin/python" ]; then
  say "creating scrubber's environment in $venv"
  mkdir -p "$(dirname -- "$venv")"
  if ! "$python" -m venv "$venv"; then
    say "python -m venv failed (on Debian/Ubuntu: apt install python3-venv)"
    exit 3
  fi
fi
say "installing scrubber from $here"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "$here"

mkdir -p "$bin_dir"
ln -sf "$venv/bin/scrub" "$bin_dir/scrub"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) say "add $bin_dir to your PATH to run scrub (e.g. in ~/.profile: export PATH=\"\$HOME/.local/bin:\$PATH\")" ;;
esac

exec "$venv/bin/scrub" install "$@"
