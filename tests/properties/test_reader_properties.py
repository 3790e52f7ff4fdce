"""Invariant 1 and the reader's promises, for any input.

- Reading then writing any byte file (newline runs, invalid UTF-8, no final newline) gives the
  same bytes, line by line, through `RawLine.to_bytes`.
- Line numbers count from 1 without gaps; each line starts where the previous one ended; the
  last one ends at the end of the file; resuming at any line's offset yields the same tail.
- `parse_line` never raises and classifies consistently.
- The fast (orjson) and stdlib parsers give strictly equal values (1 is not 1.0).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrubber.transcript import jsonl
from scrubber.transcript.jsonl import LineProblem, RawLine, iter_raw_lines, parse_line, read_lines
from tests.strategies import byte_files, json_line, jsonl_files, strict_equal

any_file = st.one_of(byte_files, jsonl_files())
# Building the text strategies' character tables makes the very first draw slow (about a second).
files_settings = settings(suppress_health_check=[HealthCheck.too_slow])


def _lines(data: bytes) -> list[RawLine]:
    return list(iter_raw_lines(io.BytesIO(data)))


@files_settings
@given(any_file)
def test_reading_then_writing_is_byte_identical(data: bytes) -> None:
    assert b"".join(raw.to_bytes() for raw in _lines(data)) == data


@files_settings
@given(any_file)
def test_numbers_and_offsets_are_consistent(data: bytes) -> None:
    lines = _lines(data)
    expected_offset = 0
    for index, raw in enumerate(lines):
        assert raw.number == index + 1
        assert raw.offset == expected_offset
        assert b"\n" not in raw.data
        assert data[raw.offset : raw.end_offset] == raw.to_bytes()
        assert raw.terminated or index == len(lines) - 1
        expected_offset = raw.end_offset
    assert expected_offset == len(data)
    assert len(lines) == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


@files_settings
@given(any_file, st.data())
def test_resuming_at_a_line_yields_the_same_tail(data: bytes, pick: st.DataObject) -> None:
    lines = _lines(data)
    if not lines:
        return
    start = pick.draw(st.integers(min_value=0, max_value=len(lines) - 1))
    stream = io.BytesIO(data)
    stream.seek(lines[start].offset)
    resumed = list(iter_raw_lines(stream, offset=lines[start].offset, number=lines[start].number))
    assert resumed == lines[start:]


@given(st.binary(max_size=200), st.booleans())
def test_parse_line_never_raises_on_bytes(data: bytes, terminated: bool) -> None:
    raw = RawLine(1, 0, data.replace(b"\n", b""), terminated)
    for loads in (jsonl._fast_loads, jsonl._stdlib_loads):
        line = parse_line(raw, loads)
        _check_classification(line)


@files_settings
@given(jsonl_files())
def test_parse_line_never_raises_on_files(data: bytes) -> None:
    for raw in _lines(data):
        _check_classification(parse_line(raw))


def _check_classification(line: jsonl.Line) -> None:
    data = line.raw.data
    if line.problem is None:
        assert isinstance(line.value, dict)
        assert line.record is line.value
    else:
        assert line.record is None
    if line.problem is LineProblem.BLANK:
        assert not data.strip()
    if not data.strip():
        assert line.problem is LineProblem.BLANK
    if line.problem is LineProblem.INVALID_UTF8:
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")
    if line.problem is LineProblem.TORN:
        assert not line.raw.terminated
    if line.problem is LineProblem.NOT_OBJECT:
        assert not isinstance(line.value, dict)
    # Plain-text scanning sees every byte: the text encodes back to the same bytes.
    assert line.text().encode("utf-8", errors="surrogateescape") == data


@settings(max_examples=200)
@given(json_line())
def test_fast_and_stdlib_parsers_agree(data: bytes) -> None:
    assert strict_equal(jsonl._fast_loads(data), jsonl._stdlib_loads(data))


@files_settings
@given(st.one_of(json_line(), jsonl_files().map(lambda d: d.split(b"\n")[0])))
def test_parse_line_agrees_across_parsers(data: bytes) -> None:
    raw = RawLine(1, 0, data.replace(b"\n", b""), True)
    fast = parse_line(raw, jsonl._fast_loads)
    slow = parse_line(raw, jsonl._stdlib_loads)
    assert fast.problem == slow.problem
    assert strict_equal(fast.value, slow.value)


@pytest.mark.parametrize(
    "text",
    [
        b"18446744073709551615",  # the largest integer orjson keeps as an int
        b"18446744073709551616",  # one more: orjson alone would give 1.8446744073709552e19
        b"-9223372036854775809",
        b'{"n":123456789012345678901234567890,"s":"x"}',
        b'["1234567890123456789012", 1e400, NaN, -Infinity]',
        b'"\\ud800"',  # a lone surrogate escape: orjson refuses it, the stdlib reads it
    ],
)
def test_fast_parser_matches_stdlib_where_orjson_differs(text: bytes) -> None:
    assert strict_equal(jsonl._fast_loads(text), jsonl._stdlib_loads(text))


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(any_file)
def test_file_round_trip_through_read_lines(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    assert b"".join(line.raw.to_bytes() for line in read_lines(path)) == data
