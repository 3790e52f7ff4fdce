"""Where `scrub search` reads sessions from: the config directory, scrubber's trash, and the
encrypted archives (decrypted in memory, never written anywhere in clear).

Each source is a `SearchedSession`: what is known of it before its transcripts are read (id,
project, title, last activity), how to resume it, and its transcript files as line streams,
the main transcript first, then its subagents'. An archive is one stream from the age file
through gzip and the tar reader (which caps every header: anyone can write an archive to our
public recipient); only chunks that authenticated come out of the decryption.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import BinaryIO, cast

from scrubber.archive.age import MAGIC, DecryptingReader, Identity, NoIdentityMatchedError
from scrubber.archive.bundle import MANIFEST_NAME
from scrubber.archive.layout import ArchiveEntry, key_needed, list_archives
from scrubber.archive.manifest import MAX_MANIFEST_SIZE, Manifest
from scrubber.archive.tar_reader import TarReader
from scrubber.detection.known_values import KnownValues
from scrubber.detection.scan import SecretScanner
from scrubber.errors import ScrubberError, UsageError
from scrubber.paths import open_regular
from scrubber.retention.trash import list_trash
from scrubber.retention.trash_names import version_of
from scrubber.transcript.jsonl import IO_BUFFER
from scrubber.transcript.metadata import TranscriptMetadata, read_metadata
from scrubber.transcript.sessions import discover
from scrubber.usecases.reported_projects import ReportedNames
from scrubber.usecases.search_redaction import printable
from scrubber.usecases.session_values import (
    HistoryValues,
    gather_session_values,
    gather_stream_values,
)

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
# A transcript's name as the searcher reports it, and its bytes.
TranscriptStream = tuple[str, BinaryIO]


class Origin(StrEnum):
    LIVE = "live"
    ARCHIVE = "archive"
    TRASH = "trash"


class Unreadable(Exception):
    """A source that cannot be read (a key that does not open it, a damaged archive): the
    search lists it as skipped and goes on. The message never holds content."""


@dataclass(frozen=True, slots=True)
class SearchedSession:
    session_id: str
    project: str
    origin: Origin
    cwd: str | None
    title: str | None = field(repr=False)  # may hold a secret: redacted before display
    last_activity: datetime | None
    where: str  # the archive file or trash folder; the transcript for a live session
    open_transcripts: Callable[[], AbstractContextManager[Iterator[TranscriptStream]]] = field(
        repr=False
    )
    # What reading the transcript's metadata adds (title, cwd, last activity), when it was
    # not read up front: only sessions with hits pay for it.
    details: Callable[[], TranscriptMetadata] | None = field(default=None, repr=False)
    size: int = 0  # bytes to read, when known (for how many processes to use)
    files: tuple[Path, ...] = ()  # the transcripts, when they are files (not in an archive)
    # Adds to the values found in the transcripts those of the session's other files and
    # history lines (session_values.py), when they can be read: only sessions with hits pay.
    side_values: Callable[[KnownValues, SecretScanner], None] | None = field(
        default=None, repr=False
    )
    # Which trashed version this is, when the trash holds several of the session (`scrub
    # undelete --version N` brings back this one; without it, the newest comes back).
    trash_version: int | None = None

    def in_project(self, project: str) -> bool:
        """`project` names the project folder, part of it, or the working directory (whose
        folder name Claude Code makes by turning every other character into `-`)."""
        folder_form = _NOT_ALNUM.sub("-", project)
        return project in self.project or folder_form in self.project or project == self.cwd

    def described(self) -> SearchedSession:
        if self.details is None:
            return self
        meta = self.details()
        return replace(
            self,
            title=meta.title,
            cwd=meta.cwd,
            last_activity=meta.last_timestamp or self.last_activity,
            details=None,
        )


@dataclass(frozen=True, slots=True)
class SkippedSource:
    where: str
    reason: str


def _subagent_files(folder: Path) -> list[Path]:
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False))
    except OSError:
        return []
    return [folder / name for name in names if name.endswith(".jsonl")]


def _files_stream(paths: Sequence[Path]) -> Iterator[TranscriptStream]:
    for path in paths:
        try:
            stream = open_regular(path, follow=False)
        except OSError:
            continue  # vanished or not a regular file since it was listed
        with stream:
            yield path.name, stream


def _files(paths: Sequence[Path]) -> AbstractContextManager[Iterator[TranscriptStream]]:
    return nullcontext(_files_stream(paths))


def live_sessions(config_dir: Path, history: HistoryValues | None = None) -> list[SearchedSession]:
    """The config dir's sessions, from names and sizes only; their last activity is the
    transcript's mtime until they are described (Claude Code appends, so a transcript's mtime
    is never before its last record). `history`: the config dir's history.jsonl, whose lines
    of a session tell its values too."""
    found: list[SearchedSession] = []
    for info in discover(config_dir, metadata=False).sessions:
        transcripts = (info.transcript, *info.subagent_transcripts())
        side_values = partial(
            gather_session_values,
            root=config_dir,
            project=info.project,
            session_id=info.id,
            skip=transcripts,
            history=history,
        )
        found.append(
            SearchedSession(
                session_id=info.id,
                project=info.project,
                origin=Origin.LIVE,
                cwd=None,
                title=None,
                last_activity=datetime.fromtimestamp(info.mtime, UTC),
                where=str(info.transcript),
                open_transcripts=partial(_files, transcripts),
                details=partial(read_metadata, info.transcript),
                size=info.size,
                files=transcripts,
                side_values=side_values,
            )
        )
    return found


def trashed_sessions(home: Path) -> tuple[list[SearchedSession], list[SkippedSource]]:
    listing = list_trash(home)
    found: list[SearchedSession] = []
    versions = Counter(m.session_id for _, m in [*listing.complete, *listing.incomplete])
    for slot, manifest in listing.complete:
        base = slot / "projects" / manifest.project
        transcripts = (
            base / f"{manifest.session_id}.jsonl",
            *_subagent_files(base / manifest.session_id / "subagents"),
        )
        side_values = partial(
            gather_session_values,
            root=slot,  # shaped like a config dir; the trash keeps no history lines
            project=manifest.project,
            session_id=manifest.session_id,
            skip=transcripts,
        )
        found.append(
            SearchedSession(
                session_id=manifest.session_id,
                project=manifest.project,
                origin=Origin.TRASH,
                cwd=manifest.cwd,
                title=manifest.title or manifest.custom_title,
                last_activity=manifest.last_activity,
                where=str(slot),
                open_transcripts=partial(_files, transcripts),
                files=transcripts,
                side_values=side_values,
                trash_version=version_of(slot.name, manifest.session_id)
                if versions[manifest.session_id] > 1
                else None,
            )
        )
    skipped = [SkippedSource(str(slot), reason) for slot, reason in listing.problems]
    skipped += [
        SkippedSource(str(slot), "a trash entry still being moved: left alone")
        for slot, _ in listing.incomplete
    ]
    return found, skipped


class _MemberReader(io.RawIOBase):
    """The current tar member's data as a raw stream, for a buffered line reader."""

    def __init__(self, tar: TarReader) -> None:
        self._tar = tar

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._tar.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _is_transcript_member(name: str, manifest: Manifest) -> bool:
    facts = manifest.session
    if name == facts.transcript:
        return True
    side = f"projects/{facts.project}/{facts.session_id}/subagents/"
    return name.startswith(side) and name.endswith(".jsonl") and "/" not in name[len(side) :]


def _archive_streams(
    path: Path, identities: Sequence[Identity], *, side: bool = False
) -> Iterator[TranscriptStream]:
    """The archive's transcripts; with `side`, its other files instead (the rest of the
    session's bundle: tool-results, file-history, ...)."""
    try:
        with path.open("rb") as handle:
            raw = cast(BinaryIO, handle)
            source: BinaryIO = raw
            encrypted = raw.read(len(MAGIC)) == MAGIC
            raw.seek(0)
            if encrypted:
                source = cast(BinaryIO, DecryptingReader(raw, identities))
            with gzip.GzipFile(fileobj=source, mode="rb") as unzipped:
                tar = TarReader(cast(BinaryIO, unzipped))
                first = tar.next()
                if first is None or first.name != MANIFEST_NAME or first.size > MAX_MANIFEST_SIZE:
                    raise Unreadable(f"does not start with a {MANIFEST_NAME} scrubber wrote")
                manifest = Manifest.from_bytes(tar.read(first.size))
                while (member := tar.next()) is not None:
                    if member.is_dir or _is_transcript_member(member.name, manifest) is side:
                        continue
                    reader = io.BufferedReader(_MemberReader(tar), IO_BUFFER)
                    yield member.name.rsplit("/", 1)[-1], cast(BinaryIO, reader)
    except NoIdentityMatchedError:
        raise Unreadable("the key given does not open it") from None
    except ScrubberError as error:
        raise Unreadable(f"damaged or not an archive ({error.message})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error):
        raise Unreadable("its payload is not a readable gzip tar stream") from None
    except OSError as error:
        raise Unreadable(f"cannot read it ({error.strerror or type(error).__name__})") from None


def _archive_side_values(
    path: Path,
    identities: Sequence[Identity],
    known: KnownValues,
    scanner: SecretScanner,
    *,
    session_id: str,
    history: HistoryValues | None,
) -> None:
    """The values of an archived session's other files (decrypted a second time, only for a
    session with hits: its transcripts were read in the first pass), and of its lines in the
    config dir's `history` (an archive holds none; Claude Code keeps them)."""
    for name, stream in _archive_streams(path, identities, side=True):
        gather_stream_values(known, scanner, name, stream, session_id)
    if history is not None:
        history.add_to(known, scanner, session_id)


def _archive_context(
    path: Path, identities: Sequence[Identity]
) -> AbstractContextManager[Iterator[TranscriptStream]]:
    return nullcontext(_archive_streams(path, identities))


def _archive_session(
    entry: ArchiveEntry, identities: Sequence[Identity], history: HistoryValues | None
) -> SearchedSession:
    clear = entry.sidecar.manifest if entry.sidecar is not None else {}
    title = clear.get("title")
    cwd = clear.get("cwd")
    last = entry.last_timestamp
    return SearchedSession(
        session_id=entry.session_id,
        project=entry.project,
        origin=Origin.ARCHIVE,
        cwd=cwd if isinstance(cwd, str) else None,
        title=title if isinstance(title, str) else None,
        last_activity=last if last is None or last.tzinfo else last.replace(tzinfo=UTC),
        where=str(entry.path),
        open_transcripts=partial(_archive_context, entry.path, identities),
        size=entry.sidecar.size if entry.sidecar is not None else 0,
        side_values=partial(
            _archive_side_values,
            entry.path,
            identities,
            session_id=entry.session_id,
            history=history,
        ),
    )


def archived_sessions(
    root: Path, identities: Sequence[Identity], history: HistoryValues | None = None
) -> tuple[list[SearchedSession], list[SkippedSource]]:
    """Each session's newest archive that the identities can open (older versions of a
    session are earlier states of the same conversation); archives none of them opens are
    skipped, naming the key they need. `history`: the config dir's history.jsonl, whose
    lines of an archived session tell its values too."""
    from scrubber.archive.verify import opens_with

    by_session: dict[tuple[str, str], list[ArchiveEntry]] = {}
    skipped: list[SkippedSource] = []
    for entry in list_archives(root):
        if entry.problem is not None and not entry.path.is_file():
            skipped.append(SkippedSource(str(entry.path), entry.problem))
            continue
        by_session.setdefault((entry.project, entry.session_id), []).append(entry)
    found: list[SearchedSession] = []
    for entries in by_session.values():
        newest_first = list(reversed(entries))
        opened = next((e for e in newest_first if opens_with(e.path, identities)), None)
        if opened is None:
            newest = newest_first[0]
            skipped.append(
                SkippedSource(
                    str(newest.path), f"the key given does not open it; needs {key_needed(newest)}"
                )
            )
            continue
        found.append(_archive_session(opened, identities, history))
    return found, skipped


def refuse_unknown_project(
    project: str,
    config_dir: Path,
    scanner: SecretScanner,
    *,
    home: Path,
    since_given: bool,
    listed: int,
) -> None:
    """A --project that names no session is a usage error (a typo is not "no hits"), as for
    audit; with --since, the sessions it left out still count as known. The hint lists the
    first `listed` project folders, each shown as every report shows it (a folder is named
    after the cwd, which can hold a token: redaction/project_name.py): as the last audit
    showed it, cleaned again with what the detectors find in each session's cwd."""
    live = live_sessions(config_dir)
    if since_given and any(session.in_project(project) for session in live):
        return
    if not live:
        raise UsageError(
            f"no session matches --project {project}",
            hint="there is no session in the config directory",
        )
    known = sorted({session.project for session in live})
    names = ReportedNames.of_home(scanner, home)
    shown: list[str] = []
    for name in known[:listed]:
        in_project = [session for session in live if session.project == name]
        cwds: list[str] = []
        for session in in_project:
            with contextlib.suppress(OSError):
                cwds.append(session.described().cwd or "")
        ids = [session.session_id for session in in_project]
        shown.append(printable(names.shown(name, ids, cwds)))
    more = f" and {len(known) - listed} more" if len(known) > listed else ""
    raise UsageError(
        f"no session matches --project {project}",
        hint=f"known projects: {', '.join(shown)}{more} (scrub sessions lists them)",
    )
