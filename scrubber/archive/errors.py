"""What can go wrong with an archive, as errors a user can act on (each with its exit code)."""

from __future__ import annotations

from scrubber.errors import ExitCode, ScrubberError


class ArchiveError(ScrubberError):
    """An archive or its sidecar is missing, damaged or inconsistent (exit 3)."""


class ArchiveIntegrityError(ArchiveError):
    """The archive does not match what its sidecar recorded at write time (exit 3)."""


class SidecarError(ArchiveError):
    """The sidecar is missing or unreadable, so a keyless check is impossible (exit 3)."""


class ArchiveVersionError(ArchiveError):
    """The sidecar was written by a newer scrubber (exit 2)."""

    exit_code = ExitCode.USAGE


class ArchiveWriteError(ArchiveError):
    """The archive could not be written (disk full, no permission); nothing was left (exit 3)."""


class RestoreConflictError(ScrubberError):
    """The session is already there and --force was not given (exit 2)."""

    exit_code = ExitCode.USAGE
