"""Archives on disk: write one safely, list them, verify them, restore and decrypt them.

Layout (Contracts, "Archives"): `<archives>/<project>/<session-id>/<version>.tar.gz.age`, where
`<version>` is the session's last timestamp (`2026-03-02T09-01-30.948Z`: no colons, which tar
would take for a remote host), with `-2`, `-3`… when a different version of the session has the
same last timestamp. Files are 0600 in 0700 folders and never overwritten. Next to each archive
a sidecar `<archive>.json` holds what may be read without a key: the manifest fields the policy
allows in clear, the SHA-256 and size of the file as written, the recipients' fingerprints, the
stanza types of the age header, the bundle's content hash and the format version.

Writing goes to a temp file in the destination folder, is fsynced, read back and hashed, and
only then linked to its final name (a hard link fails instead of replacing an existing file);
any failure removes what was written. An archive of unredacted sessions is always encrypted:
a clear archive (`.tar.gz`, no `.age`) is accepted only for a redacted bundle.

Keyless verification checks the sidecar, the file's size and hash, and that the age header
parses with the recipient stanzas the sidecar recorded: it catches corruption, not tampering
(the sidecar is not authenticated). With identities, everything is decrypted and each file is
checked against the manifest's SHA-256.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from scrubber.archive.age import (
    MAGIC,
    DecryptingReader,
    EncryptingWriter,
    Identity,
    read_header,
)
from scrubber.archive.bundle import (
    BundleContents,
    Manifest,
    Progress,
    SessionFacts,
    drain,
    make_manifest,
    sha256_file,
    unpack_bundle,
    write_bundle,
)
from scrubber.archive.keys import AnyRecipient, ScryptRecipient, recipient_fingerprint
from scrubber.archive.leftovers import locked_temp
from scrubber.durable import fsync_dir, publish_by_link
from scrubber.errors import ExitCode, ScrubberError, UsageError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = [
    "CLEAR_FIELDS",
    "CLEAR_SUFFIX",
    "ENCRYPTED_SUFFIX",
    "SIDECAR_FORMAT",
    "ArchiveEntry",
    "ArchiveError",
    "ArchiveIntegrityError",
    "ArchiveVersionError",
    "ArchiveWriteError",
    "RestoreConflictError",
    "RestoreResult",
    "Sidecar",
    "SidecarError",
    "VerifyReport",
    "archives_of",
    "clear_manifest",
    "decrypt_file",
    "list_archives",
    "read_entry",
    "restore_archive",
    "sidecar_path",
    "verify_archive",
    "version_name",
    "write_archive",
]

ENCRYPTED_SUFFIX = ".tar.gz.age"
CLEAR_SUFFIX = ".tar.gz"
SIDECAR_SUFFIX = ".json"
SIDECAR_SCHEMA = "scrubber.archive-sidecar"
SIDECAR_FORMAT = 1
# The manifest fields a sidecar may hold in clear: the policy's `clear_manifest_fields` values.
# (The path itself always shows project, session id and last timestamp: the Contracts fix it.)
CLEAR_FIELDS = (
    "session_id",
    "project",
    "cwd",
    "title",
    "tags",
    "first_timestamp",
    "last_timestamp",
    "sizes",
)
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 1 << 20
_MAX_SIDECAR = 1 << 20
_VERSION_RE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d{3})?Z)(?:-(\d+))?")


# ------------------------------------------------------------------------------------ errors


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


# ------------------------------------------------------------------------------ names, values


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


def _plain_name(value: str, what: str) -> str:
    if not value or "/" in value or "\x00" in value or value in (".", "..") or value[0] == ".":
        raise UsageError(f"cannot archive: the {what} {value[:80]!r} is not a plain folder name")
    return value


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def clear_manifest(
    manifest: Manifest,
    fields: Collection[str],
    redact_text: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The manifest fields the policy allows in clear. `redact_text`, when given, is applied to
    the title and tags first (they are free text a secret can hide in)."""
    unknown = set(fields) - set(CLEAR_FIELDS)
    if unknown:
        raise UsageError(f"unknown manifest field(s) for the sidecar: {', '.join(sorted(unknown))}")
    facts = manifest.session

    def text(value: str) -> str:
        return redact_text(value) if redact_text is not None else value

    values: dict[str, Any] = {
        "session_id": facts.session_id,
        "project": facts.project,
        "cwd": facts.cwd,
        "title": None if facts.title is None else text(facts.title),
        "tags": [text(tag) for tag in facts.tags],
        "first_timestamp": _iso(facts.first_timestamp),
        "last_timestamp": _iso(facts.last_timestamp),
        "sizes": manifest.sizes,
    }
    return {name: values[name] for name in CLEAR_FIELDS if name in fields}


@dataclass(frozen=True, slots=True)
class Sidecar:
    """What is known of an archive without its key."""

    archive: str  # the archive's file name
    encrypted: bool
    redacted: bool
    size: int
    ciphertext_sha256: str  # SHA-256 of the file as written (the ciphertext when encrypted)
    content_sha256: str  # the bundle's content digest (bundle.content_digest)
    recipients: tuple[str, ...]  # fingerprints; "passphrase" for a passphrase
    stanza_types: tuple[str, ...]  # the age header's stanza types, in order
    created: datetime
    scrubber_version: str
    manifest: Mapping[str, Any] = field(default_factory=dict, hash=False, repr=False)
    format_version: int = SIDECAR_FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SIDECAR_SCHEMA,
            "format_version": self.format_version,
            "scrubber_version": self.scrubber_version,
            "archive": self.archive,
            "created": _iso(self.created),
            "encrypted": self.encrypted,
            "redacted": self.redacted,
            "size": self.size,
            "ciphertext_sha256": self.ciphertext_sha256,
            "content_sha256": self.content_sha256,
            "recipients": list(self.recipients),
            "stanza_types": list(self.stanza_types),
            "manifest": dict(self.manifest),
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, value: object, origin: Path) -> Sidecar:
        if not isinstance(value, dict) or value.get("schema") != SIDECAR_SCHEMA:
            raise SidecarError(f"{origin}: not a scrubber archive sidecar")
        version = value.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise SidecarError(f"{origin}: format_version is missing")
        if version > SIDECAR_FORMAT:
            raise ArchiveVersionError(
                f"{origin}: written by a newer scrubber (sidecar format {version}, this one "
                f"reads {SIDECAR_FORMAT})",
                hint="upgrade scrubber to verify or list this archive",
            )

        def get(key: str, kind: type | tuple[type, ...]) -> Any:
            item = value.get(key)
            if not isinstance(item, kind) or isinstance(item, bool) is not (kind is bool):
                raise SidecarError(f"{origin}: {key} is missing or malformed")
            return item

        def digest(key: str) -> str:
            item = get(key, str)
            if not re.fullmatch(r"[0-9a-f]{64}", item):
                raise SidecarError(f"{origin}: {key} is not a SHA-256")
            return cast(str, item)

        def texts(key: str) -> tuple[str, ...]:
            items = get(key, list)
            if not all(isinstance(i, str) for i in items):
                raise SidecarError(f"{origin}: {key} is not a list of texts")
            return tuple(items)

        try:
            created = datetime.fromisoformat(get("created", str))
        except ValueError:
            raise SidecarError(f"{origin}: created is not a date") from None
        size = get("size", int)
        if size < 0:
            raise SidecarError(f"{origin}: size is negative")
        return cls(
            archive=get("archive", str),
            encrypted=get("encrypted", bool),
            redacted=get("redacted", bool),
            size=size,
            ciphertext_sha256=digest("ciphertext_sha256"),
            content_sha256=digest("content_sha256"),
            recipients=texts("recipients"),
            stanza_types=texts("stanza_types"),
            created=created,
            scrubber_version=get("scrubber_version", str),
            manifest=get("manifest", dict),
            format_version=version,
        )


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


def _split_name(name: str) -> tuple[str, bool] | None:
    """(version, encrypted) for an archive file name, None for anything else."""
    if name.startswith("."):
        return None  # temp files
    if name.endswith(ENCRYPTED_SUFFIX):
        return name[: -len(ENCRYPTED_SUFFIX)], True
    if name.endswith(CLEAR_SUFFIX):
        return name[: -len(CLEAR_SUFFIX)], False
    return None


def _read_sidecar(path: Path) -> Sidecar:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_SIDECAR + 1)
    except FileNotFoundError:
        raise SidecarError(
            f"{path.name}: no sidecar next to the archive",
            hint="verify it with -i IDENTITY (a full decrypt needs no sidecar)",
        ) from None
    except OSError as exc:
        raise SidecarError(f"{path}: cannot read the sidecar ({exc.strerror})") from None
    if len(data) > _MAX_SIDECAR:
        raise SidecarError(f"{path}: too large for a sidecar")
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise SidecarError(f"{path}: the sidecar is not valid JSON") from None
    return Sidecar.from_json(value, path)


def _bare_entry(path: Path) -> ArchiveEntry:
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
    entry = _bare_entry(path)
    try:
        return replace(entry, sidecar=_read_sidecar(sidecar_path(path)))
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


# ---------------------------------------------------------------------------------- writing


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
    project = _plain_name(facts.project, "project")
    session_id = _plain_name(facts.session_id, "session id")
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
            elif handle.read(2) != _GZIP_MAGIC:
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


# -------------------------------------------------------------------------------- verifying


@dataclass(frozen=True, slots=True)
class VerifyReport:
    entry: ArchiveEntry
    full: bool  # True: decrypted and every file checked; False: keyless checks only
    manifest: Manifest | None = None


def _check_manifest(entry: ArchiveEntry, sidecar: Sidecar | None, manifest: Manifest) -> None:
    facts = manifest.session
    if facts.project != entry.project or facts.session_id != entry.session_id:
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


def _is_encrypted(handle: BinaryIO) -> bool:
    start = handle.read(len(MAGIC))
    handle.seek(0)
    if start == MAGIC:
        return True
    if start[:2] == _GZIP_MAGIC:
        return False
    raise ArchiveError("not an archive: neither an age file nor a gzip stream")


def verify_archive(
    path: Path, identities: Sequence[Identity] = (), *, progress: Progress | None = None
) -> VerifyReport:
    """Check an archive. Keyless (no identities, encrypted archive): the sidecar, the file's
    size and SHA-256, and the age header's recipient stanzas. With identities, or for a clear
    archive: the same, plus a full read of the payload, every file against its manifest hash.

    Raises SidecarError / ArchiveIntegrityError / ArchiveVersionError, or the age and bundle
    errors of a full check (a wrong key: NoIdentityMatchedError, exit 2).
    """
    entry = _bare_entry(path)
    if not path.is_file():
        raise ArchiveError(f"{path}: archive file not found")
    full = bool(identities) or not entry.encrypted
    sidecar: Sidecar | None
    try:
        sidecar = _read_sidecar(sidecar_path(path))
    except ArchiveVersionError:
        raise
    except SidecarError:
        if not full:  # only a full check can stand without the sidecar's record
            raise
        sidecar = None
    entry = replace(entry, sidecar=sidecar)
    if sidecar is not None:
        if sidecar.archive != path.name:
            raise ArchiveIntegrityError(f"{path}: the sidecar describes another file")
        if sidecar.encrypted != entry.encrypted:
            raise ArchiveIntegrityError(f"{path}: the sidecar disagrees on encryption")
        expected_types = tuple(
            "scrypt" if r == "passphrase" else "X25519" for r in sidecar.recipients
        )
        if entry.encrypted and expected_types != sidecar.stanza_types:
            raise ArchiveIntegrityError(f"{path}: the sidecar's recipients and stanzas disagree")

    manifest: Manifest | None = None
    stanza_types: tuple[str, ...] = ()
    with path.open("rb") as handle:
        raw = cast(BinaryIO, handle)
        if _is_encrypted(raw) != entry.encrypted:
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


# ------------------------------------------------------------------------ restore, decrypt


@dataclass(frozen=True, slots=True)
class RestoreResult:
    manifest: Manifest
    config_dir: Path
    transcript: Path
    files: int
    replaced: tuple[str, ...] = ()  # paths that existed, differed, and were replaced (--force)


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
) -> RestoreResult:
    """`scrubber.archive.restore.restore_archive` (its own module: it is where a hostile
    archive is refused; imported here on first use, as it imports this module)."""
    from scrubber.archive.restore import restore_archive as restore

    return restore(
        path,
        identities,
        config_dir,
        home=home,
        force=force,
        keep_mtime=keep_mtime,
        now=now,
        progress=progress,
    )


def decrypt_file(
    src: Path, out: Path, identities: Sequence[Identity], *, force: bool = False
) -> int:
    """Decrypt the age file `src` to `out` (0600) through a temp file in `out`'s folder, which
    is removed on any failure: a damaged or truncated file leaves nothing. Returns the size.

    Refuses an existing `out` unless `force`.
    """
    if os.path.lexists(out) and not force:
        raise UsageError(f"{out} already exists", hint="choose another -o, or remove it first")
    try:
        handle = src.open("rb")
    except FileNotFoundError:
        raise ArchiveError(f"{src}: file not found") from None
    except OSError as exc:
        raise ArchiveError(f"cannot read {src}: {exc.strerror}") from None
    tmp: Path | None = None
    try:
        with handle:
            reader = DecryptingReader(cast(BinaryIO, handle), identities)
            folder = out.parent if str(out.parent) else Path()
            fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
            tmp = Path(tmp_name)
            size = 0
            with os.fdopen(fd, "wb") as sink:
                for chunk in reader.chunks():
                    sink.write(chunk)
                    size += len(chunk)
                sink.flush()
                os.fsync(sink.fileno())
        if force:
            tmp.replace(out)
        elif not publish_by_link(tmp, out):
            raise UsageError(f"{out} appeared while decrypting; not overwritten")
        fsync_dir(out.parent)
        return size
    except OSError as exc:
        raise ArchiveError(
            f"cannot write {out}: {exc.strerror or type(exc).__name__}",
            hint="nothing was left behind",
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
