"""Putting an archived session back under a config dir, from an archive anyone may have made.

The recipient of an archive is public by design, so restore trusts nothing in it (issue 11):

- Only the session bundle of the session the manifest names is written: every path is checked
  against that bundle (`transcript.bundle_scope`) as soon as the manifest is read, before any
  member is decrypted to disk; anything else fails the whole restore, naming the path, and no
  hint leads to `--force` for it.
- Every header and member is capped before it is read (`tar_reader`), a member never yields a
  byte past its declared size, and what the manifest declares must fit in the staging folder's
  free space before anything is written.
- Plaintext is staged only in `$SCRUB_HOME/staging/restore-*` (0700, locked while in use), never
  in the config dir; a restore killed midway leaves a staging folder the next restore (or
  `scrub doctor`) finds and removes. Across file systems a file is copied to a temp name next
  to its target, recorded in the staging folder's journal before it is created.
- Only a bundle that verified completely is moved into place; an existing session is not
  overwritten unless `force` (files already there with the archived content are left as is).
  With `make_room`, `force` first hands what is there to the caller (the restore use case moves
  it to the trash, issue 14) and then places files without replacing any.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from scrubber.archive.age import DecryptingReader, Identity
from scrubber.archive.bundle import (
    Progress,
    drain,
    sha256_file,
    unpack_bundle,
)
from scrubber.archive.errors import ArchiveError, RestoreConflictError
from scrubber.archive.leftovers import (
    RESTORE_TEMP_MARK,
    journal_outside,
    remove_leftovers,
    staging_folder,
)
from scrubber.archive.manifest import BundleFile, Manifest, safe_relative_path
from scrubber.archive.verify import is_encrypted
from scrubber.durable import fsync_dir, publish_by_link
from scrubber.errors import path_error_hint
from scrubber.transcript.bundle_scope import check_in_bundle, check_legacy_agents

__all__ = ["MakeRoom", "RestoreResult", "restore_archive"]

# Called, once the archive verified completely and before anything is placed, with the
# manifest and the files that exist and differ; it must move them out of the way.
MakeRoom = Callable[[Manifest, Sequence[str]], None]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    manifest: Manifest
    config_dir: Path
    transcript: Path
    files: int
    replaced: tuple[str, ...] = ()  # paths that existed, differed, and were replaced (--force)


# Room left on the staging file system beyond what the manifest declares (folders, metadata).
_SPACE_MARGIN = 16 * 1024 * 1024


def _io_error(what: str, exc: OSError, where: Path | str | None = None) -> ArchiveError:
    place = exc.filename or where
    told = path_error_hint(exc) or "free some space or fix the folder's permissions"
    return ArchiveError(
        f"cannot {what}: {place}: {exc.strerror or type(exc).__name__}"
        if place
        else f"cannot {what}: {exc.strerror or type(exc).__name__}",
        hint=f"nothing was restored; {told}",
    )


def _makedirs_private(config_dir: Path, rel: str) -> Path:
    """Create the folders of `rel` under `config_dir` (0700 for those we create), refusing a
    step that is not a folder or a symlink leading out of the config dir."""
    root = config_dir.resolve()
    current = config_dir
    for part in rel.split("/"):
        current = current / part
        try:
            st = current.lstat()
        except FileNotFoundError:
            current.mkdir(mode=0o700)
            current.chmod(0o700)
            continue
        if stat.S_ISLNK(st.st_mode):
            target = current.resolve()
            if not (target == root or target.is_relative_to(root)) or not target.is_dir():
                raise ArchiveError(
                    f"refusing to restore through {current}: a symlink out of the config dir"
                )
        elif not stat.S_ISDIR(st.st_mode):
            raise ArchiveError(f"refusing to restore: {current} exists and is not a folder")
    return current


def _same_content(path: Path, size: int, sha256: str) -> bool:
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return False
        return sha256_file(path)[0] == sha256
    except OSError:
        return False


class _Admission:
    """The check `unpack_bundle` runs on the manifest before any member is read."""

    def __init__(self, staging: Path, tree: Path) -> None:
        self._staging = staging
        self._tree = tree
        self.legacy: list[str] = []

    def __call__(self, manifest: Manifest) -> None:
        scratch = self._staging / "scope"
        scratch.mkdir(mode=0o700)
        facts = manifest.session
        self.legacy = check_in_bundle(
            facts.project,
            facts.session_id,
            [f.path for f in manifest.files],
            [d.path for d in manifest.dirs],
            scratch,
        )
        shutil.rmtree(scratch, ignore_errors=True)
        vfs = os.statvfs(self._tree)
        free = vfs.f_bavail * vfs.f_frsize
        if manifest.total_size + _SPACE_MARGIN > free:
            raise ArchiveError(
                f"cannot restore: the archive declares {manifest.total_size} bytes, "
                f"{self._tree.parent} has {free} free",
                hint="free some space (or set SCRUB_HOME to a larger disk); nothing was written",
            )


def _decrypt_into(
    path: Path,
    identities: Sequence[Identity],
    staging: Path,
    progress: Progress | None,
) -> tuple[Manifest, list[str]]:
    tree = staging / "tree"
    tree.mkdir(mode=0o700)
    admission = _Admission(staging, tree)
    try:
        with path.open("rb") as handle:
            raw = cast(BinaryIO, handle)
            source = raw
            if is_encrypted(raw):
                source = cast(BinaryIO, DecryptingReader(raw, identities))
            manifest = unpack_bundle(source, tree, progress=progress, admit=admission)
            drain(source)
    except FileNotFoundError as exc:
        if exc.filename in (None, str(path)):
            raise ArchiveError(f"{path}: archive file not found") from None
        raise _io_error(f"restore {path}", exc) from None
    except OSError as exc:
        raise _io_error(f"restore {path}", exc, staging) from None
    check_legacy_agents(tree, manifest.session.session_id, admission.legacy)
    return manifest, admission.legacy


def _place(staged: Path, target: Path, *, force: bool, staging: Path, shown: str) -> None:
    """Move one verified file into place: a rename (or a link, which never replaces) on the same
    file system, else a journaled copy to a temp name beside the target first. `shown`: the
    target as errors name it (`_named`)."""
    if staged.stat().st_dev != target.parent.stat().st_dev:
        temp = target.with_name(f".{target.name}{RESTORE_TEMP_MARK}{staging.name}.tmp")
        journal_outside(staging, temp)
        try:
            with staged.open("rb") as src, temp.open("xb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
            temp.chmod(0o600)
            st = staged.stat()
            os.utime(temp, ns=(st.st_atime_ns, st.st_mtime_ns))
            staged.unlink()
            staged = temp
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
    try:
        if force:
            if target.is_dir() and not target.is_symlink():
                raise ArchiveError(f"refusing to replace the folder {shown} by a file")
            staged.replace(target)
        elif not publish_by_link(staged, target):
            raise RestoreConflictError(
                f"{shown} appeared while restoring; nothing there was overwritten",
                hint="run the restore again with --force to replace it",
            )
    finally:
        if RESTORE_TEMP_MARK in staged.name:
            with contextlib.suppress(FileNotFoundError):
                staged.unlink()


def _conflicts(manifest: Manifest, config_dir: Path) -> tuple[set[str], list[str]]:
    """(files already there with the archived content, files there that differ).

    The session's transcript under another project folder is there and differs too: a
    redacted archive names the project as it shows it, and restoring it beside the original
    would leave one session id in two folders (which Claude Code resumes is anyone's guess).
    """
    identical: set[str] = set()
    existing: list[str] = []
    for item in manifest.files:
        target = config_dir / item.path
        if not os.path.lexists(target):
            continue
        if _same_content(target, item.size, item.sha256):
            identical.add(item.path)
        else:
            existing.append(item.path)
    existing.extend(_transcripts_elsewhere(manifest, config_dir))
    return identical, existing


def _named(path: str) -> str:
    """A conflicting file as an error names it: a project folder's name is the cwd it was made
    from, which can quote a token (a redacted archive shows it hidden), so it is left out."""
    parts = path.split("/")
    if parts[0] == "projects" and len(parts) > 2:
        return "/".join(["projects", "<project folder>", *parts[2:]])
    return path


def _transcripts_elsewhere(manifest: Manifest, config_dir: Path) -> list[str]:
    """The session's transcripts under project folders other than the manifest's."""
    facts = manifest.session
    projects = config_dir / "projects"
    name = f"{facts.session_id}.jsonl"
    try:
        with os.scandir(projects) as entries:
            folders = sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []  # no projects folder yet (or unreadable: placing files will say so)
    return [
        f"projects/{folder}/{name}"
        for folder in folders
        if folder != facts.project and os.path.lexists(projects / folder / name)
    ]


def _move_into_place(
    manifest: Manifest,
    tree: Path,
    config_dir: Path,
    identical: set[str],
    *,
    force: bool,
    touch: float | None,
    staging: Path,
) -> None:
    for directory in sorted(manifest.dirs, key=lambda d: d.path.count("/")):
        _makedirs_private(config_dir, safe_relative_path(directory.path))
    touched: set[Path] = set()
    item: BundleFile
    for item in manifest.files:
        rel = safe_relative_path(item.path)
        parent_rel, _, _name = rel.rpartition("/")
        parent = _makedirs_private(config_dir, parent_rel) if parent_rel else config_dir
        staged = tree / rel
        target = config_dir / rel
        if rel in identical:
            if touch is not None:
                os.utime(target, (touch, touch))
            continue
        if touch is not None:
            os.utime(staged, (touch, touch))
        _place(staged, target, force=force, staging=staging, shown=_named(rel))
        touched.add(parent)
    for folder in touched:
        fsync_dir(folder)


def _settle_conflicts(
    manifest: Manifest, config_dir: Path, *, force: bool, make_room: MakeRoom | None
) -> tuple[set[str], list[str], bool]:
    """What already exists where the archive goes, after `make_room` had its turn.

    Returns the paths already holding identical bytes, those that differed, and whether the
    differing ones are to be replaced in place. Raises `RestoreConflictError` when the restore
    may not go on.
    """
    facts = manifest.session
    identical, existing = _conflicts(manifest, config_dir)
    if existing and not force:
        raise RestoreConflictError(
            f"session {facts.session_id} is already in {config_dir} "
            f"({len(existing)} of its files exist and differ, e.g. {_named(existing[0])})",
            hint="pass --force to replace them (they go to the trash first), or --to "
            "ANOTHER_CONFIG_DIR",
        )
    if _transcripts_elsewhere(manifest, config_dir) and make_room is None:
        # --force replaces the archive's own paths; a copy under another folder is not one
        # of them and would stay beside the restored one.
        raise RestoreConflictError(
            f"session {facts.session_id} is already in {config_dir} under another project "
            "folder; nothing was replaced",
            hint="restore it with --to ANOTHER_CONFIG_DIR",
        )
    if not (existing and make_room is not None):
        return identical, existing, force
    make_room(manifest, existing)
    identical, still = _conflicts(manifest, config_dir)
    if still:
        raise RestoreConflictError(
            f"{_named(still[0])} changed while restoring; nothing of the archive was placed",
            hint="run the restore again once the session is idle",
        )
    return identical, existing, False


def restore_archive(
    path: Path,
    identities: Sequence[Identity],
    config_dir: Path,
    *,
    home: Path | None = None,
    force: bool = False,
    keep_mtime: bool = False,
    now: float | None = None,
    progress: Progress | None = None,
    make_room: MakeRoom | None = None,
) -> RestoreResult:
    """Put an archived session back under `config_dir`, where Claude Code finds it.

    Everything is decrypted and checked into a private staging folder under `home`
    (`$SCRUB_HOME`; default `<config_dir>/scrubber`) first; only a bundle that verified
    completely, and holds nothing but the session's own bundle, is moved into place, so a
    wrong key, a damaged or a hostile archive changes nothing. An existing session is never
    overwritten unless `force`; with `make_room` too, what differs is handed to it first and no
    file is replaced (one that appears meanwhile is a conflict). Files are 0600. Unless
    `keep_mtime`, every restored file's mtime is set to `now`: Claude Code's sweep keys on each
    file's own mtime (the transcript's, and those of file-history, session-env, debug and
    todos), so the user gets a full period to resume the session.
    """
    moment = time.time() if now is None else now
    home = home if home is not None else config_dir / "scrubber"
    with contextlib.ExitStack() as stack:
        try:
            # exist_ok: two restores into one new folder race to create it
            config_dir.mkdir(parents=True, mode=0o700, exist_ok=True)
            remove_leftovers(home, config=config_dir)
            staging = stack.enter_context(staging_folder(home, "restore"))
        except OSError as exc:
            raise _io_error(f"restore into {config_dir}", exc) from None
        manifest, _legacy = _decrypt_into(path, identities, staging, progress)
        facts = manifest.session
        identical, existing, replace_in_place = _settle_conflicts(
            manifest, config_dir, force=force, make_room=make_room
        )
        try:
            _move_into_place(
                manifest,
                staging / "tree",
                config_dir,
                identical,
                force=replace_in_place,
                touch=None if keep_mtime else moment,
                staging=staging,
            )
        except OSError as exc:
            raise _io_error(f"restore into {config_dir}", exc) from None
        return RestoreResult(
            manifest=manifest,
            config_dir=config_dir,
            transcript=config_dir / facts.transcript,
            files=len(manifest.files),
            replaced=tuple(existing),
        )
