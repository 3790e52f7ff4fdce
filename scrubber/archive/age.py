"""The age v1 file format (https://c2sp.org/age) on `cryptography`: header, MAC and STREAM.

We implement the format rather than invent one, so an archive opens with the standard `age` and
`rage` tools even without scrubber. This module owns the format: the header (version line,
recipient stanzas, HMAC), the payload (16-byte nonce, HKDF payload key, 64 KiB ChaCha20-Poly1305
STREAM chunks) and the errors. Recipient and identity types plug in through two small Protocols
(`Recipient.wrap`, `Identity.unwrap`); the X25519 and scrypt ones live in `keys.py`.

Memory stays constant for any size: the writer holds at most one plaintext chunk, the reader
reads one encrypted chunk plus one byte ahead (to know whether the chunk is the final one, whose
nonce differs), and no plaintext leaves the reader before its chunk has been authenticated.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import io
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO, Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from scrubber.errors import ExitCode, KeyMaterialError, ScrubberError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = [
    "CHUNK_SIZE",
    "FILE_KEY_SIZE",
    "AgeError",
    "AgeHeaderError",
    "AgeMacError",
    "AgePayloadError",
    "AgeVersionError",
    "DecryptingReader",
    "EncryptingWriter",
    "Header",
    "Identity",
    "NoIdentityMatchedError",
    "Recipient",
    "ScryptWorkFactorError",
    "Stanza",
    "decode_base64",
    "decrypt",
    "encode_base64",
    "encrypt",
    "read_header",
]

# Format constants, all from the spec (https://c2sp.org/age).
MAGIC = b"age-encryption.org/"
VERSION_LINE = b"age-encryption.org/v1\n"
FILE_KEY_SIZE = 16
PAYLOAD_NONCE_SIZE = 16
CHUNK_SIZE = 64 * 1024
TAG_SIZE = 16
ENCRYPTED_CHUNK_SIZE = CHUNK_SIZE + TAG_SIZE
MAC_SIZE = 32
COLUMNS_PER_LINE = 64  # stanza bodies are wrapped at 64 base64 columns
# The chunk counter is 11 bytes; no file we could write or read comes near it, but a counter
# that wrapped would reuse a nonce, so we refuse rather than wrap.
MAX_CHUNKS = 1 << 88

# Not in the spec: bounds that keep a hostile header from eating memory. Real headers are a few
# hundred bytes (a post-quantum stanza is about 1.6 KB).
MAX_HEADER_LINE = 64 * 1024
MAX_HEADER_SIZE = 16 * 1024 * 1024
_MAX_VERSION_LINE = 256

_HEADER_LABEL = b"header"
_PAYLOAD_LABEL = b"payload"
_BASE64_CHARS = re.compile(rb"[A-Za-z0-9+/]*")
_ARGUMENT = re.compile(rb"[\x21-\x7e]+")  # 1*VCHAR


# --------------------------------------------------------------------------------------- errors


class AgeError(ScrubberError):
    """An age file could not be decrypted: malformed, tampered with, or truncated (exit 3)."""


class AgeHeaderError(AgeError):
    """The header is malformed (or the payload nonce is missing): not a valid age v1 file."""


class AgeVersionError(AgeHeaderError):
    """The file is an age file of a format version we do not support (exit 2)."""

    exit_code = ExitCode.USAGE


class ScryptWorkFactorError(AgeHeaderError):
    """A passphrase stanza asks for more scrypt work than we accept (exit 2)."""

    exit_code = ExitCode.USAGE


class AgeMacError(AgeError):
    """The header MAC does not match: the header was modified after it was written."""


class AgePayloadError(AgeError):
    """A payload chunk failed authentication, the payload is truncated, or data follows it."""


class NoIdentityMatchedError(KeyMaterialError, AgeError):
    """None of the identities given can unwrap the file key: the wrong key (exit 2)."""


# ------------------------------------------------------------------------------- base64 (raw)


def encode_base64(data: bytes) -> str:
    """Standard base64 without `=` padding, as the spec requires everywhere in the header."""
    return base64.b64encode(data).rstrip(b"=").decode("ascii")


def decode_base64(text: str | bytes) -> bytes:
    """Decode unpadded base64, refusing padding, stray characters and non-canonical encodings.

    The spec makes decoders reject non-canonical encodings (RFC 4648 section 3.5: the unused
    trailing bits must be zero) so that a header has exactly one byte representation.
    Raises ValueError with a message that never repeats the input.
    """
    raw = text.encode("ascii", "replace") if isinstance(text, str) else bytes(text)
    if not _BASE64_CHARS.fullmatch(raw) or len(raw) % 4 == 1:
        raise ValueError("invalid base64")
    try:
        decoded = base64.b64decode(raw + b"=" * (-len(raw) % 4), validate=True)
    except binascii.Error as exc:  # pragma: no cover - the checks above catch every case
        raise ValueError("invalid base64") from exc
    if base64.b64encode(decoded).rstrip(b"=") != raw:
        raise ValueError("non-canonical base64")
    return decoded


# ------------------------------------------------------------------------ stanzas and headers


@dataclass(frozen=True, slots=True)
class Stanza:
    """One recipient stanza: its arguments (the first one is its type) and its binary body."""

    args: tuple[str, ...]
    body: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not self.args or not all(
            _ARGUMENT.fullmatch(a.encode("ascii", "replace")) for a in self.args
        ):
            raise ValueError("a stanza needs at least one argument of visible ASCII characters")

    @property
    def type(self) -> str:
        return self.args[0]


class Recipient(Protocol):
    """Something a file can be encrypted to: it wraps the file key into one or more stanzas."""

    def wrap(self, file_key: bytes) -> Sequence[Stanza]: ...


class Identity(Protocol):
    """Something that can decrypt: it finds its own stanzas and unwraps the file key.

    Returns None when no stanza is addressed to it (stanzas of other types are skipped, as the
    spec requires); raises AgeHeaderError for a stanza of its own type that is malformed.
    """

    def unwrap(self, stanzas: Sequence[Stanza]) -> bytes | None: ...


@dataclass(frozen=True, slots=True)
class Header:
    """A parsed age v1 header, as read from a file (nothing in it is secret)."""

    stanzas: tuple[Stanza, ...]
    mac: bytes = field(repr=False)
    # The bytes the MAC covers: everything up to and including the `---` of the last line.
    mac_input: bytes = field(repr=False)
    size: int  # bytes from the start of the file to the end of the MAC line

    @property
    def stanza_types(self) -> tuple[str, ...]:
        return tuple(s.type for s in self.stanzas)


def _hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def _header_mac(file_key: bytes, mac_input: bytes) -> bytes:
    return hmac.digest(_hkdf(file_key, b"", _HEADER_LABEL), mac_input, "sha256")


def _encode_stanza(stanza: Stanza) -> bytes:
    lines = ["-> " + " ".join(stanza.args)]
    body = encode_base64(stanza.body)
    # Full 64-column lines, then a final shorter line, empty when the body fills the last one.
    lines.extend(body[i : i + COLUMNS_PER_LINE] for i in range(0, len(body), COLUMNS_PER_LINE))
    if len(body) % COLUMNS_PER_LINE == 0:
        lines.append("")
    return ("\n".join(lines) + "\n").encode("ascii")


def _scrypt_is_alone(types: Sequence[str]) -> bool:
    # The spec: an scrypt stanza, if present, MUST be the only stanza (a passphrase file must not
    # be openable by anyone else, which is what users expect of password-based encryption).
    return "scrypt" not in types or len(types) == 1


# ------------------------------------------------------------------------------ input buffering


class _Input:
    """Reads lines for the header and exact-sized blocks for the payload from one stream.

    Lines are found by reading blocks and searching for LF; what was read past the header stays
    here and is handed to the payload reader first.
    """

    __slots__ = ("_buf", "_eof", "_src")

    def __init__(self, src: BinaryIO) -> None:
        self._src = src
        self._buf = bytearray()
        self._eof = False

    def _more(self, size: int) -> bool:
        if self._eof:
            return False
        data = self._src.read(size)
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    def readline(self, limit: int) -> bytes | None:
        """The next line with its LF; None at a clean end of file; AgeHeaderError otherwise."""
        start = 0
        while True:
            end = self._buf.find(b"\n", start)
            if end >= 0:
                if end + 1 > limit:
                    break
                line = bytes(self._buf[: end + 1])
                del self._buf[: end + 1]
                return line
            if len(self._buf) > limit:
                break
            start = len(self._buf)
            if not self._more(4096):
                if not self._buf:
                    return None
                raise AgeHeaderError("the age header is truncated (a line has no line feed)")
        raise AgeHeaderError("the age header has a line that is too long")

    def readinto(self, view: memoryview) -> int:
        """Fill `view` completely unless the stream ends first; returns the number of bytes."""
        filled = 0
        if self._buf:
            filled = min(len(self._buf), len(view))
            view[:filled] = self._buf[:filled]
            del self._buf[:filled]
        readinto = getattr(self._src, "readinto", None)
        while filled < len(view) and not self._eof:
            if readinto is not None:
                n = readinto(view[filled:])
            else:  # a file object without readinto (rare): read and copy
                data = self._src.read(len(view) - filled)
                n = len(data) if data else 0
                view[filled : filled + n] = data or b""
            if not n:
                self._eof = True
                break
            filled += n
        return filled


def _parse_header(inp: _Input) -> Header:
    raw = bytearray()

    def next_line(what: str) -> bytes:
        line = inp.readline(MAX_HEADER_LINE)
        if line is None:
            raise AgeHeaderError(f"the age header is truncated (expected {what})")
        raw.extend(line)
        if len(raw) > MAX_HEADER_SIZE:
            raise AgeHeaderError("the age header is too large")
        return line

    try:
        # A version line is short; a binary file without a newline must not read 64 KiB first.
        first = inp.readline(_MAX_VERSION_LINE)
    except AgeHeaderError:
        first = b""
    if first is None:
        raise AgeHeaderError("the file is empty, not an age file")
    raw.extend(first)
    if first != VERSION_LINE:
        version = first[len(MAGIC) : -1]
        if first.startswith(MAGIC) and _ARGUMENT.fullmatch(version):
            raise AgeVersionError(
                "this age format version is not supported (only age-encryption.org/v1 is)",
                hint="the file was written by a newer tool; decrypt it with a current `age`",
            )
        hint = None
        if first.startswith(b"-----BEGIN"):
            hint = "ASCII-armored age files are not supported; decrypt it with `age -d`"
        elif first == VERSION_LINE[:-1] + b"\r\n":
            hint = "its line endings were changed to CRLF (copied in text mode?)"
        raise AgeHeaderError(
            "not an age v1 file (the first line is not age-encryption.org/v1)", hint=hint
        )

    stanzas: list[Stanza] = []
    while True:
        line = next_line("a stanza or the MAC line")
        if line.startswith(b"---"):
            parts = line[:-1].split(b" ")
            if parts[0] != b"---" or len(parts) != 2:
                raise AgeHeaderError("the age header MAC line is malformed")
            try:
                mac = decode_base64(parts[1])
            except ValueError:
                raise AgeHeaderError("the age header MAC is not canonical base64") from None
            if len(mac) != MAC_SIZE:
                raise AgeHeaderError("the age header MAC has the wrong length")
            if not stanzas:
                raise AgeHeaderError("the age header has no recipient stanza")
            types = [s.type for s in stanzas]
            if not _scrypt_is_alone(types):
                raise AgeHeaderError(
                    "a passphrase (scrypt) stanza must be the only stanza in an age file"
                )
            mac_input = bytes(raw[: len(raw) - len(line) + 3])
            return Header(tuple(stanzas), mac, mac_input, len(raw))
        if not line.startswith(b"->"):
            raise AgeHeaderError("the age header has a line that is neither a stanza nor the MAC")
        parts = line[:-1].split(b" ")
        if (
            parts[0] != b"->"
            or len(parts) < 2
            or not all(_ARGUMENT.fullmatch(p) for p in parts[1:])
        ):
            raise AgeHeaderError("the age header has a malformed stanza line")
        body = bytearray()
        while True:
            body_line = next_line("a stanza body line")[:-1]
            if len(body_line) > COLUMNS_PER_LINE:
                raise AgeHeaderError("an age stanza body line is longer than 64 columns")
            try:
                body += decode_base64(body_line)
            except ValueError:
                raise AgeHeaderError("an age stanza body is not canonical base64") from None
            if len(body_line) < COLUMNS_PER_LINE:
                break  # the spec: a body ends with its first line shorter than 64 columns
        stanzas.append(Stanza(tuple(p.decode("ascii") for p in parts[1:]), bytes(body)))


def read_header(src: BinaryIO) -> Header:
    """Parse the header of an age file without any key (for keyless verification).

    Reads a little past the header; the stream is left somewhere in the payload.
    """
    return _parse_header(_Input(src))


def _unlock(inp: _Input, identities: Sequence[Identity]) -> tuple[Header, bytes]:
    """Parse the header, find the file key, check the MAC; return the header and payload key."""
    header = _parse_header(inp)
    if not identities:
        raise KeyMaterialError("no identity given to decrypt with", hint="pass -i IDENTITY_FILE")
    file_key: bytes | None = None
    for identity in identities:
        file_key = identity.unwrap(header.stanzas)
        if file_key is not None:
            break
    if file_key is None:
        raise NoIdentityMatchedError(
            "no identity matched: the file was not encrypted to the key(s) given"
            + (" (a passphrase file)" if header.stanza_types == ("scrypt",) else ""),
            hint="check -i IDENTITY (or the passphrase); `scrub archives list` shows the "
            "recipients' fingerprints",
        )
    if len(file_key) != FILE_KEY_SIZE:
        raise AgeHeaderError("the unwrapped age file key has the wrong length")
    expected = _header_mac(file_key, header.mac_input)
    if not hmac.compare_digest(expected, header.mac):
        raise AgeMacError(
            "the age header failed authentication (HMAC mismatch): the header was modified"
        )
    nonce = bytearray(PAYLOAD_NONCE_SIZE)
    if inp.readinto(memoryview(nonce)) != PAYLOAD_NONCE_SIZE:
        raise AgeHeaderError("the age file ends before the payload nonce")
    return header, _hkdf(file_key, bytes(nonce), _PAYLOAD_LABEL)


# ------------------------------------------------------------------------------------- STREAM


def _chunk_nonce(counter: int, last: bool) -> bytes:
    # 11-byte big-endian chunk counter, then 0x01 for the final chunk and 0x00 before it.
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


class _ChunkDecryptor:
    """Returns authenticated plaintext chunks, enforcing the spec's final-chunk rules.

    Each chunk that authenticates is released, even when what follows it is wrong (a missing
    final chunk, data after the final chunk): its bytes are genuine. The error then comes on the
    next call, and keeps coming, so a failed stream never ends like a complete one. This is
    also what the official test vectors expect of the plaintext released.
    """

    __slots__ = ("_aead", "_buf", "_carry", "_counter", "_done", "_error", "_inp", "_view")

    def __init__(self, inp: _Input, payload_key: bytes) -> None:
        self._inp = inp
        self._aead = ChaCha20Poly1305(payload_key)
        self._counter = 0
        self._done = False
        self._error: AgePayloadError | None = None
        # One encrypted chunk plus one byte: seeing that byte is how we know the chunk in front
        # of it is not the final one (the final chunk's nonce differs).
        self._buf = bytearray(ENCRYPTED_CHUNK_SIZE + 1)
        self._view = memoryview(self._buf)
        self._carry = 0

    def _fail(self, message: str) -> AgePayloadError:
        self._error = AgePayloadError(
            message, hint="the archive is damaged or incomplete; restore it from another copy"
        )
        return self._error

    def _open(self, data: memoryview, last: bool) -> bytes | None:
        try:
            return self._aead.decrypt(_chunk_nonce(self._counter, last), data, None)
        except InvalidTag:
            return None

    def next_chunk(self) -> bytes | None:
        """The next authenticated plaintext chunk, or None after a valid final chunk."""
        if self._error is not None:
            raise self._error
        if self._done:
            return None
        view = self._view
        filled = self._carry + self._inp.readinto(view[self._carry :])
        index = self._counter
        if filled > ENCRYPTED_CHUNK_SIZE:
            data = view[:ENCRYPTED_CHUNK_SIZE]
            plain = self._open(data, last=False)
            if plain is None:
                plain = self._open(data, last=True)
                if plain is None:
                    raise self._fail(f"age payload chunk {index} failed authentication")
                # A valid final chunk, but the file goes on.
                self._fail("the age payload has trailing data after its final chunk")
                return plain
            view[0] = view[ENCRYPTED_CHUNK_SIZE]
            self._carry = 1
            self._counter += 1
            if self._counter >= MAX_CHUNKS:  # pragma: no cover - 2^88 chunks
                self._fail("the age payload has too many chunks")
            return plain
        # The stream ends within this chunk, so it must be the final one.
        self._carry = 0
        self._done = True
        if filled < TAG_SIZE:
            raise self._fail(
                "the age payload is truncated (no chunk after the nonce)"
                if filled == 0 and index == 0
                else "the age payload is truncated (it ends before a complete chunk)"
                if filled
                else "the age payload is truncated (it ends without a final chunk)"
            )
        data = view[:filled]
        plain = self._open(data, last=True)
        if plain is None:
            if filled == ENCRYPTED_CHUNK_SIZE:
                plain = self._open(data, last=False)
                if plain is not None:
                    self._counter += 1
                    self._fail("the age payload is truncated (it ends without a final chunk)")
                    return plain
            raise self._fail(
                f"age payload chunk {index} failed authentication (corrupted or truncated)"
            )
        if not plain and index > 0:
            raise self._fail("the age payload ends with an empty final chunk (not allowed)")
        return plain


class DecryptingReader(io.RawIOBase):
    """A readable binary file over an age file: plaintext comes out one authenticated chunk at a
    time, so `tarfile.open(fileobj=reader, mode="r|gz")` streams an archive in constant memory.

    The header is read and the file key unwrapped on construction, so a wrong key fails here.
    Closing the reader does not close `src`.
    """

    def __init__(self, src: BinaryIO, identities: Sequence[Identity]) -> None:
        super().__init__()
        inp = _Input(src)
        self.header, payload_key = _unlock(inp, identities)
        self._chunks = _ChunkDecryptor(inp, payload_key)
        self._plain = b""
        self._pos = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def _fill(self, partial: bool = False) -> bool:
        if self._eof:
            return False
        try:
            plain = self._chunks.next_chunk()
        except AgePayloadError:
            if partial:
                # Hand over the authenticated bytes already gathered; the error is raised by
                # the next read, and by every read after it.
                return False
            raise
        if plain is None:
            self._eof = True
            return False
        self._plain, self._pos = plain, 0
        return True

    def chunks(self) -> Iterator[bytes]:
        """The remaining plaintext, one authenticated chunk at a time (up to 64 KiB each)."""
        if self._pos < len(self._plain):
            rest = self._plain[self._pos :]
            self._plain, self._pos = b"", 0
            yield rest
        while self._fill():
            plain = self._plain
            self._plain, self._pos = b"", 0
            if plain:
                yield plain

    def read(self, size: int | None = -1) -> bytes:
        self._checkClosed()
        if size is None or size < 0:
            return b"".join(self.chunks())
        parts: list[bytes] = []
        wanted = size
        while wanted > 0:
            if self._pos >= len(self._plain) and not self._fill(partial=bool(parts)):
                break
            piece = self._plain[self._pos : self._pos + wanted]
            self._pos += len(piece)
            wanted -= len(piece)
            parts.append(piece)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: WriteableBuffer) -> int:
        self._checkClosed()
        view = memoryview(buffer).cast("B")
        filled = 0
        while filled < len(view):
            if self._pos >= len(self._plain) and not self._fill(partial=filled > 0):
                break
            take = min(len(view) - filled, len(self._plain) - self._pos)
            view[filled : filled + take] = self._plain[self._pos : self._pos + take]
            self._pos += take
            filled += take
        return filled


class EncryptingWriter(io.BufferedIOBase):
    """A writable binary file that encrypts to an age file on `dst` as data comes in.

    The header and nonce are written on construction. `close()` writes the final chunk; it does
    not close `dst`. Leaving a `with` block by an exception does *not* write the final chunk,
    so an interrupted archive can never pass for a complete one (it fails as truncated).
    """

    def __init__(self, dst: BinaryIO, recipients: Sequence[Recipient]) -> None:
        super().__init__()
        # Set first: if a check below raises, __del__ and close() still find a consistent writer.
        self._dst = dst
        self._finished = True
        self._pending = bytearray()
        if not recipients:
            raise KeyMaterialError("no recipient given to encrypt to", hint="pass -r or -R")
        file_key = os.urandom(FILE_KEY_SIZE)  # the spec: CSPRNG, never reused across files
        stanzas = [stanza for r in recipients for stanza in r.wrap(file_key)]
        if not stanzas:
            raise KeyMaterialError("the recipients produced no stanza")
        if not _scrypt_is_alone([s.type for s in stanzas]):
            raise KeyMaterialError(
                "a passphrase cannot be combined with other recipients in one age file",
                hint="encrypt either to a passphrase or to public keys",
            )
        header = bytearray(VERSION_LINE)
        for stanza in stanzas:
            header += _encode_stanza(stanza)
        header += b"---"
        mac = _header_mac(file_key, bytes(header))
        header += b" " + encode_base64(mac).encode("ascii") + b"\n"
        nonce = os.urandom(PAYLOAD_NONCE_SIZE)
        self._aead = ChaCha20Poly1305(_hkdf(file_key, nonce, _PAYLOAD_LABEL))
        self._counter = 0
        dst.write(bytes(header) + nonce)
        self._finished = False

    def writable(self) -> bool:
        return True

    def _seal(self, plain: bytes | bytearray | memoryview, last: bool) -> None:
        if self._counter >= MAX_CHUNKS - 1:  # pragma: no cover - 2^88 chunks
            raise AgeError("too much data for one age file")
        self._dst.write(self._aead.encrypt(_chunk_nonce(self._counter, last), plain, None))
        self._counter += 1

    def write(self, data: ReadableBuffer) -> int:
        if self.closed or self._finished:
            raise ValueError("write to a closed age writer")
        view = memoryview(data).cast("B")
        size = len(view)
        pos = 0
        pending = self._pending
        while pos < size:
            # A full pending chunk is sealed only once more data arrives: until then it might be
            # the final chunk, whose nonce differs.
            if len(pending) == CHUNK_SIZE:
                self._seal(pending, last=False)
                pending.clear()
            if not pending and size - pos > CHUNK_SIZE:
                self._seal(view[pos : pos + CHUNK_SIZE], last=False)
                pos += CHUNK_SIZE
                continue
            take = min(CHUNK_SIZE - len(pending), size - pos)
            pending += view[pos : pos + take]
            pos += take
        return size

    def flush(self) -> None:
        if not self.closed:
            self._dst.flush()

    def close(self) -> None:
        """Write the final chunk (once) and flush `dst`; `dst` stays open."""
        if self.closed:
            return
        try:
            if not self._finished:
                self._finished = True
                # An empty final chunk only when the whole payload is empty: `write` never
                # leaves the pending buffer empty after sealing a chunk.
                self._seal(self._pending, last=True)
                self._pending = bytearray()
                self._dst.flush()
        finally:
            super().close()

    def abort(self) -> None:
        """Close without writing the final chunk: the output fails to decrypt as truncated."""
        self._finished = True
        self._pending = bytearray()
        super().close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:
        # io.IOBase.__del__ would call close() and seal a payload that was never finished.
        if not self.closed:
            self.abort()


# -------------------------------------------------------------------------------- whole files

_COPY_SIZE = 16 * CHUNK_SIZE


def encrypt(src: BinaryIO, dst: BinaryIO, recipients: Sequence[Recipient]) -> None:
    """Encrypt all of `src` to `dst` for `recipients`, in constant memory."""
    with EncryptingWriter(dst, recipients) as writer:
        buf = bytearray(_COPY_SIZE)
        view = memoryview(buf)
        readinto = getattr(src, "readinto", None)
        while True:
            if readinto is not None:
                n = readinto(buf)
                if not n:
                    break
                writer.write(view[:n])
            else:
                data = src.read(_COPY_SIZE)
                if not data:
                    break
                writer.write(data)


def decrypt(src: BinaryIO, dst: BinaryIO, identities: Sequence[Identity]) -> None:
    """Decrypt `src` into `dst`, writing each chunk only after it is authenticated.

    On an error, `dst` holds the authenticated chunks before the failure; callers writing a
    file should write to a temporary and remove it on error.
    """
    reader = DecryptingReader(src, identities)
    for chunk in reader.chunks():
        dst.write(chunk)
