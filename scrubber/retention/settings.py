"""Claude Code's effective `cleanupPeriodDays`, read from its settings files.

Precedence, highest first (../shared/reference/claude-code.md, "Hooks" and "Claude Code's own
cleanup"): managed settings (`/etc/claude-code/managed-settings.json` on Linux; a managed value
always wins), the project's `.claude/settings.local.json`, the project's `.claude/settings.json`,
then the user's `settings.json` in the config directory; 30 days when none sets it. A project's
files are found through the session's `cwd`, so the period can differ between sessions.

A value must be a whole number of days, at least 1: Claude Code's own validation rejects 0.
A settings file that exists but cannot be read or parsed, or holds a value Claude Code would
reject, is a ConfigError (exit 2): retention pauses and says which file, and never guesses.
Claude Code itself skips its sweep when its settings cannot be read, so pausing is also what
keeps the two clocks in step. Error messages name the file and the key, never its contents.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from scrubber import paths
from scrubber.errors import ConfigError
from scrubber.policy.model import MAX_DAYS
from scrubber.retention.plan import Periods
from scrubber.untrusted import MAX_SETTINGS_BYTES, DamagedDocument, load_json

MANAGED_SETTINGS = Path("/etc/claude-code/managed-settings.json")
USER_SETTINGS_NAME = "settings.json"
PROJECT_SETTINGS = (Path(".claude") / "settings.local.json", Path(".claude") / "settings.json")
KEY = "cleanupPeriodDays"
DEFAULT_DAYS = 30
# What `scrub install --take-over-cleanup` writes: observed to delete nothing (reference note,
# "Cleanup sweep"). A period this long means Claude Code's sweep is off and scrubber's
# retention is the one clock.
TAKE_OVER_DAYS = 99999

_PAUSE_HINT = (
    "fix or remove that file, or set retention.days in the policy (or pass --days) so that "
    "retention does not depend on Claude Code's settings; retention does nothing until then"
)


@dataclass(frozen=True, slots=True)
class CleanupSetting:
    days: int
    source: Path | None  # None: Claude Code's default


@dataclass(frozen=True, slots=True)
class CleanupPeriods:
    """The effective period for sessions without project settings, and per cwd where a
    project's files set it."""

    default: CleanupSetting
    by_cwd: MappingProxyType[str, CleanupSetting]

    def periods(self) -> Periods:
        return Periods(
            self.default.days, MappingProxyType({c: s.days for c, s in self.by_cwd.items()})
        )

    def for_cwd(self, cwd: str | None) -> CleanupSetting:
        if cwd is None:
            return self.default
        return self.by_cwd.get(cwd, self.default)


def _exists(path: Path) -> bool:
    """Whether `path` exists; an error other than "not there" is not an answer."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot tell whether this Claude Code settings file exists "
            f"({error.strerror}); retention paused",
            _PAUSE_HINT,
        ) from None
    return True


def read_cleanup_setting(path: Path) -> int | None:
    """The `cleanupPeriodDays` a settings file sets, None when the file or the key is absent.

    Raises ConfigError when the file exists but cannot be read or parsed, or when the value is
    not a whole number >= 1. Values above what a policy holds are capped (they mean "never").
    """
    if not _exists(path):
        return None
    try:
        # A FIFO must not hang retention, nor a link to /dev/zero fill memory. Links are
        # followed: dotfile managers link settings files, and this one is the user's.
        value = load_json(path, MAX_SETTINGS_BYTES, follow=True)
    except paths.NotRegularFileError as error:
        raise ConfigError(
            f"{path}: is {error.kind}, not a Claude Code settings file; retention paused",
            _PAUSE_HINT,
        ) from None
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot read Claude Code settings ({error.strerror}); retention paused",
            _PAUSE_HINT,
        ) from None
    except DamagedDocument as damaged:
        # Too large, not UTF-8, not valid JSON (and where), nested too deeply: never the content.
        raise ConfigError(f"{path}: {damaged.problem}; retention paused", _PAUSE_HINT) from None
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}: expected a JSON object at the top level; retention paused", _PAUSE_HINT
        )
    if KEY not in value:
        return None
    days = value[KEY]
    if isinstance(days, float) and days.is_integer():
        days = int(days)  # JSON has one number type; 30.0 is 30
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        shown = days if isinstance(days, int | float) and not isinstance(days, bool) else None
        what = f"{shown}" if shown is not None else f"a {type(days).__name__} value"
        raise ConfigError(
            f"{path}: {KEY} is {what}, expected a whole number of days >= 1 (Claude Code "
            "rejects 0); retention paused",
            _PAUSE_HINT,
        )
    return min(days, MAX_DAYS)


def _setting(path: Path) -> CleanupSetting | None:
    days = read_cleanup_setting(path)
    return None if days is None else CleanupSetting(days, path)


def effective_cleanup_periods(
    config_dir: Path, cwds: Iterable[str | None], *, managed: Path = MANAGED_SETTINGS
) -> CleanupPeriods:
    """Claude Code's effective period for each session's working directory.

    `cwds` are the sessions' working directories as their records say; a cwd that no longer
    exists (a deleted checkout) simply has no project settings. Raises ConfigError (pause)
    when any settings file that applies cannot be read.
    """
    forced = _setting(managed)
    if forced is not None:
        # A managed value always wins: the other files do not change the outcome.
        return CleanupPeriods(forced, MappingProxyType({}))
    default = _setting(config_dir / USER_SETTINGS_NAME) or CleanupSetting(DEFAULT_DAYS, None)
    by_cwd: dict[str, CleanupSetting] = {}
    for cwd in sorted({c for c in cwds if c}):
        if not Path(cwd).is_absolute():
            continue  # not a path Claude Code wrote; nothing to read
        for relative in PROJECT_SETTINGS:
            found = _setting(Path(cwd) / relative)
            if found is not None:
                by_cwd[cwd] = found
                break
    return CleanupPeriods(default, MappingProxyType(by_cwd))
