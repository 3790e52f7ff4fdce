"""Copies of found values in a session's files (see detection/known_values.py for what a copy
is and the guards): the values a scan found, where their copies are, and a redacted file's
bytes with the copies a first pass missed replaced.

The output a first pass wrote is searched for the values found in any file of its session; any
copy left there is one that pass missed, and only the lines holding one are rewritten (string
leaves only, never a protected field).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from scrubber.detection.known_values import (
    Copy,
    KnownValues,
    Scope,
    ValueIndex,
    ValueInfo,
    record_copies,
)
from scrubber.detection.placeholder import make_placeholder
from scrubber.detection.scan import LineScan
from scrubber.detection.value_blocks import Block, blocks
from scrubber.errors import ScrubberError
from scrubber.redaction.rewrite import (
    RewriteError,
    replace_spans,
    rewrite_json_line,
    rewrite_text_line,
)
from scrubber.transcript.jsonl import RawLine, json_loads_for_strings, parse_line
from scrubber.transcript.records import string_at

# A value a detector found, what it was found as, and the scope (session) it belongs to.
FoundValue = tuple[str, ValueInfo, Scope]


def found_values(scan: LineScan) -> Iterator[tuple[str, str, int, int, bool, Any]]:
    """(value, pointer, start, end, in_thinking, found secret) of every secret a line's scan
    found, the value read from the line's own string at the hit's span."""
    record = scan.line.record
    for leaf in scan.leaves:
        text = (
            scan.line.text()
            if leaf.pointer is None or record is None
            else string_at(record, leaf.pointer)
        )
        if text is None:
            continue
        for item in leaf.found:
            yield (
                text[item.hit.start : item.hit.end],
                leaf.pointer or "",
                item.hit.start,
                item.hit.end,
                leaf.in_thinking,
                item,
            )


def scan_values(scan: LineScan, scope: Scope | None) -> tuple[FoundValue, ...]:
    """The values a line's scan found, to remember. `scope`: the session (None: the line's own
    `sessionId`, as in history.jsonl, where each line belongs to one session)."""
    if not scan.leaves:
        return ()
    where = scope if scope is not None else scan.session_id
    if where is None:
        return ()
    return tuple(
        (value, ValueInfo(item.hit.kind, item.hit.detector, item.fingerprint, item.prefix), where)
        for value, _, _, _, _, item in found_values(scan)
    )


def remember(known: KnownValues, values: Iterable[FoundValue]) -> None:
    for value, info, scope in values:
        known.add(value, info, scope)


@dataclass(frozen=True, slots=True)
class LineCopies:
    """The copies on one line of a file (JSON lines: by pointer; others: spans of the text)."""

    start: int  # byte offsets of the line in its block
    end: int
    record: dict[str, Any] | None
    copies: list[Copy]


def scope_of(session_id: str | None, path: Path) -> Scope:
    return session_id or session_of_path(path) or str(path)


def session_of_path(path: Path) -> Scope | None:
    """The session a file of a config dir belongs to, from where it sits (the session bundle's
    layout: `projects/<p>/<id>.jsonl`, `projects/<p>/<id>/…`, `file-history/<id>/…`,
    `session-env/<id>/…`, `debug/<id>.txt`); None for history.jsonl (each of its lines names
    its own session); else the file is a scope of its own."""
    if path.name == "history.jsonl":
        return None
    parts = path.parts
    last = len(parts) - 1
    for i in range(last - 1, -1, -1):
        part = parts[i]
        if part == "projects" and i + 2 <= last:
            item = parts[i + 2]
            if i + 2 < last:
                return item
            if item.endswith(".jsonl") and not item.startswith("agent-"):
                return item[: -len(".jsonl")]
            break
        if part in ("file-history", "session-env") and i + 1 < last:
            return parts[i + 1]
        if part == "debug" and i + 1 == last and path.suffix == ".txt":
            return path.stem
    return str(path)


def jsonl_copies(
    block: Block,
    index: ValueIndex,
    scope: Scope | None,
    settled: Callable[[int, int], bool] | None = None,
) -> Iterator[LineCopies]:
    """The copies on the candidate lines of a block of a JSONL file. `scope`: as for
    `scan_values` (None: each line's own `sessionId`). `settled(start, end)`: True when the
    line at [start, end) of the block's data is known to hold no copy but the findings
    already there (it is then not parsed)."""
    data = block.data
    for start, end, numbers in block.candidates:
        # With the scope known, a line none of whose candidates is of it is not even parsed.
        wanted = index.of_scope(numbers, scope) if scope is not None else []
        if scope is not None and not wanted:
            continue
        if settled is not None and wanted and settled(start, end):
            continue
        line = parse_line(RawLine(0, start, data[start:end], True), json_loads_for_strings)
        record = line.record
        if scope is None:
            session = record.get("sessionId") if record is not None else None
            if not isinstance(session, str):
                continue
            wanted = index.of_scope(numbers, session)
            if not wanted:
                continue
        if record is not None:
            copies = record_copies(record, index, wanted)
        else:
            text = line.text()
            copies = [Copy(None, s, e, n) for s, e, n in index.find(text, wanted)]
        if copies:
            yield LineCopies(start, end, record, copies)


def text_copies(block: Block, index: ValueIndex, scope: Scope) -> list[tuple[int, int, int, int]]:
    """Copies in a block of a plain-text file, as (line in the block, from 0, start, end, value
    number) with    spans in code points from the start of that line (a multi-line value runs past its end,
    as the scanner reports a PEM block)."""
    if not block.candidates:
        return []
    wanted = {n for _, _, numbers in block.candidates for n in numbers if scope in index.scopes(n)}
    if not wanted:
        return []
    text = str(block.view(), "utf-8", errors="surrogateescape")
    found = index.find(text, wanted)
    if not found:
        return []
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    result = []
    for start, end, n in found:
        i = bisect.bisect_right(starts, start) - 1
        result.append((i, start - starts[i], end - starts[i], n))
    return result


# -- redaction -------------------------------------------------------------------------------


@dataclass(slots=True)
class CopyCounts:
    """What a redaction's pass over copies replaced (no values)."""

    lines_changed: int = 0
    replaced: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)


def has_copies(
    stream: IO[bytes],
    index: ValueIndex,
    is_jsonl: bool,
    scope: Scope | None,
    *,
    redact_thinking: bool = True,
) -> bool:
    """Whether a redacted file still holds a copy of a known value that its first pass missed
    and that may be rewritten (in thinking text only when `redact_thinking`: an in-place
    rewrite never edits it, so a copy there is no reason to rewrite the file)."""
    for block in blocks(stream, index):
        if not block.candidates:
            continue
        if is_jsonl:
            for line in jsonl_copies(block, index, scope):
                if redact_thinking or any(not copy.in_thinking for copy in line.copies):
                    return True
        elif scope is not None and text_copies(block, index, scope):
            return True
    return False


def rewrite_copies(
    stream: IO[bytes],
    index: ValueIndex,
    is_jsonl: bool,
    scope: Scope | None,
    counts: CopyCounts,
    *,
    redact_thinking: bool,
) -> Iterator[bytes]:
    """A file's bytes with every copy of a known value replaced by its placeholder: only the
    lines holding one change, only in string leaves (never a protected field, nor JSON
    structure); thinking text only when `redact_thinking`."""
    for block in blocks(stream, index):
        if not block.candidates:
            yield bytes(block.view())  # a rare path: only files with copies are rewritten
            continue
        data = block.data
        if not is_jsonl:
            yield _rewrite_text_block(block, index, scope, counts)
            continue
        cursor = block.lo
        for line in jsonl_copies(block, index, scope):
            old = data[line.start : line.end]
            new = _rewrite_line(old, line, index, counts, redact_thinking)
            if new != old:
                counts.lines_changed += 1
                yield bytes(block.view(cursor, line.start))
                yield new
                cursor = line.end
        yield bytes(block.view(cursor))


def rewrite_line_copies(
    data: bytes,
    index: ValueIndex,
    scope: Scope | None,
    counts: CopyCounts,
    *,
    redact_thinking: bool,
) -> bytes:
    """One JSONL line (without its newline) with its copies of known values replaced."""
    block = Block(data, 0, index.line_candidates(data))
    for line in jsonl_copies(block, index, scope):
        new = _rewrite_line(data, line, index, counts, redact_thinking)
        if new != data:
            counts.lines_changed += 1
        return new
    return data


def _rewrite_line(
    old: bytes, line: LineCopies, index: ValueIndex, counts: CopyCounts, redact_thinking: bool
) -> bytes:
    edits: dict[str | None, list[tuple[int, int, str]]] = {}
    for copy in line.copies:
        if copy.in_thinking and not redact_thinking:
            continue  # signed: an in-place rewrite never edits it
        edits.setdefault(copy.pointer, []).append(
            (copy.start, copy.end, placeholder_of(index, copy.value))
        )
        counts.replaced += 1
        counts.by_kind[index.info(copy.value).kind] += 1
    if not edits:
        return old
    try:
        if line.record is None:
            return rewrite_text_line(old, sorted(edits.get(None, [])))
        return rewrite_json_line(old, {p: sorted(e) for p, e in edits.items() if p is not None})
    except RewriteError as exc:
        raise ScrubberError(f"could not rewrite a line in place ({exc.message})") from None


def _rewrite_text_block(
    block: Block, index: ValueIndex, scope: Scope | None, counts: CopyCounts
) -> bytes:
    if scope is None:
        return bytes(block.view())
    wanted = {n for _, _, numbers in block.candidates for n in numbers if scope in index.scopes(n)}
    text = str(block.view(), "utf-8", errors="surrogateescape")
    found = index.find(text, wanted) if wanted else []
    if not found:
        return bytes(block.view())
    for _, _, n in found:
        counts.replaced += 1
        counts.by_kind[index.info(n).kind] += 1
    new = replace_spans(text, [(s, e, placeholder_of(index, n)) for s, e, n in found])
    counts.lines_changed += len({text.count("\n", 0, s) for s, _, _ in found})
    return new.encode("utf-8", errors="surrogateescape")


def placeholder_of(index: ValueIndex, number: int) -> str:
    info = index.info(number)
    return make_placeholder(info.kind, info.fingerprint)
