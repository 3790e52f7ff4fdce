"""Verifying an archive.

Keyless verification checks the sidecar, the file's size and hash, and that the age header
parses with the recipient stanzas the sidecar recorded: it catches corruption, not tampering
(the sidecar is not authenticated). With identities, everything is decrypted and each file is
checked against the manifest's SHA-256.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from scrubber.archive.age import (
    MAGIC,
    AgeError,
    DecryptingReader,
    Identity,
    NoIdentityMatchedError,
    read_header,
)
from scrubber.archive.age_header import unwrap_file_key
from scrubber.archive.bundle import (
    Progress,
    drain,
    sha256_file,
    unpack_bundle,
)
from scrubber.archive.errors import (
    ArchiveError,
    ArchiveIntegrityError,
    ArchiveVersionError,
    SidecarError,
)
from scrubber.archive.layout import GZIP_MAGIC, ArchiveEntry, bare_entry, sidecar_path
from scrubber.archive.manifest import Manifest
from scrubber.archive.sidecar import Sidecar, read_sidecar
from scrubber.detection.placeholder import hides_only

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


_BLOCK = 1 << 20


class _HashingReader(io.RawIOBase):
    """Reads a file, hashing and counting what passes (to check the ciphertext while it is
    decrypted, in one pass)."""

    def __init__(self, raw: io.BufferedIOBase) -> None:
        super().__init__()
        self._raw = raw
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        n = self._raw.readinto(view)
        if n:
            self.digest.update(view[:n])
            self.size += n
        return n or 0

    def finish(self) -> None:
        """Hash whatever the consumer left unread (age's reader stops at its final chunk)."""
        buf = bytearray(_BLOCK)
        while self.readinto(buf):
            pass


@dataclass(frozen=True, slots=True)
class VerifyReport:
    entry: ArchiveEntry
    full: bool  # True: decrypted and every file checked; False: keyless checks only
    manifest: Manifest | None = None


def _names_folder(manifest: Manifest, folder: str) -> bool:
    """Whether the manifest's project is the archive's project folder: the same name, or for
    a redacted archive that name with parts replaced by placeholders (its manifest shows the
    name as redacted: the folder form of a cwd can hold a secret), nothing else changed."""
    shown = manifest.session.project
    if shown == folder or not manifest.redacted:
        return shown == folder
    return hides_only(shown, folder)  # linear: a planted manifest cannot make it backtrack


def _check_manifest(entry: ArchiveEntry, sidecar: Sidecar | None, manifest: Manifest) -> None:
    facts = manifest.session
    if not _names_folder(manifest, entry.project) or facts.session_id != entry.session_id:
        raise ArchiveIntegrityError(
            f"{entry.path}: the manifest names another session than the archive's folder"
        )
    if sidecar is None:
        return
    if manifest.content_sha256 != sidecar.content_sha256:
        raise ArchiveIntegrityError(f"{entry.path}: the content hash differs from the sidecar's")
    if list(manifest.recipients) != list(sidecar.recipients):
        raise ArchiveIntegrityError(f"{entry.path}: the recipients differ from the sidecar's")
    if manifest.redacted != sidecar.redacted:
        raise ArchiveIntegrityError(f"{entry.path}: redacted differs from the sidecar's")


def is_encrypted(handle: BinaryIO) -> bool:
    start = handle.read(len(MAGIC))
    handle.seek(0)
    if start == MAGIC:
        return True
    if start[:2] == GZIP_MAGIC:
        return False
    raise ArchiveError("not an archive: neither an age file nor a gzip stream")


def opens_with(path: Path, identities: Sequence[Identity]) -> bool:
    """Whether one of `identities` unwraps the file key of the archive at `path` (a clear
    archive needs none). Reads the header only. Only "not for these keys" is False: a damaged
    header counts as openable, so that restoring that archive names the damage."""
    try:
        with path.open("rb") as handle:
            raw = cast(BinaryIO, handle)
            if not is_encrypted(raw):
                return True
            header = read_header(raw)
        if not identities:
            return False
        unwrap_file_key(header, identities)
    except NoIdentityMatchedError:
        return False
    except (AgeError, ArchiveError, OSError):
        return True
    return True


def _check_sidecar_agrees(path: Path, entry: ArchiveEntry, sidecar: Sidecar) -> None:
    """The sidecar describes this file, as the file's name says it is (encrypted or not)."""
    if sidecar.archive != path.name:
        raise ArchiveIntegrityError(f"{path}: the sidecar describes another file")
    if sidecar.encrypted != entry.encrypted:
        raise ArchiveIntegrityError(f"{path}: the sidecar disagrees on encryption")
    expected_types = tuple("scrypt" if r == "passphrase" else "X25519" for r in sidecar.recipients)
    if entry.encrypted and expected_types != sidecar.stanza_types:
        raise ArchiveIntegrityError(f"{path}: the sidecar's recipients and stanzas disagree")


def verify_archive(
    path: Path, identities: Sequence[Identity] = (), *, progress: Progress | None = None
) -> VerifyReport:
    """Check an archive. Keyless (no identities, encrypted archive): the sidecar, the file's
    size and SHA-256, and the age header's recipient stanzas. With identities, or for a clear
    archive: the same, plus a full read of the payload, every file against its manifest hash.

    Raises SidecarError / ArchiveIntegrityError / ArchiveVersionError, or the age and bundle
    errors of a full check (a wrong key: NoIdentityMatchedError, exit 2).
    """
    entry = bare_entry(path)
    if not path.is_file():
        raise ArchiveError(f"{path}: archive file not found")
    full = bool(identities) or not entry.encrypted
    sidecar: Sidecar | None
    try:
        sidecar = read_sidecar(sidecar_path(path))
    except ArchiveVersionError:
        raise
    except SidecarError:
        if not full:  # only a full check can stand without the sidecar's record
            raise
        sidecar = None
    entry = replace(entry, sidecar=sidecar)
    if sidecar is not None:
        _check_sidecar_agrees(path, entry, sidecar)

    manifest: Manifest | None = None
    stanza_types: tuple[str, ...] = ()
    with path.open("rb") as handle:
        raw = cast(BinaryIO, handle)
        if is_encrypted(raw) != entry.encrypted:
            raise ArchiveIntegrityError(f"{path}: the file's content does not match its name")
        if full:
            # Decrypt first, so that damage shows as the age error that names it (which chunk,
            # the MAC, a truncation); the ciphertext is hashed in the same pass.
            hashing = _HashingReader(handle)
            source = cast(BinaryIO, hashing)
            if entry.encrypted:
                reader = DecryptingReader(source, identities)
                stanza_types = reader.header.stanza_types
                source = cast(BinaryIO, reader)
            manifest = unpack_bundle(source, None, progress=progress)
            drain(source)
            hashing.finish()
            digest, size = hashing.digest.hexdigest(), hashing.size
        else:
            if sidecar is None:  # pragma: no cover - refused above: keyless needs one
                raise SidecarError(f"{path}: no sidecar")
            size = path.stat().st_size
            if size != sidecar.size:
                raise ArchiveIntegrityError(
                    f"{path}: the file is {size} bytes, the sidecar recorded {sidecar.size}",
                    hint="the archive is truncated or damaged; restore it from another copy",
                )
            # The hash before the header: any damage, header included, reads as corruption.
            digest = sha256_file(path)[0]
            if digest == sidecar.ciphertext_sha256:
                stanza_types = read_header(raw).stanza_types
    if sidecar is not None:
        if size != sidecar.size:
            raise ArchiveIntegrityError(
                f"{path}: the file is {size} bytes, the sidecar recorded {sidecar.size}"
            )
        if digest != sidecar.ciphertext_sha256:
            raise ArchiveIntegrityError(
                f"{path}: SHA-256 mismatch: the file changed since it was written",
                hint="the archive is corrupted; restore it from another copy",
            )
        if entry.encrypted and stanza_types != sidecar.stanza_types:
            raise ArchiveIntegrityError(
                f"{path}: the age header's recipient stanzas differ from the sidecar's"
            )
    if manifest is not None:
        _check_manifest(entry, sidecar, manifest)
    return VerifyReport(entry, full=full, manifest=manifest)
