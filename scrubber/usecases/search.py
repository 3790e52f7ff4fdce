"""`scrub search`: find a phrase in the decoded text of every session (live, trashed, archived)
and say where it is, without ever showing a secret (issue 18).

Speed: a session's files are first read as bytes and searched for the pattern's raw literal
(search_pattern.py); a session without it is done. One with it is read again line by line, all
its files: each line goes through the secret scanner (as audit does: gates first, so most lines
cost a byte search), which remembers the file's tool calls and the values it found, and only
the lines that hold the literal are decoded and searched. An archive cannot be read twice
without decrypting twice, so its transcripts get the second pass only.

Safety: a hit's context is cut from its string with the secrets the scanner found there
replaced by their placeholders, then every copy of a value found anywhere in the session (its
transcripts, its other files and its history lines, as audit reads them: session_values.py;
detection/known_values.py), then whatever the detectors still find in the cut context and in
the matched text alone. Titles, projects, sources and tool labels go through the same. The pattern itself is never
echoed: a user may be looking for a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from scrubber.archive.age import Identity
from scrubber.detection.context import describe_tool_use
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.scan import FoundSecret, SecretScanner
from scrubber.detection.walk import content_blocks
from scrubber.paths import open_regular
from scrubber.redaction.copies import remember, scan_values
from scrubber.redaction.project_name import ProjectNames
from scrubber.transcript.jsonl import Line, iter_raw_lines, parse_line
from scrubber.transcript.records import parse_timestamp
from scrubber.usecases.parts import scan_jobs
from scrubber.usecases.search_jobs import search_sessions
from scrubber.usecases.search_pattern import SearchPattern
from scrubber.usecases.search_places import Piece, SearchScope, record_pieces
from scrubber.usecases.search_redaction import (
    clean_path,
    clean_place,
    clean_text,
    clip,
    copy_spans,
    found_spans,
    outside_placeholders,
    printable,
    replace_spans,
)
from scrubber.usecases.search_sources import (
    Origin,
    SearchedSession,
    SkippedSource,
    Unreadable,
    archived_sessions,
    live_sessions,
    trashed_sessions,
)
from scrubber.usecases.session_values import history_file

_BLOCK = 1 << 22
# A hit keeps this much of its string on each side until the session's values are known; the
# context shown is narrower, so a copy of a value cut at the kept edge is never on display.
_KEPT = 400
_SHOWN = 70
_LABEL_MAX = 80
# Tool calls remembered per file for the labels of their outputs (a result follows its call
# closely; memory must not grow with the file), as detection/walk.py does.
_MAX_CALLS = 8192
# Hits worked out per session (further lines holding the literal are only counted): a common
# word must not make the search decode, scan and hold thousands of contexts.
PER_SESSION = 20


@dataclass(frozen=True, slots=True)
class SearchRequest:
    pattern: SearchPattern
    config_dir: Path
    home: Path
    scope: SearchScope = SearchScope.ALL
    project: str | None = None
    since: datetime | None = None
    live: bool = True
    trash: bool = False
    archives: Path | None = None  # the archive folder, when archives are searched
    identities: Sequence[Identity] = field(default=(), repr=False)
    key_hint: str = "KEY"  # how the resume command names the identity file
    per_session: int = PER_SESSION


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_id: str
    project: str
    origin: Origin
    title: str | None  # redacted
    timestamp: datetime | None
    transcript: str  # the file's name: the session's own, or a subagent's
    line: int
    where: str  # redacted
    context: str  # redacted, on one line
    source: str  # the transcript, archive file or trash folder
    resume: tuple[str, ...]


@dataclass(slots=True)
class SearchResult:
    hits: list[SearchHit] = field(default_factory=list)
    sessions: int = 0  # sessions searched
    sessions_matched: int = 0
    more_lines: int = 0  # lines holding the literal past `per_session` hits, not decoded
    bytes_read: int = 0
    skipped: list[SkippedSource] = field(default_factory=list)


@dataclass(slots=True)
class _Pending:
    """A hit before its session is fully read: the kept piece of its string, with the
    scanner's findings in it (spans in the piece), the match's span, and where it is."""

    text: str = field(repr=False)
    secrets: list[tuple[int, int, str]] = field(repr=False)
    match: tuple[int, int]
    where: str = field(repr=False)
    transcript: str
    line: int
    timestamp: datetime | None


@dataclass(slots=True)
class SessionOutcome:
    """What searching one session gave (it may come from a forked process)."""

    hits: list[SearchHit] = field(default_factory=list)
    skipped: SkippedSource | None = None
    bytes_read: int = 0
    more_lines: int = 0


def run_search(
    request: SearchRequest,
    scanner: SecretScanner,
    engine: str,
    *,
    env: Mapping[str, str] | None = None,
) -> SearchResult:
    """Search what the request names; `engine`: the literal-search engine for the values found
    (detection.registry.prefilter_engine); `env` says how many processes may search side by
    side (`SCRUB_JOBS`, as for audit's parts; one when not given)."""
    result = SearchResult()
    sessions: list[SearchedSession] = []
    history = history_file(request.config_dir)  # read once, if a session with hits needs it
    if request.live:
        sessions += live_sessions(request.config_dir, history)
    if request.trash:
        found, skipped = trashed_sessions(request.home)
        sessions += found
        result.skipped += skipped
    if request.archives is not None:
        found, skipped = archived_sessions(request.archives, request.identities, history)
        sessions += found
        result.skipped += skipped
    chosen = [s for s in sessions if _chosen(s, request)]
    result.sessions = len(chosen)
    jobs = 1 if env is None else scan_jobs(sum(s.size for s in chosen), env)
    search = partial(search_session, request=request, scanner=scanner, engine=engine)
    for outcome in search_sessions(chosen, search, jobs):
        result.hits += outcome.hits
        result.bytes_read += outcome.bytes_read
        result.more_lines += outcome.more_lines
        result.sessions_matched += bool(outcome.hits or outcome.more_lines)
        if outcome.skipped is not None:
            result.skipped.append(outcome.skipped)
    result.hits.sort(key=_newest_first)
    # A skipped archive or trash folder is named by its path, which holds the project folder.
    nothing = KnownValues().index(engine)
    result.skipped = [
        SkippedSource(clean_path(s.where, scanner, nothing, ""), s.reason) for s in result.skipped
    ]
    return result


def _skipped(
    session: SearchedSession, reason: str, scanner: SecretScanner, known: KnownValues, engine: str
) -> SkippedSource:
    """A source left out, named by its path with the project folder in it shown."""
    where = clean_place(
        session.where,
        session.project,
        ProjectNames(scanner, known),
        scope=session.session_id,
        cwd=session.cwd,
        scanner=scanner,
        index=known.index(engine),
    )
    return SkippedSource(where, reason)


def _chosen(session: SearchedSession, request: SearchRequest) -> bool:
    if request.project is not None and not session.in_project(request.project):
        return False
    last = session.last_activity
    return request.since is None or last is None or last >= request.since


def _newest_first(hit: SearchHit) -> tuple[float, str, str, int]:
    moment = -hit.timestamp.timestamp() if hit.timestamp is not None else float("inf")
    return (moment, hit.session_id, hit.transcript, hit.line)


@dataclass(slots=True)
class _Found:
    """What the search of one session gathered: its hits so far, the values found in it, and
    the lines past `per_session` hits that hold the literal."""

    known: KnownValues = field(default_factory=KnownValues)
    pending: list[_Pending] = field(default_factory=list)
    more_lines: int = 0


def search_session(
    session: SearchedSession, request: SearchRequest, scanner: SecretScanner, engine: str
) -> SessionOutcome:
    """Search one session's transcripts, its hits' contexts redacted."""
    outcome = SessionOutcome()
    found = _Found()
    literal = request.pattern.literal
    if literal is not None and session.files:
        # A session without the literal is done in a byte search. One with it is read whole,
        # every file of it: a value found in one (a subagent's read of .env) is redacted in the
        # contexts of the others.
        holds, outcome.bytes_read = _any_holds(session.files, literal)
        if not holds:
            return outcome
    try:
        with session.open_transcripts() as streams:
            for name, stream in streams:
                outcome.bytes_read += _search_stream(name, stream, session, request, scanner, found)
    except Unreadable as problem:
        outcome.skipped = _skipped(session, str(problem), scanner, found.known, engine)
    if not found.pending:
        return outcome
    if session.side_values is not None:
        try:
            session.side_values(found.known, scanner)
        except Unreadable as problem:
            # Without those values a context could show one of them: no hit is shown.
            outcome.skipped = _skipped(session, str(problem), scanner, found.known, engine)
            return outcome
    session = session.described()
    outcome.more_lines = found.more_lines
    index = found.known.index(engine)
    scope = session.session_id
    # The project folder is named after the working directory, which can hold a token.
    names = ProjectNames(scanner, found.known)
    project = names.shown(session.project, scope, (session.cwd,) if session.cwd else ())
    source = clean_place(
        session.where,
        session.project,
        names,
        scope=scope,
        cwd=session.cwd,
        scanner=scanner,
        index=index,
    )
    title = printable(clean_text(session.title, scanner, index, scope)) if session.title else None
    resume = _resume(session, request.key_hint)
    for item in found.pending:
        if (
            request.since is not None
            and item.timestamp is not None
            and item.timestamp < request.since
        ):
            continue
        outcome.hits.append(
            SearchHit(
                session_id=session.session_id,
                project=project,
                origin=session.origin,
                title=title,
                timestamp=item.timestamp or session.last_activity,
                transcript=item.transcript,
                line=item.line,
                where=clip(clean_text(item.where, scanner, index, scope), _LABEL_MAX),
                context=_context(item, scanner, index, scope),
                source=source,
                resume=resume,
            )
        )
    return outcome


def _holds(stream: BinaryIO, literal: bytes) -> tuple[bool, int]:
    """Whether the stream's bytes hold `literal` (blocks overlap by its length), and how
    many bytes were read."""
    tail = b""
    read = 0
    while block := stream.read(_BLOCK):
        read += len(block)
        if literal in tail + block[: len(literal)] or literal in block:
            return True, read
        tail = block[-(len(literal) - 1) :] if len(literal) > 1 else b""
    return False, read


def _any_holds(paths: Sequence[Path], literal: bytes) -> tuple[bool, int]:
    """Whether any of the files holds `literal`, and how many bytes that took to know."""
    read = 0
    for path in paths:
        try:
            stream = open_regular(path, follow=False)
        except OSError:
            continue
        with stream:
            holds, size = _holds(stream, literal)
        read += size
        if holds:
            return True, read
    return False, read


class _Calls:
    """The tool calls a file made (the most recent ones): id -> (tool name, target), for the
    labels of their outputs."""

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, str]] = {}

    def note(self, record: Mapping[str, Any]) -> None:
        if record.get("type") != "assistant":
            return
        for block in content_blocks(record):
            call_id, name = block.get("id"), block.get("name")
            if block.get("type") == "tool_use" and isinstance(call_id, str):
                call = describe_tool_use(
                    name if isinstance(name, str) else "tool", block.get("input")
                )
                self._calls[call_id] = (call.name, call.target)
        while len(self._calls) > _MAX_CALLS:
            del self._calls[next(iter(self._calls))]

    def get(self, call_id: str) -> tuple[str, str] | None:
        return self._calls.get(call_id)


def _search_stream(
    name: str,
    stream: BinaryIO,
    session: SearchedSession,
    request: SearchRequest,
    scanner: SecretScanner,
    found: _Found,
) -> int:
    pattern = request.pattern
    read = 0
    file_scan = scanner.new_file_scan()
    calls = _Calls()
    scope = session.session_id
    subagent = name != f"{session.session_id}.jsonl"
    for raw in iter_raw_lines(stream):
        read += len(raw.data) + 1
        # Every line goes through the scanner, to know every value found in the session.
        scan = file_scan.scan_raw(raw)
        secrets: dict[str | None, tuple[FoundSecret, ...]] = {}
        if scan is not None:
            if scan.line.record is not None:
                calls.note(scan.line.record)
            if scan.leaves:
                remember(found.known, scan_values(scan, scope))
                secrets = {leaf.pointer: leaf.found for leaf in scan.leaves}
        if not pattern.may_match(raw.data):
            continue
        if len(found.pending) >= request.per_session:
            found.more_lines += 1  # not decoded: enough hits of this session are shown
            continue
        line = scan.line if scan is not None else parse_line(raw)
        for piece, spans in _matches(line, pattern, request.scope, calls.get):
            for start, end in _apart(spans):
                where = ("subagent: " if subagent else "") + piece.where
                here = secrets.get(piece.pointer if line.record is not None else None, ())
                found.pending.append(_pend(piece.text, here, start, end, where, name, line))
    return read


def _apart(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """One hit per stretch of a string: a match within the context of the one before it is
    already on display there."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if not kept or start > kept[-1][1] + _SHOWN:
            kept.append((start, end))
    return kept


def _matches(
    line: Line,
    pattern: SearchPattern,
    scope: SearchScope,
    calls: Callable[[str], tuple[str, str] | None],
) -> Iterator[tuple[Piece, list[tuple[int, int]]]]:
    record = line.record
    if record is None:
        if line.value is None and line.problem is not None and scope is SearchScope.ALL:
            spans = pattern.spans(line.text())
            if spans:
                where = f"line {line.number} (not JSON: {line.problem})"
                yield Piece("", line.text(), where), spans
        return
    matched_result = False
    for piece in record_pieces(record, scope, calls):
        if piece.copy and matched_result:
            continue
        spans = pattern.spans(piece.text)
        if spans:
            matched_result = matched_result or piece.where.startswith("output of")
            yield piece, spans


def _pend(
    text: str,
    found: tuple[FoundSecret, ...],
    start: int,
    end: int,
    where: str,
    transcript: str,
    line: Line,
) -> _Pending:
    low, high = max(0, start - _KEPT), min(len(text), end + _KEPT)
    # A secret across an edge of the kept piece is kept whole, so that it is replaced whole.
    for item in found:
        if item.hit.start < low < item.hit.end:
            low = item.hit.start
        if item.hit.start < high < item.hit.end:
            high = item.hit.end
    secrets = [
        (item.hit.start - low, item.hit.end - low, item.placeholder)
        for item in found
        if low <= item.hit.start and item.hit.end <= high
    ]
    record = line.record
    stamp = parse_timestamp(record.get("timestamp")) if record is not None else None
    return _Pending(
        text[low:high], secrets, (start - low, end - low), where, transcript, line.number, stamp
    )


def _context(item: _Pending, scanner: SecretScanner, index: ValueIndex, scope: str) -> str:
    text, match = replace_spans(item.text, item.secrets, item.match)
    text, match = replace_spans(text, copy_spans(text, index, scope), match)
    text, match = replace_spans(text, found_spans(text, scanner), match)
    low, high = outside_placeholders(
        text, max(0, match[0] - _SHOWN), min(len(text), match[1] + _SHOWN)
    )
    shown, at = text[low:high], (match[0] - low, match[1] - low)
    # The detectors once more, on what is shown and on the matched text alone.
    shown, at = replace_spans(shown, found_spans(shown, scanner), at)
    alone = [(s + at[0], e + at[0], p) for s, e, p in found_spans(shown[at[0] : at[1]], scanner)]
    shown, at = replace_spans(shown, alone, at)
    flat = printable(" ".join(shown.split()))
    return ("…" if low > 0 else "") + flat + ("…" if high < len(text) else "")


def _resume(session: SearchedSession, key_hint: str) -> tuple[str, ...]:
    resume = f"claude --resume {session.session_id}"
    if session.origin is Origin.ARCHIVE:
        return (f"scrub restore {session.session_id} -i {key_hint}", resume)
    if session.origin is Origin.TRASH:
        version = f" --version {session.trash_version}" if session.trash_version else ""
        return (f"scrub undelete {session.session_id}{version}", resume)
    return (resume,)
