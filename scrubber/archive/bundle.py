"""What goes into one session's archive, and how it comes back out.

The payload of an archive is a gzip-compressed tar stream: `manifest.json` first, then the
session bundle's folders and files at their paths relative to the config directory, so that
`age -d -i KEY FILE | tar xz` run inside a config directory puts a session back by hand
(Contracts, "Archives"). The manifest says what the session is (id, project, cwd, title, tags,
first/last timestamp), what the bundle holds (every file's path, size, mode, mtime and SHA-256),
who can read it (the recipients' fingerprints) and which scrubber wrote it.

The manifest comes first so that a reader learns what to expect before the first file: every
later member must be listed in it with the same size and hash, and nothing else is accepted.
Putting it first means hashing every file before the tar stream starts; the files are read a
second time while they are streamed and hashed again, so a session that changed in between is
caught (`BundleChangedError`) instead of archived inconsistently. Memory stays constant: files
are read in blocks, the tar and gzip layers stream, nothing is held whole.

Unpacking refuses anything a session bundle never contains: absolute paths, `..`, links,
devices, members the manifest does not list, duplicates, sizes or hashes that differ. It reads
the tar stream with a reader of our own (`tar_reader`), which caps every header before reading
it: anyone who knows the recipient can make an archive (issue 11). Which paths a restore may
write is the caller's check (`admit`), run on the manifest before any member is read.

Standard library only (plus errors): the caller hands in an output file object, which may be an
`age.EncryptingWriter`, and an input one, which may be an `age.DecryptingReader`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any, BinaryIO, cast

from scrubber.archive.bundle_errors import BundleError
from scrubber.archive.tar_reader import TarReader
from scrubber.errors import ExitCode

__all__ = [
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "BundleChangedError",
    "BundleContents",
    "BundleDir",
    "BundleError",
    "BundleFile",
    "BundleVersionError",
    "Manifest",
    "SessionFacts",
    "Skipped",
    "collect_bundle",
    "content_digest",
    "drain",
    "make_manifest",
    "safe_relative_path",
    "sha256_file",
    "unpack_bundle",
    "walk_bundle",
    "write_bundle",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = "scrubber.archive-manifest"
MANIFEST_FORMAT = 1  # bumped only for changes an older reader must refuse
# A manifest takes about 250 bytes per file: 16 MiB is some 60,000 files. It is read whole and
# parsed, and JSON made of empty objects grows some 20 times in memory, so this cap is what
# bounds a hostile manifest's cost (issue 11); a bundle whose manifest would not fit is refused
# when it is archived, not written as an archive that cannot be restored.
MAX_MANIFEST_SIZE = 16 * 1024 * 1024
# gzip's own default level: at 9 (tarfile's stream default) compression runs near 15 MB/s on a
# transcript here, at 6 near 38 MB/s for an output only 6% larger (bench/README.md).
COMPRESS_LEVEL = 6
_BLOCK = 1 << 20

Progress = Callable[[int], None]  # called with the number of bytes just processed


class BundleChangedError(BundleError):
    """A file of the session changed while it was being archived (exit 3; try again)."""


class BundleVersionError(BundleError):
    """The manifest comes from a newer scrubber (exit 2)."""

    exit_code = ExitCode.USAGE


# ----------------------------------------------------------------------------------- values


def safe_relative_path(name: str) -> str:
    """`name` as a clean relative POSIX path, or BundleError when it could escape its folder:
    absolute, `..`, `.`, empty parts, NUL. Used on every path written to and read from a tar."""
    if not name or "\x00" in name or name.startswith("/"):
        raise BundleError(f"unsafe path in archive: {name[:200]!r}")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BundleError(f"unsafe path in archive: {name[:200]!r}")
    return name


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the caller knows about a session; the manifest records it as is."""

    session_id: str
    project: str
    cwd: str | None = None
    title: str | None = field(default=None, repr=False)  # may quote a secret: never printed
    tags: tuple[str, ...] = field(default=(), repr=False)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None

    @property
    def transcript(self) -> str:
        """The transcript's path relative to the config dir."""
        return f"projects/{self.project}/{self.session_id}.jsonl"


@dataclass(frozen=True, slots=True)
class BundleFile:
    path: str  # relative to the config dir, POSIX separators
    size: int
    sha256: str
    mode: int  # permission bits (restore writes 0600 whatever they were)
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class BundleDir:
    path: str
    mode: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """Something in the bundle that is not archived, and why (a symlink, a socket)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class BundleContents:
    files: tuple[BundleFile, ...]
    dirs: tuple[BundleDir, ...]
    skipped: tuple[Skipped, ...] = ()


def content_digest(files: Iterable[BundleFile]) -> str:
    """One SHA-256 for a bundle's content: over `path NUL size NUL sha256 LF` of every file,
    sorted by path. Retention compares it with the bundle as it is now."""
    digest = hashlib.sha256()
    for item in sorted(files, key=lambda f: f.path):
        digest.update(f"{item.path}\x00{item.size}\x00{item.sha256}\n".encode())
    return digest.hexdigest()


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _parse_iso(value: object, key: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BundleError(f"manifest: {key} is not a date")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BundleError(f"manifest: {key} is not a date") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Manifest:
    """The first member of every archive."""

    session: SessionFacts
    files: tuple[BundleFile, ...]
    dirs: tuple[BundleDir, ...]
    created: datetime
    scrubber_version: str
    recipients: tuple[str, ...] = ()  # fingerprints (keys.recipient_fingerprint)
    encrypted: bool = True
    redacted: bool = False
    skipped: tuple[Skipped, ...] = ()
    format_version: int = MANIFEST_FORMAT

    @property
    def content_sha256(self) -> str:
        return content_digest(self.files)

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def transcript(self) -> BundleFile:
        wanted = self.session.transcript
        for item in self.files:
            if item.path == wanted:
                return item
        raise BundleError("manifest: the transcript is not among the files")  # pragma: no cover

    @property
    def sizes(self) -> dict[str, int]:
        return {
            "total": self.total_size,
            "transcript": self.transcript.size,
            "files": len(self.files),
        }

    def to_json(self) -> dict[str, Any]:
        facts = self.session
        return {
            "schema": MANIFEST_SCHEMA,
            "format_version": self.format_version,
            "scrubber_version": self.scrubber_version,
            "created": _iso(self.created),
            "session_id": facts.session_id,
            "project": facts.project,
            "cwd": facts.cwd,
            "title": facts.title,
            "tags": list(facts.tags),
            "first_timestamp": _iso(facts.first_timestamp),
            "last_timestamp": _iso(facts.last_timestamp),
            "transcript": facts.transcript,
            "encrypted": self.encrypted,
            "redacted": self.redacted,
            "recipients": list(self.recipients),
            "sizes": self.sizes,
            "content_sha256": self.content_sha256,
            "files": [
                {
                    "path": f.path,
                    "size": f.size,
                    "sha256": f.sha256,
                    "mode": f"{f.mode:04o}",
                    "mtime_ns": f.mtime_ns,
                }
                for f in self.files
            ],
            "dirs": [{"path": d.path, "mode": f"{d.mode:04o}"} for d in self.dirs],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            raise BundleError("manifest.json is not valid JSON") from None
        if not isinstance(value, dict):
            raise BundleError("manifest.json is not a JSON object")
        return cls.from_json(value)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Manifest:
        """Read a manifest back, checking every field (errors name the field, never a value)."""
        if value.get("schema") != MANIFEST_SCHEMA:
            raise BundleError("manifest.json is not a scrubber archive manifest")
        version = value.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise BundleError("manifest: format_version is missing")
        if version > MANIFEST_FORMAT:
            raise BundleVersionError(
                f"the archive was written by a newer scrubber (manifest format {version}, "
                f"this one reads {MANIFEST_FORMAT})",
                hint="upgrade scrubber to read it",
            )

        def text(key: str, *, optional: bool = False) -> str | None:
            item = value.get(key)
            if item is None and optional:
                return None
            if not isinstance(item, str) or not item:
                raise BundleError(f"manifest: {key} is missing or not text")
            return item

        def texts(key: str, items: object) -> tuple[str, ...]:
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise BundleError(f"manifest: {key} is not a list of texts")
            return tuple(items)

        def mode(item: object, key: str) -> int:
            try:
                number = int(str(item), 8)
            except ValueError:
                raise BundleError(f"manifest: {key} is not an octal mode") from None
            if not 0 <= number <= 0o7777:
                raise BundleError(f"manifest: {key} is not a file mode")
            return number

        def number(item: object, key: str) -> int:
            if not isinstance(item, int) or isinstance(item, bool) or item < 0:
                raise BundleError(f"manifest: {key} is not a whole number")
            return item

        session_id = text("session_id") or ""
        project = text("project") or ""
        for key, name in (("session_id", session_id), ("project", project)):
            if "/" in name or name in (".", ".."):
                raise BundleError(f"manifest: {key} is not a plain name")
        facts = SessionFacts(
            session_id=session_id,
            project=project,
            cwd=text("cwd", optional=True),
            title=text("title", optional=True),
            tags=texts("tags", value.get("tags", [])),
            first_timestamp=_parse_iso(value.get("first_timestamp"), "first_timestamp"),
            last_timestamp=_parse_iso(value.get("last_timestamp"), "last_timestamp"),
        )
        files: list[BundleFile] = []
        raw_files = value.get("files")
        if not isinstance(raw_files, list):
            raise BundleError("manifest: files is not a list")
        for index, item in enumerate(raw_files):
            key = f"files[{index}]"
            if not isinstance(item, dict):
                raise BundleError(f"manifest: {key} is not an object")
            path = item.get("path")
            digest = item.get("sha256")
            if not isinstance(path, str):
                raise BundleError(f"manifest: {key}.path is not text")
            if not (
                isinstance(digest, str)
                and len(digest) == 64
                and all(c in "0123456789abcdef" for c in digest)
            ):
                raise BundleError(f"manifest: {key}.sha256 is not a SHA-256")
            files.append(
                BundleFile(
                    path=safe_relative_path(path),
                    size=number(item.get("size"), f"{key}.size"),
                    sha256=digest,
                    mode=mode(item.get("mode"), f"{key}.mode"),
                    mtime_ns=number(item.get("mtime_ns"), f"{key}.mtime_ns"),
                )
            )
        dirs: list[BundleDir] = []
        raw_dirs = value.get("dirs", [])
        if not isinstance(raw_dirs, list):
            raise BundleError("manifest: dirs is not a list")
        for index, item in enumerate(raw_dirs):
            if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                raise BundleError(f"manifest: dirs[{index}] is not an object with a path")
            dirs.append(
                BundleDir(
                    safe_relative_path(item["path"]), mode(item.get("mode"), f"dirs[{index}].mode")
                )
            )
        skipped: list[Skipped] = []
        for item in value.get("skipped", []) or []:
            if isinstance(item, dict):
                skipped.append(Skipped(str(item.get("path", "")), str(item.get("reason", ""))))
        created = _parse_iso(value.get("created"), "created")
        if created is None:
            raise BundleError("manifest: created is missing")
        manifest = cls(
            session=facts,
            files=tuple(files),
            dirs=tuple(dirs),
            created=created,
            scrubber_version=text("scrubber_version") or "",
            recipients=texts("recipients", value.get("recipients", [])),
            encrypted=bool(value.get("encrypted", True)),
            redacted=bool(value.get("redacted", False)),
            skipped=tuple(skipped),
            format_version=version,
        )
        paths = [f.path for f in manifest.files] + [d.path for d in manifest.dirs]
        if len(set(paths)) != len(paths):
            raise BundleError("manifest: a path is listed twice")
        if MANIFEST_NAME in paths:
            raise BundleError("manifest: a file is named like the manifest")
        if facts.transcript not in {f.path for f in manifest.files}:
            raise BundleError("manifest: the transcript is not among the files")
        _refuse_files_as_folders(manifest.files, paths)
        recorded = value.get("content_sha256")
        if recorded is not None and recorded != manifest.content_sha256:
            raise BundleError("manifest: content_sha256 does not match its file list")
        return manifest


def _refuse_files_as_folders(files: Iterable[BundleFile], paths: Iterable[str]) -> None:
    """A path below a listed file (`a.jsonl/x`) could only be written by replacing that file
    with a folder: no bundle we collect holds one."""
    names = {f.path for f in files}
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent:
            if parent in names:
                raise BundleError(f"manifest: {path[:200]} lies below the file {parent[:200]}")
            parent = parent.rpartition("/")[0]


# ------------------------------------------------------------------------------ collecting


def _relative(config_dir: Path, path: Path) -> str:
    try:
        rel = path.relative_to(config_dir)
    except ValueError:
        raise BundleError(f"{path} is not inside the config directory {config_dir}") from None
    return safe_relative_path(rel.as_posix())


def sha256_file(path: Path, expected_size: int | None = None) -> tuple[str, int]:
    """(SHA-256 hex, size) of a file, read in 1 MiB blocks without following a symlink.
    BundleChangedError when `expected_size` is given and the file is not that long."""
    digest = hashlib.sha256()
    size = 0
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb", buffering=0) as handle:
        buf = bytearray(_BLOCK)
        view = memoryview(buf)
        while n := handle.readinto(buf):
            digest.update(view[:n])
            size += n
    if expected_size is not None and size != expected_size:
        raise BundleChangedError(f"{path} changed size while it was being read")
    return digest.hexdigest(), size


def walk_bundle(
    config_dir: Path, paths: Sequence[Path]
) -> Iterator[tuple[Path, str, os.stat_result]]:
    """Every entry under the bundle's paths, folders before what they hold, in name order:
    (path, path relative to `config_dir`, lstat). Symlinks are yielded, never followed.

    Raises BundleError for a path outside `config_dir`, OSError when one cannot be listed.
    """
    for path in paths:
        st = path.lstat()
        yield path, _relative(config_dir, path), st
        if stat.S_ISDIR(st.st_mode):
            yield from walk_bundle(config_dir, sorted(path.iterdir()))


def collect_bundle(
    config_dir: Path, paths: Sequence[Path], *, progress: Progress | None = None
) -> BundleContents:
    """Walk the bundle's paths (files or folders, symlinks never followed), hashing every
    regular file. Symlinks, sockets and devices are listed as skipped, not archived.

    Raises BundleError for a path outside `config_dir`, OSError when a file cannot be read.
    """
    files: list[BundleFile] = []
    dirs: list[BundleDir] = []
    skipped: list[Skipped] = []
    for path, rel, st in walk_bundle(config_dir, paths):
        if stat.S_ISREG(st.st_mode):
            digest, size = sha256_file(path, st.st_size)
            files.append(BundleFile(rel, size, digest, stat.S_IMODE(st.st_mode), st.st_mtime_ns))
            if progress is not None:
                progress(size)
        elif stat.S_ISDIR(st.st_mode):
            dirs.append(BundleDir(rel, stat.S_IMODE(st.st_mode)))
        elif stat.S_ISLNK(st.st_mode):
            skipped.append(Skipped(rel, "symlink (not followed)"))
        else:
            skipped.append(Skipped(rel, "not a regular file or folder"))
    return BundleContents(tuple(files), tuple(dirs), tuple(skipped))


def make_manifest(
    facts: SessionFacts,
    contents: BundleContents,
    *,
    created: datetime,
    scrubber_version: str,
    recipients: Sequence[str] = (),
    encrypted: bool = True,
    redacted: bool = False,
) -> Manifest:
    """The manifest of a collected bundle. BundleError when the transcript is not in it (a
    symlinked or vanished transcript is not a session we can archive)."""
    paths = [f.path for f in contents.files] + [d.path for d in contents.dirs]
    if len(set(paths)) != len(paths):
        raise BundleError("the same path is listed twice in the session bundle")
    if facts.transcript not in {f.path for f in contents.files}:
        raise BundleError(
            f"the transcript {facts.transcript} is not a regular file in the bundle",
            hint="a symlinked transcript is not archived; archive the file it points to",
        )
    manifest = Manifest(
        session=facts,
        files=contents.files,
        dirs=contents.dirs,
        created=created,
        scrubber_version=scrubber_version,
        recipients=tuple(recipients),
        encrypted=encrypted,
        redacted=redacted,
        skipped=contents.skipped,
    )
    if len(manifest.to_bytes()) > MAX_MANIFEST_SIZE:
        raise BundleError(
            f"session {facts.session_id} has too many files to archive "
            f"({len(contents.files)}: its manifest would exceed {MAX_MANIFEST_SIZE} bytes)"
        )
    return manifest


# -------------------------------------------------------------------------------- writing


def _sorted_entries(manifest: Manifest) -> list[BundleFile | BundleDir]:
    entries: list[BundleFile | BundleDir] = [*manifest.dirs, *manifest.files]
    transcript = manifest.session.transcript
    # The transcript right after the manifest (what matters most comes first in a damaged
    # archive), then by path parts, so that a folder always comes before what it holds.
    entries.sort(key=lambda e: (e.path != transcript, PurePosixPath(e.path).parts))
    return entries


class _HashingSource(io.RawIOBase):
    """Reads a source file for tarfile, hashing what it hands over and counting progress."""

    def __init__(self, handle: IO[bytes], progress: Progress | None) -> None:
        super().__init__()
        self._handle = handle
        self._progress = progress
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self._handle.read(-1 if size is None else size)
        self.digest.update(data)
        if self._progress is not None and data:
            self._progress(len(data))
        return data


def write_bundle(
    out: BinaryIO,
    manifest: Manifest,
    source_root: Path,
    *,
    progress: Progress | None = None,
    compresslevel: int = COMPRESS_LEVEL,
) -> None:
    """Stream the bundle as a gzip tar into `out` (not closed): manifest.json first, then each
    folder and file of the manifest read from `source_root` (a config dir, or a staging copy).

    Each file is hashed again as it is streamed; BundleChangedError when it differs from the
    manifest. The caller must then discard what was written (an age writer: `abort()`).
    """
    gz = gzip.GzipFile(filename="", mode="wb", compresslevel=compresslevel, fileobj=out, mtime=0)
    with gz, tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        data = manifest.to_bytes()
        info = tarfile.TarInfo(MANIFEST_NAME)
        info.size = len(data)
        info.mode = 0o600
        info.mtime = int(manifest.created.timestamp())
        tar.addfile(info, io.BytesIO(data))
        for entry in _sorted_entries(manifest):
            info = tarfile.TarInfo(entry.path)
            info.mode = entry.mode
            if isinstance(entry, BundleDir):
                info.type = tarfile.DIRTYPE
                info.mtime = int(manifest.created.timestamp())
                tar.addfile(info)
                continue
            info.size = entry.size
            info.mtime = entry.mtime_ns // 1_000_000_000
            path = source_root / entry.path
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except FileNotFoundError:
                raise BundleChangedError(
                    f"{path} disappeared while the session was being archived"
                ) from None
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raise BundleChangedError(f"{path} is no longer a regular file")
                source = _HashingSource(handle, progress)
                try:
                    tar.addfile(info, source)
                except OSError as exc:
                    if exc.errno is None:  # tarfile's "unexpected end of data": it shrank
                        raise BundleChangedError(
                            f"{path} shrank while the session was being archived"
                        ) from None
                    raise
                # Appended meanwhile (a live session): the prefix we took is consistent, but
                # it is no longer the session as it is; better to try again later.
                grew = os.fstat(handle.fileno()).st_size != entry.size
                if grew or source.digest.hexdigest() != entry.sha256:
                    raise BundleChangedError(
                        f"{path} changed while the session was being archived",
                        hint="archive it again once the session is idle",
                    )


# ------------------------------------------------------------------------------ unpacking


def _write_member(
    source: TarReader, target: Path, expected: BundleFile, progress: Progress | None
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o600)
    with os.fdopen(fd, "wb") as out:
        _copy_member(source, expected, progress, out)
        out.flush()
        os.fsync(out.fileno())
    os.utime(target, ns=(expected.mtime_ns, expected.mtime_ns))


def _copy_member(
    source: TarReader, expected: BundleFile, progress: Progress | None, out: IO[bytes] | None
) -> None:
    """Hash (and write to `out`) the member's data: its tar size was checked equal to the
    manifest's, and the reader never hands out a byte past it."""
    digest = hashlib.sha256()
    size = 0
    while block := source.read(_BLOCK):
        digest.update(block)
        size += len(block)
        if out is not None:
            out.write(block)
        if progress is not None:
            progress(len(block))
    if size != expected.size or digest.hexdigest() != expected.sha256:
        raise BundleError(f"archive member {expected.path} does not match its manifest hash")


def unpack_bundle(
    src: BinaryIO,
    dest: Path | None = None,
    *,
    progress: Progress | None = None,
    admit: Callable[[Manifest], None] | None = None,
) -> Manifest:
    """Read a bundle stream: check it member by member against its manifest and, when `dest`
    is given (an empty private folder), write the folders (0700) and files (0600) there.

    `admit` is called with the manifest before any member is read: it raises to refuse the
    archive (paths outside the session's bundle, sizes that do not fit). With `dest=None`
    nothing is written: a full verification. Raises BundleError on anything unsafe or
    inconsistent; then `dest` holds a partial copy the caller must remove.
    """
    try:
        with gzip.GzipFile(fileobj=src, mode="rb") as gz:
            return _unpack(TarReader(cast(BinaryIO, gz)), dest, progress, admit)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise BundleError(
            f"the archive payload is not a readable gzip tar stream ({type(exc).__name__})"
        ) from None


def _read_manifest(tar: TarReader) -> Manifest:
    first = tar.next()
    if first is None or first.name != MANIFEST_NAME or first.is_dir:
        raise BundleError(f"the archive does not start with {MANIFEST_NAME}")
    if first.size > MAX_MANIFEST_SIZE:
        raise BundleError(f"{MANIFEST_NAME} is too large ({first.size} bytes)")
    return Manifest.from_bytes(tar.read(first.size))


def _unpack(
    tar: TarReader,
    dest: Path | None,
    progress: Progress | None,
    admit: Callable[[Manifest], None] | None,
) -> Manifest:
    manifest = _read_manifest(tar)
    if admit is not None:
        admit(manifest)
    files = {f.path: f for f in manifest.files}
    dirs = {d.path for d in manifest.dirs}
    seen: set[str] = set()
    while (member := tar.next()) is not None:
        name = safe_relative_path(member.name)
        if name in seen:
            raise BundleError(f"archive member {name} appears twice")
        seen.add(name)
        if member.is_dir:
            if name not in dirs:
                raise BundleError(f"archive folder {name} is not listed in the manifest")
            if dest is not None:
                (dest / name).mkdir(parents=True, exist_ok=True, mode=0o700)
            continue
        expected = files.get(name)
        if expected is None:
            raise BundleError(f"archive member {name} is not listed in the manifest")
        if member.size != expected.size:
            raise BundleError(f"archive member {name} has a size other than its manifest's")
        if dest is None:
            _copy_member(tar, expected, progress, None)
        else:
            _write_member(tar, dest / name, expected, progress)
    missing = (set(files) | dirs) - seen
    if missing:
        first_missing = sorted(missing)[0]
        raise BundleError(
            f"the archive lacks {len(missing)} member(s) its manifest lists, e.g. {first_missing}"
        )
    return manifest


def drain(src: BinaryIO) -> int:
    """Read `src` to its end and return how many bytes that was: an age reader authenticates
    its last chunks only when they are read, and tar stops before the stream's end (record
    padding, the gzip trailer)."""
    total = 0
    while block := src.read(_BLOCK):
        total += len(block)
    return total
