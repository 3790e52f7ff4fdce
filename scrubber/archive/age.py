"""The age v1 file format (https://c2sp.org/age) on `cryptography`: header, MAC and STREAM.

We implement the format rather than invent one, so an archive opens with the standard `age` and
`rage` tools even without scrubber. This module is the format's front door: whole-file
`encrypt` and `decrypt`, and everything else a caller needs, from the modules that own each
part: the header (version line, recipient stanzas, HMAC) in `age_header.py`, the payload
(16-byte nonce, HKDF payload key, 64 KiB ChaCha20-Poly1305 STREAM chunks) in `age_payload.py`,
the errors in `age_errors.py`. Recipient and identity types plug in through two small Protocols
(`Recipient.wrap`, `Identity.unwrap`); the X25519 and scrypt ones live in `keys.py`.

Memory stays constant for any size: the writer holds at most one plaintext chunk, the reader
reads one encrypted chunk plus one byte ahead (to know whether the chunk is the final one, whose
nonce differs), and no plaintext leaves the reader before its chunk has been authenticated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import BinaryIO

from scrubber.archive.age_errors import (
    AgeError,
    AgeHeaderError,
    AgeMacError,
    AgePayloadError,
    AgeVersionError,
    NoIdentityMatchedError,
    ScryptWorkFactorError,
)
from scrubber.archive.age_header import (
    FILE_KEY_SIZE,
    MAGIC,
    MAX_HEADER_LINE,
    Header,
    Identity,
    Recipient,
    Stanza,
    decode_base64,
    encode_base64,
    read_header,
)
from scrubber.archive.age_payload import (
    CHUNK_SIZE,
    ENCRYPTED_CHUNK_SIZE,
    TAG_SIZE,
    DecryptingReader,
    EncryptingWriter,
)

__all__ = [
    "CHUNK_SIZE",
    "ENCRYPTED_CHUNK_SIZE",
    "FILE_KEY_SIZE",
    "MAGIC",
    "MAX_HEADER_LINE",
    "TAG_SIZE",
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
