"""Errors a user can act on.

Every error carries a one-line message and, where we know one, a hint. The CLI is the one place
that turns them into stderr text and an exit code; nothing below it prints. Messages must never
hold a secret's value: name the file, the key, the kind, never the content.
"""

from __future__ import annotations

from enum import IntEnum


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
