"""Reading a transcript's metadata cheaply: timestamps, cwd, titles and tags as a full parse
finds them, whatever the block sizes, with torn and huge lines and titles quoted in tool output."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrubber.transcript import metadata
from scrubber.transcript.metadata import TranscriptMetadata, read_metadata
from scrubber.transcript.records import read_records
from tests.strategies import jsonl_files


def write_lines(path: Path, *records: object, tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def test_metadata_last_timestamp_skips_records_without_one(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "s.jsonl",
        {"type": "file-history-snapshot", "snapshot": {"timestamp": "2020-01-01T00:00:00Z"}},
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/a", "sessionId": "s"},
        {"type": "assistant", "timestamp": "2026-01-02T00:00:00Z"},
        {"type": "summary", "summary": "Sum", "leafUuid": "x"},
        {"type": "file-history-snapshot", "snapshot": {"timestamp": "2030-01-01T00:00:00Z"}},
        tail=b'{"type":"assistant","timestamp":"2031-01-01T0',  # torn
    )
    meta = read_metadata(path)
    assert meta.first_timestamp == datetime(2026, 1, 1, tzinfo=UTC)
    assert meta.last_timestamp == datetime(2026, 1, 2, tzinfo=UTC)
    assert meta.cwd == "/a" and meta.session_id == "s"
    assert meta.title == "Sum"


def test_title_quoted_in_tool_output_is_not_a_title(tmp_path: Path) -> None:
    quoted = json.dumps({"type": "custom-title", "customTitle": "fake"})
    path = write_lines(
        tmp_path / "s.jsonl",
        {"type": "user", "message": {"role": "user", "content": quoted}},
        {"type": "user", "toolUseResult": {"type": "custom-title", "customTitle": "nested"}},
        {"type": "custom-title", "customTitle": "first"},
        {"type": "custom-title", "customTitle": ""},  # empty: does not clear the name
        {"type": "custom-title", "customTitle": "second"},
        {"type": "tag", "tag": "a"},
        {"type": "tag", "tag": "b"},
        {"type": "tag", "tag": "a"},
        {"type": "ai-title", "aiTitle": "generated"},
    )
    meta = read_metadata(path)
    assert meta.custom_title == "second"
    assert meta.title == "second"
    assert meta.tags == ("a", "b")
    assert meta.ai_title == "generated"


def test_metadata_with_a_huge_line(tmp_path: Path) -> None:
    big = "x" * (8 * 1024 * 1024)
    path = write_lines(
        tmp_path / "s.jsonl",
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/a"},
        {"type": "user", "timestamp": "2026-01-03T00:00:00Z", "message": {"content": big}},
        {"type": "custom-title", "customTitle": "late"},
    )
    meta = read_metadata(path)
    assert meta.last_timestamp == datetime(2026, 1, 3, tzinfo=UTC)
    assert meta.custom_title == "late"


def reference_metadata(path: Path) -> TranscriptMetadata:
    """What read_metadata must find, by parsing every line."""
    records = list(read_records(path))

    def last(values: list[str | None]) -> str | None:
        kept = [v for v in values if v]
        return kept[-1] if kept else None

    stamps = [r.timestamp for r in records if r.timestamp is not None]
    tags: dict[str, None] = {}
    for r in records:
        tags.update(dict.fromkeys(r.tags))
    return TranscriptMetadata(
        session_id=next((r.session_id for r in records if r.session_id), None),
        cwd=next((r.cwd for r in records if r.cwd), None),
        custom_title=last([r.custom_title for r in records]),
        summary=last([r.summary for r in records]),
        ai_title=last([r.ai_title for r in records]),
        tags=tuple(tags),
        first_timestamp=stamps[0] if stamps else None,
        last_timestamp=stamps[-1] if stamps else None,
    )


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(jsonl_files(), st.sampled_from([(5, 3), (64, 17), (1 << 22, 1 << 16)]))
def test_metadata_matches_a_full_parse_at_any_block_size(
    data: bytes, blocks: tuple[int, int]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data)
        expected = reference_metadata(path)
        with (
            patch.object(metadata, "_BLOCK", blocks[0]),
            patch.object(metadata, "_TAIL_BLOCK", blocks[1]),
        ):
            assert read_metadata(path) == expected
            assert metadata.read_title(path) == expected.title  # what an audit shows


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"x", b"\n\n", b'{"a":1}\n\nlong ' + b"x" * 50 + b"\n\xff\nlast-no-newline\n"],
)
def test_backward_lines_cover_the_file_exactly(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    expected = data.split(b"\n")[::-1]
    assert list(metadata._lines_from_the_end(data)) == expected
    for step in (1, 3, 8, 1 << 16):
        with patch.object(metadata, "_TAIL_BLOCK", step), path.open("rb") as stream:
            lines = list(metadata._lines_backwards(stream, len(data)))
        assert lines == (expected if data else [])


class _CountingReads:
    """A real file whose forward reads (those before the backward scan seeks) are counted."""

    def __init__(self, path: Path) -> None:
        self._stream = path.open("rb")
        self.asked: list[int] = []
        self._seeked = False

    def read(self, size: int = -1) -> bytes:
        if not self._seeked:
            self.asked.append(size)
        return self._stream.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        self._seeked = True
        return self._stream.seek(offset, whence)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)

    def __enter__(self) -> _CountingReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()


@pytest.mark.parametrize("size_kb", [1, 5000])
def test_metadata_reads_only_what_the_file_holds(tmp_path: Path, size_kb: int) -> None:
    # A warm audit reads thousands of tiny transcripts: a 4 MiB read allocates 4 MiB whatever
    # the file holds, and a last read that finds the end costs another.
    filler = "y" * 1000
    records = [{"type": "user", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/a",
                "sessionId": "s"}]  # fmt: skip
    records += [{"type": "user", "message": {"content": filler}} for _ in range(size_kb)]
    records.append({"type": "custom-title", "customTitle": "t"})
    path = write_lines(tmp_path / "s.jsonl", *records)
    size = path.stat().st_size
    counted = _CountingReads(path)
    with patch.object(metadata, "open_regular", lambda *_, **__: counted):
        meta = read_metadata(path)
    assert meta.custom_title == "t" and meta.cwd == "/a"
    assert sum(counted.asked) == size, counted.asked
    assert len(counted.asked) == -(-size // metadata._BLOCK), counted.asked
