"""age keys: X25519 identities and recipients, passphrases (scrypt), and the files that hold them.

Encodings follow the age spec (https://c2sp.org/age) and age's own tools, so keys move freely
between scrubber and `age` / `age-keygen` / `rage`:

- An X25519 identity is 32 random bytes, Bech32-encoded with HRP `AGE-SECRET-KEY-` and written
  in upper case (`AGE-SECRET-KEY-1…`); its recipient is the X25519 public key, Bech32 with HRP
  `age` in lower case (`age1…`). Bech32 is BIP-173's, without its 90-character limit.
- Identity and recipients files hold one key per line; lines starting with `#` and blank lines
  are ignored (the format `age-keygen` writes and `age -i` / `age -R` read).

Nothing here ever puts key material in an exception, a repr or a log line.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from scrubber.archive.age import (
    FILE_KEY_SIZE,
    AgeHeaderError,
    ScryptWorkFactorError,
    Stanza,
    decode_base64,
    encode_base64,
)
from scrubber.errors import KeyMaterialError

__all__ = [
    "DEFAULT_SCRYPT_WORK_FACTOR",
    "MAX_SCRYPT_WORK_FACTOR",
    "AnyIdentity",
    "AnyRecipient",
    "ScryptIdentity",
    "ScryptRecipient",
    "X25519Identity",
    "X25519Recipient",
    "bech32_decode",
    "bech32_encode",
    "generate_identity",
    "has_loose_permissions",
    "identity_file_text",
    "parse_identity",
    "parse_recipient",
    "read_identities_file",
    "read_recipients_file",
    "recipient_fingerprint",
    "write_identity_file",
]

# ------------------------------------------------------------------------------------- Bech32
# BIP-173 (https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki): checksum constant 1
# (Bech32, not Bech32m), all-lower or all-upper case, checksum over the lower-case string. The
# age spec drops BIP-173's 90-character limit.

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_CHARSET_INDEX = {c: i for i, c in enumerate(_CHARSET)}
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _polymod(values: Sequence[int]) -> int:
    chk = 1
    for value in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_GENERATOR):
            if (top >> i) & 1:
                chk ^= gen
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert_bits(data: Sequence[int], from_bits: int, to_bits: int, pad: bool) -> list[int]:
    acc = 0
    bits = 0
    out: list[int] = []
    maxv = (1 << to_bits) - 1
    for value in data:
        acc = (acc << from_bits) | value
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (to_bits - bits)) & maxv)
    elif bits >= from_bits or (acc << (to_bits - bits)) & maxv:
        # Decoding 5-bit groups to bytes: at most 4 leftover bits, and they must be zero.
        raise ValueError("invalid padding")
    return out


def bech32_encode(hrp: str, data: bytes) -> str:
    """Bech32-encode `data` under `hrp` (lower case; upper-case the result if you need it)."""
    hrp = hrp.lower()
    if not hrp or any(not 33 <= ord(c) <= 126 for c in hrp):
        raise ValueError("invalid human-readable part")
    values = _convert_bits(data, 8, 5, pad=True)
    checksum_input = [*_hrp_expand(hrp), *values, 0, 0, 0, 0, 0, 0]
    polymod = _polymod(checksum_input) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[v] for v in values + checksum)


def bech32_decode(text: str) -> tuple[str, bytes]:
    """Decode a Bech32 string to (hrp as written, data). ValueError says why, never echoing."""
    if any(not 33 <= ord(c) <= 126 for c in text):
        raise ValueError("invalid character")
    if text.lower() != text and text.upper() != text:
        raise ValueError("mixed case")
    pos = text.rfind("1")
    if pos < 1 or pos + 7 > len(text):
        raise ValueError("missing separator or checksum")
    hrp = text[:pos]
    lower = text.lower()
    try:
        values = [_CHARSET_INDEX[c] for c in lower[pos + 1 :]]
    except KeyError:
        raise ValueError("invalid character in data part") from None
    if _polymod([*_hrp_expand(lower[:pos]), *values]) != 1:
        raise ValueError("invalid checksum")
    return hrp, bytes(_convert_bits(values[:-6], 5, 8, pad=False))


# ------------------------------------------------------------------------------ X25519 keys

_RECIPIENT_HRP = "age"
_IDENTITY_HRP = "AGE-SECRET-KEY-"
_X25519_LABEL = b"age-encryption.org/v1/X25519"
_SCRYPT_LABEL = b"age-encryption.org/v1/scrypt"
_ZERO_NONCE = bytes(12)
_WRAPPED_KEY_SIZE = FILE_KEY_SIZE + 16  # file key + Poly1305 tag


def _hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def _unwrap_body(key: bytes, body: bytes) -> bytes | None:
    try:
        return ChaCha20Poly1305(key).decrypt(_ZERO_NONCE, body, None)
    except InvalidTag:
        return None  # not for us (or a wrong passphrase): the caller tries the next stanza


@dataclass(frozen=True, slots=True)
class X25519Recipient:
    """An X25519 public key (`age1…`): anyone may hold it; it can only encrypt."""

    public_key: bytes

    def __post_init__(self) -> None:
        if len(self.public_key) != 32:
            raise KeyMaterialError("malformed recipient: an X25519 key is 32 bytes")

    def encode(self) -> str:
        return bech32_encode(_RECIPIENT_HRP, self.public_key)

    def __str__(self) -> str:
        return self.encode()

    def wrap(self, file_key: bytes) -> list[Stanza]:
        # The spec: a fresh ephemeral secret for each stanza and each file.
        ephemeral = X25519PrivateKey.generate()
        share = ephemeral.public_key().public_bytes_raw()
        shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(self.public_key))
        wrap_key = _hkdf(shared, share + self.public_key, _X25519_LABEL)
        body = ChaCha20Poly1305(wrap_key).encrypt(_ZERO_NONCE, file_key, None)
        return [Stanza(("X25519", encode_base64(share)), body)]


@dataclass(frozen=True, slots=True)
class X25519Identity:
    """An X25519 secret key (`AGE-SECRET-KEY-1…`). Its repr never shows the key."""

    secret_key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.secret_key) != 32:
            raise KeyMaterialError("malformed identity: an X25519 secret key is 32 bytes")

    @classmethod
    def generate(cls) -> X25519Identity:
        return cls(os.urandom(32))

    def _private_key(self) -> X25519PrivateKey:
        return X25519PrivateKey.from_private_bytes(self.secret_key)

    def recipient(self) -> X25519Recipient:
        return X25519Recipient(self._private_key().public_key().public_bytes_raw())

    def encode(self) -> str:
        """The secret key as `AGE-SECRET-KEY-1…`: handle with care, never log it."""
        return bech32_encode(_IDENTITY_HRP, self.secret_key).upper()

    def unwrap(self, stanzas: Sequence[Stanza]) -> bytes | None:
        private = self._private_key()
        own_public = private.public_key().public_bytes_raw()
        for stanza in stanzas:
            if stanza.type != "X25519":
                continue  # the spec: ignore stanzas of other types
            if len(stanza.args) != 2:
                raise AgeHeaderError("an X25519 stanza must have exactly one argument")
            try:
                share = decode_base64(stanza.args[1])
            except ValueError:
                raise AgeHeaderError("an X25519 stanza share is not canonical base64") from None
            if len(share) != 32:
                raise AgeHeaderError("an X25519 stanza share is not 32 bytes")
            try:
                shared = private.exchange(X25519PublicKey.from_public_bytes(share))
            except ValueError:
                # OpenSSL refuses to return the all-zero secret of a low-order share.
                shared = bytes(32)
            if shared == bytes(32):
                raise AgeHeaderError("an X25519 stanza share is a low-order point (invalid)")
            # The spec: check the body length before decrypting (partitioning oracles).
            if len(stanza.body) != _WRAPPED_KEY_SIZE:
                raise AgeHeaderError("an X25519 stanza body has the wrong length")
            file_key = _unwrap_body(_hkdf(shared, share + own_public, _X25519_LABEL), stanza.body)
            if file_key is not None:
                return file_key
        return None


def generate_identity() -> X25519Identity:
    """A new random X25519 identity, as `age-keygen` makes."""
    return X25519Identity.generate()


# -------------------------------------------------------------------------------- passphrases

DEFAULT_SCRYPT_WORK_FACTOR = 18  # log2(N): what age writes; about a second here
MAX_SCRYPT_WORK_FACTOR = 22  # what we accept on read: 2^22 * 1 KiB = 4 GiB of scrypt memory


def _passphrase_bytes(passphrase: str | bytes) -> bytes:
    data = passphrase.encode("utf-8") if isinstance(passphrase, str) else bytes(passphrase)
    if not data:
        raise KeyMaterialError("the passphrase is empty")
    return data


def _scrypt_key(passphrase: bytes, salt: bytes, work_factor: int) -> bytes:
    try:
        kdf = Scrypt(salt=_SCRYPT_LABEL + salt, length=32, n=1 << work_factor, r=8, p=1)
        return kdf.derive(passphrase)
    except MemoryError:  # pragma: no cover - depends on the machine
        raise KeyMaterialError(
            f"not enough memory for the passphrase's scrypt work factor {work_factor}"
        ) from None


@dataclass(frozen=True, slots=True)
class ScryptRecipient:
    """Encrypt to a passphrase. `work_factor` is log2 of scrypt's N; keep the default (tests
    lower it to stay fast). Must be the only recipient of a file."""

    passphrase: str | bytes = field(repr=False)
    work_factor: int = DEFAULT_SCRYPT_WORK_FACTOR

    def __post_init__(self) -> None:
        _passphrase_bytes(self.passphrase)
        if not 1 <= self.work_factor <= MAX_SCRYPT_WORK_FACTOR:
            raise KeyMaterialError(
                f"the scrypt work factor must be between 1 and {MAX_SCRYPT_WORK_FACTOR}"
            )

    def wrap(self, file_key: bytes) -> list[Stanza]:
        salt = os.urandom(16)  # the spec: a new salt for each stanza and each file
        key = _scrypt_key(_passphrase_bytes(self.passphrase), salt, self.work_factor)
        body = ChaCha20Poly1305(key).encrypt(_ZERO_NONCE, file_key, None)
        return [Stanza(("scrypt", encode_base64(salt), str(self.work_factor)), body)]


@dataclass(frozen=True, slots=True)
class ScryptIdentity:
    """Decrypt with a passphrase; refuses work factors above `max_work_factor` (at most 22)."""

    passphrase: str | bytes = field(repr=False)
    max_work_factor: int = MAX_SCRYPT_WORK_FACTOR

    def __post_init__(self) -> None:
        _passphrase_bytes(self.passphrase)
        if not 1 <= self.max_work_factor <= MAX_SCRYPT_WORK_FACTOR:
            raise KeyMaterialError(
                f"the scrypt work factor limit must be between 1 and {MAX_SCRYPT_WORK_FACTOR}"
            )

    def unwrap(self, stanzas: Sequence[Stanza]) -> bytes | None:
        for stanza in stanzas:
            if stanza.type != "scrypt":
                continue
            # (The header parser already refused an scrypt stanza that is not alone.)
            if len(stanza.args) != 3:
                raise AgeHeaderError("an scrypt stanza must have exactly two arguments")
            try:
                salt = decode_base64(stanza.args[1])
            except ValueError:
                raise AgeHeaderError("an scrypt stanza salt is not canonical base64") from None
            if len(salt) != 16:
                raise AgeHeaderError("an scrypt stanza salt is not 16 bytes")
            text = stanza.args[2]
            # The spec: decimal, digits only, no leading zero (^[1-9][0-9]*$).
            if not (text.isascii() and text.isdigit() and text[0] != "0"):
                raise AgeHeaderError("an scrypt stanza work factor is not a plain decimal number")
            if len(text) > 2 or int(text) > self.max_work_factor:
                raise ScryptWorkFactorError(
                    f"the passphrase file asks for scrypt work factor {text[:6]}, above our "
                    f"limit of {self.max_work_factor}",
                    hint="only decrypt it (with `age -d`) if you trust where it came from",
                )
            if len(stanza.body) != _WRAPPED_KEY_SIZE:
                raise AgeHeaderError("an scrypt stanza body has the wrong length")
            key = _scrypt_key(_passphrase_bytes(self.passphrase), salt, int(text))
            file_key = _unwrap_body(key, stanza.body)
            if file_key is not None:
                return file_key
        return None


AnyRecipient = X25519Recipient | ScryptRecipient
AnyIdentity = X25519Identity | ScryptIdentity


# ------------------------------------------------------------------------- parsing and files


def parse_recipient(text: str) -> X25519Recipient:
    """Parse an `age1…` recipient. KeyMaterialError (without the text) when malformed."""
    text = text.strip()
    if text.startswith("AGE-SECRET-KEY-"):
        raise KeyMaterialError(
            "malformed recipient: this is a secret key (an identity), not a recipient",
            hint="give its public key (age1…), printed by `scrub keygen` / `age-keygen -y`",
        )
    if text.startswith(("ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-")):
        raise KeyMaterialError("malformed recipient: SSH recipients are not supported")
    try:
        hrp, data = bech32_decode(text)
    except ValueError as exc:
        raise KeyMaterialError(f"malformed recipient: not an age1… key ({exc})") from None
    if hrp != _RECIPIENT_HRP:
        # age1pq1…, age1tag1…, age1yubikey1…: real age encodings of types we do not implement.
        known = hrp.lower().startswith("age1") and hrp.isascii() and hrp.isalnum()
        raise KeyMaterialError(
            f"malformed recipient: recipient type {hrp.lower()!r} is not supported "
            "(only X25519 age1… keys)"
            if known
            else "malformed recipient: not an age1… key (age recipients are lower case)"
        )
    if len(data) != 32:
        raise KeyMaterialError("malformed recipient: an X25519 key is 32 bytes")
    return X25519Recipient(data)


def parse_identity(text: str) -> X25519Identity:
    """Parse an `AGE-SECRET-KEY-1…` identity. KeyMaterialError (never with the key) if bad."""
    text = text.strip()
    if text.startswith("age1"):
        raise KeyMaterialError(
            "malformed identity: this is a recipient (public key), not an identity (secret key)"
        )
    if text.startswith("AGE-SECRET-KEY-PQ-"):
        raise KeyMaterialError("malformed identity: post-quantum identities are not supported")
    if text.startswith("AGE-PLUGIN-"):
        raise KeyMaterialError("malformed identity: age plugin identities are not supported")
    try:
        hrp, data = bech32_decode(text)
    except ValueError as exc:
        raise KeyMaterialError(f"malformed identity: not an age secret key ({exc})") from None
    # age itself only accepts the upper-case form that age-keygen writes.
    if hrp != _IDENTITY_HRP:
        raise KeyMaterialError(
            "malformed identity: not an AGE-SECRET-KEY-1… key (age keys are upper case)"
        )
    if len(data) != 32:
        raise KeyMaterialError("malformed identity: an X25519 secret key is 32 bytes")
    return X25519Identity(data)


# Key files are small; a cap keeps a wrong path (a transcript, a disk image) from being slurped.
_MAX_KEY_FILE = 1024 * 1024


def _read_key_lines(path: Path, what: str) -> list[tuple[int, str]]:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_KEY_FILE + 1)
    except FileNotFoundError:
        raise KeyMaterialError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise KeyMaterialError(f"cannot read {what} file {path}: {exc.strerror}") from None
    if len(data) > _MAX_KEY_FILE:
        raise KeyMaterialError(f"{what} file {path} is too large to be a key file")
    if data.startswith(b"age-encryption.org/") or data.startswith(b"-----BEGIN AGE"):
        raise KeyMaterialError(
            f"{what} file {path} is itself age-encrypted; that is not supported",
            hint=f"decrypt it first: age -d -o PLAIN_FILE {path}",
        )
    if data.lstrip().startswith(b"-----BEGIN"):
        raise KeyMaterialError(f"{what} file {path} holds a PEM/SSH key; only age keys work")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyMaterialError(f"{what} file {path} is not a text file") from None
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((number, stripped))
    if not lines:
        raise KeyMaterialError(f"no {what} found in {path}")
    return lines


def read_recipients_file(path: Path) -> list[X25519Recipient]:
    """Recipients from a file in `age -R` form: one `age1…` per line, `#` comments, blanks."""
    out: list[X25519Recipient] = []
    for number, line in _read_key_lines(path, "recipients"):
        try:
            out.append(parse_recipient(line))
        except KeyMaterialError as exc:
            raise KeyMaterialError(f"{path} line {number}: {exc.message}") from None
    return out


def read_identities_file(path: Path) -> list[X25519Identity]:
    """Identities from a file in `age -i` form (what `age-keygen` writes)."""
    out: list[X25519Identity] = []
    for number, line in _read_key_lines(path, "identity"):
        try:
            out.append(parse_identity(line))
        except KeyMaterialError as exc:
            raise KeyMaterialError(f"{path} line {number}: {exc.message}") from None
    return out


def has_loose_permissions(path: Path) -> bool:
    """True when group or others may access an identity file (the CLI warns, as ssh does)."""
    if os.name != "posix":  # pragma: no cover - POSIX modes mean nothing elsewhere
        return False
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise KeyMaterialError(f"cannot read identity file {path}: {exc.strerror}") from None
    return bool(stat.S_IMODE(mode) & 0o077)


def identity_file_text(identity: X25519Identity, created: datetime) -> str:
    """The identity file text, in the layout `age-keygen` writes."""
    return (
        f"# created: {created.isoformat(timespec='seconds')}\n"
        f"# public key: {identity.recipient().encode()}\n"
        f"{identity.encode()}\n"
    )


def write_identity_file(path: Path, identity: X25519Identity, created: datetime) -> None:
    """Write a new identity file: 0600 from the first byte, never over a file, none on failure."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyMaterialError(f"{path} already exists; not overwriting a key file") from None
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(identity_file_text(identity, created))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        path.unlink(missing_ok=True)
        raise


def recipient_fingerprint(recipient: AnyRecipient) -> str:
    """A short public id for manifests: the first 16 hex digits of SHA-256 of `age1…`.

    A passphrase gets the fixed label "passphrase": any hash of it would let an attacker test
    guesses offline, bypassing scrypt.
    """
    if isinstance(recipient, ScryptRecipient):
        return "passphrase"
    return hashlib.sha256(recipient.encode().encode("ascii")).hexdigest()[:16]
