"""The payload of an age v1 file (https://c2sp.org/age): the STREAM cipher, as file objects.

After the header come a 16-byte nonce and the payload: ChaCha20-Poly1305 chunks of 64 KiB of
plaintext under a key derived (HKDF) from the file key and that nonce, each chunk's nonce being
its counter plus a flag for the final chunk. `EncryptingWriter` writes the header
(`age_header.py`) and seals chunks as data comes in; `DecryptingReader` unlocks the header and
releases plaintext one authenticated chunk at a time.

Memory stays constant for any size: the writer holds at most one plaintext chunk, the reader
reads one encrypted chunk plus one byte ahead (to know whether the chunk is the final one, whose
nonce differs), and no plaintext leaves the reader before its chunk has been authenticated.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from scrubber.archive.age_errors import AgeError, AgeHeaderError, AgePayloadError
from scrubber.archive.age_header import (
    FILE_KEY_SIZE,
    AgeInput,
    Header,
    Identity,
    Recipient,
    format_header,
    hkdf,
    parse_header,
    unwrap_file_key,
)
from scrubber.errors import KeyMaterialError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = [
    "CHUNK_SIZE",
    "ENCRYPTED_CHUNK_SIZE",
    "MAX_CHUNKS",
    "PAYLOAD_NONCE_SIZE",
    "TAG_SIZE",
    "DecryptingReader",
    "EncryptingWriter",
]

# Format constants, all from the spec (https://c2sp.org/age).
PAYLOAD_NONCE_SIZE = 16
CHUNK_SIZE = 64 * 1024
TAG_SIZE = 16
ENCRYPTED_CHUNK_SIZE = CHUNK_SIZE + TAG_SIZE
# The chunk counter is 11 bytes; no file we could write or read comes near it, but a counter
# that wrapped would reuse a nonce, so we refuse rather than wrap.
MAX_CHUNKS = 1 << 88

_PAYLOAD_LABEL = b"payload"


def _chunk_nonce(counter: int, last: bool) -> bytes:
    # 11-byte big-endian chunk counter, then 0x01 for the final chunk and 0x00 before it.
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def _unlock(inp: AgeInput, identities: Sequence[Identity]) -> tuple[Header, bytes]:
    """Parse the header, find the file key, check the MAC; return the header and payload key."""
    header = parse_header(inp)
    file_key = unwrap_file_key(header, identities)
    nonce = bytearray(PAYLOAD_NONCE_SIZE)
    if inp.readinto(memoryview(nonce)) != PAYLOAD_NONCE_SIZE:
        raise AgeHeaderError("the age file ends before the payload nonce")
    return header, hkdf(file_key, bytes(nonce), _PAYLOAD_LABEL)


# ---------------------------------------------------------------------------------- decrypting


class _ChunkDecryptor:
    """Returns authenticated plaintext chunks, enforcing the spec's final-chunk rules.

    Each chunk that authenticates is released, even when what follows it is wrong (a missing
    final chunk, data after the final chunk): its bytes are genuine. The error then comes on the
    next call, and keeps coming, so a failed stream never ends like a complete one. This is
    also what the official test vectors expect of the plaintext released.
    """

    __slots__ = ("_aead", "_buf", "_carry", "_counter", "_done", "_error", "_inp", "_view")

    def __init__(self, inp: AgeInput, payload_key: bytes) -> None:
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
        inp = AgeInput(src)
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


# ---------------------------------------------------------------------------------- encrypting


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
        header = format_header(
            file_key, [stanza for r in recipients for stanza in r.wrap(file_key)]
        )
        nonce = os.urandom(PAYLOAD_NONCE_SIZE)
        self._aead = ChaCha20Poly1305(hkdf(file_key, nonce, _PAYLOAD_LABEL))
        self._counter = 0
        dst.write(header + nonce)
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
