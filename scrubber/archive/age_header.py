"""The header of an age v1 file (https://c2sp.org/age): parsing it, formatting it, its MAC.

A header is the version line, one or more recipient stanzas (arguments, then a base64 body
wrapped at 64 columns) and the MAC line; the HMAC over it, keyed from the file key, is what
makes any change to the header fail to decrypt. Recipient and identity types plug in through
two small Protocols (`Recipient.wrap`, `Identity.unwrap`); the X25519 and scrypt ones live in
`keys.py`. The payload that follows is `age_payload.py`'s.

Reading never trusts the file: lines and the whole header have caps, base64 must be canonical,
and nothing read is repeated in an error message.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, NoReturn, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from scrubber.archive.age_errors import (
    AgeHeaderError,
    AgeMacError,
    AgeVersionError,
    NoIdentityMatchedError,
)
from scrubber.errors import KeyMaterialError

__all__ = [
    "COLUMNS_PER_LINE",
    "FILE_KEY_SIZE",
    "MAC_SIZE",
    "MAGIC",
    "MAX_HEADER_LINE",
    "MAX_HEADER_SIZE",
    "VERSION_LINE",
    "AgeInput",
    "Header",
    "Identity",
    "Recipient",
    "Stanza",
    "decode_base64",
    "encode_base64",
    "format_header",
    "hkdf",
    "parse_header",
    "read_header",
    "unwrap_file_key",
]

# Format constants, all from the spec (https://c2sp.org/age).
MAGIC = b"age-encryption.org/"
VERSION_LINE = b"age-encryption.org/v1\n"
FILE_KEY_SIZE = 16
MAC_SIZE = 32
COLUMNS_PER_LINE = 64  # stanza bodies are wrapped at 64 base64 columns

# Not in the spec: bounds that keep a hostile header from eating memory. Real headers are a few
# hundred bytes (a post-quantum stanza is about 1.6 KB).
MAX_HEADER_LINE = 64 * 1024
MAX_HEADER_SIZE = 16 * 1024 * 1024
_MAX_VERSION_LINE = 256

_HEADER_LABEL = b"header"
_BASE64_CHARS = re.compile(rb"[A-Za-z0-9+/]*")
_ARGUMENT = re.compile(rb"[\x21-\x7e]+")  # 1*VCHAR


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


def hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    """HKDF-SHA-256 to 32 bytes, the spec's one key derivation (header MAC and payload key)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def _header_mac(file_key: bytes, mac_input: bytes) -> bytes:
    return hmac.digest(hkdf(file_key, b"", _HEADER_LABEL), mac_input, "sha256")


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


def format_header(file_key: bytes, stanzas: Sequence[Stanza]) -> bytes:
    """The whole header for these stanzas, MAC line included (KeyMaterialError when the
    recipients made no stanza, or mixed a passphrase with other recipients)."""
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
    return bytes(header)


# ------------------------------------------------------------------------------ input buffering


class AgeInput:
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


# ------------------------------------------------------------------------------------ parsing


def _refuse_other_formats(first: bytes) -> NoReturn:
    """Raise for a first line that is not age v1's, saying what the file seems to be."""
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


def parse_header(inp: AgeInput) -> Header:
    """Read the header from `inp`, which is left at the payload nonce."""
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
        _refuse_other_formats(first)

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
    return parse_header(AgeInput(src))


def unwrap_file_key(header: Header, identities: Sequence[Identity]) -> bytes:
    """The file key, from the first identity that unwraps one, once the header MAC checks."""
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
    return file_key
