"""What a transcript says about itself, read cheaply: its session id, cwd, titles, tags and
first and last timestamps.

This must be cheap on a 1 GB transcript: lines are streamed, and a line is parsed only when a
byte check says it can carry what we look for (`"custom-title"`, `"cwd"`, …). Inside a JSON
string a quote is escaped, so a marker such as `"tag"` never matches text quoted in a tool
output; it can match a nested key, which costs one parse and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from scrubber.paths import open_regular
from scrubber.transcript.jsonl import json_loads
from scrubber.transcript.records import Record, parse_timestamp

# `custom-title` and `ai-title` share `-title"`: one search finds both.
_TITLE_MARKERS = (b'-title"', b'"tag"', b'"summary"')
# What titles a session, without tags: a titling record's line holds one of these.
TITLE_ONLY_MARKERS = (b'-title"', b'"summary"')
_TIMESTAMP_MARKER = b'"timestamp"'
_CWD_MARKER = b'"cwd"'
_SESSION_ID_MARKER = b'"sessionId"'
_BLOCK = 1 << 22  # forward scan: 4 MiB reads, marker searches over whole blocks
_TAIL_BLOCK = 1 << 16  # backward scan for the last timestamp
_TAIL_MAX_LINES = 4096  # give up on a last timestamp after this many lines from the end


@dataclass(frozen=True, slots=True)
class TranscriptMetadata:
    """What a transcript says about itself, read cheaply."""

    session_id: str | None = None  # the first `sessionId` inside the file
    cwd: str | None = None
    custom_title: str | None = None  # the last non-empty `custom-title`
    summary: str | None = None  # the last `summary`
    ai_title: str | None = None  # the last `ai-title`
    tags: tuple[str, ...] = ()  # in order of first appearance
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None

    @property
    def title(self) -> str | None:
        return self.custom_title or self.summary or self.ai_title

    def session_fields(self) -> dict[str, Any]:
        """The fields a `SessionInfo` takes from its transcript's metadata, by their names."""
        return {
            "cwd": self.cwd,
            "title": self.title,
            "custom_title": self.custom_title,
            "tags": self.tags,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
        }


def title_of(record: Record, line: bytes) -> tuple[str, str] | None:
    """(kind, text) of a record that titles its session (`custom-title`, `summary` or
    `ai-title`), when its text is not empty and its `line` holds a title marker (the markers
    are what finds such lines: a type spelled with an escape is no title, wherever it is).
    The type is looked at first: a scan asks this of every line it parses."""
    kind = record.type
    if kind == "custom-title":
        text = record.custom_title
    elif kind == "summary":
        text = record.summary
    elif kind == "ai-title":
        text = record.ai_title
    else:
        return None
    if not text or not any(marker in line for marker in TITLE_ONLY_MARKERS):
        return None
    return kind, text


@dataclass(slots=True)
class Titles:
    """A session's titles as its records give them, in file order: the last of each kind
    wins. `read_metadata` takes them so; so does an audit that reads every line anyway."""

    custom_title: str | None = None
    summary: str | None = None
    ai_title: str | None = None

    def add(self, kind: str, text: str) -> None:
        if kind == "custom-title":
            self.custom_title = text
        elif kind == "summary":
            self.summary = text
        elif kind == "ai-title":
            self.ai_title = text

    @property
    def title(self) -> str | None:
        return self.custom_title or self.summary or self.ai_title


def _top_level(data: bytes) -> dict[str, Any] | None:
    try:
        value = json_loads(data)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _line_blocks(stream: BinaryIO, size: int) -> Iterator[bytes]:
    """The stream's first `size` bytes (its size when opened) in blocks of whole lines: each
    block ends at a newline (or at the end), so no line is split. A line longer than a block
    is gathered whole. Each read asks for no more than is left: a read of 4 MiB allocates 4 MiB
    whatever the file holds, and a last read that finds nothing costs another."""
    pending: list[bytes] = []
    left = size
    while True:
        block = stream.read(min(_BLOCK, left)) if left > 0 else b""
        left -= len(block)
        if not block:
            if pending:
                yield b"".join(pending)
            return
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            pending.append(block)
            continue
        if pending:
            pending.append(block[:cut])
            yield b"".join(pending)
        else:
            yield block if cut == len(block) else block[:cut]
        pending = [block[cut:]] if cut < len(block) else []


def _lines_with(block: bytes, markers: tuple[bytes, ...], start: int = 0) -> list[bytes]:
    """The lines of `block` (from `start`, a line start) that hold any of `markers`, in file
    order, each once."""
    found: dict[int, int] = {}
    for marker in markers:
        at = block.find(marker, start)
        while at != -1:
            begin = block.rfind(b"\n", 0, at) + 1
            end = block.find(b"\n", at)
            end = len(block) if end == -1 else end
            found[begin] = end
            at = block.find(marker, end)
    return [block[begin : found[begin]] for begin in sorted(found)]


def _lines_backwards(stream: BinaryIO, size: int) -> Iterator[bytes]:
    """The file's lines from the last to the first (a torn last line included)."""
    pending: list[bytes] = []  # pieces of the current line, last piece first
    position = size
    while position > 0:
        step = min(_TAIL_BLOCK, position)
        position -= step
        stream.seek(position)
        parts = stream.read(step).split(b"\n")
        if len(parts) == 1:
            pending.append(parts[0])
            continue
        pending.append(parts[-1])
        yield b"".join(reversed(pending))
        yield from reversed(parts[1:-1])
        pending = [parts[0]]
    if pending:
        yield b"".join(reversed(pending))


def _lines_from_the_end(block: bytes) -> Iterator[bytes]:
    end = len(block)
    while end >= 0:
        start = block.rfind(b"\n", 0, end) + 1
        yield block[start:end]
        end = start - 1


def _last_timestamp_in(lines_from_the_end: Iterable[bytes]) -> datetime | None:
    for count, line in enumerate(lines_from_the_end):
        if count >= _TAIL_MAX_LINES:
            return None
        if _TIMESTAMP_MARKER in line:
            value = _top_level(line)
            stamp = None if value is None else parse_timestamp(value.get("timestamp"))
            if stamp is not None:
                return stamp
    return None


def read_title(path: Path) -> str | None:
    """`read_metadata(path).title`, reading only what can title it: an audit scans every
    transcript and shows only its title, and each marker searched for costs a pass over the
    file (tags are not looked for, nor is the last timestamp). Raises OSError as it does."""
    return read_metadata(path, title_only=True).title


def read_metadata(path: Path, *, title_only: bool = False) -> TranscriptMetadata:
    """Read a transcript's id, cwd, titles, tags and first/last timestamps, cheaply.

    The file is scanned forward in 4 MiB blocks with byte searches: only lines that hold a
    title, tag or summary marker are parsed (plus the first lines until cwd, sessionId and a
    timestamp are known). The last timestamp comes from reading the file backwards from its
    end. Raises OSError when the file cannot be read. `title_only`: only the titles are right
    (see `read_title`).
    """
    session_id: str | None = None
    cwd: str | None = None
    titles = Titles()
    tags: dict[str, None] = {}
    first: datetime | None = None

    def take(line: bytes) -> None:
        nonlocal first, cwd, session_id
        value = _top_level(line)
        if value is None:
            return
        record = Record(value)
        first = first or record.timestamp
        cwd = cwd or record.cwd or None  # an empty string is no cwd
        session_id = session_id or record.session_id or None
        titled = title_of(record, line)
        if titled is not None:
            titles.add(*titled)
        elif record.type == "tag":
            tags.update(dict.fromkeys(record.tags))

    with open_regular(path) as stream:  # swapped for a FIFO since the listing: never block
        whole: bytes | None = None
        size = os.fstat(stream.fileno()).st_size
        for count, block in enumerate(_line_blocks(stream, size)):
            whole = block if count == 0 else None
            position = 0
            # The head, line by line, until cwd, sessionId and a first timestamp are known
            # (usually the first record or two).
            while position < len(block) and (first is None or cwd is None or session_id is None):
                end = block.find(b"\n", position)
                end = len(block) if end == -1 else end
                line = block[position:end]
                position = end + 1
                if (
                    (first is None and _TIMESTAMP_MARKER in line)
                    or (cwd is None and _CWD_MARKER in line)
                    or (session_id is None and _SESSION_ID_MARKER in line)
                    or any(marker in line for marker in _TITLE_MARKERS)
                ):
                    take(line)
            markers = TITLE_ONLY_MARKERS if title_only else _TITLE_MARKERS
            for line in _lines_with(block, markers, position):
                take(line)
        if first is None or title_only:
            last = None
        elif whole is not None:  # a small file, already in memory
            last = _last_timestamp_in(_lines_from_the_end(whole))
        else:
            last = _last_timestamp_in(_lines_backwards(stream, stream.tell()))

    return TranscriptMetadata(
        session_id=session_id,
        cwd=cwd,
        custom_title=titles.custom_title,
        summary=titles.summary,
        ai_title=titles.ai_title,
        tags=tuple(tags),
        first_timestamp=first,
        last_timestamp=last,
    )
