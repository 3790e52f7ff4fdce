"""The file-object API: EncryptingWriter / DecryptingReader, tarfile streaming, chunk layout."""

from __future__ import annotations

import gc
import io
import random
import tarfile

import pytest

from scrubber.archive import age
from scrubber.archive.age import CHUNK_SIZE, ENCRYPTED_CHUNK_SIZE, TAG_SIZE
from scrubber.archive.keys import generate_identity
from scrubber.errors import KeyMaterialError

IDENTITY = generate_identity()
RECIPIENT = IDENTITY.recipient()


def _encrypt(data: bytes) -> bytes:
    out = io.BytesIO()
    age.encrypt(io.BytesIO(data), out, [RECIPIENT])
    return out.getvalue()


def _decrypt(blob: bytes) -> bytes:
    out = io.BytesIO()
    age.decrypt(io.BytesIO(blob), out, [IDENTITY])
    return out.getvalue()


@pytest.mark.parametrize(
    ("size", "chunks"),
    [
        (0, 1),
        (1, 1),
        (CHUNK_SIZE - 1, 1),
        (CHUNK_SIZE, 1),
        (CHUNK_SIZE + 1, 2),
        (3 * CHUNK_SIZE, 3),
    ],
)
def test_chunk_layout_follows_the_spec(size: int, chunks: int) -> None:
    # A final chunk may be full; it is empty only when the whole payload is empty.
    blob = _encrypt(bytes(size))
    payload = len(blob) - age.read_header(io.BytesIO(blob)).size - 16
    assert payload == size + chunks * TAG_SIZE
    assert _decrypt(blob) == bytes(size)


def test_header_is_well_formed_and_listed_without_a_key() -> None:
    second = generate_identity().recipient()
    out = io.BytesIO()
    age.encrypt(io.BytesIO(b"x"), out, [RECIPIENT, second])
    blob = out.getvalue()
    header = age.read_header(io.BytesIO(blob))
    assert header.stanza_types == ("X25519", "X25519")
    text = blob[: header.size].decode("ascii")
    lines = text.split("\n")
    assert lines[0] == "age-encryption.org/v1"
    assert lines[-2].startswith("--- ") and len(lines[-2]) == 4 + 43
    # Fresh ephemeral share per stanza.
    shares = [line for line in lines if line.startswith("-> X25519 ")]
    assert len(set(shares)) == 2
    assert "=" not in text


def test_each_file_gets_a_fresh_file_key_and_nonce() -> None:
    a, b = _encrypt(b"same"), _encrypt(b"same")
    assert a != b
    ha, hb = age.read_header(io.BytesIO(a)).size, age.read_header(io.BytesIO(b)).size
    assert a[ha : ha + 16] != b[hb : hb + 16]


def test_long_stanza_bodies_wrap_at_64_columns() -> None:
    class BigRecipient:
        def wrap(self, file_key: bytes) -> list[age.Stanza]:
            return [age.Stanza(("example.com/big", "a"), bytes(48 * 2))]  # exactly 2 lines

    out = io.BytesIO()
    age.encrypt(io.BytesIO(b"x"), out, [BigRecipient(), RECIPIENT])
    header = age.read_header(io.BytesIO(out.getvalue()))
    assert header.stanzas[0].body == bytes(96)
    lines = out.getvalue()[: header.size].split(b"\n")
    assert [len(x) for x in lines[1:5]] == [len(b"-> example.com/big a"), 64, 64, 0]
    # Unknown stanza types are skipped on decrypt.
    assert _decrypt(out.getvalue()) == b"x"


@pytest.mark.parametrize("write_size", [1, 1000, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 3, 10**6])
def test_writer_output_does_not_depend_on_write_sizes(write_size: int) -> None:
    data = random.Random(write_size).randbytes(3 * CHUNK_SIZE + 5)
    out = io.BytesIO()
    with age.EncryptingWriter(out, [RECIPIENT]) as writer:
        for i in range(0, len(data), write_size):
            assert writer.write(memoryview(data)[i : i + write_size]) == min(
                write_size, len(data) - i
            )
    assert writer.closed
    assert not out.closed  # the writer never closes its destination
    assert _decrypt(out.getvalue()) == data


def test_writer_refuses_writes_after_close() -> None:
    writer = age.EncryptingWriter(io.BytesIO(), [RECIPIENT])
    writer.close()
    writer.close()  # idempotent
    with pytest.raises(ValueError):
        writer.write(b"x")


def test_writer_aborted_by_an_exception_leaves_a_truncated_file() -> None:
    out = io.BytesIO()
    with pytest.raises(RuntimeError), age.EncryptingWriter(out, [RECIPIENT]) as writer:
        writer.write(b"a" * 100)
        raise RuntimeError("disk full")
    released = io.BytesIO()
    with pytest.raises(age.AgePayloadError, match="truncated"):
        age.decrypt(io.BytesIO(out.getvalue()), released, [IDENTITY])
    assert released.getvalue() == b""


def test_writer_collected_without_close_is_not_finalized() -> None:
    out = io.BytesIO()
    writer = age.EncryptingWriter(out, [RECIPIENT])
    writer.write(b"partial")
    del writer
    gc.collect()
    with pytest.raises(age.AgePayloadError):
        _decrypt(out.getvalue())


def test_writer_needs_a_recipient() -> None:
    with pytest.raises(KeyMaterialError):
        age.EncryptingWriter(io.BytesIO(), [])


def test_reader_read_sizes_and_readinto() -> None:
    data = random.Random(1).randbytes(2 * CHUNK_SIZE + 77)
    blob = _encrypt(data)
    reader = age.DecryptingReader(io.BytesIO(blob), [IDENTITY])
    assert reader.readable()
    assert reader.read(0) == b""
    assert reader.read(10) == data[:10]
    buf = bytearray(CHUNK_SIZE)
    assert reader.readinto(buf) == CHUNK_SIZE
    assert bytes(buf) == data[10 : 10 + CHUNK_SIZE]
    assert reader.read() == data[10 + CHUNK_SIZE :]
    assert reader.read(5) == b""
    assert reader.readinto(buf) == 0
    with age.DecryptingReader(io.BytesIO(blob), [IDENTITY]) as again:
        assert io.BufferedReader(again).read() == data


def test_reader_hands_over_authenticated_bytes_then_raises_on_every_read() -> None:
    data = random.Random(2).randbytes(2 * CHUNK_SIZE + 10)
    blob = bytearray(_encrypt(data))
    blob[-3] ^= 1  # damage the final chunk
    reader = age.DecryptingReader(io.BytesIO(bytes(blob)), [IDENTITY])
    first = reader.read(5 * CHUNK_SIZE)
    assert first == data[: 2 * CHUNK_SIZE]  # both full chunks were authenticated
    for _ in range(2):
        with pytest.raises(age.AgePayloadError, match="chunk 2"):
            reader.read(1)


def test_reader_wrong_key_fails_on_construction() -> None:
    with pytest.raises(age.NoIdentityMatchedError):
        age.DecryptingReader(io.BytesIO(_encrypt(b"x")), [generate_identity()])


def test_tarfile_streams_through_both_ends() -> None:
    members = {f"projects/p/{i}.jsonl": random.Random(i).randbytes(i * 40_000) for i in range(4)}
    out = io.BytesIO()
    with (
        age.EncryptingWriter(out, [RECIPIENT]) as writer,
        tarfile.open(fileobj=writer, mode="w|gz") as tar,
    ):
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    got: dict[str, bytes] = {}
    with (
        age.DecryptingReader(io.BytesIO(out.getvalue()), [IDENTITY]) as reader,
        tarfile.open(fileobj=reader, mode="r|gz") as tar,
    ):
        for member in tar:
            handle = tar.extractfile(member)
            assert handle is not None
            got[member.name] = handle.read()
    assert got == members


def test_several_recipients_each_decrypt() -> None:
    others = [generate_identity() for _ in range(3)]
    out = io.BytesIO()
    age.encrypt(io.BytesIO(b"shared"), out, [o.recipient() for o in others])
    for identity in others:
        plain = io.BytesIO()
        age.decrypt(io.BytesIO(out.getvalue()), plain, [generate_identity(), identity])
        assert plain.getvalue() == b"shared"


def test_base64_is_strict() -> None:
    assert age.decode_base64("AA") == b"\x00"
    for bad in ["AB", "AA==", "A", "A A", "AA\n", "Zm9v!", "é"]:
        with pytest.raises(ValueError):
            age.decode_base64(bad)
    assert age.encode_base64(b"\x00") == "AA"


def test_header_line_length_is_bounded() -> None:
    blob = b"age-encryption.org/v1\n-> " + b"a" * (age.MAX_HEADER_LINE + 10) + b"\n"
    with pytest.raises(age.AgeHeaderError, match="too long"):
        age.read_header(io.BytesIO(blob))


def test_armored_input_gets_a_hint() -> None:
    with pytest.raises(age.AgeHeaderError) as caught:
        age.read_header(io.BytesIO(b"-----BEGIN AGE ENCRYPTED FILE-----\n"))
    assert caught.value.hint and "armor" in caught.value.hint


def test_encrypted_size_is_exact() -> None:
    blob = _encrypt(bytes(5 * CHUNK_SIZE + 1))
    header = age.read_header(io.BytesIO(blob)).size
    assert len(blob) == header + 16 + 5 * ENCRYPTED_CHUNK_SIZE + 1 + TAG_SIZE
