"""Writing one archive safely.

Writing goes to a temp file in the destination folder, is fsynced, read back and hashed, and
only then linked to its final name (a hard link fails instead of replacing an existing file);
any failure removes what was written. Files are 0600 in 0700 folders and never overwritten.
An archive of unredacted sessions is always encrypted: a clear archive (`.tar.gz`, no `.age`)
is accepted only for a redacted bundle.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from scrubber.archive.age import (
    EncryptingWriter,
    read_header,
)
from scrubber.archive.bundle import (
    BundleContents,
    Progress,
    make_manifest,
    sha256_file,
    write_bundle,
)
from scrubber.archive.errors import ArchiveWriteError
from scrubber.archive.keys import AnyRecipient, ScryptRecipient, recipient_fingerprint
from scrubber.archive.layout import (
    CLEAR_SUFFIX,
    ENCRYPTED_SUFFIX,
    GZIP_MAGIC,
    ArchiveEntry,
    archives_of,
    plain_name,
    sidecar_path,
    version_name,
)
from scrubber.archive.leftovers import locked_temp
from scrubber.archive.manifest import Manifest, SessionFacts
from scrubber.archive.sidecar import Sidecar, clear_manifest
from scrubber.durable import fsync_dir, publish_by_link
from scrubber.errors import UsageError, path_error_hint

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class _HashingWriter(io.RawIOBase):
    """Passes writes on to a file, hashing and counting them (the ciphertext's SHA-256)."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self._raw = raw
        self.digest = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        self._raw.write(view)
        self.digest.update(view)
        self.size += len(view)
        return len(view)

    def flush(self) -> None:
        self._raw.flush()


def _private_dir(path: Path) -> Path:
    """Create `path` as 0700, or tighten one we own that is looser."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        st = path.lstat()
        if not stat.S_ISDIR(st.st_mode):
            raise ArchiveWriteError(f"{path} exists and is not a folder") from None
        if st.st_mode & 0o077 and st.st_uid == os.getuid():
            path.chmod(0o700)
    else:
        path.chmod(0o700)  # mkdir's mode is masked by the umask
    return path


def _stanza_types(recipients: Sequence[AnyRecipient]) -> tuple[str, ...]:
    return tuple("scrypt" if isinstance(r, ScryptRecipient) else "X25519" for r in recipients)


@dataclass(frozen=True, slots=True)
class WrittenArchive:
    entry: ArchiveEntry
    manifest: Manifest
    created: bool  # False: an archive of the same content for the same recipients was there


def _same_version(entry: ArchiveEntry, manifest: Manifest) -> bool:
    sidecar = entry.sidecar
    return (
        sidecar is not None
        and entry.path.exists()
        and sidecar.content_sha256 == manifest.content_sha256
        and sidecar.redacted == manifest.redacted
        and sidecar.encrypted == manifest.encrypted
        and sorted(sidecar.recipients) == sorted(manifest.recipients)
    )


def _existing_version(
    root: Path, project: str, session_id: str, manifest: Manifest
) -> ArchiveEntry | None:
    """The archive already written of this very version, if any. A redacted one found here
    holds the session as it is now: its digest cannot say that later (its content differs from
    the bundle by design), its sidecar's mtime does (usecases/archive_index.redacted_current)."""
    for existing in archives_of(root, project, session_id):
        if _same_version(existing, manifest):
            if manifest.redacted:
                with contextlib.suppress(OSError):
                    os.utime(sidecar_path(existing.path))
            return existing
    return None


def write_archive(
    root: Path,
    facts: SessionFacts,
    contents: BundleContents,
    source_root: Path,
    recipients: Sequence[AnyRecipient],
    *,
    created: datetime,
    scrubber_version: str,
    clear_fields: Collection[str],
    redacted: bool = False,
    redact_text: Callable[[str], str] | None = None,
    manifest_facts: SessionFacts | None = None,
    sidecar_facts: SessionFacts | None = None,
    progress: Progress | None = None,
) -> WrittenArchive:
    """Write one session's archive under `root` and its sidecar; return where it went.

    `contents` was collected from `source_root` (the config dir, or a staging copy of redacted
    files). With no recipients the archive is written in clear, which is allowed only for a
    redacted bundle. When an archive of the same content for the same recipients exists, it is
    returned with `created=False` and nothing is written. `facts` place the archive
    (`<root>/<project>/<session-id>/`); the manifest says `manifest_facts` (default `facts`: a
    redacted archive's are shown redacted, its files under that project name), the sidecar
    `sidecar_facts` (default the manifest's), its free text through `redact_text` when given.

    Raises ArchiveWriteError (nothing left behind) on I/O errors, BundleChangedError when the
    session changed while it was read, KeyMaterialError from the recipients.
    """
    _refuse_clear_unredacted(recipients, redacted)
    project = plain_name(facts.project, "project")
    session_id = plain_name(facts.session_id, "session id")
    fingerprints = [recipient_fingerprint(r) for r in recipients]
    manifest = make_manifest(
        manifest_facts or facts, contents, created=created, scrubber_version=scrubber_version,
        recipients=fingerprints, encrypted=bool(recipients), redacted=redacted,
    )  # fmt: skip
    clear = clear_manifest(manifest, clear_fields, redact_text, sidecar_facts)
    folder = root / project / session_id
    existing = _existing_version(root, project, session_id, manifest)
    if existing is not None:
        return WrittenArchive(existing, manifest, created=False)
    stem = version_name(
        facts.last_timestamp or datetime.fromtimestamp(manifest.transcript.mtime_ns / 1e9, tz=UTC)
    )
    suffix = ENCRYPTED_SUFFIX if recipients else CLEAR_SUFFIX
    leftovers: list[Path] = []
    # Temp files are locked until published or removed: a killed run's are found and removed
    # by the next (`leftovers.remove_leftovers`), a live one's never.
    locks = contextlib.ExitStack()
    try:
        _make_folders(root, project, folder)
        fd, tmp = locks.enter_context(locked_temp(folder, f".{stem}."))
        leftovers.append(tmp)
        with os.fdopen(fd, "wb") as raw:
            sink = _write_payload(raw, manifest, source_root, recipients, progress)
        written = _read_back(tmp, sink, folder, recipients)
        final, sidecar = _publish_version(
            tmp,
            folder,
            (stem, suffix),
            lambda name: _sidecar(name, manifest, written, fingerprints, created, clear),
            locks,
            leftovers,
        )
        entry = ArchiveEntry(
            final, project, session_id, final.name[: -len(suffix)], bool(recipients), sidecar
        )
        return WrittenArchive(entry, manifest, created=True)
    except OSError as exc:
        told = path_error_hint(exc) or "free some space or fix the folder's permissions"
        raise ArchiveWriteError(
            f"cannot write the archive in {folder}: {exc.strerror or type(exc).__name__}",
            hint=f"nothing was left behind; {told}",
        ) from None
    finally:
        for path in leftovers:
            with contextlib.suppress(OSError):
                path.unlink()
        locks.close()


def check_destination(root: Path) -> None:
    """Refuse, before any work, an archive folder that cannot be one: a file in its place or
    above it (every session would fail alike). A missing folder is fine: it is created."""
    current = root
    while True:
        try:
            mode = current.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):  # look further up for the file
            if current.parent == current:
                return
            current = current.parent
            continue
        except OSError as exc:
            raise ArchiveWriteError(
                f"cannot write the archive in {root}: {current}: {exc.strerror}",
                hint=path_error_hint(exc),
            ) from None
        if not stat.S_ISDIR(mode):
            raise ArchiveWriteError(
                f"cannot write the archive in {root}: {current} is a file, not a folder",
                hint="choose another --output folder (or archive.destination in the policy)",
            )
        return


def _refuse_clear_unredacted(recipients: Sequence[AnyRecipient], redacted: bool) -> None:
    if not recipients and not redacted:
        raise UsageError(
            "refusing to write an unencrypted archive of an unredacted session",
            hint="give recipients (-r / -R / --passphrase or archive.recipients), or --redact",
        )


def _write_payload(
    raw: BinaryIO,
    manifest: Manifest,
    source_root: Path,
    recipients: Sequence[AnyRecipient],
    progress: Progress | None,
) -> _HashingWriter:
    """The bundle into `raw`, encrypted when there are recipients, synced to disk; the sink
    knows the hash and size of what was written."""
    sink = _HashingWriter(raw)
    if recipients:
        writer = EncryptingWriter(cast(BinaryIO, sink), recipients)
        try:
            write_bundle(cast(BinaryIO, writer), manifest, source_root, progress=progress)
        except BaseException:
            writer.abort()
            raise
        writer.close()
    else:
        write_bundle(cast(BinaryIO, sink), manifest, source_root, progress=progress)
    raw.flush()
    os.fsync(raw.fileno())
    return sink


@dataclass(frozen=True, slots=True)
class _ReadBack:
    sha256: str
    size: int
    stanza_types: tuple[str, ...]


def _read_back(
    tmp: Path, sink: _HashingWriter, folder: Path, recipients: Sequence[AnyRecipient]
) -> _ReadBack:
    """Read back what reached the file system before anything may rely on it."""
    written_hash, written_size = sha256_file(tmp)
    if written_hash != sink.digest.hexdigest() or written_size != sink.size:
        raise ArchiveWriteError(
            f"{folder}: the archive read back differs from what was written",
            hint="check the disk or the mount holding the archives",
        )
    stanza_types: tuple[str, ...] = ()
    with tmp.open("rb") as handle:
        if recipients:
            stanza_types = read_header(cast(BinaryIO, handle)).stanza_types
            if stanza_types != _stanza_types(recipients):
                raise ArchiveWriteError(f"{folder}: the archive read back has a wrong header")
        elif handle.read(2) != GZIP_MAGIC:
            raise ArchiveWriteError(f"{folder}: the archive read back is not gzip")
    return _ReadBack(written_hash, written_size, stanza_types)


def _publish(
    tmp: Path,
    final: Path,
    sidecar: Sidecar,
    locks: contextlib.ExitStack[bool | None],
    leftovers: list[Path],
) -> bool:
    """Link the archive `tmp` to `final`, then its sidecar beside it. False when `final` was
    taken meanwhile (the caller tries the next version name); what is left to remove on a
    failure stays in `leftovers`."""
    folder = final.parent
    side_fd, side_tmp = locks.enter_context(locked_temp(folder, f".{final.name}."))
    leftovers.append(side_tmp)
    with os.fdopen(side_fd, "wb") as out:
        out.write(sidecar.to_bytes())
        out.flush()
        os.fsync(out.fileno())
    if not publish_by_link(tmp, final):
        side_tmp.unlink()
        leftovers.remove(side_tmp)
        return False
    leftovers.append(final)
    if not publish_by_link(side_tmp, sidecar_path(final)):
        raise ArchiveWriteError(f"{sidecar_path(final)} appeared while writing it")
    leftovers.clear()
    for path in (tmp, side_tmp):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    fsync_dir(folder)
    return True


def _make_folders(root: Path, project: str, folder: Path) -> None:
    if not root.exists():
        with contextlib.suppress(FileExistsError):  # a concurrent archive made it first
            root.mkdir(parents=True, mode=0o700)
            root.chmod(0o700)
    _private_dir(root / project)
    _private_dir(folder)


def _sidecar(
    name: str,
    manifest: Manifest,
    written: _ReadBack,
    fingerprints: Sequence[str],
    created: datetime,
    clear: dict[str, Any],
) -> Sidecar:
    return Sidecar(
        archive=name,
        encrypted=manifest.encrypted,
        redacted=manifest.redacted,
        size=written.size,
        ciphertext_sha256=written.sha256,
        content_sha256=manifest.content_sha256,
        recipients=tuple(fingerprints),
        stanza_types=written.stanza_types,
        created=created,
        scrubber_version=manifest.scrubber_version,
        manifest=clear,
    )


def _publish_version(
    tmp: Path,
    folder: Path,
    name_parts: tuple[str, str],
    describe: Callable[[str], Sidecar],
    locks: contextlib.ExitStack[bool | None],
    leftovers: list[Path],
) -> tuple[Path, Sidecar]:
    """Publish `tmp` under the first free version name (`<stem><suffix>`, `<stem>-2<suffix>`,
    …), with the sidecar `describe` makes for that name."""
    stem, suffix = name_parts
    for attempt in range(1, 1000):
        name = stem + ("" if attempt == 1 else f"-{attempt}") + suffix
        final = folder / name
        if os.path.lexists(sidecar_path(final)):
            continue  # an orphan sidecar: its name is taken too
        sidecar = describe(name)
        if _publish(tmp, final, sidecar, locks, leftovers):
            return final, sidecar
    raise ArchiveWriteError(f"{folder}: too many versions with the same last timestamp")
