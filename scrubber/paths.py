"""Where Claude Code keeps its files and where scrubber keeps its own.

Claude Code's config directory is `$CLAUDE_CONFIG_DIR` when set and non-empty, else `~/.claude`.
Scrubber's own folder is `$SCRUB_HOME`, default `<config dir>/scrubber/`: Claude Code's sweep
leaves folders directly under the config dir alone, but deletes every top-level `*.jsonl` in
`projects/*/`, so nothing of ours ever goes there.

Functions take the environment as a mapping so that domain code and tests never read the real one.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from scrubber import durable
from scrubber.errors import ScrubberError, UsageError


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


# What Claude Code keeps in its config directory (any one of them says the folder is one). A
# folder with none (a typo, `$HOME` itself, a folder not made yet) would pass for a clean,
# empty config dir: a wrong CLAUDE_CONFIG_DIR audited as "0 secrets" and exit 0.
_CONFIG_DIR_MARKERS = (
    "projects", "history.jsonl", "settings.json", "todos", "shell-snapshots", "file-history",
    "session-env", "statsig", "plugins", "ide", "debug", ".credentials.json",
    "settings.local.json",
)  # fmt: skip
# Not `.claude.json`: without CLAUDE_CONFIG_DIR, Claude Code keeps it in $HOME, next to ~/.claude.


def is_config_dir(path: Path) -> bool:
    """Whether `path` is a folder Claude Code has used as its config directory."""
    try:
        return path.is_dir() and any((path / name).exists() for name in _CONFIG_DIR_MARKERS)
    except OSError:
        return False


def require_config_dir(config: Path, hint: str | None = None) -> None:
    """Refuse (exit 2) a config directory Claude Code never used, before anything is read or
    written there (scrubber's own folder defaults to one inside it)."""
    if is_config_dir(config):
        return
    what = (
        "no such folder" if not config.exists() else "no projects/, settings.json or history.jsonl"
    )
    raise UsageError(
        f"{config} is not a Claude Code config directory ({what})",
        hint
        or "set CLAUDE_CONFIG_DIR to the folder Claude Code uses (default ~/.claude), "
        "or run Claude Code once",
    )


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


def home_of_prefilter_cache(cache: Path) -> Path:
    """The scrubber folder a `prefilter_cache_dir` belongs to (where its key is)."""
    return cache.parent.parent


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


def ensure_private_dir(path: Path, home: Path | None = None) -> Path:
    """Create `path` (and parents we own) as 0700; tighten it if it already exists. Inside
    scrubber's own folder (`home`, default `$SCRUB_HOME`) every folder down to `path` must be
    ours (see durable.ensure_private_dir)."""
    return durable.ensure_private_dir(path, home if home is not None else scrub_home())


def check_private_dir(path: Path, home: Path | None = None) -> bool:
    """Whether `path` exists, and every folder from scrubber's own folder (`home`, default
    `$SCRUB_HOME`) down to it is ours (see durable.check_private_dir). Creates nothing."""
    return durable.check_private_dir(path, home if home is not None else scrub_home())


def create_private_dirs(path: Path) -> Path:
    """Create whichever of `path` and its parents are missing, each through ensure_private_dir
    (0700 whatever the umask: a plain mkdir under umask 002 makes them group-writable). Folders
    already there are left as they are: outside $SCRUB_HOME they are the user's or Claude
    Code's."""
    missing = []
    current = _absolute(path)
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        ensure_private_dir(folder)
    return path


def _absolute(path: Path) -> Path:
    # Lexically, without resolving links (as durable does): a link on the way stays in view.
    return Path(os.path.normpath(path.absolute()))


def open_regular(path: Path, *, follow: bool = True) -> BinaryIO:
    """Open `path` for reading only if it is a regular file, without ever blocking.

    A FIFO named as a transcript or a policy would make a plain open() wait forever for a
    writer (one held the status line's lock for minutes): O_NONBLOCK makes that open return at
    once, fstat says what it is, and anything but a regular file is refused with an OSError
    (EINVAL, "not a regular file (FIFO)"). `follow=False` also refuses a symbolic link (O_NOFOLLOW),
    for files of our own. The file is then read in ordinary blocking mode."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= os.O_NOFOLLOW
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(path, st.st_mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=1 << 20)
    except BaseException:
        os.close(fd)
        raise


# In durable, which is below this module, because its own files' checks name the kind too.
file_type_name = durable.file_type_name


def try_lock_own_file(path: Path) -> int | None:
    """An exclusive flock on `path`, a lock file of ours (durable.open_own_file: created 0600,
    never through a link, only a regular file of ours); None when another process holds it.
    Closing the descriptor releases the lock.

    A refused file is a ScrubberError (exit 3) that names it and says what to do: a command
    stops there, a hook logs it and carries on."""
    try:
        fd = durable.open_own_file(path, os.O_RDWR)
    except durable.UnsafeFileError as refused:
        raise ScrubberError(refused.message, refused.hint) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def refuse_special_file(path: Path, verb: str) -> None:
    """A FIFO, socket or device the user named is a usage error (exit 2): reading
    a FIFO waits forever for a writer, and saying "0 files" would hide that nothing was done.
    Symbolic links are left to the caller (each command words that refusal itself)."""
    try:
        st = path.stat()
    except OSError:
        return  # missing or unreadable: the caller's own checks say so
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise UsageError(
            f"{path}: is {file_type_name(st.st_mode)}, not a regular file; not {verb}",
            "name transcripts (regular files) or folders that hold them",
        )


class NotRegularFileError(OSError):
    """A path we were to read is a FIFO, a device, a socket or a folder (see open_regular)."""

    def __init__(self, path: Path, mode: int) -> None:
        self.kind = file_type_name(mode)
        super().__init__(errno.EINVAL, f"is {self.kind}, not a regular file; not read", str(path))
