"""Where archives are and what their names say (Contracts, "Archives").

`<archives>/<project>/<session-id>/<version>.tar.gz.age`, where `<version>` is the session's
last timestamp (`2026-03-02T09-01-30.948Z`: no colons, which tar would take for a remote host),
with `-2`, `-3`… when a different version of the session has the same last timestamp; a clear
archive (redacted bundles only) ends in `.tar.gz`. Next to each archive its sidecar
`<archive>.json`. Listing reads the names and sidecars, never an archive's content.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from scrubber.archive.errors import (
    ArchiveError,
)
from scrubber.archive.sidecar import Sidecar, read_sidecar
from scrubber.errors import UsageError

ENCRYPTED_SUFFIX = ".tar.gz.age"


CLEAR_SUFFIX = ".tar.gz"


SIDECAR_SUFFIX = ".json"


GZIP_MAGIC = b"\x1f\x8b"


_VERSION_RE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d{3})?Z)(?:-(\d+))?")


def version_name(moment: datetime) -> str:
    """A session version's file name stem: its last timestamp, UTC, to the millisecond."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H-%M-%S.") + f"{utc.microsecond // 1000:03d}Z"


def _parse_version(stem: str) -> datetime | None:
    match = _VERSION_RE.fullmatch(stem)
    if match is None:
        return None
    text = match.group(1)
    day, _, clock = text.partition("T")
    try:
        return datetime.fromisoformat(f"{day}T{clock[:-1].replace('-', ':')}+00:00")
    except ValueError:
        return None


def sidecar_path(archive: Path) -> Path:
    return archive.with_name(archive.name + SIDECAR_SUFFIX)


def plain_name(value: str, what: str) -> str:
    if not value or "/" in value or "\x00" in value or value in (".", "..") or value[0] == ".":
        raise UsageError(f"cannot archive: the {what} {value[:80]!r} is not a plain folder name")
    return value


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """One archive file as found on disk (sidecar read, payload not)."""

    path: Path
    project: str
    session_id: str
    version: str  # the file name without its suffix
    encrypted: bool
    sidecar: Sidecar | None = None
    problem: str | None = None  # why the sidecar is missing or unreadable

    @property
    def sidecar_path(self) -> Path:
        return sidecar_path(self.path)

    @property
    def last_timestamp(self) -> datetime | None:
        """From the sidecar when the policy let it in, else from the file name."""
        if self.sidecar is not None:
            raw = self.sidecar.manifest.get("last_timestamp")
            if isinstance(raw, str):
                with contextlib.suppress(ValueError):
                    return datetime.fromisoformat(raw)
        return _parse_version(self.version)


def key_needed(entry: ArchiveEntry) -> str:
    """What opens an archive, in words, from its sidecar: the recipients' fingerprints (as
    `scrub keygen -y KEY` prints them) or a passphrase. Not authenticated: for choosing and
    for telling, never for trusting."""
    if not entry.encrypted:
        return "no key (in clear)"
    sidecar = entry.sidecar
    if sidecar is None or not sidecar.recipients:
        return "a key it does not name (no readable sidecar)"
    if sidecar.recipients == ("passphrase",):
        return "a passphrase"
    return "key " + " or ".join(sidecar.recipients)


def _split_name(name: str) -> tuple[str, bool] | None:
    """(version, encrypted) for an archive file name, None for anything else."""
    if name.startswith("."):
        return None  # temp files
    if name.endswith(ENCRYPTED_SUFFIX):
        return name[: -len(ENCRYPTED_SUFFIX)], True
    if name.endswith(CLEAR_SUFFIX):
        return name[: -len(CLEAR_SUFFIX)], False
    return None


def bare_entry(path: Path) -> ArchiveEntry:
    split = _split_name(path.name)
    if split is None:
        raise ArchiveError(
            f"{path}: not an archive name (expected …{ENCRYPTED_SUFFIX} or …{CLEAR_SUFFIX})"
        )
    return ArchiveEntry(
        path=path,
        project=path.parent.parent.name,
        session_id=path.parent.name,
        version=split[0],
        encrypted=split[1],
    )


def read_entry(path: Path) -> ArchiveEntry:
    """An archive file by its path, its sidecar read (a sidecar problem is recorded, not raised).

    The project and session id come from the two folders above it. Raises ArchiveError for a
    name that is not an archive's.
    """
    entry = bare_entry(path)
    try:
        return replace(entry, sidecar=read_sidecar(sidecar_path(path)))
    except ArchiveError as exc:
        return replace(entry, problem=exc.message)


def _subdirs(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / e.name for e in entries if e.is_dir(follow_symlinks=False)]


def _session_entries(folder: Path) -> list[ArchiveEntry]:
    try:
        names = {child.name for child in folder.iterdir()}
    except OSError:
        return []
    found: list[ArchiveEntry] = []
    for name in sorted(names):
        if _split_name(name) is not None:
            found.append(read_entry(folder / name))
        elif name.endswith(SIDECAR_SUFFIX) and not name.startswith("."):
            archive = name[: -len(SIDECAR_SUFFIX)]
            split = _split_name(archive)
            if split is not None and archive not in names:
                found.append(
                    ArchiveEntry(
                        path=folder / archive,
                        project=folder.parent.name,
                        session_id=folder.name,
                        version=split[0],
                        encrypted=split[1],
                        problem="the sidecar is there but the archive file is missing",
                    )
                )
    found.sort(key=lambda e: (e.last_timestamp or datetime.min.replace(tzinfo=UTC), e.version))
    return found


def archives_of(root: Path, project: str, session_id: str) -> list[ArchiveEntry]:
    """A session's archives, oldest first (the last one is its newest version)."""
    return _session_entries(root / project / session_id)


def list_archives(root: Path) -> list[ArchiveEntry]:
    """Every archive under `root`, by project and session, from names and sidecars only."""
    found: list[ArchiveEntry] = []
    for project in _subdirs(root):
        for session in _subdirs(project):
            found.extend(_session_entries(session))
    return found
