"""A file's lines redacted: the line transform for transcripts (string leaves only, see
rewrite.py) and for plain text, and what it did to a file (FileRedaction, no values).

Lines without findings stay byte for byte as they were.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO

from scrubber.detection.detector import PLAIN
from scrubber.detection.known_values import KnownValues, Scope, ValueIndex, ValueInfo
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.errors import ScrubberError
from scrubber.redaction.copies import (
    CopyCounts,
    FoundValue,
    remember,
    rewrite_line_copies,
    scan_values,
    session_of_path,
)
from scrubber.redaction.rewrite import (
    RewriteError,
    replace_spans,
    rewrite_json_line,
    rewrite_text_line,
)
from scrubber.transcript.jsonl import LineProblem, RawLine, iter_raw_lines

_BINARY_SNIFF = 8192
_TEXT_BLOCK = 1 << 20


class FileKind(StrEnum):
    TRANSCRIPT = "transcript"  # JSONL: string leaves only
    TEXT = "text"  # tool-results/*.txt, file-history copies, shell snapshots: plain text
    BINARY = "binary"  # cannot be redacted: never copied into a redacted tree


@dataclass(slots=True)
class FileRedaction:
    """What one file's redaction did (no values)."""

    source: Path
    dest: Path | None
    kind: FileKind
    lines: int = 0
    lines_changed: int = 0
    replaced: int = 0
    left_in_thinking: int = 0
    # Secrets held by JSON object keys, which no redaction may change (detection/key_scan.py).
    left_in_keys: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[int, str]] = field(default_factory=list)
    folded_tail_bytes: int = 0  # bytes appended by another writer during an in-place rewrite
    skipped: str | None = None  # why the file was not written
    # The values its detectors found, for the pass over their copies (redaction/copies.py): in
    # memory only, while the run needs them (emptied before the result is handed back).
    values: KnownValues = field(default_factory=KnownValues, repr=False, compare=False)
    # Known values whose copies are replaced line by line as they are redacted (the tail an
    # in-place rewrite folds in after its pass over copies).
    inline: ValueIndex | None = field(default=None, repr=False, compare=False)
    # The session its values belong to (see `session_of_path`), worked out once.
    scope: Scope | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.scope = session_of_path(self.source)

    def add_copies(self, counts: CopyCounts) -> None:
        self.lines_changed += counts.lines_changed
        self.replaced += counts.replaced
        self.by_kind.update(counts.by_kind)

    def add_line(self, line: LineRedaction, number: int) -> None:
        """Count what redacting line `number` found and changed."""
        if line.problem is not None:
            self.problems.append((number, line.problem))
        remember(self.values, line.values)
        self.by_kind.update(line.kinds)
        self.replaced += len(line.kinds)
        self.left_in_thinking += line.left_in_thinking
        self.left_in_keys += line.left_in_keys
        if line.new is not None:
            self.lines_changed += 1


def classify_file(path: Path) -> FileKind:
    if path.suffix == ".jsonl":
        return FileKind.TRANSCRIPT
    with path.open("rb") as stream:
        head = stream.read(_BINARY_SNIFF)
    return FileKind.BINARY if b"\0" in head else FileKind.TEXT


@dataclass(frozen=True, slots=True)
class LineRedaction:
    """What redacting one line found and changed (it may come from a forked process)."""

    new: bytes | None  # the line's bytes (without its newline), None when they stay as they are
    problem: str | None  # why the line is not a record we can read
    values: tuple[FoundValue, ...]
    kinds: tuple[str, ...]  # the kind of each secret replaced, in order
    left_in_thinking: int = 0
    left_in_keys: int = 0  # secrets in object keys: kept, no redaction may change a key


def redact_line(
    raw: RawLine, file_scan: FileScan, scope: Scope | None, *, redact_thinking: bool
) -> LineRedaction | None:
    """One line redacted, or None when it has nothing to redact or report. `scope`: the
    session its values belong to (None: the line's own `sessionId`)."""
    return redact_scanned(raw, file_scan.scan_raw(raw), scope, redact_thinking=redact_thinking)


def redact_scanned(
    raw: RawLine, scan: LineScan | None, scope: Scope | None, *, redact_thinking: bool
) -> LineRedaction | None:
    """`redact_line` of a line already scanned (a caller that keeps where the values were)."""
    if scan is None:
        return None
    problem = str(scan.line.problem) if scan.line.problem not in (None, LineProblem.BLANK) else None
    in_keys = sum(len(leaf.found) for leaf in scan.key_leaves)
    if not scan.leaves:
        if problem is None and not in_keys:
            return None
        return LineRedaction(None, problem, (), (), left_in_keys=in_keys)
    values = scan_values(scan, scope)
    new, kinds, left_in_thinking = _apply(scan, redact_thinking=redact_thinking)
    changed = None if new == raw.data else new
    return LineRedaction(changed, problem, values, kinds, left_in_thinking, in_keys)


def redacted_line_bytes(
    raw: RawLine,
    file_scan: FileScan,
    result: FileRedaction,
    *,
    redact_thinking: bool,
) -> bytes:
    """The line's bytes as they are to be written (its newline included), counted in
    `result`, with the copies of `result.inline` replaced too."""
    result.lines += 1
    line = redact_line(raw, file_scan, result.scope, redact_thinking=redact_thinking)
    new = None
    if line is not None:
        result.add_line(line, raw.number)
        new = line.new
    if result.inline is not None:
        new = _inline_copies(raw, new, result, redact_thinking)
    if new is None:
        return raw.to_bytes()
    return new + b"\n" if raw.terminated else new


def _inline_copies(
    raw: RawLine, new: bytes | None, result: FileRedaction, redact_thinking: bool
) -> bytes | None:
    assert result.inline is not None  # noqa: S101 - the caller's check
    data = raw.data if new is None else new
    counts = CopyCounts()
    out = rewrite_line_copies(
        data, result.inline, result.scope, counts, redact_thinking=redact_thinking
    )
    if out == data:
        return new
    if new is not None:
        counts.lines_changed = 0  # counted once, by the first pass
    result.add_copies(counts)
    return out


def _apply(scan: LineScan, *, redact_thinking: bool) -> tuple[bytes, tuple[str, ...], int]:
    """The line's new bytes, the kinds replaced and how many secrets were left in thinking."""
    data = scan.line.raw.data
    if scan.line.record is None:
        found = [f for leaf in scan.leaves for f in leaf.found]
        edits = [(f.hit.start, f.hit.end, f.placeholder) for f in found]
        return rewrite_text_line(data, sorted(edits)), tuple(f.hit.kind for f in found), 0
    replacements: dict[str, list[tuple[int, int, str]]] = {}
    kinds: list[str] = []
    left_in_thinking = 0
    for leaf in scan.leaves:
        if leaf.pointer is None:
            continue
        if leaf.in_thinking and not redact_thinking:
            left_in_thinking += len(leaf.found)
            continue
        edits = replacements.setdefault(leaf.pointer, [])
        edits.extend((f.hit.start, f.hit.end, f.placeholder) for f in leaf.found)
        kinds.extend(f.hit.kind for f in leaf.found)
    for edits in replacements.values():
        edits.sort()
    try:
        return rewrite_json_line(data, replacements), tuple(kinds), left_in_thinking
    except RewriteError as exc:
        # The scanner and the rewriter disagree on the line's shape: never guess. Fall back to
        # redacting the line as text would break its JSON, so refuse the whole file instead.
        raise ScrubberError(
            f"line {scan.line.number}: could not rewrite the line in place ({exc.message})"
        ) from None


def redact_transcript_lines(
    stream: IO[bytes],
    scanner: SecretScanner,
    result: FileRedaction,
    *,
    redact_thinking: bool,
    file_scan: FileScan | None = None,
    offset: int = 0,
    number: int = 1,
) -> Iterator[bytes]:
    """Redacted bytes of every line of a JSONL stream, in order."""
    scan = file_scan or scanner.new_file_scan()
    for raw in iter_raw_lines(stream, offset=offset, number=number):
        yield redacted_line_bytes(raw, scan, result, redact_thinking=redact_thinking)


def redact_text(text: str, scanner: SecretScanner, result: FileRedaction) -> str:
    found = scanner.scan_text(text, PLAIN)
    if not found:
        return text
    scope = session_of_path(result.source) or str(result.source)
    for item in found:
        hit = item.hit
        info = ValueInfo(hit.kind, hit.detector, item.fingerprint, item.prefix)
        result.values.add(text[hit.start : hit.end], info, scope)
    result.replaced += len(found)
    result.by_kind.update(item.hit.kind for item in found)
    return replace_spans(text, sorted((f.hit.start, f.hit.end, f.placeholder) for f in found))


def redact_text_stream(
    stream: IO[bytes], scanner: SecretScanner, result: FileRedaction
) -> Iterator[bytes]:
    """A plain-text file in blocks of whole lines (a PEM block is never split)."""
    block: list[bytes] = []
    size = 0
    for raw in iter_raw_lines(stream):
        result.lines += 1
        block.append(raw.to_bytes())
        size += len(raw.data) + 1
        if size >= _TEXT_BLOCK and b"-----BEGIN" not in raw.data:
            yield _redact_block(block, scanner, result)
            block, size = [], 0
    if block:
        yield _redact_block(block, scanner, result)


def _redact_block(block: list[bytes], scanner: SecretScanner, result: FileRedaction) -> bytes:
    data = b"".join(block)
    text = data.decode("utf-8", errors="surrogateescape")
    new = redact_text(text, scanner, result)
    if new == text:
        return data
    old_lines = text.split("\n")
    new_lines = new.split("\n")
    result.lines_changed += sum(1 for a, b in zip(old_lines, new_lines, strict=False) if a != b)
    return new.encode("utf-8", errors="surrogateescape")
