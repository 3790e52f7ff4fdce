"""Invariant 5: decrypt(encrypt(x)) == x for every size, chunk boundaries included; a flipped
byte or a truncation anywhere fails with an age error and releases only authenticated chunks
(a prefix of the plaintext, whole chunks only)."""

from __future__ import annotations

import io
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrubber.archive import age
from scrubber.archive.age import CHUNK_SIZE
from scrubber.archive.keys import ScryptIdentity, ScryptRecipient, generate_identity

IDENTITY = generate_identity()
RECIPIENT = IDENTITY.recipient()

# Sizes around every chunk boundary up to four chunks, plus small and arbitrary ones.
boundary_sizes = st.builds(
    lambda k, d: max(0, k * CHUNK_SIZE + d), st.integers(0, 4), st.integers(-2, 2)
)
sizes = st.one_of(boundary_sizes, st.integers(0, 300), st.integers(0, 5 * CHUNK_SIZE))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _data(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _encrypt(data: bytes, write_size: int) -> bytes:
    out = io.BytesIO()
    with age.EncryptingWriter(out, [RECIPIENT]) as writer:
        for i in range(0, len(data), write_size):
            writer.write(data[i : i + write_size])
    return out.getvalue()


@SETTINGS
@given(size=sizes, seed=st.integers(0, 2**32), write_size=st.integers(1, 3 * CHUNK_SIZE))
def test_roundtrip(size: int, seed: int, write_size: int) -> None:
    data = _data(size, seed)
    blob = _encrypt(data, write_size)
    out = io.BytesIO()
    age.decrypt(io.BytesIO(blob), out, [IDENTITY])
    assert out.getvalue() == data


@SETTINGS
@given(size=sizes, seed=st.integers(0, 2**32), read_size=st.integers(1, 3 * CHUNK_SIZE))
def test_roundtrip_through_the_reader(size: int, seed: int, read_size: int) -> None:
    data = _data(size, seed)
    out = io.BytesIO()
    age.encrypt(io.BytesIO(data), out, [RECIPIENT])
    reader = age.DecryptingReader(io.BytesIO(out.getvalue()), [IDENTITY])
    parts = []
    while piece := reader.read(read_size):
        parts.append(piece)
    assert b"".join(parts) == data


@settings(max_examples=10, deadline=None)
@given(size=sizes, seed=st.integers(0, 2**32))
def test_passphrase_roundtrip(size: int, seed: int) -> None:
    data = _data(size, seed)
    out = io.BytesIO()
    # A low work factor only here, through the test-facing parameter; the default stays 18.
    age.encrypt(io.BytesIO(data), out, [ScryptRecipient("pass", work_factor=2)])
    plain = io.BytesIO()
    age.decrypt(io.BytesIO(out.getvalue()), plain, [ScryptIdentity("pass")])
    assert plain.getvalue() == data


def _released_after_failure(blob: bytes, data: bytes) -> bytes:
    released = io.BytesIO()
    try:
        age.decrypt(io.BytesIO(blob), released, [IDENTITY])
    except age.AgeError:
        pass
    else:
        raise AssertionError("a damaged file decrypted without error")
    got = released.getvalue()
    assert data.startswith(got)
    assert len(got) % CHUNK_SIZE == 0
    return got


@SETTINGS
@given(size=sizes, seed=st.integers(0, 2**32), mask=st.integers(1, 255), draw=st.data())
def test_any_flipped_byte_fails_and_releases_only_authenticated_chunks(
    size: int, seed: int, mask: int, draw: st.DataObject
) -> None:
    data = _data(size, seed)
    blob = bytearray(_encrypt(data, CHUNK_SIZE))
    offset = draw.draw(st.integers(0, len(blob) - 1), label="offset")
    blob[offset] ^= mask
    got = _released_after_failure(bytes(blob), data)
    header_end = age.read_header(io.BytesIO(_encrypt(b"", 1))).size + 16
    # Nothing from the chunk holding the flipped byte (or anything after it) comes out.
    if offset >= header_end:
        chunk = (offset - header_end) // age.ENCRYPTED_CHUNK_SIZE
        assert len(got) <= chunk * CHUNK_SIZE
    else:
        assert got == b""


@SETTINGS
@given(size=sizes, seed=st.integers(0, 2**32), draw=st.data())
def test_any_truncation_fails(size: int, seed: int, draw: st.DataObject) -> None:
    data = _data(size, seed)
    blob = _encrypt(data, CHUNK_SIZE)
    cut = draw.draw(st.integers(0, len(blob) - 1), label="cut")
    got = _released_after_failure(blob[:cut], data)
    assert len(got) < max(len(data), 1)
