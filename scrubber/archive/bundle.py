"""What goes into one session's archive, and how it comes back out.

The payload of an archive is a gzip-compressed tar stream: `manifest.json` first, then the
session bundle's folders and files at their paths relative to the config directory, so that
`age -d -i KEY FILE | tar xz` run inside a config directory puts a session back by hand
(Contracts, "Archives"). The manifest (`manifest.py`: what the session is, every file's path,
size, mode, mtime and SHA-256, the recipients) is collected here.

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
import os
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, cast

from scrubber.archive.bundle_errors import BundleError
from scrubber.archive.manifest import (
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    MAX_MANIFEST_SIZE,
    BundleDir,
    BundleFile,
    BundleVersionError,
    Manifest,
    SessionFacts,
    Skipped,
    content_digest,
    safe_relative_path,
)
from scrubber.archive.tar_reader import TarReader

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

# gzip's own default level: at 9 (tarfile's stream default) compression runs near 15 MB/s on a
# transcript here, at 6 near 38 MB/s for an output only 6% larger (bench/README.md).
COMPRESS_LEVEL = 6
_BLOCK = 1 << 20

Progress = Callable[[int], None]  # called with the number of bytes just processed


class BundleChangedError(BundleError):
    """A file of the session changed while it was being archived (exit 3; try again)."""


@dataclass(frozen=True, slots=True)
class BundleContents:
    files: tuple[BundleFile, ...]
    dirs: tuple[BundleDir, ...]
    skipped: tuple[Skipped, ...] = ()


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
    # A stack of listings rather than recursion: a planted folder a thousand levels deep must
    # not end the run in a RecursionError. The order is the recursive walk's.
    pending: list[Iterator[Path]] = [iter(paths)]
    while pending:
        path = next(pending[-1], None)
        if path is None:
            pending.pop()
            continue
        st = path.lstat()
        yield path, _relative(config_dir, path), st
        if stat.S_ISDIR(st.st_mode):
            pending.append(iter(sorted(path.iterdir())))


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
