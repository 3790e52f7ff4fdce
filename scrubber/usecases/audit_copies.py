"""The audit's findings by value: after the detectors' scan of every file, each file of a
session that has known values is searched once more (one literal search over its bytes) and
every copy that is not already a finding becomes one, marked `by_value`.
"""

from __future__ import annotations

import bisect
import contextlib
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from scrubber.detection.finding import Finding
from scrubber.detection.key_scan import MIN_KEY_CHARS
from scrubber.detection.known_values import Copy, KnownValues, Scope, ValueIndex, ValueInfo
from scrubber.detection.placeholder import make_placeholder
from scrubber.detection.registry import prefilter_engine
from scrubber.detection.scan import SecretScanner
from scrubber.detection.value_blocks import Block, blocks
from scrubber.redaction.copies import LineCopies, jsonl_copies, scope_of, text_copies
from scrubber.transcript.records import json_pointer
from scrubber.usecases import parts
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN, FileAudit, project_name_shown

# Below this many bytes in all, the files are searched here: a pool costs its start.
POOL_MIN_BYTES = 4 << 20

_BINARY_SNIFF = 8192
CUT = "…"  # what ends a tool label the scan cut short (detection/walk.py)
_MIN_CUT_PIECE = 6  # the shortest start of a value, at a cut label's end, taken for the value
_COUNT_BLOCK = 1 << 20


def _is_binary(path: Path) -> bool:
    with path.open("rb") as stream:
        return b"\0" in stream.read(_BINARY_SNIFF)


def audit_copies(
    path: Path,
    is_transcript: bool,
    session_id: str | None,
    history: bool,
    existing: Sequence[Finding],
    index: ValueIndex,
    line_starts: Mapping[int, int],
    bounds: tuple[int, int | None] | None = None,
) -> list[Finding]:
    """The findings by value in one file: copies of the index's values (for the file's
    session, or each line's in history.jsonl) that no finding covers yet; `bounds`: only in
    the lines that start in [start, end) (a part of a large file, start a line start; end
    None: to the end)."""
    if not index or _is_binary(path):
        return []
    scope = None if history else scope_of(session_id, path)
    covered: dict[tuple[int, str | None], list[tuple[int, int]]] = {}
    found_on: dict[int, Counter[int]] = {}  # each line's findings of known values, by value
    for finding in existing:
        covered.setdefault((finding.line, finding.json_path), []).append(finding.span)
        number = index.number_of(finding.fingerprint)
        if number is not None:
            found_on.setdefault(finding.line, Counter())[number] += 1
    new: list[Finding] = []
    with path.open("rb") as stream:
        numbers = LineNumbers(stream.fileno(), line_starts)
        if bounds is not None:
            stream.seek(bounds[0])
        for block in blocks(stream, index, None if bounds is None else bounds[1]):
            if not block.candidates:
                continue
            if is_transcript:
                settled = _settled_lines(block, numbers, found_on, index) if found_on else None
                for line in jsonl_copies(block, index, scope, settled):
                    number = numbers.at(block.file_offset(line.start))
                    new.extend(_line_findings(path, number, line, session_id, covered, index))
            else:
                assert scope is not None  # noqa: S101 - only history.jsonl has no one scope
                for i, start, end, n in text_copies(block, index, scope):
                    copy = Copy(None, start, end, n)
                    number = numbers.at(block.offset) + i
                    new.extend(_findings(path, number, copy, session_id, None, covered, index))
    return new


def _settled_lines(
    block: Block, numbers: LineNumbers, found_on: Mapping[int, Counter[int]], index: ValueIndex
) -> Callable[[int, int], bool]:
    """For `jsonl_copies`: whether a candidate line of `block` holds no copy but the findings
    already on it (most candidate lines are where the detectors found the value: parsing them
    again to learn so was most of this pass), told from its bytes
    (`ValueIndex.copies_all_found`)."""

    def settled(start: int, end: int) -> bool:
        found = found_on.get(numbers.at(block.file_offset(start)))
        return found is not None and index.copies_all_found(block.data[start:end], found)

    return settled


def add_copies(
    files: Sequence[FileAudit],
    known: KnownValues,
    env: Mapping[str, str] | None = None,
    *,
    processes: int = 1,
    pool_min_bytes: int = POOL_MIN_BYTES,
) -> ValueIndex | None:
    """Add to each file's findings the copies of `known` values no detector found there;
    `processes` forked processes search the files when there are `pool_min_bytes` of them.
    Titles and the tool labels of findings lose the known values too (the detectors' scan
    redacted them with the detectors only). Returns the index of `known` (None: empty)."""
    if not len(known):
        return None
    index = known.index(prefilter_engine(env))
    scopes = known.scopes()
    todo: list[FileAudit] = []
    for audit_result in files:
        target = audit_result.target
        history = target.role == "history"
        scope = scope_of(target.session_id, target.path)
        if audit_result.title:
            audit_result.title = index.redact(audit_result.title, scope)
        if audit_result.error or (not history and scope not in scopes):
            continue
        todo.append(audit_result)
    pooled = processes if sum(f.size for f in todo) >= pool_min_bytes else 1
    for audit_result, new in _copies_in(todo, index, pooled):
        if isinstance(new, str):
            audit_result.error = new
        elif new:
            audit_result.findings.extend(new)
            audit_result.findings.sort(key=lambda f: f.line)  # stable: detectors' first
    labels = _Labels(index, known)
    for audit_result in files:
        labels.redact_findings(audit_result)
    return index


class _Labels:
    """Tool labels (`Bash(cmd …)`) without the known values of their finding's session. A
    label longer than the scan shows is cut (`…`): a value it cut in two leaves its start at
    the end, and that start goes too."""

    def __init__(self, index: ValueIndex, known: KnownValues) -> None:
        self._index = index
        self._known = known
        self._by_scope: dict[Scope, list[tuple[str, ValueInfo]]] | None = None
        self._done: dict[tuple[str, Scope], str] = {}

    def redact_findings(self, audit_result: FileAudit) -> None:
        target = audit_result.target
        history = target.role == "history"
        file_scope = scope_of(target.session_id, target.path)
        findings = audit_result.findings
        for i, finding in enumerate(findings):
            if not finding.source:
                continue
            scope = (finding.session_id or file_scope) if history else file_scope
            shown = self.label(finding.source, scope)
            if shown != finding.source:
                findings[i] = replace(finding, source=shown)

    def label(self, label: str, scope: Scope) -> str:
        done = self._done.get((label, scope))
        if done is None:
            done = self._index.redact(label, scope)
            if done.endswith(CUT):
                done = self._cut_tail(done[: -len(CUT)], scope) + CUT
            self._done[(label, scope)] = done
        return done

    def _cut_tail(self, text: str, scope: Scope) -> str:
        if self._by_scope is None:
            self._by_scope = {}
            for value, info, scopes in self._known.items():
                for where in scopes:
                    self._by_scope.setdefault(where, []).append((value, info))
        best = 0
        kind = None
        for value, info in self._by_scope.get(scope, ()):
            for length in range(min(len(value) - 1, len(text)), _MIN_CUT_PIECE - 1, -1):
                if length > best and text.endswith(value[:length]):
                    best, kind = length, info
                    break
        if kind is None:
            return text
        return text[:-best] + make_placeholder(kind.kind, kind.fingerprint)


def redacted_calls(
    calls: Sequence[tuple[str, str, str, str]], index: ValueIndex, scope: Scope
) -> list[tuple[str, str, str, str]]:
    """Remembered tool calls (for the scan cache) with the known values of `scope` out of
    their names and targets: a command, or an MCP tool's name, may hold a value a detector
    found elsewhere in the session."""
    if not calls or not index.knows(scope):
        return list(calls)
    texts = [text for _, name, target, _ in calls for text in (name, target)]
    flagged = index.may_hold(texts, scope)

    def shown(i: int) -> str:
        return index.redact(texts[i], scope) if i in flagged and texts[i] else texts[i]

    return [
        (call_id, shown(2 * n), shown(2 * n + 1), source)
        for n, (call_id, _, _, source) in enumerate(calls)
    ]


def _copies_in(
    files: list[FileAudit], index: ValueIndex, processes: int
) -> Iterator[tuple[FileAudit, list[Finding] | str]]:
    """Each file's copies (or why it could not be read), in the files' order; a large file
    is searched in parts, in parallel, like its scan (usecases/parts.py)."""
    tasks = _tasks(files, processes)
    if processes > 1 and len(tasks) > 1:
        context = multiprocessing.get_context("fork")
        with context.Pool(processes, _start, (files, index)) as pool:
            # Chunks of several small files save trips; a large file's parts go one by one.
            chunk = max(1, min(4, len(tasks) // (4 * processes)))
            yield from _per_file(files, pool.imap(_copies_of_one, tasks, chunksize=chunk))
        return
    yield from _per_file(files, ((i, _file_copies(files[i], index, b)) for i, b in tasks))


# One search: a file (its index in the list), whole (None) or the part [start, end) of it.
_Task = tuple[int, tuple[int, int | None] | None]


def _tasks(files: list[FileAudit], processes: int) -> list[_Task]:
    """The searches to run: each file whole, but a large transcript in parts when there are
    processes to share them (as many as its scan had)."""
    tasks: list[_Task] = []
    for i, audit_result in enumerate(files):
        target = audit_result.target
        jobs = parts.scan_jobs(audit_result.size) if processes > 1 else 1
        bounds: list[tuple[int, int | None]] = []
        if jobs > 1 and target.is_transcript and not audit_result.error:
            with contextlib.suppress(OSError):  # searched whole, which says why it cannot be
                count = jobs * parts.PARTS_PER_JOB
                bounds = list(parts.part_bounds(target.path, audit_result.size, count))
        if len(bounds) > 1:
            # The last part runs to the end, as a search of the whole file does (lines
            # appended since the scan are searched too).
            bounds[-1] = (bounds[-1][0], None)
            tasks.extend((i, part) for part in bounds)
        else:
            tasks.append((i, None))
    return tasks


def _per_file(
    files: list[FileAudit], done: Iterator[tuple[int, list[Finding] | str]]
) -> Iterator[tuple[FileAudit, list[Finding] | str]]:
    """The searches' results, in order, put together file by file (a part's error is the
    file's)."""
    current: int | None = None
    found: list[Finding] | str = []
    for i, new in done:
        if current is not None and i != current:
            yield files[current], found
            found = []
        current = i
        if isinstance(found, str):
            continue
        found = new if isinstance(new, str) else [*found, *new]
    if current is not None:
        yield files[current], found


def _file_copies(
    audit_result: FileAudit, index: ValueIndex, bounds: tuple[int, int | None] | None = None
) -> list[Finding] | str:
    target = audit_result.target
    try:
        return audit_copies(
            target.path,
            target.is_transcript,
            target.session_id,
            target.role == "history",
            audit_result.findings,
            index,
            audit_result.line_starts,
            bounds,
        )
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"


# In a forked process of `_copies_in` only: the files and the index, set as it starts.
_WORK: tuple[list[FileAudit], ValueIndex] | None = None


def _start(files: list[FileAudit], index: ValueIndex) -> None:
    global _WORK  # noqa: PLW0603 - one per forked process, set once as it starts
    _WORK = (files, index)


def _copies_of_one(task: _Task) -> tuple[int, list[Finding] | str]:
    if _WORK is None:
        raise RuntimeError("_copies_of_one outside a process started by _copies_in")
    files, index = _WORK
    i, bounds = task
    return i, _file_copies(files[i], index, bounds)


class LineNumbers:
    """The line numbers of line starts in one file, counted only when asked, from the nearest
    line start whose number is known (a line with a finding, a part's first line): a file
    whose copies are all findings already costs no count."""

    def __init__(self, fd: int, known: Mapping[int, int]) -> None:
        self._fd = fd
        pairs = sorted({0: 1, **known}.items())
        self._offsets = [offset for offset, _ in pairs]
        self._numbers = [number for _, number in pairs]

    def at(self, offset: int) -> int:
        i = bisect.bisect_right(self._offsets, offset) - 1
        start, number = self._offsets[i], self._numbers[i]
        if start == offset:
            return number
        at = start
        while at < offset:
            chunk = os.pread(self._fd, min(_COUNT_BLOCK, offset - at), at)
            if not chunk:
                break
            number += chunk.count(b"\n")
            at += len(chunk)
        self._offsets.insert(i + 1, offset)
        self._numbers.insert(i + 1, number)
        return number


def _line_findings(
    path: Path,
    number: int,
    line: LineCopies,
    session_id: str | None,
    covered: dict[tuple[int, str | None], list[tuple[int, int]]],
    index: ValueIndex,
) -> Iterator[Finding]:
    record = line.record or {}
    session = record.get("sessionId")
    uuid = record.get("uuid")
    for copy in line.copies:
        yield from _findings(
            path,
            number,
            copy,
            session if isinstance(session, str) else session_id,
            uuid if isinstance(uuid, str) else None,
            covered,
            index,
        )


def _findings(
    path: Path,
    number: int,
    copy: Copy,
    session_id: str | None,
    record_uuid: str | None,
    covered: dict[tuple[int, str | None], list[tuple[int, int]]],
    index: ValueIndex,
) -> Iterator[Finding]:
    for start, end in covered.get((number, copy.pointer), ()):
        if start < copy.end and copy.start < end:
            return  # a detector found it there already
    info = index.info(copy.value)
    yield Finding(
        file=str(path),
        line=number,
        json_path=copy.pointer,
        span=(copy.start, copy.end),
        kind=info.kind,
        detector=info.detector,
        fingerprint=info.fingerprint[:FINGERPRINT_SHOWN],
        session_id=session_id,
        record_uuid=record_uuid,
        source=None,
        in_thinking=copy.in_thinking,
        length=copy.end - copy.start,
        prefix=info.prefix,
        by_value=True,
    )


class Shown:
    """Places as reports show them: a file's path and its project folder's name (named after
    the cwd, which may hold a token) and the warnings that name files, redacted with the
    detectors and the values known in the file's session. Each text is redacted once."""

    def __init__(self, scanner: SecretScanner, index: ValueIndex | None) -> None:
        self._scanner = scanner
        self._index = index
        self._done: dict[tuple[str, Scope | None], str] = {}
        # What the detectors make of a text, whatever its scope: the project folder's name
        # is redacted for each of its sessions, 20,000 scans of one name in a large config.
        self._detected: dict[str, str] = {}

    def text(self, text: str, scope: Scope | None) -> str:
        done = self._done.get((text, scope))
        if done is None:
            done = self._detected.get(text)
            if done is None:
                done = self._detected[text] = self._scanner.redact_text(text)
            if self._index is not None and scope is not None:
                done = self._index.redact(done, scope)
            self._done[(text, scope)] = done
        return done

    def project(self, name: str, scope: Scope | None) -> str:
        return project_name_shown(name, lambda text: self.text(text, scope))

    def redact_place(self, audit_result: FileAudit) -> None:
        """Set the file's shown path and project (from what the cache showed, when it answered:
        redacted then with the values known then); its findings name the shown path."""
        target = audit_result.target
        shown = audit_result.shown_path
        scope = None if target.role == "history" else scope_of(target.session_id, target.path)
        # As cached, the same detectors made it, and when no value is known now it is done.
        if shown is None or self._index is not None:
            path = shown or str(target.path)
            if target.project:
                project = self.project(audit_result.shown_project or target.project, scope)
                audit_result.shown_project = project
                if shown is None and project != target.project:
                    parts = [project if p == target.project else p for p in target.path.parts]
                    path = str(Path(*parts))
            audit_result.shown_path = shown = self.text(path, scope)
        findings = audit_result.findings
        for i, f in enumerate(findings):
            pointer = self.pointer(f.json_path, scope)
            if f.file != shown or pointer != f.json_path:
                findings[i] = replace(f, file=shown, json_path=pointer)

    def pointer(self, pointer: str | None, scope: Scope | None) -> str | None:
        """A finding's JSON Pointer with any secret in the keys it passes through replaced by
        its placeholder: a key can hold a token (detection/key_scan.py), and a pointer spells
        out every key above the string it names. Only keys that can be data are looked at."""
        if not pointer:
            return pointer
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
        if not any(len(t) >= MIN_KEY_CHARS and not t.isalpha() for t in tokens):
            return pointer
        shown = [self.text(t, scope) if len(t) >= MIN_KEY_CHARS else t for t in tokens]
        return pointer if shown == tokens else json_pointer(*shown)
