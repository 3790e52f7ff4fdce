"""Fake secrets, decoys and ids, built from a seeded random generator: nothing in this
repository looks like a credential, and the same seed gives the same bytes. Each format is the
vendor's published shape."""

from __future__ import annotations

import base64
import random
import string
import struct
import uuid
import zlib

B62 = string.ascii_letters + string.digits


_B64 = B62 + "+/"


_URLSAFE = B62 + "_-"


_BASE32 = string.ascii_uppercase + "234567"


HEX = "0123456789abcdef"


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def fake_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _b62_encode(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        digits.append(_B62_ORDERED[rest])
    return "".join(reversed(digits))


def fake_github_token(rng: random.Random) -> str:
    # Classic personal access token: "ghp_" + 30 random base62 + a 6-character base62 CRC32 of
    # those 30 (GitHub's token format announcement, github.blog 2021-04-05).
    body = pick(rng, B62, 30)
    return "gh" + "p_" + body + _b62_encode(zlib.crc32(body.encode()), 6)


def fake_aws_access_key(rng: random.Random) -> str:
    # AWS access key ids: "AKIA" + 16 base32 characters (AWS IAM identifiers documentation).
    return "AK" + "IA" + pick(rng, _BASE32, 16)


def fake_aws_secret_key(rng: random.Random) -> str:
    return pick(rng, _B64, 40)


def fake_stripe_key(rng: random.Random) -> str:
    # Stripe secret keys: "sk_live_" + base62 (docs.stripe.com/keys).
    return "sk" + "_live_" + pick(rng, B62, 24)


def fake_anthropic_key(rng: random.Random) -> str:
    # Anthropic API keys: "sk-ant-api03-" + 93 url-safe characters + "AA".
    return "sk-" + "ant-api03-" + pick(rng, _URLSAFE, 93) + "AA"


def fake_npm_token(rng: random.Random) -> str:
    # npm granular/automation tokens: "npm_" + 36 base62 (docs.npmjs.com, access tokens).
    return "np" + "m_" + pick(rng, B62, 36)


_PW_WORDS = ("plum", "harbor", "otter", "maple", "copper", "violet", "falcon", "cedar", "quartz")


def fake_password(rng: random.Random) -> str:
    """A human password: low entropy on purpose (a weak database password must still count)."""
    words = rng.sample(_PW_WORDS, 2)
    return words[0].capitalize() + words[1] + str(rng.randint(1000, 9999)) + rng.choice("!#%")


def fake_private_key(rng: random.Random) -> str:
    # A PKCS#8 DER prefix (SEQUENCE, version 0, rsaEncryption OID) so the body starts "MIIE" as
    # real RSA keys do; the rest is random.
    der = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7") + rng.randbytes(
        1190
    )
    return _pem("PRIVATE KEY", der)


def fake_certificate(rng: random.Random) -> str:
    der = bytes.fromhex("30820307308201efa003020102") + rng.randbytes(760)
    return _pem("CERTIFICATE", der)


def _pem(label: str, der: bytes) -> str:
    body = base64.b64encode(der).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def fake_git_sha(rng: random.Random) -> str:
    return pick(rng, HEX, 40)


def fake_integrity(rng: random.Random) -> str:
    return "sha512-" + base64.b64encode(rng.randbytes(64)).decode()


def fake_png(rng: random.Random, size: int = 24) -> bytes:
    """A small valid PNG (random pixels) so image data looks like image data."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    rows = b"".join(b"\x00" + rng.randbytes(size * 3) for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def fake_message_id(rng: random.Random) -> str:
    return "msg_01" + pick(rng, _BASE58, 22)


def fake_tool_id(rng: random.Random) -> str:
    return "toolu_01" + pick(rng, _BASE58, 22)


def fake_request_id(rng: random.Random) -> str:
    return "req_011C" + pick(rng, _BASE58, 20)


def fake_signature(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(rng.randint(180, 420))).decode()


_B62_ORDERED = string.digits + string.ascii_uppercase + string.ascii_lowercase
