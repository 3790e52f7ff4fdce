"""Errors a user can act on.

Every error carries a one-line message and, where we know one, a hint. The CLI is the one place
that turns them into stderr text and an exit code; nothing below it prints. Messages must never
hold a secret's value: name the file, the key, the kind, never the content.
"""

from __future__ import annotations

import errno
import os
from enum import IntEnum
from pathlib import PurePath


class ExitCode(IntEnum):
    """Exit codes shared by every command (see the Contracts in the architecture note)."""

    OK = 0
    FINDINGS = 1  # audit / redact --check found secrets; retention kept what it was asked to remove
    USAGE = 2  # usage, policy or key error; retention pausing on unreadable settings
    RUNTIME = 3  # runtime or I/O error: disk full, unreadable input
    BUSY = 4  # another run holds the lock


class ScrubberError(Exception):
    """Base of every error we raise on purpose. Defaults to a runtime error (exit 3)."""

    exit_code: ExitCode = ExitCode.RUNTIME

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(ScrubberError):
    """The command line asked for something impossible (exit 2)."""

    exit_code = ExitCode.USAGE


class ConfigError(ScrubberError):
    """A policy or settings file is wrong or unreadable (exit 2)."""

    exit_code = ExitCode.USAGE


class KeyMaterialError(ScrubberError):
    """A recipient, identity or passphrase is missing, malformed or wrong (exit 2)."""

    exit_code = ExitCode.USAGE


class InputError(ScrubberError):
    """An input file or folder is missing or unreadable (exit 3)."""

    exit_code = ExitCode.RUNTIME


class BusyError(ScrubberError):
    """Another run holds the lock (exit 4)."""

    exit_code = ExitCode.BUSY


# What to do about the errors the system gives for a path (issue 14: "every expected OS error
# is a plain one-line message with a hint"). By errno only: an OSError's text is the system's.
_PATH_HINTS = {
    errno.ENOTDIR: "a part of the path is a file, not a folder: check the path",
    errno.EISDIR: "that is a folder: name a file (inside it, for example)",
    errno.EACCES: "no permission: check the owner and mode of the file and the folders above "
    "it (ls -ld)",
    errno.EPERM: "not permitted: check the owner and mode of the file and the folders above "
    "it (ls -ld)",
    errno.EEXIST: "it already exists: choose another name, or move it aside first",
    errno.ENOSPC: "check free space where scrubber writes (df -h), then run it again",
    errno.EDQUOT: "the disk quota is exhausted: free some space, then run it again",
    errno.EROFS: "the filesystem is mounted read-only: remount it or choose another place",
    errno.EFBIG: "the file would pass a size limit (ulimit -f, or the filesystem's): free "
    "some space or raise the limit",
    errno.ENAMETOOLONG: "a name in the path is too long: choose a shorter one",
    errno.ELOOP: "the path goes through a loop of symbolic links: check it",
}


def path_error_hint(error: OSError, *, writing: bool = True) -> str | None:
    """A hint for an OSError about a path, None when we know none. `writing`: a missing entry
    means its folder is missing (to create), rather than the file (to read)."""
    if error.errno == errno.ENOENT:
        if error.filename is None:
            return "check the path"
        name = os.fsdecode(error.filename)
        if not writing:
            return f"check the path: {name} does not exist"
        folder = str(PurePath(name).parent)
        return f"the folder {folder} does not exist: create it (mkdir -p {folder}) or name another"
    return _PATH_HINTS.get(error.errno) if error.errno is not None else None
