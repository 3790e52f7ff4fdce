"""The values the detectors find in a session's files other than its transcripts: the rest
of its bundle (tool-results/, file-history/, session-env/, debug/, todos, tasks: the files
audit scans for the session, see audit_targets.py) and its lines of history.jsonl. Issue 12
made every copy of such a value a finding; search and export read the transcripts themselves
and take these in, so a value seen in clear only in a .env snapshot is redacted in a prompt too.

Every file is opened without following links: a JSONL file is read line by line through the
scanner (gates first, as audit does), any other text as `scrub redact` reads it; a binary file
is skipped, as audit's pass over copies skips it. (audit_targets.py walks the same bundle with
the same `regular_files_at`.)
"""

from __future__ import annotations

import io
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import BinaryIO

from scrubber.detection.known_values import KnownValues
from scrubber.detection.scan import SecretScanner
from scrubber.paths import open_regular
from scrubber.redaction.copies import remember, scan_values
from scrubber.redaction.lines import FileKind, FileRedaction, redact_text_stream
from scrubber.transcript.jsonl import IO_BUFFER, iter_raw_lines
from scrubber.transcript.sessions import regular_files_at, session_bundle

_BINARY_SNIFF = 8192


def session_files(bundle: Collection[Path]) -> Iterator[Path]:
    """The regular files at or below each path of a session bundle, links not followed."""
    for path in bundle:
        yield from regular_files_at(path)


def gather_session_values(
    known: KnownValues,
    scanner: SecretScanner,
    *,
    root: Path,
    project: str,
    session_id: str,
    skip: Collection[Path] = (),
    history: HistoryValues | None = None,
) -> None:
    """Add to `known` (for `session_id`) the values found in the session's bundle under
    `root` (a config dir, or a trash slot shaped like one) other than the files in `skip`
    (the transcripts the caller reads itself), and in the lines of `history` that belong to
    the session."""
    skipped = set(skip)
    for path in session_files(session_bundle(root, project, session_id)):
        if path not in skipped:
            _gather_file(known, scanner, path, session_id)
    if history is not None:
        history.add_to(known, scanner, session_id)


def _gather_file(known: KnownValues, scanner: SecretScanner, path: Path, scope: str) -> None:
    try:
        stream = open_regular(path, follow=False)
    except OSError:
        return  # vanished or replaced by something else since it was listed
    with stream:
        gather_stream_values(known, scanner, path.name, stream, scope)


def gather_stream_values(
    known: KnownValues, scanner: SecretScanner, name: str, stream: BinaryIO, scope: str
) -> None:
    """Add to `known` (for `scope`) the values found in one file's bytes (`name`: its file
    name): a JSONL file line by line through the scanner, any other text as `scrub redact`
    reads it (blocks of whole lines, a PEM block never split), its redaction written nowhere;
    a binary file is skipped. A read error ends the file; what was found before it is kept
    (more is redacted, not less)."""
    result = FileRedaction(Path(name), None, FileKind.TEXT)
    lines = io.BufferedReader(_Raw(stream), IO_BUFFER)
    try:
        if b"\0" in lines.peek(_BINARY_SNIFF)[:_BINARY_SNIFF]:
            return
        if name.endswith(".jsonl"):
            file_scan = scanner.new_file_scan()
            for raw in iter_raw_lines(lines):
                scan = file_scan.scan_raw(raw)
                if scan is not None and scan.leaves:
                    remember(known, scan_values(scan, scope))
        else:
            for _ in redact_text_stream(lines, scanner, result):
                pass
    except OSError:
        pass
    # Found under a bare file name, the values have no session yet: they are `scope`'s.
    for value, info, _scopes in result.values.items():
        known.add(value, info, scope)


class _Raw(io.RawIOBase):
    """Any byte stream as a raw one, for a buffered reader that can peek at its head."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class HistoryValues:
    """The values found in a history.jsonl, by the session each line names. The file holds
    every session's prompts: it is read once, the first time a session's values are asked for
    (a search asks for those of every session with hits), each line through the scanner."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: KnownValues | None = None

    def add_to(self, known: KnownValues, scanner: SecretScanner, session_id: str) -> None:
        if self._known is None:
            self._known = KnownValues()
            self._read(scanner, self._known)
        for value, info, scopes in self._known.items():
            if session_id in scopes:
                known.add(value, info, session_id)

    def _read(self, scanner: SecretScanner, into: KnownValues) -> None:
        try:
            stream = open_regular(self.path, follow=False)
        except OSError:
            return
        with stream:
            try:
                file_scan = scanner.new_file_scan()
                for raw in iter_raw_lines(stream):
                    scan = file_scan.scan_raw(raw)
                    if scan is not None and scan.leaves:
                        remember(into, scan_values(scan, None))  # the line's own sessionId
            except OSError:
                pass  # what was found before the error is kept


def history_file(config_dir: Path) -> HistoryValues | None:
    """The config dir's history.jsonl, when there is one (a link is not followed)."""
    path = config_dir / "history.jsonl"
    return HistoryValues(path) if path.is_file() and not path.is_symlink() else None
