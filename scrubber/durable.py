"""Writing files so that a crash leaves the old version or the new one, never a mix; folders
that only this user can enter; opening a lock or a log of ours without following what was
planted there; publishing a file under a name nobody else took.

Standard library only, and at the bottom of the layers: the transcript writer, the archive
store, retention, the installer and the hooks' workers all need these, and none of them should
have to import another's package to get them. Where scrubber's own folder is (`$SCRUB_HOME`) is
`scrubber.paths`' knowledge: the folder functions here take it as an argument.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700

# Transcripts run to many MB in lines of a few KB to MBs: a 1 MB buffer halved the time to
# write one (the same size as the reader's `transcript.jsonl.IO_BUFFER`).
_WRITE_BUFFER = 1 << 20


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable."""
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sync_data(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)  # no fdatasync on macOS
    sync(fd)


def atomic_write(
    path: Path,
    chunks: Iterable[bytes],
    *,
    mode: int = 0o600,
    mtime_ns: int | None = None,
    owner: tuple[int, int] | None = None,
    sync_every: int | None = None,
) -> None:
    """Write `chunks` to `path` through a temp file in the same folder: fsync, rename, fsync dir.

    A crash at any point leaves either the old file or the new one, never a mix. On failure the
    temp file is removed and the error propagates; the target is untouched. `sync_every`: also
    write the data to disk each time that many bytes were written, for chunks that come with
    waits between them (parts of a parallel redaction): the disk works during the waits, and
    the final fsync has little left to do.
    """
    folder = path.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as out:
            unsynced = 0
            for chunk in chunks:
                out.write(chunk)
                unsynced += len(chunk)
                if sync_every is not None and unsynced >= sync_every:
                    out.flush()
                    _sync_data(out.fileno())
                    unsynced = 0
            out.flush()
            os.fchmod(out.fileno(), mode)
            if owner is not None:
                with contextlib.suppress(PermissionError):
                    os.fchown(out.fileno(), *owner)
            os.fsync(out.fileno())
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        tmp.replace(path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            # A failed write() names no file ("No space left on device"): name the one we
            # were writing, so that the message a user sees says where.
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    fsync_dir(folder)


# --- files of our own: locks and logs -------------------------------------------------------


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


class UnsafeFileError(PermissionError):
    """A file of scrubber's own (a lock, a log) is not a regular file of ours: a symbolic link,
    a FIFO, a folder, another name of some other file (a hard link), another user's. Never
    followed, written or truncated: whoever put it there may have aimed it at ~/.bashrc.

    An OSError, so that code which already shrugs off "cannot write the log" does so here too;
    `message` and `hint` are what a command tells the user."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(errno.EPERM, problem, str(path))
        self.message = f"{path}: {problem}"
        self.hint = f"check who put it there, then remove {path} (scrubber makes it again)"


def _not_ours(st: os.stat_result) -> str | None:
    """Why a file opened as one of ours is not (None when it is)."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link; not followed"
    if not stat.S_ISREG(st.st_mode):
        return f"is {file_type_name(st.st_mode)}, not a regular file; not used"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); not used"
    if st.st_nlink > 1:
        return f"has {st.st_nlink} names (a hard link to another file); not used"
    return None


def open_own_file(path: Path, flags: int) -> int:
    """Open a file scrubber owns, creating it 0600: `os.O_RDWR` for a lock, `os.O_WRONLY |
    os.O_APPEND` for a log. Returns the descriptor; raises UnsafeFileError for anything at
    `path` that is not a regular file of ours (see `_not_ours`).

    Everything under $SCRUB_HOME may have been planted. O_NOFOLLOW: a link at `path` is
    refused, never followed (O_CREAT would make its target, O_APPEND add to it, the worker's
    truncation empty it). O_NONBLOCK: a FIFO there cannot hold open() waiting for a reader;
    it is cleared once fstat has said the file is ours. The caller writes, or truncates, only
    after that check. O_CLOEXEC: no child inherits a lock or a log it was not given."""
    own = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | own, PRIVATE_FILE_MODE)
    except OSError:
        # A link (ELOOP; EMLINK on FreeBSD), a folder (EISDIR), a FIFO with no reader or a
        # socket (ENXIO, EOPNOTSUPP): say what is there rather than the errno's words.
        try:
            problem = _not_ours(os.lstat(path))
        except OSError:
            problem = None
        if problem is None:
            raise
        raise UnsafeFileError(path, problem) from None
    try:
        problem = _not_ours(os.fstat(fd))
        if problem is not None:
            raise UnsafeFileError(path, problem)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


# --- private folders ------------------------------------------------------------------------


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


def make_private_dirs(path: Path) -> Path:
    """`mkdir -p` whose every new folder is 0700. `Path.mkdir(parents=True, mode=…)` gives the
    mode to the last folder only, the parents get the umask's 0755: a fresh `~/.claude` that
    `scrub install` made was open to others, and `doctor` then warned (issue 14, item 16).
    Folders already there are left as they are."""
    missing = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=PRIVATE_DIR_MODE)
    if not path.is_dir():
        path.mkdir()  # raises what mkdir -p would (a file in the way)
    return path


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


def ensure_private_dir(path: Path, home: Path) -> Path:
    """Create `path` (and parents we own) as 0700; tighten it if it already exists.

    Inside scrubber's own folder (`home`; `paths.ensure_private_dir` defaults it to `$SCRUB_HOME`), every folder from it down to
    `path` must be ours: a symbolic link, a folder owned by another user or one writable by
    group or others raises UnsafeFolderError instead of being followed or used ($SCRUB_HOME
    itself may be a link the user made). Elsewhere (an --output folder, a mounted archive
    volume) only `path` itself is tightened, and never a shared folder such as /tmp (sticky)
    or one owned by someone else."""
    root = _absolute(home)
    target = _absolute(path)
    if not _is_within(target, root):
        make_private_dirs(target)
        st = target.stat()
        shared = st.st_mode & stat.S_ISVTX or st.st_uid != os.geteuid()
        if st.st_mode & 0o077 and not shared:
            target.chmod(PRIVATE_DIR_MODE)
        return path
    make_private_dirs(root.parent)
    for folder in _chain(target, root):
        _make_or_check(folder, is_home=folder == root)
    return path


def check_private_dir(path: Path, home: Path) -> bool:
    """Whether `path` exists; raises UnsafeFolderError when it, or a folder between scrubber's
    own folder and it, is not ours (see ensure_private_dir). Creates nothing: for readers."""
    root = _absolute(home)
    target = _absolute(path)
    if not _is_within(target, root):
        return target.is_dir()
    for folder in _chain(target, root):
        try:
            _stat_ours(folder, is_home=folder == root)
        except FileNotFoundError:
            return False
    return True


def write_json_state(
    path: Path,
    body: Mapping[str, Any],
    *,
    mode: int = PRIVATE_FILE_MODE,
    ensure_ascii: bool = False,
) -> None:
    """Write a state file of ours (pins, a trash manifest) as indented JSON, atomically."""
    text = json.dumps(body, indent=2, ensure_ascii=ensure_ascii) + "\n"
    atomic_write(path, [text.encode()], mode=mode)


def publish_by_link(tmp: Path, final: Path) -> bool:
    """Give `tmp` the name `final` unless that name exists: False then. `tmp` remains.

    A hard link, not a rename: a rename would replace a file that appeared at `final` meanwhile
    (an archive of the same name, a restored transcript), a link fails instead."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        return False
    except OSError as exc:
        # Some file systems (FAT, some FUSE mounts) have no hard links: check, then rename.
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(final):
            return False
        tmp.rename(final)
        return True
    return True
