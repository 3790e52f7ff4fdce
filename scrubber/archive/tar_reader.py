"""A streaming reader for exactly the tar subset `bundle.write_bundle` writes, with every header
capped before it is read.

Why not `tarfile`: it reads a pax extended header or a GNU long-name member whole before any
check of ours can run, so a 4.6 MB archive whose header claims a 100 MB path took `restore` to
3.2 GB of memory (issue 11). The archive recipient is public by design, so anyone can write an
archive we decrypt: nothing in it may decide how much we allocate.

What is accepted (POSIX.1-2001 pax as Python's `tarfile.PAX_FORMAT` writes it):
- ustar headers (magic `ustar\\0` + `00`, or GNU's `ustar  \\0`) with octal numbers and a
  verified checksum, the name joined to its `prefix` field;
- regular files (type `0` or NUL) and folders (type `5`);
- a pax extended header (type `x`) of at most `MAX_PAX_HEADER` bytes before a member, whose
  `path`, `size` and `mtime` records override the ustar fields (tarfile writes one for a path
  over 100 bytes or not ASCII, a size over 8 GiB);
- the end of the archive: a zero block.
Refused with a BundleError naming what it is: links, devices, FIFOs, global pax headers, GNU
long names and sparse files, base-256 numbers, a bad checksum, a truncated stream.

A member's data is handed out in blocks and never past its size: the caller asks for at most
what remains, so a member bigger than its manifest says cannot make us read further.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from scrubber.archive.bundle_errors import BundleError

__all__ = ["MAX_NAME", "MAX_PAX_HEADER", "TarMember", "TarReader"]

BLOCK = 512
# tarfile writes a pax header of a few hundred bytes at most for our paths; 64 KiB leaves room
# for any real path (PATH_MAX is 4096) while bounding what a hostile header can make us hold.
MAX_PAX_HEADER = 64 * 1024
MAX_NAME = 4096
_DISCARD = 64 * 1024

_TYPES = {
    b"1": "a hard link",
    b"2": "a symlink",
    b"3": "a device (character)",
    b"4": "a device (block)",
    b"6": "a FIFO",
    b"7": "a contiguous file",
    b"g": "a global pax header",
    b"L": "a GNU long-name header",
    b"K": "a GNU long-link header",
    b"S": "a GNU sparse file",
    b"V": "a GNU volume header",
    b"M": "a GNU multi-volume member",
}
# pax records that would change what a member is, which we never write.
_REFUSED_PAX = ("linkpath", "GNU.sparse.")


@dataclass(frozen=True, slots=True)
class TarMember:
    name: str
    is_dir: bool
    size: int
    mode: int
    mtime: float


def _field(block: bytes, start: int, end: int) -> bytes:
    return block[start:end].split(b"\x00", 1)[0]


def _octal(block: bytes, start: int, end: int, what: str) -> int:
    raw = block[start:end]
    if raw[:1] and raw[0] & 0x80:
        raise BundleError(f"tar header: {what} is a base-256 number (not written by scrubber)")
    text = raw.split(b"\x00", 1)[0].strip(b" ")
    if not text:
        return 0
    if not all(48 <= c <= 55 for c in text):
        raise BundleError(f"tar header: {what} is not an octal number")
    return int(text, 8)


def _checksum_ok(block: bytes) -> bool:
    try:
        recorded = _octal(block, 148, 156, "checksum")
    except BundleError:
        return False
    blanked = block[:148] + b" " * 8 + block[156:]
    unsigned = sum(blanked)
    signed = sum(b - 256 if b > 127 else b for b in blanked)
    return recorded in (unsigned, signed)


def _decode(raw: bytes, binary: bool) -> str:
    try:
        return raw.decode("utf-8", "surrogateescape" if binary else "strict")
    except UnicodeDecodeError:
        raise BundleError("tar header: a path is not UTF-8") from None


def _parse_pax(data: bytes) -> dict[str, bytes]:
    """`LEN KEY=VALUE\\n` records (POSIX.1-2001 pax), LEN counting the whole record."""
    records: dict[str, bytes] = {}
    position = 0
    while position < len(data):
        space = data.find(b" ", position, position + 21)
        if space < 0:
            raise BundleError("tar: a pax header record has no length")
        try:
            length = int(data[position:space])
        except ValueError:
            raise BundleError("tar: a pax header record has no length") from None
        end = position + length
        if length <= space - position + 1 or end > len(data) or data[end - 1 : end] != b"\n":
            raise BundleError("tar: a pax header record is malformed")
        key, equals, value = data[space + 1 : end - 1].partition(b"=")
        if not equals:
            raise BundleError("tar: a pax header record is malformed")
        name = _decode(key, False)
        if name.startswith(_REFUSED_PAX):
            raise BundleError(f"tar: refusing a pax {name.split('.')[0]} record (links, sparse)")
        records[name] = value
        position = end
    return records


class TarReader:
    """Members of an uncompressed tar stream, one after another. `read` hands out the current
    member's data; `next` skips whatever of it is left."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._remaining = 0  # data bytes of the current member not yet read
        self._padding = 0
        self._ended = False

    def _exactly(self, size: int) -> bytes:
        chunks: list[bytes] = []
        left = size
        while left:
            chunk = self._stream.read(left)
            if not chunk:
                raise BundleError("the archive payload ends in the middle of a tar member")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _skip(self, size: int) -> None:
        while size:
            size -= len(self._exactly(min(size, _DISCARD)))

    def read(self, size: int) -> bytes:
        """Up to `size` bytes of the current member's data; b"" at its end."""
        want = min(size, self._remaining)
        if want <= 0:
            return b""
        data = self._exactly(want)
        self._remaining -= len(data)
        return data

    def next(self) -> TarMember | None:
        """The next member, or None at the end of the archive."""
        if self._ended:
            return None
        self._skip(self._remaining + self._padding)
        self._remaining = self._padding = 0
        pax: dict[str, bytes] = {}
        while True:
            block = self._exactly(BLOCK)
            if block == bytes(BLOCK):
                self._ended = True
                if pax:
                    raise BundleError("tar: a pax header is not followed by a member")
                return None
            if not _checksum_ok(block):
                raise BundleError(
                    "the archive payload is not a readable gzip tar stream (a header's "
                    "checksum is wrong)"
                )
            kind = block[156:157]
            size = _octal(block, 124, 136, "size")
            if kind == b"x":
                if pax:
                    raise BundleError("tar: two pax headers in a row")
                if size > MAX_PAX_HEADER:
                    raise BundleError(
                        f"tar: a pax header of {size} bytes (more than {MAX_PAX_HEADER}; "
                        "scrubber never writes one that long)"
                    )
                data = self._exactly(size)
                self._skip(-size % BLOCK)
                pax = _parse_pax(data)
                continue
            return self._member(block, kind, size, pax)

    def _member(self, block: bytes, kind: bytes, size: int, pax: dict[str, bytes]) -> TarMember:
        magic = block[257:265]
        if magic not in (b"ustar\x0000", b"ustar  \x00"):
            raise BundleError("tar: a header is not ustar (not a tar we wrote)")
        binary = pax.get("hdrcharset") == b"BINARY"
        if "path" in pax:
            name = _decode(pax["path"], binary)
        else:
            name = _decode(_field(block, 0, 100), False)
            prefix = _decode(_field(block, 345, 500), False)
            if prefix and magic.startswith(b"ustar\x00"):
                name = f"{prefix}/{name}"
        if len(name) > MAX_NAME:
            raise BundleError(f"tar: a member name of {len(name)} characters")
        shown = name[:200]
        if kind not in (b"0", b"\x00", b"5"):
            what = _TYPES.get(kind, f"a member of type {kind!r}")
            raise BundleError(f"refusing archive member {shown!r}: {what}")
        try:
            if "size" in pax:
                size = int(pax["size"])
            mtime = float(pax["mtime"]) if "mtime" in pax else _octal(block, 136, 148, "mtime")
        except ValueError:
            raise BundleError(
                f"tar: member {shown!r} has a pax size or mtime that is not a number"
            ) from None
        if size < 0:
            raise BundleError(f"tar: member {shown!r} has a negative size")
        is_dir = kind == b"5"
        if is_dir:
            size = 0  # a folder has no data (POSIX: its size field is ignored)
            if name.endswith("/"):  # tarfile writes folder names with one
                name = name[:-1]
        self._remaining = size
        self._padding = -size % BLOCK
        mode = _octal(block, 100, 108, "mode") & 0o7777
        return TarMember(name=name, is_dir=is_dir, size=size, mode=mode, mtime=mtime)
