"""The audit's scan of one file: its detector findings and the values they found, and (for the
scan cache) the file as it was when opened, where the scan may resume and the tool calls it
remembered. A transcript may be scanned from a settled offset, with the calls the scan before
it remembered. Nothing here prints."""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

from scrubber.detection.context import ClassifiedCall
from scrubber.detection.detector import PLAIN
from scrubber.detection.finding import Finding
from scrubber.detection.known_values import Scope, ValueInfo
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.redaction.copies import FoundValue, scan_values, scope_of
from scrubber.transcript.jsonl import IO_BUFFER, RawLine, iter_raw_lines
from scrubber.transcript.metadata import Titles, read_title, title_of
from scrubber.transcript.records import Record
from scrubber.usecases import parts
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN, FileAudit, ScanTarget
from scrubber.usecases.parts import Progress, TranscriptLines
from scrubber.usecases.scan_cache import calls_to_cache, settled_digests

_TEXT_BLOCK = 1 << 20  # text side files are scanned in blocks of about this many bytes
_BINARY_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class Resume:
    """Where an earlier scan of a transcript stopped: the offset just past its last settled
    line, that line's number, and the tool calls it remembered."""

    offset: int
    lines: int
    calls: Mapping[str, ClassifiedCall]


@dataclass(slots=True)
class ScannedFile:
    """One file's scan: its audit (detector findings only, from `resume` on when resumed), the
    values found (in the order found; they stay in memory), and what the scan cache keeps."""

    audit: FileAudit
    values: list[FoundValue] = field(default_factory=list, repr=False)
    stat: os.stat_result | None = None  # the file as opened
    settled: tuple[int, int] = (0, 0)  # offset past the last settled line, its number
    digests: tuple[str, str] = ("", "")
    calls: list[tuple[str, str, str, str]] = field(default_factory=list)  # redacted
    resumed: bool = False
    titles: Titles = field(default_factory=Titles, repr=False)  # those the lines scanned gave


def scan_file(
    target: ScanTarget,
    scanner: SecretScanner,
    *,
    progress: Progress | None = None,
    resume: Resume | None = None,
    jobs: int | None = None,
    for_cache: bool = False,
) -> ScannedFile:
    """Scan one file (a transcript from `resume` on, when given). `jobs`: processes for a
    large transcript (default: by its size, usecases/parts.py). `for_cache`: also take what the
    scan cache keeps (digests, the calls with their targets redacted)."""
    # A transcript scanned whole takes its title from its lines on the way (`_scan_transcript`);
    # one scanned from a settled offset reads it from the whole file first.
    titles_on_the_way = target.title_pending and target.is_transcript and resume is None
    if target.title_pending and not titles_on_the_way:
        target = with_title(target)
    result = FileAudit(target)
    scanned = ScannedFile(result, resumed=resume is not None)
    if target.title:
        result.title = scanner.redact_text(target.title)
    try:
        with target.path.open("rb", buffering=IO_BUFFER) as stream:
            opened = os.fstat(stream.fileno())
            scanned.stat = opened
            result.size, result.mtime_ns = opened.st_size, opened.st_mtime_ns
            # A transcript is always read (NUL padding a crash left is a line that is not
            # JSON, scanned as text, as redact does); a side file with NULs is binary.
            if not target.is_transcript and b"\0" in os.pread(stream.fileno(), _BINARY_SNIFF, 0):
                if progress:
                    progress(result.size)
                return scanned  # binary (an image cache, say): nothing textual to scan
            if target.is_transcript:
                _scan_transcript(stream, scanner, scanned, progress, resume, jobs, for_cache)
            else:
                _scan_text_file(stream, target, scanner, scanned, progress)
            if for_cache:
                scanned.digests = settled_digests(stream.fileno(), scanned.settled[0], scanner)
    except OSError as exc:
        result.error = f"cannot read: {exc.strerror or exc}"
    if titles_on_the_way:
        _take_title(scanned, scanner)  # what the lines read gave, as `with_title` would read
    if target.only_sessions is not None:
        _keep_sessions(scanned, target.only_sessions)
    return scanned


def _take_title(scanned: ScannedFile, scanner: SecretScanner) -> None:
    """The title the scan of a whole transcript took from its lines, as `with_title` reads it."""
    result = scanned.audit
    title = scanned.titles.title
    result.target = replace(result.target, title=title, title_pending=False)
    if title:
        result.title = scanner.redact_text(title)


def with_title(target: ScanTarget) -> ScanTarget:
    """The target with its transcript's title read (None when it has none or is unreadable:
    the scan then says why)."""
    title = None
    with contextlib.suppress(OSError):
        title = read_title(target.path)
    return replace(target, title=title, title_pending=False)


def _keep_sessions(scanned: ScannedFile, wanted: frozenset[str]) -> None:
    """Only the findings and values of the lines of `wanted` sessions (history.jsonl in an
    audit of some sessions); a line that is not a record names no session: not theirs."""
    result = scanned.audit
    result.findings = [f for f in result.findings if f.session_id in wanted]
    scanned.values = [v for v in scanned.values if v[2] in wanted]
    result.problems = []


def _scope(target: ScanTarget) -> Scope | None:
    """The session a target's values belong to; None for history.jsonl (each line's own)."""
    return None if target.role == "history" else scope_of(target.session_id, target.path)


def _scan_transcript(
    stream: IO[bytes],
    scanner: SecretScanner,
    scanned: ScannedFile,
    progress: Progress | None,
    resume: Resume | None,
    jobs: int | None,
    for_cache: bool,
) -> None:
    """Every line of a transcript, in parallel parts when it is large (usecases/parts.py);
    `for_cache`: also the calls it remembers at the end, redacted, for the scan cache."""
    result = scanned.audit
    target = result.target
    scope = _scope(target)

    def audit_line(raw: RawLine, file_scan: FileScan) -> _LineAudit | None:
        return _audit_line(file_scan.scan_raw(raw), target, scope)

    start = (0, 1) if resume is None else (resume.offset, resume.lines + 1)
    lines = TranscriptLines(
        stream,
        target.path,
        result.size,
        scanner,
        audit_line,
        jobs=parts.scan_jobs(result.size) if jobs is None else jobs,
        progress=progress,
        start=start,
        calls=None if resume is None else resume.calls,
    )
    for line in lines:
        found = line.result
        if found.title is not None:
            scanned.titles.add(*found.title)
        if found.problem is not None:
            result.problems.append((line.number, found.problem))
        number = line.number
        result.findings.extend(
            f if f.line == number else replace(f, line=number) for f in found.findings
        )
        if found.scanned:
            scanned.values.extend(found.values)
            result.line_starts[line.offset] = number
    result.line_starts.update(lines.part_starts)
    scanned.settled = lines.settled
    if for_cache:
        scanned.calls = calls_to_cache(lines.calls, scanner)


@dataclass(frozen=True, slots=True)
class _LineAudit:
    """What one line of a transcript holds (it may come from a forked process)."""

    findings: tuple[Finding, ...]  # numbered as where the line was scanned: within its part
    problem: str | None  # why the line is not a record we can read
    values: tuple[FoundValue, ...]
    scanned: bool  # some string of it was read by a detector
    title: tuple[str, str] | None = None  # (kind, text) of a record that titles the session

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields, as Finding is (the trip back from a forked part).
        fields = (self.findings, self.problem, self.values, self.scanned, self.title)
        return (_LineAudit, fields)


def _audit_line(
    scan: LineScan | None, target: ScanTarget, scope: Scope | None
) -> _LineAudit | None:
    if scan is None:
        return None
    problem = scan.line.problem
    why = problem.value if problem is not None and problem != "blank" else None
    record = scan.line.record
    title = (
        title_of(Record(record), scan.line.raw.data)
        if record is not None and target.is_transcript
        else None
    )
    if not scan.leaves and not scan.key_leaves:
        return None if why is None and title is None else _LineAudit((), why, (), False, title)
    findings = tuple(_findings_of(scan, target))
    return _LineAudit(findings, why, scan_values(scan, scope), True, title)


def _findings_of(scan: LineScan, target: ScanTarget) -> Iterator[Finding]:
    leaves = [(leaf, False) for leaf in scan.leaves]
    leaves.extend((leaf, True) for leaf in scan.key_leaves)
    for leaf, in_key in leaves:
        for item in leaf.found:
            hit = item.hit
            yield Finding(
                file=str(target.path),
                line=scan.line.number,
                json_path=leaf.pointer,
                span=(hit.start, hit.end),
                kind=hit.kind,
                detector=hit.detector,
                fingerprint=item.fingerprint[:FINGERPRINT_SHOWN],
                session_id=scan.session_id or target.session_id,
                record_uuid=scan.record_uuid,
                source=leaf.source,
                in_thinking=leaf.in_thinking,
                length=hit.length,
                prefix=item.prefix,
                in_key=in_key,
            )


@dataclass(slots=True)
class _TextBlock:
    lines: list[str] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # byte offset of each line's start
    first_line: int = 1
    size: int = 0


def _scan_text_file(
    stream: IO[bytes],
    target: ScanTarget,
    scanner: SecretScanner,
    scanned: ScannedFile,
    progress: Progress | None,
) -> None:
    """Scan a non-JSONL side file in blocks of whole lines, so multi-line keys stay whole."""
    block = _TextBlock()
    size = scanned.audit.size
    for raw in iter_raw_lines(stream):
        if raw.offset >= size:
            break  # appended after the scan began: the next scan's
        block.lines.append(raw.data.decode("utf-8", errors="surrogateescape"))
        block.offsets.append(raw.offset)
        block.size += len(raw.data) + 1
        if raw.terminated:
            scanned.settled = (raw.end_offset, raw.number)
        if block.size >= _TEXT_BLOCK and "-----BEGIN" not in block.lines[-1]:
            _scan_text_block(block, target, scanner, scanned)
            if progress:
                progress(block.size)
            block = _TextBlock(first_line=raw.number + 1)
    if block.lines:
        _scan_text_block(block, target, scanner, scanned)
        if progress:
            progress(block.size)


def _scan_text_block(
    block: _TextBlock, target: ScanTarget, scanner: SecretScanner, scanned: ScannedFile
) -> None:
    lines = block.lines
    text = "\n".join(lines)
    found = scanner.scan_text(text, PLAIN)
    if not found:
        return
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    scope = scope_of(target.session_id, target.path)
    result = scanned.audit
    for item in found:
        hit = item.hit
        info = ValueInfo(hit.kind, hit.detector, item.fingerprint, item.prefix)
        scanned.values.append((text[hit.start : hit.end], info, scope))
        index = bisect.bisect_right(starts, item.hit.start) - 1
        offset = starts[index]
        result.line_starts[block.offsets[index]] = block.first_line + index
        result.findings.append(
            Finding(
                file=str(target.path),
                line=block.first_line + index,
                json_path=None,
                span=(item.hit.start - offset, item.hit.end - offset),
                kind=item.hit.kind,
                detector=item.hit.detector,
                fingerprint=item.fingerprint[:FINGERPRINT_SHOWN],
                session_id=target.session_id,
                source=None,
                length=item.hit.length,
                prefix=item.prefix,
            )
        )
