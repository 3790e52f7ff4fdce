"""Hostile archives built at run time, as anyone who knows the (public) recipient can build them:
a validly encrypted age file around a gzip tar whose manifest and members say what the
attacker wants. Shared by the hostile-archive tests."""

from __future__ import annotations

import hashlib
import json
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scrubber.archive.age import EncryptingWriter
from scrubber.archive.keys import X25519Recipient

SESSION = "0f0e0d0c-0b0a-4000-8000-000000000001"
OTHER = "0f0e0d0c-0b0a-4000-8000-000000000002"
PROJECT = "-home-u-work-app"
TRANSCRIPT = f"projects/{PROJECT}/{SESSION}.jsonl"


def transcript_bytes(session_id: str = SESSION) -> bytes:
    line = {
        "type": "user",
        "sessionId": session_id,
        "uuid": "00000000-0000-4000-8000-0000000000aa",
        "timestamp": "2026-03-02T09:01:30.948Z",
        "cwd": "/home/u/work/app",
        "message": {"role": "user", "content": "hello"},
    }
    return (json.dumps(line) + "\n").encode()


@dataclass
class Member:
    """One tar member; `listed` puts it in the manifest with `declared` size (default: its
    real size) and the SHA-256 of `data`."""

    path: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    listed: bool = True
    declared: int | None = None
    linkname: str = ""
    tar_size: int | None = None  # a header that lies about the data that follows


@dataclass
class Hostile:
    members: list[Member] = field(default_factory=list)
    session_id: str = SESSION
    project: str = PROJECT
    dirs: list[str] = field(default_factory=list)
    raw_after_manifest: bytes = b""  # blocks written right after the manifest member

    def manifest(self) -> bytes:
        files = [
            {
                "path": m.path,
                "size": m.declared if m.declared is not None else len(m.data),
                "sha256": hashlib.sha256(m.data).hexdigest(),
                "mode": "0600",
                "mtime_ns": 1_772_442_090_000_000_000,
            }
            for m in self.members
            if m.listed
        ]
        value = {
            "schema": "scrubber.archive-manifest",
            "format_version": 1,
            "scrubber_version": "0",
            "created": "2026-03-02T10:00:00+00:00",
            "session_id": self.session_id,
            "project": self.project,
            "transcript": f"projects/{self.project}/{self.session_id}.jsonl",
            "files": files,
            "dirs": [{"path": d, "mode": "0700"} for d in self.dirs],
        }
        return json.dumps(value).encode()


def legit(*extra: Member) -> Hostile:
    return Hostile([Member(TRANSCRIPT, transcript_bytes()), *extra])


def _tar_block(info: tarfile.TarInfo) -> bytes:
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


def tar_stream(hostile: Hostile) -> Iterator[bytes]:
    manifest = hostile.manifest()
    info = tarfile.TarInfo("manifest.json")
    info.size = len(manifest)
    yield _tar_block(info) + manifest + bytes(-len(manifest) % 512)
    yield hostile.raw_after_manifest
    for directory in hostile.dirs:
        info = tarfile.TarInfo(directory)
        info.type = tarfile.DIRTYPE
        yield _tar_block(info)
    for member in hostile.members:
        info = tarfile.TarInfo(member.path)
        info.type = member.kind
        info.linkname = member.linkname
        size = len(member.data) if member.tar_size is None else member.tar_size
        info.size = size if member.kind == tarfile.REGTYPE else 0
        yield _tar_block(info)
        if member.kind == tarfile.REGTYPE:
            yield member.data + bytes(-len(member.data) % 512)
    yield bytes(1024)


def gzip_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """gzip, streamed (a bomb is never held whole)."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    for chunk in chunks:
        if chunk:
            yield compressor.compress(chunk)
    yield compressor.flush()


def zeros(total: int, block: int = 1 << 20) -> Iterator[bytes]:
    left = total
    while left > 0:
        yield bytes(min(block, left))
        left -= block


def seal(payload: Iterable[bytes], recipient: X25519Recipient, path: Path) -> Path:
    """Encrypt `payload` (gzip bytes) to `recipient` with our own age writer."""
    with path.open("wb") as raw:
        writer = EncryptingWriter(raw, [recipient])  # type: ignore[arg-type]
        for chunk in payload:
            writer.write(chunk)
        writer.close()
    path.chmod(0o600)
    return path


def hostile_archive(hostile: Hostile, recipient: X25519Recipient, path: Path) -> Path:
    return seal(gzip_chunks(tar_stream(hostile)), recipient, path)


def pax_header(records: dict[str, bytes], declared: int | None = None) -> bytes:
    """A pax extended header block whose size field says `declared` (default: the truth)."""
    body = b""
    for key, value in records.items():
        payload = b" " + key.encode() + b"=" + value + b"\n"
        length = len(payload) + 1
        while len(str(length)) + len(payload) != length:
            length += 1
        body += str(length).encode() + payload
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = tarfile.XHDTYPE
    info.size = len(body) if declared is None else declared
    return info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict") + body


def snapshot(folder: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under `folder`: kind, content (or link target), mode."""
    found: dict[str, tuple[str, bytes | str, int]] = {}
    if not folder.exists():
        return found
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[rel] = ("link", str(path.readlink()), st.st_mode)
        elif path.is_dir():
            found[rel] = ("dir", "", st.st_mode)
        else:
            found[rel] = ("file", path.read_bytes(), st.st_mode)
    return found


__all__ = [
    "OTHER",
    "PROJECT",
    "SESSION",
    "TRANSCRIPT",
    "Hostile",
    "Member",
    "gzip_chunks",
    "hostile_archive",
    "legit",
    "pax_header",
    "seal",
    "snapshot",
    "tar_stream",
    "transcript_bytes",
    "zeros",
]
