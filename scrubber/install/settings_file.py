"""Reading and writing Claude Code's settings file.

A settings file that is not valid JSON is refused with the position of the error and never
overwritten. Every write keeps a backup of the previous file under `$SCRUB_HOME/backups/`
(outside the folders Claude Code's sweep deletes), goes through a temp file and a rename, keeps
the file's mode and writes through a symlink to its target (dotfile managers link these files).
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scrubber import paths
from scrubber.durable import PRIVATE_FILE_MODE, atomic_write
from scrubber.errors import ConfigError
from scrubber.install.settings import Settings
from scrubber.untrusted import DamagedDocument, read_bounded

SETTINGS_NAME = "settings.json"


_MAX_SETTINGS_BYTES = 4 << 20


def settings_file(config: Path) -> Path:
    return config / SETTINGS_NAME


def backups_dir(home: Path) -> Path:
    return home / "backups"


@dataclass(frozen=True, slots=True)
class SettingsText:
    path: Path
    text: str | None  # None: the file does not exist
    data: Settings


def read_settings(path: Path) -> SettingsText:
    """A settings file as text and data. Raises ConfigError for a file we must not touch."""
    hint = (
        "fix the file (or move it away) and run the command again; scrubber never rewrites a "
        "settings file it cannot read"
    )
    try:
        # Never blocking (a FIFO at the name) and bounded (a link to /dev/zero); a link is
        # followed: dotfile managers link settings files.
        raw = read_bounded(path, _MAX_SETTINGS_BYTES, follow=True)
    except FileNotFoundError:
        return SettingsText(path, None, {})
    except DamagedDocument:
        raise ConfigError(f"{path}: too large for a settings file", hint) from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})", hint) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text", hint) from None
    if not text.strip():
        return SettingsText(path, text, {})
    try:
        data = json.loads(text, parse_float=_finite_float, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        # The decoder names a position and what it expected, never the content.
        raise ConfigError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})",
            hint,
        ) from None
    except _NotWritableBack:
        raise ConfigError(
            f"{path}: holds a number that cannot be written back as JSON (NaN, Infinity, or "
            "one too large for a float such as 1e999)",
            hint,
        ) from None
    except (RecursionError, ValueError):
        # Nesting deeper than the parser goes, or an integer of thousands of digits.
        raise ConfigError(f"{path}: nested too deep or a number too long to read", hint) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level", hint)
    return SettingsText(path, text, data)


class _NotWritableBack(Exception):
    """A number that `render_settings` would write as `Infinity`/`NaN`, which is no JSON:
    Claude Code (Node's JSON.parse) could then not read the file we rewrote."""


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotWritableBack
    return number


def _refuse_constant(name: str) -> float:
    raise _NotWritableBack


def render_settings(data: Settings) -> str:
    """JSON as Claude Code writes its settings: two-space indent, keys in their order."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def settings_diff(path: Path, old: str | None, new: str | None) -> str:
    before = [] if old is None else old.splitlines(keepends=True)
    after = [] if new is None else new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, fromfile=f"{path} (now)", tofile=f"{path} (after)", lineterm="\n"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def backup_settings(current: SettingsText, home: Path, *, now: datetime) -> Path | None:
    """Copy the current file into `$SCRUB_HOME/backups/` (0600); None when there is no file."""
    if current.text is None:
        return None
    folder = paths.ensure_private_dir(backups_dir(home))
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{current.path.name}.{stamp}.bak"
    atomic_write(target, [current.text.encode("utf-8")], mode=PRIVATE_FILE_MODE)
    return target


def write_settings(path: Path, text: str) -> None:
    """Atomically replace the file (through a symlink, to its target), keeping its mode."""
    target = path.resolve() if path.is_symlink() else path
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = PRIVATE_FILE_MODE
        paths.create_private_dirs(target.parent)
    atomic_write(target, [text.encode("utf-8")], mode=mode)
