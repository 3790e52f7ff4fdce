"""Private staging folders, and what a killed command leaves behind: found, reported, removed.

A command that is killed (kill -9, a power cut) cannot clean up after itself, so each one
removes its own leftovers at its next start, and `scrub doctor` reports any it finds (issue 11):

- staging folders `$SCRUB_HOME/staging/<kind>-*/` (0700): decrypted transcripts of a restore,
  redacted copies of an archive. Plaintext is staged only there, never in the config dir.
- temp files next to their final name: an archive's ciphertext `.<version>.*.tmp` and its
  sidecar's, in `<archives>/<project>/<session-id>/`; a restore's `.<name>.scrub-restore-*.tmp`
  beside a file being restored across file systems, recorded first in its staging folder's
  journal so that the recovery knows where to look.
- staging folders of older versions: `<config>/.scrub-restore-*`, `$SCRUB_HOME/.archive-redact-*`.

"Its own" is decided by a lock, not by age: whoever creates a staging folder or a temp file
holds an exclusive `flock` on it until it is done, so the recovery removes only what no live
process holds, and two commands (the CLI and the SessionEnd worker) can run side by side.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scrubber import paths

__all__ = [
    "RESTORE_TEMP_MARK",
    "Leftover",
    "find_leftovers",
    "journal_outside",
    "locked_temp",
    "remove_leftovers",
    "staging_folder",
]

STAGING = "staging"
_LOCK = ".lock"
_JOURNAL = "outside"
_MAX_JOURNAL = 1 << 20
RESTORE_TEMP_MARK = ".scrub-restore-"
# A staging folder is locked right after mkdtemp; one without its lock file that is younger
# than this may be in that instant, and is left alone.
_GRACE_SECONDS = 60.0
_LEGACY = ((".scrub-restore-", "config"), (".archive-redact-", "home"))


@dataclass(frozen=True, slots=True)
class Leftover:
    path: Path
    what: str  # "restore staging (decrypted plaintext)", "archive temp file", ...
    command: str  # the command that left it, and removes it at its next start


# ------------------------------------------------------------------------------- the locks


def _try_lock(path: Path) -> int | None:
    """A descriptor holding an exclusive lock on `path`, or None when someone holds it (or it
    is not a regular file of ours)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def staging_folder(home: Path, kind: str) -> Iterator[Path]:
    """A new private folder `$SCRUB_HOME/staging/<kind>-XXXX/`, locked while in use and removed
    afterwards (and by `remove_leftovers` after a crash)."""
    root = paths.ensure_private_dir(home / STAGING)
    folder = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=root))
    # The lock is taken on a temp name and then renamed: a recovery that finds `.lock` always
    # finds it locked while its owner lives.
    fd, name = tempfile.mkstemp(prefix=".lock-", dir=folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        Path(name).rename(folder / _LOCK)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)


def journal_outside(folder: Path, path: Path) -> None:
    """Record, durably and before it is created, a temp file the staging folder's owner makes
    outside it (restore across file systems), so that a recovery removes it too."""
    fd = os.open(folder / _JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, os.fsencode(str(path)) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked_temp(folder: Path, prefix: str) -> Iterator[tuple[int, Path]]:
    """`mkstemp` in `folder`, locked until the block ends: (descriptor, path). The descriptor
    is the caller's to close; the lock lives on a duplicate. The file is not removed here."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    lock = os.dup(fd)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield fd, Path(name)
    finally:
        os.close(lock)


# ----------------------------------------------------------------------------- the finding


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def _stale_staging(folder: Path, now: float) -> tuple[bool, int | None]:
    """(stale, the lock's descriptor when we took it): stale when its owner died."""
    lock = folder / _LOCK
    if not os.path.lexists(lock):
        try:
            young = now - folder.lstat().st_mtime < _GRACE_SECONDS
        except OSError:
            return False, None
        return not young, None
    fd = _try_lock(lock)
    return fd is not None, fd


def _archive_temps(root: Path) -> Iterator[Path]:
    for project in _entries(root):
        if project.name.startswith(".") or not _is_dir(project):
            continue
        for session in _entries(project):
            if not _is_dir(session):
                continue
            for item in _entries(session):
                if item.name.startswith(".") and item.name.endswith(".tmp"):
                    yield item


def _journal(folder: Path) -> list[Path]:
    try:
        with (folder / _JOURNAL).open("rb") as handle:
            data = handle.read(_MAX_JOURNAL)
    except OSError:
        return []
    found = []
    for line in data.splitlines():
        path = Path(os.fsdecode(line))
        if path.is_absolute() and RESTORE_TEMP_MARK in path.name and path.name.endswith(".tmp"):
            found.append(path)
    return found


def _candidates(
    home: Path, config: Path | None, archives: Path | None, now: float
) -> Iterator[tuple[Leftover, int | None]]:
    """(leftover, lock descriptor to close) of every leftover no live process holds."""
    for folder in _entries(home / STAGING):
        if not _is_dir(folder):
            continue
        stale, lock = _stale_staging(folder, now)
        if not stale:
            continue
        kind = folder.name.partition("-")[0]
        what = "restore staging (decrypted plaintext)" if kind == "restore" else "staging"
        command = "restore" if kind == "restore" else "archive"
        for outside in _journal(folder):
            if os.path.lexists(outside):
                yield Leftover(outside, "half-restored temp file (plaintext)", command), None
        yield Leftover(folder, what, command), lock
    for prefix, where in _LEGACY:
        base = config if where == "config" else home
        if base is None:
            continue
        command = "restore" if where == "config" else "archive"
        for folder in _entries(base):
            if folder.name.startswith(prefix) and _is_dir(folder):
                yield Leftover(folder, "staging of an older scrubber", command), None
    if archives is not None:
        for temp in _archive_temps(archives):
            fd = _try_lock(temp)
            if fd is not None:
                yield Leftover(temp, "archive temp file", "archive"), fd


def find_leftovers(
    home: Path, *, config: Path | None = None, archives: Path | None = None
) -> list[Leftover]:
    """What crashed commands left behind (for `doctor`): nothing is removed."""
    found = []
    for item, fd in _candidates(home, config, archives, time.time()):
        if fd is not None:
            os.close(fd)
        found.append(item)
    return found


def remove_leftovers(
    home: Path, *, config: Path | None = None, archives: Path | None = None
) -> list[Leftover]:
    """Remove what crashed commands left behind, never what a live one holds; returns what
    went. Errors are skipped (the next run, or `doctor`, sees what is still there)."""
    removed = []
    for item, fd in _candidates(home, config, archives, time.time()):
        try:
            if _is_dir(item.path):
                shutil.rmtree(item.path)
            else:
                item.path.unlink()
        except OSError:
            continue
        finally:
            if fd is not None:
                os.close(fd)
        removed.append(item)
    return removed
