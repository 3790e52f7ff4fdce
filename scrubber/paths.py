"""Where Claude Code keeps its files and where scrubber keeps its own.

Claude Code's config directory is `$CLAUDE_CONFIG_DIR` when set and non-empty, else `~/.claude`.
Scrubber's own folder is `$SCRUB_HOME`, default `<config dir>/scrubber/`: Claude Code's sweep
leaves folders directly under the config dir alone, but deletes every top-level `*.jsonl` in
`projects/*/`, so nothing of ours ever goes there.

Functions take the environment as a mapping so that domain code and tests never read the real one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's config directory."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR", "")
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".claude"


def scrub_home(env: Mapping[str, str] | None = None) -> Path:
    """Scrubber's own folder: `$SCRUB_HOME`, else `<config dir>/scrubber`."""
    env = os.environ if env is None else env
    configured = env.get("SCRUB_HOME", "")
    if configured:
        return Path(configured).expanduser()
    return config_dir(env) / "scrubber"


def projects_dir(config: Path) -> Path:
    return config / "projects"


def file_history_dir(config: Path) -> Path:
    return config / "file-history"


def policy_file(home: Path) -> Path:
    return home / "policy.yaml"


def fingerprint_key_file(home: Path) -> Path:
    return home / "fingerprint.key"


def state_dir(home: Path) -> Path:
    return home / "state"


def prefilter_cache_dir(home: Path) -> Path:
    """Compiled prefilter databases (derived data: safe to delete at any time)."""
    return home / "cache" / "prefilter"


def spool_dir(home: Path) -> Path:
    return home / "spool"


def activity_log(home: Path) -> Path:
    return home / "log" / "activity.jsonl"


def archives_dir(home: Path) -> Path:
    return home / "archives"


def redacted_dir(home: Path) -> Path:
    return home / "redacted"


def trash_dir(home: Path) -> Path:
    return home / "trash"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents we own) as 0700; tighten it if it already exists."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    if path.stat().st_mode & 0o077:
        path.chmod(PRIVATE_DIR_MODE)
    return path
