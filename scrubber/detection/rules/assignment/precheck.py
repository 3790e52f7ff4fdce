"""The raw-line precheck (`SensitiveAssignmentRule.may_match_raw`): which names near the
gate matches of a raw JSONL line are secret-like, and the line of text around each, cut out of
the raw line (its boundaries found on the raw bytes) and decoded on its own."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator

from scrubber.detection.rules.assignment.candidates import (
    CANDIDATE_SPAN,
    GATE_REACH_RAW,
    RAW_CANDIDATE,
)
from scrubber.detection.rules.assignment.names import MAX_NAME, may_name_secret

_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# What a raw gate match's judgement reads before its operator's farthest place: where a candidate
# may start (`CANDIDATE_SPAN`), and a name's walk back from there (`MAX_NAME` + 16), plus one.
_WINDOW_BEFORE_REACH = CANDIDATE_SPAN + MAX_NAME + 17

_MAX_RAW_LINE = 16384


def _escaped(data: bytes, at: int) -> bool:
    """Whether the byte at `at` follows an odd run of backslashes (is escaped)."""
    run = 0
    while at - run - 1 >= 0 and data[at - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _line_boundary(data: bytes, at: int, step: int) -> int:
    """Where the line of text around `at` begins (step -1) or ends (step 1) on a raw JSONL
    line: just inside the string's quote, or at a `\\n` escape; -1 if not found nearby. Not
    at a `\\r`: a quoted value may hold one (`'…\\r'`, a line of a CRLF file) and the rule
    reads on to its closing quote."""
    # A line of text is short, a line of tool output can be megabytes long: look close first.
    for reach in _BOUNDARY_REACHES:
        found = _boundary_within(data, at, step, reach)
        if found is not None:
            return found
    return -1


_BOUNDARY_REACHES = (256, 2048, _MAX_RAW_LINE)


def _boundary_within(data: bytes, at: int, step: int, reach: int) -> int | None:
    """`_line_boundary` at most `reach` bytes away; -1 when the data ends first with none, None
    when there is none within `reach`."""
    if step < 0:
        floor = max(0, at - reach)
        position = at
        while position > floor:
            quote = data.rfind(b'"', floor, position)
            newline = data.rfind(b"\\n", floor, position)
            found = max(quote, newline)
            if found < 0:
                break
            if found == quote and not _escaped(data, quote):
                return quote + 1
            if found != quote and not _escaped(data, found):
                return found + 2
            position = found
        return -1 if floor == 0 else None
    ceiling = min(len(data), at + reach)
    position = at
    while position < ceiling:
        quote = data.find(b'"', position, ceiling)
        newline = data.find(b"\\n", position, ceiling)
        found = min((i for i in (quote, newline) if i >= 0), default=-1)
        if found < 0:
            break
        if not _escaped(data, found):
            return found
        position = found + 1
    return -1 if ceiling == len(data) else None


@functools.lru_cache(maxsize=8192)
def _secret_names_in(window: bytes, gate: int) -> tuple[tuple[int, int], ...]:
    """Where in `window` (raw bytes that end where a match of gate `gate` ends) the
    candidates whose operator lies within that match have a secret-like name, in every
    reading. Depends on nothing else, so it is cached: transcripts repeat their lines (an
    output is stored twice, a file read again), and a repetition costs a lookup instead of
    a regex search. The window holds `MAX_NAME` + 16 bytes before any candidate, so a name
    is never cut by it: it starts where the raw line starts or well before any name."""
    lowered = window.lower()
    size = len(window)
    nearest = size - GATE_REACH_RAW[gate]
    found: list[tuple[int, int]] = []
    for candidate in RAW_CANDIDATE.finditer(lowered, max(0, nearest - CANDIDATE_SPAN)):
        if candidate.end() < nearest:
            continue  # its operator is too far before the gate match to be what it matched
        start = candidate.start()
        floor = max(0, start - MAX_NAME - 16)
        while start > floor and window[start - 1] in _NAME_BYTES:
            start -= 1
        if start == floor and start > 0:
            continue  # longer than any name, in any reading
        end = candidate.end("tail")
        readings = [start]
        if start > 0 and window[start - 1] == 0x5C:  # a backslash: `\n`, `\t`, `\u00e9`
            readings.append(start + (5 if window[start] == 0x75 else 1))
        for first in readings:
            name = window[first:end].decode("ascii").strip(".-")
            if name and len(name) <= MAX_NAME and may_name_secret(name):
                found.append((first, end))
    return tuple(found)


def secret_names_on_raw_line(
    data: bytes, ends: Iterable[tuple[int, int]]
) -> Iterator[tuple[int, int]]:
    """Where on a raw JSONL line the candidates whose operator lies within a gate match
    (`ends`: (end, which gate), raw forms) have a secret-like name, in every reading: each
    span once, in the order of `ends`."""
    judged: set[tuple[int, int]] = set()
    for end, gate in ends:
        # Every byte the judgement of this gate match reads: its candidates, their names.
        window_start = max(0, end - GATE_REACH_RAW[gate] - _WINDOW_BEFORE_REACH)
        window = data[window_start:end]
        for name_start, name_end in _secret_names_in(window, gate):
            span = (window_start + name_start, window_start + name_end)
            if span not in judged:
                judged.add(span)
                yield span


def text_line_around(data: bytes, start: int, end: int) -> tuple[bytes, int, int] | None:
    """The line of text around the name at [start, end) of a raw JSONL line (between two
    newlines, or a string's quotes: the rule never reads past either, but for
    `<name>…</name>`), cut out of the raw line, with where the name starts in it and how long
    it is; None when the name cannot be judged on such a line alone."""
    while start < end and data[start] in b"-.":
        start += 1
    if start > 0 and data[start - 1] == 0x3C:  # `<password>…</password>` may span lines
        return None
    line_start = _line_boundary(data, start, -1)
    line_end = _line_boundary(data, end, 1)
    if line_start < 0 or line_end < 0 or line_end - line_start > _MAX_RAW_LINE:
        return None
    return data[line_start:line_end], start - line_start, end - start


def decode_text_line(raw_line: bytes, name_at: int) -> tuple[str, int] | None:
    """A line of text given as raw JSON string bytes, decoded, and where in it the name that
    starts at byte `name_at` starts; None when it does not decode."""
    try:
        line = json.loads(b'"' + raw_line + b'"')
        offset = len(json.loads(b'"' + raw_line[:name_at] + b'"'))
    except ValueError:
        return None
    return line, offset
