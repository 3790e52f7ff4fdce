"""Tampering: every damaged file fails with its own error, and releases only authenticated chunks.

The file under test holds 200000 bytes: chunks 0-2 are full (64 KiB), chunk 3 is short and final.
"""

from __future__ import annotations

import io
import random

import pytest

from scrubber.archive import age
from scrubber.archive.age import CHUNK_SIZE, ENCRYPTED_CHUNK_SIZE, TAG_SIZE
from scrubber.archive.keys import X25519Identity, generate_identity
from scrubber.errors import ExitCode, KeyMaterialError

SIZE = 200_000
DATA = random.Random(4).randbytes(SIZE)
IDENTITY = generate_identity()


def _encrypt(data: bytes, identity: X25519Identity = IDENTITY) -> bytes:
    out = io.BytesIO()
    age.encrypt(io.BytesIO(data), out, [identity.recipient()])
    return out.getvalue()


BLOB = _encrypt(DATA)
HEADER_SIZE = age.read_header(io.BytesIO(BLOB)).size
PAYLOAD = HEADER_SIZE + 16  # first chunk


def _chunk_start(index: int) -> int:
    return PAYLOAD + index * ENCRYPTED_CHUNK_SIZE


def _decrypt(blob: bytes, identity: X25519Identity = IDENTITY) -> tuple[bytes, Exception | None]:
    released = io.BytesIO()
    try:
        age.decrypt(io.BytesIO(blob), released, [identity])
    except age.AgeError as exc:
        return released.getvalue(), exc
    return released.getvalue(), None


def _flip(blob: bytes, offset: int, mask: int = 0x01) -> bytes:
    changed = bytearray(blob)
    changed[offset] ^= mask
    return bytes(changed)


def _replace_line_char(blob: bytes, line_prefix: bytes, column: int) -> bytes:
    """Change one base64 character of a header line to another valid base64 character."""
    start = blob.index(line_prefix)
    pos = start + column
    changed = bytearray(blob)
    changed[pos] = ord("A") if blob[pos] != ord("A") else ord("B")
    return bytes(changed)


def test_the_untouched_file_decrypts() -> None:
    assert len(BLOB) == PAYLOAD + 3 * ENCRYPTED_CHUNK_SIZE + (SIZE - 3 * CHUNK_SIZE) + TAG_SIZE
    assert _decrypt(BLOB) == (DATA, None)


# ------------------------------------------------------------------------------------- header


def test_flipped_version_line_is_a_header_error() -> None:
    released, error = _decrypt(_flip(BLOB, 3))
    assert type(error) is age.AgeHeaderError
    assert released == b""


def test_newer_version_says_the_version_is_not_supported() -> None:
    blob = BLOB.replace(b"age-encryption.org/v1\n", b"age-encryption.org/v2\n", 1)
    released, error = _decrypt(blob)
    assert type(error) is age.AgeVersionError
    assert "version is not supported" in str(error)
    assert error.exit_code == ExitCode.USAGE
    assert released == b""


def test_flipped_stanza_body_means_no_identity_matches() -> None:
    # The second header line is the stanza's body: the wrapped file key no longer opens.
    body_line = BLOB.split(b"\n")[2]
    released, error = _decrypt(_replace_line_char(BLOB, body_line, 0))
    assert type(error) is age.NoIdentityMatchedError
    assert released == b""


def test_flipped_ephemeral_share_means_no_identity_matches() -> None:
    released, error = _decrypt(_replace_line_char(BLOB, b"-> X25519 ", len("-> X25519 ")))
    assert type(error) is age.NoIdentityMatchedError
    assert released == b""


def test_non_canonical_share_is_a_header_error() -> None:
    # The share is 43 base64 characters for 32 bytes: the last character carries 2 unused bits.
    line = next(x for x in BLOB.split(b"\n") if x.startswith(b"-> X25519 "))
    last = line[-1:]
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    sibling = alphabet[alphabet.index(last) ^ 1 : (alphabet.index(last) ^ 1) + 1]
    released, error = _decrypt(BLOB.replace(line, line[:-1] + sibling, 1))
    assert type(error) is age.AgeHeaderError
    assert released == b""


def test_added_stanza_fails_the_mac() -> None:
    blob = BLOB.replace(b"\n--- ", b"\n-> grease x\n\n--- ", 1)
    released, error = _decrypt(blob)
    assert type(error) is age.AgeMacError
    assert released == b""


def test_flipped_mac_fails_the_mac() -> None:
    released, error = _decrypt(_replace_line_char(BLOB, b"--- ", 4))
    assert type(error) is age.AgeMacError
    assert released == b""


def test_malformed_mac_line_is_a_header_error() -> None:
    released, error = _decrypt(BLOB.replace(b"\n--- ", b"\n---", 1))
    assert type(error) is age.AgeHeaderError
    assert released == b""


def test_wrong_identity_is_a_key_error_without_the_key() -> None:
    other = generate_identity()
    released, error = _decrypt(BLOB, other)
    assert type(error) is age.NoIdentityMatchedError
    assert isinstance(error, KeyMaterialError)
    assert error.exit_code == ExitCode.USAGE
    assert other.encode() not in str(error)
    assert released == b""


# ------------------------------------------------------------------------------------ payload


def test_flipped_nonce_fails_the_first_chunk() -> None:
    released, error = _decrypt(_flip(BLOB, HEADER_SIZE + 5))
    assert type(error) is age.AgePayloadError
    assert released == b""


CHUNK_LENGTHS = [ENCRYPTED_CHUNK_SIZE] * 3 + [SIZE - 3 * CHUNK_SIZE + TAG_SIZE]


@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.parametrize("where", ["first", "middle", "last-data", "tag"])
def test_flipped_payload_byte_releases_only_earlier_chunks(chunk: int, where: str) -> None:
    length = CHUNK_LENGTHS[chunk]
    offset = {
        "first": 0,
        "middle": length // 2,
        "last-data": length - TAG_SIZE - 1,
        "tag": length - 1,
    }[where]
    released, error = _decrypt(_flip(BLOB, _chunk_start(chunk) + offset, 0x80))
    assert type(error) is age.AgePayloadError
    assert f"chunk {chunk}" in str(error)
    assert released == DATA[: chunk * CHUNK_SIZE]


@pytest.mark.parametrize(
    ("cut", "expected_error", "released_chunks"),
    [
        pytest.param(10, age.AgeHeaderError, 0, id="in-version-line"),
        pytest.param(HEADER_SIZE - 5, age.AgeHeaderError, 0, id="in-mac-line"),
        pytest.param(HEADER_SIZE + 8, age.AgeHeaderError, 0, id="in-nonce"),
        pytest.param(PAYLOAD, age.AgePayloadError, 0, id="right-after-nonce"),
        pytest.param(PAYLOAD + 100, age.AgePayloadError, 0, id="in-chunk-0"),
        # A chunk that ends cleanly but is not marked final is authentic, so it is released;
        # the missing final chunk is the error.
        pytest.param(_chunk_start(1), age.AgePayloadError, 1, id="after-chunk-0"),
        pytest.param(_chunk_start(2) + 7, age.AgePayloadError, 2, id="in-chunk-2"),
        pytest.param(_chunk_start(3), age.AgePayloadError, 3, id="after-chunk-2"),
        pytest.param(len(BLOB) - 1, age.AgePayloadError, 3, id="last-byte"),
    ],
)
def test_truncation_fails(cut: int, expected_error: type[Exception], released_chunks: int) -> None:
    released, error = _decrypt(BLOB[:cut])
    assert type(error) is expected_error
    assert released == DATA[: released_chunks * CHUNK_SIZE]


def test_truncation_at_a_chunk_boundary_says_truncated() -> None:
    _, error = _decrypt(BLOB[: _chunk_start(2)])
    assert "truncated" in str(error)


def _chunks(blob: bytes) -> list[bytes]:
    return [blob[_chunk_start(i) : _chunk_start(i) + CHUNK_LENGTHS[i]] for i in range(4)]


def test_swapped_chunks_fail_at_the_first_swapped_one() -> None:
    c = _chunks(BLOB)
    released, error = _decrypt(BLOB[:PAYLOAD] + c[1] + c[0] + c[2] + c[3])
    assert type(error) is age.AgePayloadError
    assert released == b""
    released, error = _decrypt(BLOB[:PAYLOAD] + c[0] + c[2] + c[1] + c[3])
    assert type(error) is age.AgePayloadError
    assert released == DATA[:CHUNK_SIZE]


def test_replayed_chunk_fails() -> None:
    c = _chunks(BLOB)
    released, error = _decrypt(BLOB[:PAYLOAD] + c[0] + c[0] + c[2] + c[3])
    assert type(error) is age.AgePayloadError
    assert released == DATA[:CHUNK_SIZE]


def test_dropped_middle_chunk_fails() -> None:
    c = _chunks(BLOB)
    released, error = _decrypt(BLOB[:PAYLOAD] + c[0] + c[2] + c[3])
    assert type(error) is age.AgePayloadError
    assert released == DATA[:CHUNK_SIZE]


@pytest.mark.parametrize("extra", [1, 15, 16, 17, 100_000])
def test_appended_data_fails(extra: int) -> None:
    released, error = _decrypt(BLOB + bytes(extra))
    assert type(error) is age.AgePayloadError
    # The short final chunk no longer authenticates once bytes are glued to it.
    assert released == DATA[: 3 * CHUNK_SIZE]


def test_appended_data_after_a_full_final_chunk_says_trailing_data() -> None:
    data = DATA[: 2 * CHUNK_SIZE]
    blob = _encrypt(data)
    released, error = _decrypt(blob + b"x")
    assert type(error) is age.AgePayloadError
    assert "trailing data" in str(error)
    # The final chunk itself is authentic (and was released); what follows it is the error.
    assert released == data


def test_error_classes_are_distinct() -> None:
    classes = [
        age.AgeHeaderError,
        age.AgeVersionError,
        age.ScryptWorkFactorError,
        age.AgeMacError,
        age.AgePayloadError,
        age.NoIdentityMatchedError,
    ]
    assert len(set(classes)) == len(classes)
    for cls in classes:
        assert issubclass(cls, age.AgeError)
    for a in (age.AgeMacError, age.AgePayloadError, age.NoIdentityMatchedError):
        for b in (age.AgeMacError, age.AgePayloadError, age.NoIdentityMatchedError):
            assert a is b or not issubclass(a, b)
        assert not issubclass(a, age.AgeHeaderError)
