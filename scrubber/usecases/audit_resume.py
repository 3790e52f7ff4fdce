"""What an incremental audit makes of the scan cache (scan_cache.py): which files answer from
it, which are scanned from their settled offset and which all over, which sessions must have
their copies looked for again, and the values those sessions' unchanged files hold.

A value found once is a secret everywhere in its session (known_values.py), so a session is
answered from the cache only when none of its files changed. In a session that did change,
the unchanged files keep their detectors' findings, and the values those found are read back
from the files at the cached places (the cache holds no values), each checked against its
fingerprint; then the session's copies are looked for as in a full scan. history.jsonl holds
lines of every session: its copies are looked for again for the sessions that changed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrubber.detection.finding import Finding
from scrubber.detection.known_values import KnownValues, ValueInfo, propagates
from scrubber.detection.scan import SecretScanner
from scrubber.redaction.copies import FoundValue, scope_of
from scrubber.transcript.jsonl import RawLine, iter_raw_lines, json_loads_for_strings, parse_line
from scrubber.transcript.records import string_at
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN, FileAudit, ScanTarget
from scrubber.usecases.audit_scan import Resume, ScannedFile
from scrubber.usecases.scan_cache import (
    CachedFile,
    ScanCache,
    Verdict,
    calls_from_cache,
    file_state,
    keyed_digest,
    settled_part_unchanged,
    verdict,
)


@dataclass(slots=True)
class Planned:
    """One target and what the cache says of it."""

    target: ScanTarget
    group: str  # the session (or the file, outside any session): the unit of the cache
    shard: str  # the cache's shard: the project folder's name ("" outside any project)
    size: int
    verdict: Verdict
    cached: CachedFile | None = None
    resume: Resume | None = None


def plan_scans(
    targets: Sequence[ScanTarget], cache: ScanCache | None, scanner: SecretScanner
) -> list[Planned]:
    """Each target's verdict: answered from the cache, scanned from its settled offset, or
    scanned whole (no cache, no entry, or one that does not match the file)."""
    planned = []
    for target in targets:
        group = scope_of(target.session_id, target.path)
        shard = target.project or ""
        try:
            st = target.path.stat()
        except OSError:
            planned.append(Planned(target, group, shard, 0, Verdict.CHANGED))
            continue
        # Part of history.jsonl is not what the cache keeps of it: never answered from it.
        partial = target.only_sessions is not None
        cached = (
            None
            if cache is None or partial
            else cache.files(shard, group).get(cache.key(target.path))
        )
        state = verdict(cached, st)
        resume = None
        if state is Verdict.APPENDED:
            assert cached is not None  # noqa: S101 - an append is of a cached file
            resume = _resume(target, cached, scanner)
            state = Verdict.APPENDED if resume is not None else Verdict.CHANGED
        # A title still to be read is read where the file is scanned (audit_scan.scan_file:
        # in the pool, not here one file after another).
        planned.append(Planned(target, group, shard, st.st_size, state, cached, resume))
    return planned


def _resume(target: ScanTarget, cached: CachedFile, scanner: SecretScanner) -> Resume | None:
    """Where to resume a transcript that grew, if what was settled is still there."""
    if not target.is_transcript:
        return None  # side files are written whole: scanned whole
    try:
        with target.path.open("rb") as stream:
            if not settled_part_unchanged(stream.fileno(), cached, scanner):
                return None
    except OSError:
        return None
    state = cached.state
    return Resume(state.settled, state.settled_lines, calls_from_cache(cached.calls))


def merged_audit(item: Planned, scanned: ScannedFile | None, scanner: SecretScanner) -> FileAudit:
    """The file's audit: from the cache, from the cache and the scan of what was appended, or
    from the scan. Copies from the cache are kept only for a file answered from it."""
    if scanned is None:
        cached = item.cached
        assert cached is not None  # noqa: S101 - only fresh files are not scanned
        result = FileAudit(item.target, size=cached.state.size, mtime_ns=cached.state.mtime_ns)
        result.findings = cached.findings_in(str(item.target.path))
        result.problems = list(cached.problems)
        result.line_starts = dict(cached.line_starts)
        result.title = _cached_title(item.target, cached, scanner)
        result.shown_path, result.shown_project = cached.shown
        return result
    result = scanned.audit
    if item.resume is not None and item.cached is not None:
        settled, lines = item.resume.offset, item.resume.lines
        cached = item.cached
        result.findings[:0] = cached.findings_in(str(item.target.path), upto_line=lines)
        result.problems[:0] = [p for p in cached.problems if p[0] <= lines]
        before = {o: n for o, n in cached.line_starts.items() if o < settled}
        result.line_starts = {**before, **result.line_starts}
    return result


def _cached_title(target: ScanTarget, cached: CachedFile, scanner: SecretScanner) -> str | None:
    if target.title_pending:
        return cached.title  # the transcript did not change: neither did its title
    if not target.title:
        return None
    if cached.title_digest == keyed_digest(target.title.encode(), scanner):
        return cached.title
    return scanner.redact_text(target.title)


def dirty_groups(
    planned: Sequence[Planned], cache: ScanCache | None, scanner: SecretScanner
) -> set[str]:
    """The sessions whose copies must be looked for again: one of their files is not answered
    from the cache, their files are not those cached (one is new or gone), or history.jsonl
    grew with lines of theirs; all of them when history.jsonl must be scanned whole."""
    if cache is None:
        return {item.group for item in planned}
    dirty: set[str] = set()
    members: dict[tuple[str, str], set[str]] = {}
    for item in planned:
        members.setdefault((item.shard, item.group), set()).add(cache.key(item.target.path))
        if item.verdict is Verdict.FRESH and not _title_changed(item, scanner):
            continue
        if item.target.role == "history" and item.verdict is Verdict.CHANGED:
            return {i.group for i in planned}
        dirty.add(item.group)
        if item.target.role == "history" and item.resume is not None:
            dirty.update(_sessions_in_tail(item))
    for (shard, group), paths in members.items():
        if set(cache.files(shard, group)) != paths:
            dirty.add(group)
    return dirty


def _title_changed(item: Planned, scanner: SecretScanner) -> bool:
    """Whether a fresh transcript's title is not the one cached (its redaction may need the
    session's values)."""
    cached = item.cached
    if not item.target.title or cached is None or item.target.title_pending:
        return False
    return cached.title_digest != keyed_digest(item.target.title.encode(), scanner)


def _sessions_in_tail(item: Planned) -> set[str]:
    """The sessions named by the lines appended to history.jsonl since it was cached."""
    assert item.resume is not None  # noqa: S101 - only for an append
    found: set[str] = set()
    with contextlib.suppress(OSError), item.target.path.open("rb") as stream:
        stream.seek(item.resume.offset)
        for raw in iter_raw_lines(stream, offset=item.resume.offset):
            record = parse_line(raw, json_loads_for_strings).record
            if record is not None and isinstance(record.get("sessionId"), str):
                found.add(record["sessionId"])
    return found


def recovered_values(
    result: FileAudit, upto_line: int | None, scanner: SecretScanner
) -> list[FoundValue] | None:
    """The values the detectors' findings of a file point at (lines up to `upto_line`, all
    when None), read back from the file; None when one is not there any more (its
    fingerprint does not match): then the file must be scanned again."""
    target = result.target
    offsets = {number: offset for offset, number in result.line_starts.items()}
    history = target.role == "history"
    scope = None if history else scope_of(target.session_id, target.path)
    values: list[FoundValue] = []
    # A value in a key is not read back (its finding names the object, not the key), nor
    # spread by value: a token detector finds its other copies wherever they stand.
    wanted = [
        f
        for f in result.findings
        if not f.by_value and not f.in_key and (upto_line is None or f.line <= upto_line)
    ]
    if not wanted:
        return values
    try:
        with target.path.open("rb") as stream:
            reader = _LineReader(stream, target.is_transcript)
            for finding in wanted:
                offset = offsets.get(finding.line)
                if offset is None:
                    return None
                text = reader.text_at(offset, finding)
                if text is None:
                    continue  # the scan found no string there to take a value from either
                value = text[finding.span[0] : finding.span[1]]
                full = scanner.fingerprint(value)
                if full[:FINGERPRINT_SHOWN] != finding.fingerprint:
                    return None
                where = finding.session_id if history else scope
                if where is not None:
                    info = ValueInfo(finding.kind, finding.detector, full, finding.prefix)
                    values.append((value, info, where))
    except OSError:
        return None
    return values


class _LineReader:
    """The string a finding's span is in: a JSON line's string at its pointer, a torn line's
    text, or a side file's text from the line's start (a key may run over several lines)."""

    def __init__(self, stream: object, is_transcript: bool) -> None:
        self._stream = stream
        self._fd = stream.fileno()  # type: ignore[attr-defined]
        self._is_transcript = is_transcript
        self._at: int | None = None
        self._record: object = None
        self._text = ""

    def text_at(self, offset: int, finding: Finding) -> str | None:
        if not self._is_transcript:
            need = 4 * finding.span[1] + 4
            return os.pread(self._fd, need, offset).decode("utf-8", errors="surrogateescape")
        if offset != self._at:
            self._load(offset)
        record = self._record
        if finding.json_path is None or not isinstance(record, dict):
            return self._text
        return string_at(record, finding.json_path)

    def _load(self, offset: int) -> None:
        stream = self._stream
        stream.seek(offset)  # type: ignore[attr-defined]
        data: bytes = stream.readline()  # type: ignore[attr-defined]
        terminated = data.endswith(b"\n")
        raw = RawLine(0, offset, data[:-1] if terminated else data, terminated)
        line = parse_line(raw, json_loads_for_strings)
        self._at, self._record, self._text = offset, line.record, line.text()


class FirstKinds:
    """What each value was first found as, over every file in report order (from the
    findings: fingerprints and kinds, no value), so that a session looked at again names a
    copy as a full scan would, even when the value was first found in a session that was not."""

    def __init__(self, files: Iterable[FileAudit]) -> None:
        self._kinds: dict[str, list[tuple[str, str, str]]] = {}
        for result in files:
            for finding in result.findings:
                if finding.by_value:
                    continue
                kinds = self._kinds.setdefault(finding.fingerprint, [])
                entry = (finding.kind, finding.detector, finding.prefix)
                if entry not in kinds:
                    kinds.append(entry)

    def remember(self, known: KnownValues, values: Iterable[FoundValue]) -> None:
        for value, found_as, scope in values:
            info = found_as
            for kind, detector, prefix in self._kinds.get(info.fingerprint[:FINGERPRINT_SHOWN], ()):
                if propagates(value, kind):
                    info = ValueInfo(kind, detector, found_as.fingerprint, prefix)
                    break
            known.add(value, info, scope)


def cache_entry(
    item: Planned, result: FileAudit, scanned: ScannedFile | None, scanner: SecretScanner
) -> CachedFile | None:
    """What the cache keeps of a file after this audit (None: nothing, it could not be read)."""
    if result.error:
        return None
    target = item.target
    title_digest = keyed_digest(target.title.encode(), scanner) if target.title else None
    if scanned is None:
        cached = item.cached
        assert cached is not None  # noqa: S101 - only fresh files are not scanned
        state, calls = cached.state, cached.calls
        if target.title_pending:
            title_digest = cached.title_digest
    else:
        if scanned.stat is None:
            return None
        state = file_state(scanned.stat, scanned.settled, *scanned.digests)
        calls = scanned.calls
    return CachedFile.of(
        state,
        result.findings,
        problems=list(result.problems),
        line_starts=dict(result.line_starts),
        calls=calls,
        title=result.title,
        title_digest=title_digest,
        shown=(result.shown_path, result.shown_project),
    )
