"""The trash: a session's whole bundle moved into `$SCRUB_HOME/trash/<session-id>/`, and back.

Each trashed version of a session has a folder of its own (`<session-id>/`, then
`<session-id>.2/`, …: `trash_names.py`); which one `undelete` brings back is
`trash_versions.py`'s choice.

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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from scrubber import paths
from scrubber.durable import fsync_dir
from scrubber.errors import UsageError
from scrubber.policy.model import Pins
from scrubber.retention.plan import (
    RetentionEntry,
    TrashedSession,
)
from scrubber.retention.rules import select_deletable
from scrubber.retention.trash_crash import TRASH_MANIFEST
from scrubber.retention.trash_manifest import (
    TrashEntry,
    TrashError,
    TrashManifest,
    read_trash_manifest,
    safe_name,
    safe_relative,
    write_trash_manifest,
)
from scrubber.retention.trash_names import claim_slot, version_of
from scrubber.transcript.bundle_scope import check_in_bundle, check_legacy_agents


class BundleSession(RetentionEntry, Protocol):
    """A session with its files: discovery's `SessionInfo` satisfies it."""

    @property
    def transcript(self) -> Path: ...
    @property
    def title(self) -> str | None: ...
    def bundle_paths(self) -> tuple[Path, ...]: ...


@dataclass(frozen=True, slots=True)
class TrashListing:
    complete: tuple[tuple[Path, TrashManifest], ...]
    incomplete: tuple[tuple[Path, TrashManifest], ...]
    problems: tuple[tuple[Path, str], ...]

    def trashed(self) -> tuple[TrashedSession, ...]:
        """The complete entries, as the plan sees them."""
        return tuple(
            TrashedSession(
                m.session_id,
                m.project,
                m.trashed_at or datetime.now(UTC),
                m.subject,
                version_of(slot.name, m.session_id) or 1,
            )
            for slot, m in self.complete
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
    """Move a session's whole bundle into a trash folder of its own; returns the slot.

    Does not check pins: callers go through `select_deletable` first (apply_plan does). A slot
    left half-filled by a crash for the same session is completed; else the bundle goes into a
    new folder (`trash/<id>/`, or `<id>.2/`, … when earlier versions of the session are in the
    trash or something else holds the name: that is never touched). The transcript must exist,
    unless `without_transcript`: `restore --force` keeps the side files of a session whose
    transcript is gone too.
    """
    if not safe_name(session.id) or not safe_name(session.project):
        raise TrashError(f"{session.transcript}: a name that cannot be a trash folder; kept")
    root = paths.ensure_private_dir(paths.trash_dir(home))
    transcript = session.transcript
    bundle = [p for p in session.bundle_paths() if p != transcript]
    if not (without_transcript and not os.path.lexists(transcript)):
        bundle.append(transcript)  # last out, so a crash leaves a session Claude Code finds
    half = _half_filled(root, session, [_relative(p, config_dir) for p in bundle])
    previous = half[1] if half is not None else None
    entries: dict[str, TrashEntry] = {e.path: e for e in (previous.entries if previous else ())}
    for path in bundle:
        _refuse_symlinked_parents(path, config_dir)
        relative = _relative(path, config_dir)
        if not safe_relative(relative):
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
    slot = half[0] if half is not None else _new_slot(root, session.id)  # once all is checked
    paths.ensure_private_dir(slot)
    write_trash_manifest(slot, manifest)  # before anything moves: a crash leaves a map
    for path in bundle:
        _move(path, slot / _relative(path, config_dir), private=True)
    write_trash_manifest(slot, replace(manifest, complete=True, trashed_at=now))
    return slot


def _half_filled(
    root: Path, session: BundleSession, moving: list[str]
) -> tuple[Path, TrashManifest] | None:
    """The newest slot a crash left half-filled while it trashed this session (same id and
    project, manifest still "moving"), to be completed rather than split in two. Never one
    that already holds the session's transcript (it moves last: that version is whole, and
    this is a newer one) or any of the paths about to move (`moving`, relative to the config
    dir): those are another version's files, never overwritten."""
    found = []
    with os.scandir(root) as listing:
        names = [entry.name for entry in listing]
    for name in names:
        version = version_of(name, session.id)
        slot = root / name
        if version is None or slot.is_symlink() or not slot.is_dir():
            continue
        try:
            manifest = read_trash_manifest(slot)
        except TrashError:
            continue  # not ours to fill: a new folder is taken instead
        if (
            not manifest.complete
            and manifest.session_id == session.id
            and manifest.project == session.project
            and not os.path.lexists(slot / manifest.transcript)
            and not any(os.path.lexists(slot / relative) for relative in moving)
        ):
            found.append((version, slot, manifest))
    if not found:
        return None
    _version, slot, manifest = max(found, key=lambda item: item[0])
    return slot, manifest


def _holds_version_of(session_id: str, slot: Path) -> bool:
    """Whether `slot` is a trash folder of ours for `session_id` (a real folder whose manifest
    names it): the numbering of versions counts only those."""
    if slot.is_symlink() or not slot.is_dir():
        return False
    try:
        return read_trash_manifest(slot).session_id == session_id
    except TrashError:
        return False


def _new_slot(root: Path, session_id: str) -> Path:
    try:
        slot, _version = claim_slot(root, session_id, partial(_holds_version_of, session_id))
    except FileExistsError:
        raise TrashError(
            f"{root}: every trash folder name for session {session_id} is taken; kept",
            f"move aside the folders in {root} named after this session that `scrub "
            "retention` does not list (they are not scrubber's), then run this again",
        ) from None
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
    version: int = 1  # which trashed version came back
    # The versions of the session still in the trash, newest first: (version, trashed_at).
    remaining: tuple[tuple[int, datetime | None], ...] = ()


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


def undelete_slot(
    home: Path,
    config_dir: Path,
    slot: Path,
    manifest: TrashManifest,
    *,
    now: datetime,
    keep_mtime: bool = False,
) -> UndeleteResult:
    """Put the trashed session in `slot` (its manifest read by `list_trash`) back where Claude
    Code finds it.

    Refuses, moving nothing, when anything is in the way at the original paths. The restored
    files' mtimes become `now` (a full cleanup period to resume it) unless `keep_mtime`.
    The caller holds the retention lock. `trash_versions.undelete` finds the slot by name.
    """
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
