"""The tar reader of our own (issue 11): everything tarfile writes for a bundle reads back;
everything else is refused with a BundleError before it is read."""

from __future__ import annotations

import io
import tarfile

import pytest

from scrubber.archive.bundle import BundleError
from scrubber.archive.tar_reader import MAX_PAX_HEADER, TarReader


def _tar(*members: tuple[tarfile.TarInfo, bytes], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return out.getvalue()


def _file(name: str, data: bytes, mtime: int = 1_700_000_000) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o640
    info.mtime = mtime
    return info, data


def _dir(name: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info, b""


def _record(key: str, value: str) -> bytes:
    payload = f" {key}={value}\n"
    length = len(payload) + 2
    return f"{length}{payload}".encode()


def _all(data: bytes) -> list[tuple[str, bool, int, bytes]]:
    reader = TarReader(io.BytesIO(data))
    found = []
    while (member := reader.next()) is not None:
        body = b""
        while block := reader.read(7):  # small reads: never past the member
            body += block
        found.append((member.name, member.is_dir, member.mode, body))
    return found


def test_what_tarfile_writes_for_a_bundle_reads_back() -> None:
    long_name = "file-history/" + "d" * 150 + "/" + "f" * 120 + "@v1"  # a pax path record
    data = _tar(
        _dir("projects/p/s"),
        _file("projects/p/s.jsonl", b'{"a": 1}\n' * 100),
        _file(long_name, b"long"),
        _file("todos/s-\u00e9t\u00e9.json", b"[]"),  # not ASCII: a pax path record too
        _file("empty", b""),
    )
    assert _all(data) == [
        ("projects/p/s", True, 0o644, b""),
        ("projects/p/s.jsonl", False, 0o640, b'{"a": 1}\n' * 100),
        (long_name, False, 0o640, b"long"),
        ("todos/s-\u00e9t\u00e9.json", False, 0o640, b"[]"),
        ("empty", False, 0o640, b""),
    ]


def test_ustar_prefix_and_a_partly_read_member_is_skipped() -> None:
    name = "a" * 90 + "/" + "b" * 90  # ustar splits it into prefix and name
    data = _tar(_file(name, b"x" * 1000), _file("next", b"y"), fmt=tarfile.USTAR_FORMAT)
    reader = TarReader(io.BytesIO(data))
    first = reader.next()
    assert first is not None and first.name == name and first.size == 1000
    assert reader.read(10) == b"x" * 10
    second = reader.next()
    assert second is not None and second.name == "next" and reader.read(99) == b"y"
    assert reader.next() is None and reader.next() is None


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        (tarfile.SYMTYPE, "a symlink"),
        (tarfile.LNKTYPE, "a hard link"),
        (tarfile.CHRTYPE, "a device"),
        (tarfile.BLKTYPE, "a device"),
        (tarfile.FIFOTYPE, "a FIFO"),
        (tarfile.CONTTYPE, "a contiguous file"),
        (tarfile.GNUTYPE_SPARSE, "sparse"),
    ],
)
def test_other_member_types_are_refused(kind: bytes, what: str) -> None:
    info = tarfile.TarInfo("x")
    info.type = kind
    with pytest.raises(BundleError, match=what):
        _all(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict") + bytes(1024))


def test_gnu_long_names_and_global_headers_are_refused_before_their_data() -> None:
    for kind, what in ((tarfile.GNUTYPE_LONGNAME, "GNU long-name"), (tarfile.XGLTYPE, "global")):
        info = tarfile.TarInfo("././@LongLink")
        info.type = kind
        info.size = 8**11 - 1  # never read: there is nothing behind it
        with pytest.raises(BundleError, match=what):
            _all(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict"))


def test_pax_headers_are_capped_and_checked() -> None:
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = tarfile.XHDTYPE
    info.size = MAX_PAX_HEADER + 1
    with pytest.raises(BundleError, match="pax header of"):
        _all(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict"))
    for body, what in (
        (b"99 path=x\n", "malformed"),
        (b"nonsense\n", "no length"),
        (_record("linkpath", "/etc"), "pax linkpath"),
        (_record("GNU.sparse.map", "0,1"), "pax GNU"),
    ):
        info.size = len(body)
        block = info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
        padded = block + body + bytes(-len(body) % 512)
        member = _file("x", b"")[0].tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
        with pytest.raises(BundleError, match=what):
            _all(padded + member + bytes(1024))


def test_damage_and_truncation_are_bundle_errors() -> None:
    data = bytearray(_tar(_file("a", b"hello")))
    data[0] ^= 0xFF  # the name: the checksum no longer matches
    with pytest.raises(BundleError, match="checksum"):
        _all(bytes(data))
    whole = _tar(_file("a", b"x" * 2000))
    with pytest.raises(BundleError, match="ends in the middle"):
        _all(whole[:1024])
    with pytest.raises(BundleError, match="ends in the middle"):
        _all(b"")
    info = tarfile.TarInfo("a")
    info.size = 1
    base256 = bytearray(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "strict"))
    base256[124:136] = b"\x80" + bytes(10) + b"\x01"
    blanked = base256[:148] + b" " * 8 + base256[156:]
    base256[148:156] = f"{sum(blanked):06o}\x00 ".encode()
    with pytest.raises(BundleError, match="base-256"):
        _all(bytes(base256) + bytes(1536))
