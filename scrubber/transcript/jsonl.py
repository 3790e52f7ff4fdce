"""Tolerant streaming JSONL reading.

Claude Code appends one JSON object per line and never rewrites. A crash can leave a torn last
line; a line can be tens of MB; a future release can add record types we have never seen. So the
reader never fails on content: it yields every line with its number and byte offset, keeps the
raw bytes verbatim (writing them back reproduces the file byte for byte), and says why a line is
not a JSON object instead of dropping it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from scrubber.paths import open_regular

JsonLoads = Callable[[bytes], Any]

# The buffer for reading and writing transcripts: lines average a few KB and run to MBs, and
# with the default 8 KB buffer, reading the lines of a file took twice as long.
IO_BUFFER = 1 << 20


def _stdlib_loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


# orjson turns an integer outside the 64-bit range into a float (10**20 -> 1e+20), where the
# stdlib keeps it exact; a rewrite must not change a number. Such an integer needs a run of at
# least 19 digits (-2**63 - 1 has 19, 2**64 has 20), so a line with no such run is safe for
# orjson. Mapping every digit to "0" and searching for 19 of them runs at about 700 MB/s, far
# cheaper than a regex (about 55 MB/s here); a long digit run inside a string only costs that
# line a stdlib parse.
_DIGITS_TO_ZERO = bytes(0x30 if 0x30 <= i <= 0x39 else 0x78 for i in range(256))
_LONG_DIGIT_RUN = b"0" * 19

try:  # orjson parses several times faster; the result is the same as the stdlib's.
    import orjson as _orjson

    def _fast_loads_for_strings(data: bytes) -> Any:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            # orjson refuses a few things the stdlib accepts and Claude Code can write (a lone
            # surrogate in a \u escape, NaN, 1e400): give the stdlib the last word.
            return _stdlib_loads(data)

    def _fast_loads(data: bytes) -> Any:
        if _LONG_DIGIT_RUN in data.translate(_DIGITS_TO_ZERO):
            return _stdlib_loads(data)
        return _fast_loads_for_strings(data)

    FAST_JSON_AVAILABLE = True
except ImportError:  # pragma: no cover - exercised by the fallback test through `loads_with`
    _fast_loads = _fast_loads_for_strings = _stdlib_loads
    FAST_JSON_AVAILABLE = False

json_loads: JsonLoads = _fast_loads
# The same, but an integer beyond 64 bits may come back as a float: for readers that look only
# at strings (the scanner), which need not pay for the check of every line's digits.
json_loads_for_strings: JsonLoads = _fast_loads_for_strings


class LineProblem(StrEnum):
    """Why a line is not a JSON object we can read as a record."""

    BLANK = "blank"
    INVALID_UTF8 = "invalid-utf8"
    NOT_JSON = "not-json"
    TORN = "torn-last-line"  # not JSON and the file ends without a newline: a crash mid-write
    NOT_OBJECT = "not-an-object"


@dataclass(frozen=True, slots=True)
class RawLine:
    """One physical line: bytes without the newline, 1-based number, byte offset of its start."""

    number: int
    offset: int
    data: bytes
    terminated: bool  # False only for a last line with no trailing newline

    @property
    def end_offset(self) -> int:
        return self.offset + len(self.data) + (1 if self.terminated else 0)

    def to_bytes(self) -> bytes:
        return self.data + b"\n" if self.terminated else self.data


@dataclass(frozen=True, slots=True)
class Line:
    """A raw line with its parsed value, or the reason it has none."""

    raw: RawLine
    value: Any  # the decoded JSON value when problem is None or NOT_OBJECT, else None
    problem: LineProblem | None

    @property
    def record(self) -> dict[str, Any] | None:
        return self.value if self.problem is None else None

    @property
    def number(self) -> int:
        return self.raw.number

    def text(self) -> str:
        """The line as text for plain-text scanning; undecodable bytes map to lone surrogates
        (surrogateescape) so that encoding the text back gives the same bytes."""
        return self.raw.data.decode("utf-8", errors="surrogateescape")


def iter_raw_lines(stream: IO[bytes], *, offset: int = 0, number: int = 1) -> Iterator[RawLine]:
    """Yield every line of a binary stream, from its current position.

    `offset` and `number` name where that position is in the file, so a caller can resume a
    scan in the middle. Memory is bounded by the longest line.
    """
    readline = stream.readline
    while True:
        data = readline()
        if not data:
            return
        terminated = data.endswith(b"\n")
        if terminated:
            data = data[:-1]
        yield RawLine(number=number, offset=offset, data=data, terminated=terminated)
        offset += len(data) + (1 if terminated else 0)
        number += 1


def parse_line(raw: RawLine, loads: JsonLoads | None = None) -> Line:
    """Parse one raw line; never raises."""
    data = raw.data
    if not data or data.isspace():  # isspace, not strip: no copy of a 50 MB line
        return Line(raw, None, LineProblem.BLANK)
    try:
        value = (loads or json_loads)(data)
    except UnicodeDecodeError:
        return Line(raw, None, LineProblem.INVALID_UTF8)
    except ValueError:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return Line(raw, None, LineProblem.INVALID_UTF8)
        return Line(raw, None, LineProblem.NOT_JSON if raw.terminated else LineProblem.TORN)
    except RecursionError:
        return Line(raw, None, LineProblem.NOT_JSON)
    if not isinstance(value, dict):
        return Line(raw, value, LineProblem.NOT_OBJECT)
    return Line(raw, value, None)


def read_lines(path: Path, *, loads: JsonLoads | None = None) -> Iterator[Line]:
    """Stream the parsed lines of a JSONL file."""
    with open_regular(path) as stream:  # a FIFO is refused, never waited on
        for raw in iter_raw_lines(stream):
            yield parse_line(raw, loads)
