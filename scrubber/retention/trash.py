"""The trash: a session's whole bundle moved into `$SCRUB_HOME/trash/<session-id>/`, and back.

The unit is the whole session bundle (transcript, side folder, file-history, session-env,
debug, todos, tasks). It moves keeping paths relative to the config directory, with a manifest
(original paths, kinds, mtimes, when trashed). Symlinks are moved as links and never followed;
a bundle path below a symlinked folder is refused. The transcript moves last and comes back
last, so a crash leaves either a session Claude Code still finds or a complete trash entry; a
half-moved session is completed by the next run. A rename is atomic; across filesystems files
are copied, synced and only then removed, so a full disk leaves the original where it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from scrubber import paths
from scrubber.durable import fsync_dir, write_json_state
from scrubber.errors import ScrubberError, UsageError
from scrubber.policy.model import Pins
from scrubber.retention.plan import (
    RetentionEntry,
    TrashedSession,
)
from scrubber.retention.rules import Subject, select_deletable
from scrubber.retention.trash_crash import TRASH_MANIFEST
from scrubber.transcript.bundle_scope import check_in_bundle, check_legacy_agents
from scrubber.untrusted import MAX_RECORD_BYTES, DamagedDocument, load_json


class BundleSession(RetentionEntry, Protocol):
    """A session with its files: discovery's `SessionInfo` satisfies it."""

    @property
    def transcript(self) -> Path: ...
    @property
    def title(self) -> str | None: ...
    def bundle_paths(self) -> tuple[Path, ...]: ...


TRASH_FORMAT = 1


_MIN_PREFIX = 4


def _safe_name(name: str) -> bool:
    return bool(name) and name not in {".", ".."} and "/" not in name and "\0" not in name


def _safe_relative(relative: str) -> bool:
    parts = relative.split("/")
    return (
        bool(relative)
        and not relative.startswith("/")
        and all(_safe_name(p) for p in parts)
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
        manifest.session_id != slot.name
        or not _safe_name(manifest.project)
        or not all(_safe_relative(e.path) for e in entries)
    ):
        raise TrashError(f"{path}: the trash manifest names paths outside its session")
    return manifest


def write_trash_manifest(slot: Path, manifest: TrashManifest) -> None:
    write_json_state(slot / TRASH_MANIFEST, manifest.to_json())


@dataclass(frozen=True, slots=True)
class TrashListing:
    complete: tuple[tuple[Path, TrashManifest], ...]
    incomplete: tuple[tuple[Path, TrashManifest], ...]
    problems: tuple[tuple[Path, str], ...]

    def trashed(self) -> tuple[TrashedSession, ...]:
        """The complete entries, as the plan sees them."""
        return tuple(
            TrashedSession(m.session_id, m.project, m.trashed_at or datetime.now(UTC), m.subject)
            for _, m in self.complete
        )


def list_trash(home: Path) -> TrashListing:
    root = paths.trash_dir(home)
    complete: list[tuple[Path, TrashManifest]] = []
    incomplete: list[tuple[Path, TrashManifest]] = []
    problems: list[tuple[Path, str]] = []
    try:
        names = sorted(entry.name for entry in root.iterdir())
    except FileNotFoundError:
        names = []
    for name in names:
        slot = root / name
        if slot.is_symlink() or not slot.is_dir():
            problems.append((slot, "not a trash folder (a link or a file): left alone"))
            continue
        try:
            manifest = read_trash_manifest(slot)
        except TrashError as error:
            problems.append((slot, error.message))
            continue
        (complete if manifest.complete else incomplete).append((slot, manifest))
    return TrashListing(tuple(complete), tuple(incomplete), tuple(problems))


def _kind(path: Path) -> str:
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        return "symlink"
    return "dir" if stat.S_ISDIR(mode) else "file"


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _refuse_symlinked_parents(path: Path, root: Path) -> None:
    """Moving `root/a/b/x` through a symlinked `a` would act on the link's target."""
    parent = path.parent
    while parent != root:
        if parent.is_symlink():
            raise TrashError(
                f"{path}: lies below the symbolic link {parent}; not moved (links are never "
                "followed for deletion)"
            )
        if parent == parent.parent:
            raise TrashError(f"{path}: is not inside {root}")
        parent = parent.parent


def _copy_then_remove(src: Path, dst: Path) -> None:
    """Across filesystems: copy to a temp name next to `dst`, sync, rename, then remove `src`.
    On any failure the temp copy is removed and `src` is untouched."""
    tmp = dst.parent / f".{dst.name}.scrub-moving"
    if os.path.lexists(tmp):
        _remove(tmp)
    try:
        if src.is_symlink():
            tmp.symlink_to(src.readlink())
        elif src.is_dir():
            shutil.copytree(src, tmp, symlinks=True)
            for folder, _dirs, files in os.walk(tmp):
                for name in files:
                    _fsync_file(Path(folder) / name)
        else:
            shutil.copy2(src, tmp, follow_symlinks=False)
            _fsync_file(tmp)
        tmp.rename(dst)
        fsync_dir(dst.parent)
    except BaseException:
        if os.path.lexists(tmp):
            _remove(tmp)
        raise
    _remove(src)


def _fsync_file(path: Path) -> None:
    if path.is_symlink():
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Remove a file, link or folder without following any link."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)  # never follows links (fd-based on Linux)


def _move(src: Path, dst: Path, *, private: bool) -> None:
    if os.path.lexists(dst):
        raise TrashError(f"{dst}: already exists; nothing was moved over it")
    if private:
        paths.ensure_private_dir(dst.parent)
    else:
        paths.create_private_dirs(dst.parent)  # only what is missing: the rest is Claude Code's
    try:
        src.rename(dst)  # moves a link as a link
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        _copy_then_remove(src, dst)


def trash_session(
    session: BundleSession,
    *,
    config_dir: Path,
    home: Path,
    now: datetime,
    archive_ref: str | None = None,
    without_transcript: bool = False,
) -> Path:
    """Move a session's whole bundle into `$SCRUB_HOME/trash/<session-id>/`; returns the slot.

    Does not check pins: callers go through `select_deletable` first (apply_plan does). A slot
    left half-filled by a crash for the same session is completed; any other slot in the way
    is an error and nothing moves. The transcript must exist, unless `without_transcript`:
    `restore --force` keeps the side files of a session whose transcript is gone too.
    """
    if not _safe_name(session.id) or not _safe_name(session.project):
        raise TrashError(f"{session.transcript}: a name that cannot be a trash folder; kept")
    root = paths.ensure_private_dir(paths.trash_dir(home))
    slot = root / session.id
    previous: TrashManifest | None = None
    if os.path.lexists(slot):
        previous = read_trash_manifest(slot) if slot.is_dir() and not slot.is_symlink() else None
        if previous is None or previous.complete or previous.project != session.project:
            raise TrashError(
                f"{slot}: the trash already holds a session with this id; kept",
                "undelete it or let it expire, then run retention again",
            )
    transcript = session.transcript
    bundle = [p for p in session.bundle_paths() if p != transcript]
    if not (without_transcript and not os.path.lexists(transcript)):
        bundle.append(transcript)  # last out, so a crash leaves a session Claude Code finds
    entries: dict[str, TrashEntry] = {e.path: e for e in (previous.entries if previous else ())}
    for path in bundle:
        _refuse_symlinked_parents(path, config_dir)
        relative = _relative(path, config_dir)
        if not _safe_relative(relative):
            raise TrashError(f"{path}: an unexpected path in the bundle; kept")
        entries[relative] = TrashEntry(relative, _kind(path), path.lstat().st_mtime_ns)
    manifest = TrashManifest(
        session_id=session.id,
        project=session.project,
        cwd=session.cwd,
        custom_title=session.custom_title,
        title=session.title or (previous.title if previous else None),
        tags=tuple(session.tags),
        last_activity=session.last_timestamp,
        entries=tuple(sorted(entries.values(), key=lambda e: e.path)),
        config_dir=str(config_dir),
        archive_ref=archive_ref or (previous.archive_ref if previous else None),
    )
    paths.ensure_private_dir(slot)
    write_trash_manifest(slot, manifest)  # before anything moves: a crash leaves a map
    for path in bundle:
        _move(path, slot / _relative(path, config_dir), private=True)
    write_trash_manifest(slot, replace(manifest, complete=True, trashed_at=now))
    return slot


def purge_trash_slot(slot: Path, pins: Pins) -> None:
    """Delete one trash entry for good. Refuses a pinned session (through the selector)."""
    manifest = read_trash_manifest(slot)
    if not select_deletable([manifest], pins, lambda m: m.subject).deletable:
        raise TrashError(f"{slot}: session {manifest.session_id} is pinned; not purged")
    if slot.is_symlink():
        raise TrashError(f"{slot}: is a link; not purged")
    shutil.rmtree(slot)


@dataclass(frozen=True, slots=True)
class UndeleteResult:
    session_id: str
    project: str
    transcript: Path
    restored: tuple[Path, ...]


def find_in_trash(home: Path, query: str) -> tuple[Path, TrashManifest]:
    """The trash entry a user named: by id, id prefix (4+ characters) or title, in the order
    `find_session` tries them for `archive`, `pin` and `audit --session`: the custom title,
    then the title, exactly, then both ignoring case."""
    listing = list_trash(home)
    slots = [*listing.complete, *listing.incomplete]
    query = query.strip()
    if not query:
        raise UsageError("empty session name", "give a session id, id prefix or title")
    tests: list[Callable[[TrashManifest], bool]] = [lambda m: m.session_id == query]
    if len(query) >= _MIN_PREFIX:
        tests.append(lambda m: m.session_id.startswith(query))
    folded = query.casefold()
    for fold in (False, True):
        for custom in (True, False):
            tests.append(
                partial(_titled, query=folded if fold else query, fold=fold, custom=custom)
            )
    for test in tests:
        found = [(s, m) for s, m in slots if test(m)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            ids = ", ".join(m.session_id for _, m in found[:5])
            raise UsageError(f"{len(found)} sessions in the trash match", f"name one by id: {ids}")
    raise UsageError(
        "no session in the trash matches that name",
        "`scrub retention` lists what is in the trash; expired entries may have been purged",
    )


def _titled(manifest: TrashManifest, *, query: str, fold: bool, custom: bool) -> bool:
    title = manifest.custom_title if custom else manifest.title
    if title is None:
        return False
    return (title.casefold() if fold else title) == query


def _touch(restored: list[Path], stamp: float) -> None:
    """Claude Code sweeps file-history, session-env, debug and todos by their own mtimes, not
    only the transcript's: every restored file and folder gets a fresh one (as `scrub restore`
    does for files). Links are skipped, never followed."""
    for top in restored:
        if top.is_symlink():
            continue
        found = [top]
        if top.is_dir():
            for folder, dirs, files in os.walk(top, followlinks=False):
                found.extend(Path(folder) / name for name in (*dirs, *files))
        for path in found:
            if not path.is_symlink():
                os.utime(path, (stamp, stamp))


def _check_trash_scope(
    home: Path, slot: Path, manifest: TrashManifest, present: list[TrashEntry]
) -> None:
    """A trash entry may be planted (issue 11): it brings back only paths of its own session's
    bundle (the one list, asked through `bundle_scope`), or nothing, naming the first other."""
    folder = paths.ensure_private_dir(home / "staging")
    with tempfile.TemporaryDirectory(prefix="undelete-", dir=folder) as scratch:
        legacy = check_in_bundle(
            manifest.project,
            manifest.session_id,
            [e.path for e in present if e.kind != "dir"],
            [e.path for e in present if e.kind == "dir"],
            Path(scratch),
        )
    check_legacy_agents(slot, manifest.session_id, legacy)


def undelete(
    home: Path, config_dir: Path, query: str, *, now: datetime, keep_mtime: bool = False
) -> UndeleteResult:
    """Put a trashed session back where Claude Code finds it.

    Refuses, moving nothing, when anything is in the way at the original paths. The restored
    files' mtimes become `now` (a full cleanup period to resume it) unless `keep_mtime`.
    The caller holds the retention lock.
    """
    slot, manifest = find_in_trash(home, query)
    present = [e for e in manifest.entries if os.path.lexists(slot / e.path)]
    _check_trash_scope(home, slot, manifest, present)
    for entry in present:
        target = config_dir / entry.path
        if os.path.lexists(target):
            raise UsageError(
                f"{target}: something is in the way; nothing was restored",
                "move it aside (or remove it) and run undelete again",
            )
        _refuse_symlinked_parents(target, config_dir)
    transcript = config_dir / manifest.transcript
    ordered = sorted(present, key=lambda e: (e.path == manifest.transcript, e.path))
    restored = []
    for entry in ordered:
        target = config_dir / entry.path
        _move(slot / entry.path, target, private=False)
        restored.append(target)
    if not keep_mtime:
        _touch(restored, now.timestamp())
    # What is left is the manifest and empty folders; anything else stays for a human to see.
    (slot / TRASH_MANIFEST).unlink()
    for folder, _dirs, _files in os.walk(slot, topdown=False):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()
    return UndeleteResult(manifest.session_id, manifest.project, transcript, tuple(restored))
