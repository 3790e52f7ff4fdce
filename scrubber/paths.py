"""Where Claude Code keeps its files and where scrubber keeps its own.

Claude Code's config directory is `$CLAUDE_CONFIG_DIR` when set and non-empty, else `~/.claude`.
Scrubber's own folder is `$SCRUB_HOME`, default `<config dir>/scrubber/`: Claude Code's sweep
leaves folders directly under the config dir alone, but deletes every top-level `*.jsonl` in
`projects/*/`, so nothing of ours ever goes there.

Functions take the environment as a mapping so that domain code and tests never read the real one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

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


class UnsafeFolderError(PermissionError):
    """One of scrubber's own folders is not safe to use: a symbolic link, not a folder, owned by
    someone else, or writable by group or others. Never followed, never tightened: whoever
    could write there may already have planted files in it (a cache, a job, a pins file).

    An OSError (a PermissionError) so that code which already handles "cannot write here"
    stops there too; it carries a `hint`, and the CLI shows both (exit 3)."""

    def __init__(self, path: Path, problem: str, hint: str) -> None:
        super().__init__(errno.EPERM, problem, str(path))
        self.hint = hint


def _absolute(path: Path) -> Path:
    # Lexically, without resolving links: a link on the way is exactly what must be seen.
    return Path(os.path.normpath(path.absolute()))


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _check_ours(path: Path, st: os.stat_result) -> None:
    """Refuse a folder (as lstat saw it) that is not ours: see UnsafeFolderError."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFolderError(
            path,
            "is a symbolic link inside scrubber's folder; not followed",
            f"remove the link {path} and let scrubber create the folder, or set SCRUB_HOME "
            "to where scrubber's files should be",
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFolderError(path, "is not a folder", f"move {path} out of the way")
    if st.st_uid != os.geteuid():
        raise UnsafeFolderError(
            path,
            f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); not used",
            f"check who made it and what it holds, then: chown -R {os.geteuid()} {path}",
        )
    if st.st_mode & 0o022:
        raise UnsafeFolderError(
            path,
            f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); not used",
            f"check what it holds, then: chmod 700 {path}",
        )


def _stat_ours(path: Path, *, is_home: bool) -> os.stat_result:
    st = os.lstat(path)
    if is_home and stat.S_ISLNK(st.st_mode):
        st = path.stat()  # $SCRUB_HOME itself may be a link the user made: judge its target
    _check_ours(path, st)
    return st


def _make_or_check(path: Path, *, is_home: bool) -> None:
    """Create `path` as 0700, or check the folder already there and take group and others'
    read access away."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=PRIVATE_DIR_MODE)
    if _stat_ours(path, is_home=is_home).st_mode & 0o077:
        path.chmod(PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask


def _chain(target: Path, root: Path) -> list[Path]:
    """`root`, then every folder below it down to `target`."""
    parts = target.relative_to(root).parts
    return [root] + [root.joinpath(*parts[: i + 1]) for i in range(len(parts))]


def ensure_private_dir(path: Path, home: Path | None = None) -> Path:
    """Create `path` (and parents we own) as 0700; tighten it if it already exists.

    Inside scrubber's own folder (`home`, default `$SCRUB_HOME`), every folder from it down to
    `path` must be ours: a symbolic link, a folder owned by another user or one writable by
    group or others raises UnsafeFolderError instead of being followed or used ($SCRUB_HOME
    itself may be a link the user made). Elsewhere (an --output folder, a mounted archive
    volume) only `path` itself is tightened, and never a shared folder such as /tmp (sticky)
    or one owned by someone else."""
    root = _absolute(home if home is not None else scrub_home())
    target = _absolute(path)
    if not _is_within(target, root):
        target.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        st = target.stat()
        shared = st.st_mode & stat.S_ISVTX or st.st_uid != os.geteuid()
        if st.st_mode & 0o077 and not shared:
            target.chmod(PRIVATE_DIR_MODE)
        return path
    root.parent.mkdir(parents=True, exist_ok=True)
    for folder in _chain(target, root):
        _make_or_check(folder, is_home=folder == root)
    return path


def check_private_dir(path: Path, home: Path | None = None) -> bool:
    """Whether `path` exists; raises UnsafeFolderError when it, or a folder between scrubber's
    own folder and it, is not ours (see ensure_private_dir). Creates nothing: for readers."""
    root = _absolute(home if home is not None else scrub_home())
    target = _absolute(path)
    if not _is_within(target, root):
        return target.is_dir()
    for folder in _chain(target, root):
        try:
            _stat_ours(folder, is_home=folder == root)
        except FileNotFoundError:
            return False
    return True


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


def file_type_name(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class NotRegularFileError(OSError):
    """A path we were to read is a FIFO, a device, a socket or a folder (see open_regular)."""

    def __init__(self, path: Path, mode: int) -> None:
        self.kind = file_type_name(mode)
        super().__init__(errno.EINVAL, f"is {self.kind}, not a regular file; not read", str(path))
