"""The tolerant reader on the inputs the issue names: a torn last line, invalid UTF-8, a 50 MB
line, an empty file, blank lines, non-object JSON, unknown record types."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrubber.transcript import jsonl
from scrubber.transcript.jsonl import (
    LineProblem,
    RawLine,
    iter_raw_lines,
    parse_line,
    read_lines,
)
from scrubber.transcript.records import Record


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    return path


def problems(path: Path) -> list[LineProblem | None]:
    return [line.problem for line in read_lines(path)]


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    assert list(read_lines(write(tmp_path, b""))) == []


def test_torn_last_line_is_kept_and_reported(tmp_path: Path) -> None:
    data = b'{"type":"user","uuid":"a"}\n{"type":"assistant","mess'
    lines = list(read_lines(write(tmp_path, data)))
    assert [line.problem for line in lines] == [None, LineProblem.TORN]
    assert lines[1].raw.data == b'{"type":"assistant","mess'
    assert not lines[1].raw.terminated
    assert lines[1].raw.offset == data.index(b"\n") + 1
    assert b"".join(line.raw.to_bytes() for line in lines) == data


def test_bad_line_in_the_middle_is_not_json_not_torn(tmp_path: Path) -> None:
    data = b'{"a":1}\n{"b":\n{"c":3}\n'
    assert problems(write(tmp_path, data)) == [None, LineProblem.NOT_JSON, None]


def test_complete_last_line_without_newline_is_a_record(tmp_path: Path) -> None:
    lines = list(read_lines(write(tmp_path, b'{"a":1}\n{"b":2}')))
    assert [line.problem for line in lines] == [None, None]
    assert lines[1].record == {"b": 2}
    assert not lines[1].raw.terminated


def test_invalid_utf8_is_reported_and_kept_verbatim(tmp_path: Path) -> None:
    bad = b'{"type":"user","text":"caf\xe9"}'
    lines = list(read_lines(write(tmp_path, bad + b"\n" + b'{"ok":true}\n')))
    assert [line.problem for line in lines] == [LineProblem.INVALID_UTF8, None]
    assert lines[0].raw.data == bad
    # Plain-text scanning can read it, and the text encodes back to the same bytes.
    assert lines[0].text().encode("utf-8", "surrogateescape") == bad
    assert "caf" in lines[0].text()


def test_blank_and_whitespace_lines(tmp_path: Path) -> None:
    data = b'\n \n\t\r\n{"a":1}\r\n\n'
    lines = list(read_lines(write(tmp_path, data)))
    assert [line.problem for line in lines] == [
        LineProblem.BLANK,
        LineProblem.BLANK,
        LineProblem.BLANK,
        None,  # a CRLF line: the \r is JSON whitespace, and it stays in the raw bytes
        LineProblem.BLANK,
    ]
    assert lines[3].raw.data.endswith(b"\r")
    assert b"".join(line.raw.to_bytes() for line in lines) == data


@pytest.mark.parametrize(
    ("text", "value"),
    [(b"[1,2]", [1, 2]), (b"42", 42), (b"null", None), (b'"s"', "s"), (b"true", True)],
)
def test_json_that_is_not_an_object(text: bytes, value: object) -> None:
    line = parse_line(RawLine(1, 0, text, True))
    assert line.problem is LineProblem.NOT_OBJECT
    assert line.value == value
    assert line.record is None


def test_unknown_record_type_is_an_ordinary_record(tmp_path: Path) -> None:
    data = b'{"type":"hologram-sync","uuid":"u1","payload":{"x":[1,2,{"y":null}]}}\n'
    (line,) = read_lines(write(tmp_path, data))
    assert line.problem is None
    record = Record.from_line(line)
    assert record is not None
    assert record.type == "hologram-sync"
    assert record.get("payload") == {"x": [1, 2, {"y": None}]}
    assert record.content_blocks == ()
    assert record.tool_uses == ()


def test_deep_nesting_does_not_raise() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    line = parse_line(RawLine(1, 0, deep, True))
    assert line.problem in (LineProblem.NOT_JSON, LineProblem.NOT_OBJECT)


def _huge_line_chunks(size: int) -> Iterator[bytes]:
    yield b'{"type":"user","uuid":"big","message":{"role":"user","content":"'
    chunk = b"0123456789abcdef" * 65536  # 1 MiB
    for _ in range(size // len(chunk)):
        yield chunk
    yield b'"}}\n'


_MEASURE = """
import resource, sys
from pathlib import Path
from scrubber.transcript.jsonl import read_lines
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
seen = []
for line in read_lines(Path(sys.argv[1])):
    record = line.record
    content = record and record.get("message", {}).get("content")
    seen.append((line.number, line.raw.offset, str(line.problem), len(content or "")))
    del line, record, content
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(repr((seen, (peak - base) * 1024)))
"""


def test_a_50_mb_line_is_read_whole_with_bounded_memory(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    path = tmp_path / "big.jsonl"
    first = b'{"type":"summary","summary":"before"}\n'
    with path.open("wb") as out:
        out.write(first)
        for chunk in _huge_line_chunks(size):
            out.write(chunk)
        out.write(b'{"type":"summary","summary":"after"}')
    # Measured in a fresh process: ru_maxrss is a high-water mark for the whole process.
    # (tracemalloc would count the address space orjson reserves but never touches.)
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, check=True, text=True
    )
    seen, grown = ast.literal_eval(result.stdout)
    last_offset = path.stat().st_size - len(b'{"type":"summary","summary":"after"}')
    assert seen == [
        (1, 0, "None", 0),
        (2, len(first), "None", size),
        (3, last_offset, "None", 0),
    ]
    # The raw line, its parsed string and a transient copy: a small multiple of the line,
    # never the file.
    assert grown < 4 * size


def test_iter_raw_lines_resumes_from_an_offset(tmp_path: Path) -> None:
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n'
    path = write(tmp_path, data)
    with path.open("rb") as stream:
        stream.seek(8)
        lines = list(iter_raw_lines(stream, offset=8, number=2))
    assert [(r.number, r.offset, r.data) for r in lines] == [
        (2, 8, b'{"b":2}'),
        (3, 16, b'{"c":3}'),
    ]


def test_big_integers_survive_the_fast_parser_exactly() -> None:
    text = b'{"n":123456789012345678901234567890,"m":-9223372036854775809,"k":7}'
    value = jsonl._fast_loads(text)
    assert type(value["n"]) is int
    assert value["n"] == 123456789012345678901234567890
    assert value["m"] == -9223372036854775809
    assert value == jsonl._stdlib_loads(text)


def test_stdlib_fallback_reads_what_orjson_refuses() -> None:
    for text in (b'{"s":"\\ud83d"}', b'{"x":NaN}', b'{"x":1e999}'):
        line = parse_line(RawLine(1, 0, text, True))
        assert line.problem is None, text


def test_parse_line_with_the_stdlib_loader_only(tmp_path: Path) -> None:
    data = b'{"a":1}\nnope\n\xff\n'
    lines = list(read_lines(write(tmp_path, data), loads=jsonl._stdlib_loads))
    assert [line.problem for line in lines] == [
        None,
        LineProblem.NOT_JSON,
        LineProblem.INVALID_UTF8,
    ]
