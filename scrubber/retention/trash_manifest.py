"""A trash entry's manifest: what `trash.py` writes before anything moves, and reads back.

The manifest maps the slot: the session it holds (id, project, what pins match), each path
relative to the config dir with its kind and mtime, whether the move completed and when.
Read as untrusted (a slot may be planted): never through a link, bounded, and refused when
the slot's name is not one `trash_names` gives for the session it names, or when it names a
path outside that session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from scrubber.durable import write_json_state
from scrubber.errors import ScrubberError
from scrubber.retention.rules import Subject
from scrubber.retention.trash_crash import TRASH_MANIFEST
from scrubber.retention.trash_names import version_of
from scrubber.untrusted import MAX_RECORD_BYTES, DamagedDocument, load_json

TRASH_FORMAT = 1


def safe_name(name: str) -> bool:
    return bool(name) and name not in {".", ".."} and "/" not in name and "\0" not in name


def safe_relative(relative: str) -> bool:
    parts = relative.split("/")
    return (
        bool(relative)
        and not relative.startswith("/")
        and all(safe_name(p) for p in parts)
        and relative != TRASH_MANIFEST
    )


@dataclass(frozen=True, slots=True)
class TrashEntry:
    path: str  # relative to the config dir, POSIX separators
    kind: str  # file, dir, symlink
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class TrashManifest:
    session_id: str
    project: str
    cwd: str | None
    custom_title: str | None = field(repr=False)
    tags: tuple[str, ...] = field(repr=False)
    last_activity: datetime | None
    entries: tuple[TrashEntry, ...]
    config_dir: str
    complete: bool = False
    trashed_at: datetime | None = None
    archive_ref: str | None = None
    # The title `scrub sessions` shows (the custom title, else Claude Code's own), so that
    # `scrub undelete TITLE` finds it (issue 14); entries written before it have none.
    title: str | None = field(default=None, repr=False)

    @property
    def subject(self) -> Subject:
        return Subject(self.session_id, self.project, self.cwd, self.custom_title, self.tags)

    @property
    def transcript(self) -> str:
        return f"projects/{self.project}/{self.session_id}.jsonl"

    def to_json(self) -> dict[str, object]:
        return {
            "format": TRASH_FORMAT,
            "state": "complete" if self.complete else "moving",
            "session_id": self.session_id,
            "project": self.project,
            "cwd": self.cwd,
            "custom_title": self.custom_title,
            "title": self.title,
            "tags": list(self.tags),
            "last_activity": _iso(self.last_activity),
            "trashed_at": _iso(self.trashed_at),
            "config_dir": self.config_dir,
            "archive_ref": self.archive_ref,
            "entries": [
                {"path": e.path, "kind": e.kind, "mtime_ns": e.mtime_ns} for e in self.entries
            ],
        }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _date(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class TrashError(ScrubberError):
    """A trash entry is not one we wrote, or something is in the way (exit 3)."""


def read_trash_manifest(slot: Path) -> TrashManifest:
    path = slot / TRASH_MANIFEST
    try:
        # Ours, but it may be planted: never through a link, never blocking on a FIFO.
        value = load_json(path, MAX_RECORD_BYTES, follow=False)
    except OSError as error:
        raise TrashError(f"{path}: cannot read the trash manifest ({error.strerror})") from None
    except DamagedDocument as damaged:
        raise TrashError(f"{path}: the trash manifest is damaged: {damaged.problem}") from None
    try:
        if not isinstance(value, dict) or value.get("format") != TRASH_FORMAT:
            raise ValueError("format")
        entries = tuple(
            TrashEntry(str(e["path"]), str(e["kind"]), int(e["mtime_ns"])) for e in value["entries"]
        )
        tags = value.get("tags") or []
        manifest = TrashManifest(
            session_id=str(value["session_id"]),
            project=str(value["project"]),
            cwd=value.get("cwd") if isinstance(value.get("cwd"), str) else None,
            custom_title=(
                value.get("custom_title") if isinstance(value.get("custom_title"), str) else None
            ),
            tags=tuple(str(t) for t in tags),
            last_activity=_date(value.get("last_activity")),
            entries=entries,
            config_dir=str(value.get("config_dir", "")),
            complete=value.get("state") == "complete",
            trashed_at=_date(value.get("trashed_at")),
            archive_ref=value.get("archive_ref")
            if isinstance(value.get("archive_ref"), str)
            else None,
            title=value.get("title") if isinstance(value.get("title"), str) else None,
        )
    except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: int(Infinity)
        raise TrashError(f"{path}: not a trash manifest this scrubber wrote") from None
    if (
        version_of(slot.name, manifest.session_id) is None
        or not safe_name(manifest.project)
        or not all(safe_relative(e.path) for e in entries)
    ):
        raise TrashError(f"{path}: the trash manifest names paths outside its session")
    return manifest


def write_trash_manifest(slot: Path, manifest: TrashManifest) -> None:
    write_json_state(slot / TRASH_MANIFEST, manifest.to_json())
