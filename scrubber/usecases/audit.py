"""The audit use case: find secrets in transcripts and side files without printing them.

Everything here takes its inputs explicitly (paths, a policy, the environment, `now`) and
returns values; the CLI renders them (`run_audit`), the worker logs them. Nothing here prints.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO

from scrubber import paths
from scrubber.detection.detector import PLAIN
from scrubber.detection.finding import Finding
from scrubber.detection.known_values import KnownValues, Scope, ValueInfo
from scrubber.detection.registry import build_scanner
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.durable import atomic_write
from scrubber.errors import UsageError
from scrubber.policy.model import Policy
from scrubber.redaction.copies import FoundValue, remember, scan_values, scope_of
from scrubber.transcript.jsonl import IO_BUFFER, RawLine, iter_raw_lines
from scrubber.usecases import parts
from scrubber.usecases.audit_copies import add_copies
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN, AuditReport, FileAudit, ScanTarget
from scrubber.usecases.audit_targets import (
    modified_since,
    parse_since,
    targets_from_paths,
    targets_in_config,
)
from scrubber.usecases.parts import Progress, TranscriptLines

_TEXT_BLOCK = 1 << 20  # text side files are scanned in blocks of about this many bytes
_BINARY_SNIFF = 8192


ProgressFor = Callable[[int], Progress]  # given the bytes to scan: what to tell as they are


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What `scrub audit` is asked for: the files and folders named (`paths`), else the
    sessions and side files of the config dir (or only the `sessions` named, or those of the
    `projects`: each names at least one session, or the audit is refused)."""

    policy: Policy
    home: Path
    config: Path
    paths: tuple[Path, ...] = ()
    sessions: tuple[str, ...] = ()  # ids, id prefixes or titles
    projects: tuple[str, ...] = ()  # parts of project folder names, or exact cwds
    since: str | None = None  # only files changed since: `7d`, `12h`, or `2026-11-01`
    remember: bool = True  # keep each session's count in the audit cache (`scrub sessions`)


def run_audit(
    request: AuditRequest,
    *,
    now: datetime,
    progress_for: ProgressFor | None = None,
    env: Mapping[str, str] | None = None,
) -> AuditReport:
    """What was asked for, scanned with the policy's detectors."""
    targets = _requested_targets(request)
    if request.since:
        cutoff = parse_since(request.since, now)
        targets = [t for t in targets if modified_since(t, cutoff)]
    scanner = build_scanner(request.policy, request.home, env)
    total = 0
    for target in targets:
        with contextlib.suppress(OSError):
            total += target.path.stat().st_size
    progress = progress_for(total) if progress_for is not None else None
    report = audit(targets, scanner, progress=progress, env=env)
    if request.remember:
        update_audit_cache(request.home, report)
    return report


def _requested_targets(request: AuditRequest) -> list[ScanTarget]:
    if request.paths:
        return targets_from_paths(request.paths)
    targets = targets_in_config(
        request.config,
        sessions=request.sessions,
        projects=request.projects,
        include_side_files=request.policy.detection.scan_side_files,
    )
    if (request.sessions or request.projects) and not targets:
        wanted = " ".join(
            [*(f"--session {s}" for s in request.sessions),
             *(f"--project {p}" for p in request.projects)]
        )  # fmt: skip
        raise UsageError(f"no session matches {wanted}")
    return targets


def audit(
    targets: Iterable[ScanTarget],
    scanner: SecretScanner,
    *,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
) -> AuditReport:
    """Every target scanned, then the copies of what was found (see audit_copies.py): a value
    found in one file of a session is a finding wherever else the session holds it."""
    known = KnownValues()
    files = [audit_file(t, scanner, progress=progress, known=known) for t in targets]
    add_copies(files, known, env)
    # Modes matter for what Claude Code wrote: transcripts (JSONL), not every file named.
    return AuditReport(
        files, permission_warnings(t.target.path for t in files if t.target.is_transcript)
    )


def _scope(target: ScanTarget) -> Scope | None:
    """The session a target's values belong to; None for history.jsonl (each line's own)."""
    return None if target.role == "history" else scope_of(target.session_id, target.path)


def audit_file(
    target: ScanTarget,
    scanner: SecretScanner,
    *,
    progress: Progress | None = None,
    known: KnownValues | None = None,
) -> FileAudit:
    """One file's findings; the values found are added to `known` (for `add_copies`)."""
    result = FileAudit(target)
    known = KnownValues() if known is None else known
    if target.title:
        result.title = scanner.redact_text(target.title)
    try:
        with target.path.open("rb", buffering=IO_BUFFER) as stream:
            opened = os.fstat(stream.fileno())
            result.size, result.mtime_ns = opened.st_size, opened.st_mtime_ns
            head = stream.read(_BINARY_SNIFF)
            stream.seek(0)
            if b"\0" in head:
                if progress:
                    progress(result.size)
                return result  # binary (an image cache, say): nothing textual to scan
            if target.is_transcript:
                _scan_transcript(stream, target, scanner, result, progress, known)
            else:
                _scan_text_file(stream, target, scanner, result, progress, known)
    except OSError as exc:
        result.error = f"cannot read: {exc.strerror or exc}"
    return result


def _scan_transcript(
    stream: IO[bytes],
    target: ScanTarget,
    scanner: SecretScanner,
    result: FileAudit,
    progress: Progress | None,
    known: KnownValues,
) -> None:
    """Every line of a transcript, in parallel parts when it is large (usecases/parts.py)."""
    scope = _scope(target)

    def audit_line(raw: RawLine, file_scan: FileScan) -> _LineAudit | None:
        return _audit_line(file_scan.scan_raw(raw), target, scope)

    lines = TranscriptLines(
        stream,
        target.path,
        result.size,
        scanner,
        audit_line,
        jobs=parts.scan_jobs(result.size),
        progress=progress,
    )
    for line in lines:
        found = line.result
        if found.problem is not None:
            result.problems.append((line.number, found.problem))
        number = line.number
        result.findings.extend(
            f if f.line == number else replace(f, line=number) for f in found.findings
        )
        if found.scanned:
            remember(known, found.values)
            result.line_starts[line.offset] = number
    result.line_starts.update(lines.part_starts)


@dataclass(frozen=True, slots=True)
class _LineAudit:
    """What one line of a transcript holds (it may come from a forked process)."""

    findings: tuple[Finding, ...]  # numbered as where the line was scanned: within its part
    problem: str | None  # why the line is not a record we can read
    values: tuple[FoundValue, ...]
    scanned: bool  # some string of it was read by a detector


def _audit_line(
    scan: LineScan | None, target: ScanTarget, scope: Scope | None
) -> _LineAudit | None:
    if scan is None:
        return None
    problem = scan.line.problem
    why = problem.value if problem is not None and problem != "blank" else None
    if not scan.leaves:
        return None if why is None else _LineAudit((), why, (), False)
    return _LineAudit(tuple(_findings_of(scan, target)), why, scan_values(scan, scope), True)


def _findings_of(scan: LineScan, target: ScanTarget) -> Iterator[Finding]:
    for leaf in scan.leaves:
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
            )


def _scan_text_file(
    stream: IO[bytes],
    target: ScanTarget,
    scanner: SecretScanner,
    result: FileAudit,
    progress: Progress | None,
    known: KnownValues,
) -> None:
    """Scan a non-JSONL side file in blocks of whole lines, so multi-line keys stay whole."""
    block: list[str] = []
    block_bytes = 0
    first_line = 1
    number = 0
    for raw in iter_raw_lines(stream):
        number = raw.number
        block.append(raw.data.decode("utf-8", errors="surrogateescape"))
        block_bytes += len(raw.data) + 1
        if block_bytes >= _TEXT_BLOCK and "-----BEGIN" not in block[-1]:
            _scan_text_block(block, first_line, target, scanner, result, known)
            if progress:
                progress(block_bytes)
            block, block_bytes, first_line = [], 0, number + 1
    if block:
        _scan_text_block(block, first_line, target, scanner, result, known)
        if progress:
            progress(block_bytes)


def _scan_text_block(
    lines: list[str],
    first_line: int,
    target: ScanTarget,
    scanner: SecretScanner,
    result: FileAudit,
    known: KnownValues,
) -> None:
    text = "\n".join(lines)
    found = scanner.scan_text(text, PLAIN)
    if not found:
        return
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    scope = scope_of(target.session_id, target.path)
    for item in found:
        hit = item.hit
        info = ValueInfo(hit.kind, hit.detector, item.fingerprint, item.prefix)
        known.add(text[hit.start : hit.end], info, scope)
        index = bisect.bisect_right(starts, item.hit.start) - 1
        offset = starts[index]
        result.findings.append(
            Finding(
                file=str(target.path),
                line=first_line + index,
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


def permission_warnings(files: Iterable[Path]) -> list[str]:
    """Transcript files and their folders readable by group or others.

    Claude Code creates project folders 0755 (their names reveal working-directory paths), so
    open folders are summed up in one line rather than listed one by one.
    """
    warnings: list[str] = []
    seen_dirs: set[Path] = set()
    open_dirs: list[Path] = []
    open_files: list[tuple[Path, int]] = []
    for file in files:
        try:
            mode = file.stat().st_mode
        except OSError:
            continue
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            open_files.append((file, mode))
        folder = file.parent
        if folder in seen_dirs:
            continue
        seen_dirs.add(folder)
        try:
            dmode = folder.stat().st_mode
        except OSError:
            continue
        if dmode & (stat.S_IROTH | stat.S_IXOTH | stat.S_IRGRP | stat.S_IXGRP):
            open_dirs.append(folder)
    for file, mode in open_files[:5]:
        warnings.append(f"{file} is readable by {_who(mode)} (chmod 600 it)")
    if len(open_files) > 5:
        warnings.append(f"… and {len(open_files) - 5} more transcripts readable by others")
    if open_dirs:
        shown = ", ".join(str(d) for d in open_dirs[:3])
        more = f" and {len(open_dirs) - 3} more" if len(open_dirs) > 3 else ""
        warnings.append(
            f"{len(open_dirs)} folders holding transcripts are open to group or others: "
            f"{shown}{more} (chmod 700 them)"
        )
    return warnings


def _who(mode: int) -> str:
    group = bool(mode & (stat.S_IRGRP | stat.S_IXGRP))
    other = bool(mode & (stat.S_IROTH | stat.S_IXOTH))
    return "group and others" if group and other else ("group" if group else "others")


AUDIT_CACHE_NAME = "audit-cache.json"  # state/ file read by `scrub sessions` (secrets column)


def update_audit_cache(home: Path, report: AuditReport) -> None:
    """Remember each audited session's distinct secrets with its transcript's size and mtime as
    they were when the scan began, so `scrub sessions` shows the count only while the transcript
    is still the one audited. Best effort: a cache that cannot be written is not updated."""
    path = paths.state_dir(home) / AUDIT_CACHE_NAME
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        data = {}
    if (
        not isinstance(data, dict)
        or data.get("format") != 1
        or not isinstance(data.get("sessions"), dict)
    ):
        data = {"format": 1, "sessions": {}}
    distinct: dict[str, set[str]] = {}
    transcripts: dict[str, FileAudit] = {}
    for audit_result in report.files:
        sid = audit_result.target.session_id
        if sid is None or audit_result.error:
            continue
        distinct.setdefault(sid, set()).update(f.fingerprint for f in audit_result.findings)
        if audit_result.target.role == "transcript":
            transcripts[sid] = audit_result
    for sid, transcript in transcripts.items():
        data["sessions"][sid] = {
            "transcript_size": transcript.size,
            "transcript_mtime_ns": transcript.mtime_ns,
            "distinct": len(distinct.get(sid, ())),
        }
    try:
        paths.ensure_private_dir(path.parent)
        atomic_write(path, [json.dumps(data).encode()], mode=0o600)
    except OSError:
        return
