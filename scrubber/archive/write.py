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
from typing import TYPE_CHECKING, BinaryIO, cast

from scrubber.archive.age import (
    EncryptingWriter,
    read_header,
)
from scrubber.archive.bundle import (
    BundleContents,
    Manifest,
    Progress,
    SessionFacts,
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
from scrubber.archive.sidecar import Sidecar, clear_manifest
from scrubber.durable import fsync_dir, publish_by_link
from scrubber.errors import UsageError

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
    progress: Progress | None = None,
) -> WrittenArchive:
    """Write one session's archive under `root` and its sidecar; return where it went.

    `contents` was collected from `source_root` (the config dir, or a staging copy of redacted
    files). With no recipients the archive is written in clear, which is allowed only for a
    redacted bundle. When an archive of the same content for the same recipients exists, it is
    returned with `created=False` and nothing is written.

    Raises ArchiveWriteError (nothing left behind) on I/O errors, BundleChangedError when the
    session changed while it was read, KeyMaterialError from the recipients.
    """
    if not recipients and not redacted:
        raise UsageError(
            "refusing to write an unencrypted archive of an unredacted session",
            hint="give recipients (-r / -R / --passphrase or archive.recipients), or --redact",
        )
    project = plain_name(facts.project, "project")
    session_id = plain_name(facts.session_id, "session id")
    fingerprints = [recipient_fingerprint(r) for r in recipients]
    manifest = make_manifest(
        facts,
        contents,
        created=created,
        scrubber_version=scrubber_version,
        recipients=fingerprints,
        encrypted=bool(recipients),
        redacted=redacted,
    )
    clear = clear_manifest(manifest, clear_fields, redact_text)
    folder = root / project / session_id
    for existing in archives_of(root, project, session_id):
        if _same_version(existing, manifest):
            return WrittenArchive(existing, manifest, created=False)

    transcript_time = facts.last_timestamp or datetime.fromtimestamp(
        manifest.transcript.mtime_ns / 1e9, tz=UTC
    )
    stem = version_name(transcript_time)
    suffix = ENCRYPTED_SUFFIX if recipients else CLEAR_SUFFIX
    leftovers: list[Path] = []
    # Temp files are locked until published or removed: a killed run's are found and removed
    # by the next (`leftovers.remove_leftovers`), a live one's never.
    locks = contextlib.ExitStack()
    try:
        if not root.exists():
            root.mkdir(parents=True, mode=0o700)
            root.chmod(0o700)
        _private_dir(root / project)
        _private_dir(folder)
        fd, tmp = locks.enter_context(locked_temp(folder, f".{stem}."))
        leftovers.append(tmp)
        with os.fdopen(fd, "wb") as raw:
            sink = _HashingWriter(cast(BinaryIO, raw))
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
        # Read back what reached the file system before anything may rely on it.
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

        for attempt in range(1, 1000):
            name = stem + ("" if attempt == 1 else f"-{attempt}") + suffix
            final = folder / name
            if os.path.lexists(sidecar_path(final)):
                continue  # an orphan sidecar: its name is taken too
            sidecar = Sidecar(
                archive=name,
                encrypted=bool(recipients),
                redacted=redacted,
                size=written_size,
                ciphertext_sha256=written_hash,
                content_sha256=manifest.content_sha256,
                recipients=tuple(fingerprints),
                stanza_types=stanza_types,
                created=created,
                scrubber_version=scrubber_version,
                manifest=clear,
            )
            side_fd, side_tmp = locks.enter_context(locked_temp(folder, f".{name}."))
            leftovers.append(side_tmp)
            with os.fdopen(side_fd, "wb") as out:
                out.write(sidecar.to_bytes())
                out.flush()
                os.fsync(out.fileno())
            if not publish_by_link(tmp, final):
                side_tmp.unlink()
                leftovers.remove(side_tmp)
                continue
            leftovers.append(final)
            if not publish_by_link(side_tmp, sidecar_path(final)):
                raise ArchiveWriteError(f"{sidecar_path(final)} appeared while writing it")
            leftovers.clear()
            for path in (tmp, side_tmp):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            fsync_dir(folder)
            entry = ArchiveEntry(
                final, project, session_id, name[: -len(suffix)], bool(recipients), sidecar
            )
            return WrittenArchive(entry, manifest, created=True)
        raise ArchiveWriteError(f"{folder}: too many versions with the same last timestamp")
    except OSError as exc:
        raise ArchiveWriteError(
            f"cannot write the archive in {folder}: {exc.strerror or type(exc).__name__}",
            hint="nothing was left behind; free some space or fix the folder's permissions",
        ) from None
    finally:
        for path in leftovers:
            with contextlib.suppress(OSError):
                path.unlink()
        locks.close()
