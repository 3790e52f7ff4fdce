"""`scrub export`: a session to share, with every secret redacted, in a form a person reads
(Markdown, one HTML file) or as the redacted transcript itself (issue 18).

How: the session's transcript and its subagents' are redacted together, exactly as `scrub
redact` does (usecases/redact.py: a value found in one file is redacted in all of them), into a
private temporary folder, with the values found in the session's other files and history lines
known first (session_values.py: audit treats their copies as findings too); the conversation is read from those copies and rendered. Before
anything is written, the output is checked: the detectors run over it, and every value the
redaction found is looked for in it (raw, and in the HTML once unescaped). Anything found means
nothing is written (exit 3): an export fails closed.
"""

from __future__ import annotations

import html
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from scrubber import __version__
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.scan import SecretScanner
from scrubber.durable import atomic_write
from scrubber.errors import ScrubberError, UsageError
from scrubber.export.conversation import Redaction, read_conversation, redactions, subagent_files
from scrubber.export.html import render_html
from scrubber.export.markdown import Header, render_markdown
from scrubber.paths import projects_dir
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.project_name import ProjectNames
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.sessions import SessionInfo, find_session
from scrubber.usecases.redact import redact_copies
from scrubber.usecases.session_values import gather_session_values, history_file
from scrubber.usecases.verify import check_redacted

# The output is checked in pieces this long (overlapping), so no detector reads megabytes at once.
_CHECK_PIECE = 1 << 16
_OVERLAP = 4096
_TAGS = re.compile(r"<[^>]*>")


class ExportFormat(StrEnum):
    MARKDOWN = "markdown"
    HTML = "html"
    JSONL = "jsonl"


class ExportLeakError(ScrubberError):
    """The rendered export still held something the detectors or the found values flag."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    session: str  # id, id prefix or title
    config_dir: Path
    format: ExportFormat = ExportFormat.MARKDOWN
    output: Path | None = None  # None: the caller prints `content`
    thinking: bool = False


@dataclass(slots=True)
class ExportResult:
    session_id: str
    format: ExportFormat
    output: Path | None
    content: bytes = field(repr=False)
    redacted: list[Redaction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_export(request: ExportRequest, scanner: SecretScanner, engine: str) -> ExportResult:
    if request.output is not None:
        _refuse_output(request.output, request.config_dir)
    found = find_session(request.config_dir, request.session)
    # Found by id, the session's metadata (its title) was not read: the header needs it.
    info = replace(found, **read_metadata(found.transcript).session_fields())
    workdir = Path(tempfile.mkdtemp(prefix="scrub-export-"))  # 0700: only redacted copies go in
    try:
        known = KnownValues()
        transcripts = (info.transcript, *info.subagent_transcripts())
        gather_session_values(
            known,
            scanner,
            root=info.config_dir,
            project=info.project,
            session_id=info.id,
            skip=transcripts,
            history=history_file(request.config_dir),
        )
        transcript = _redacted_copies(info, transcripts, workdir, scanner, known)
        index = known.index(engine)
        if request.format is ExportFormat.JSONL:
            content, redacted, notes = _jsonl(transcript, info, scanner, index)
        else:
            content, redacted, notes = _rendered(request, info, transcript, scanner, index, known)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if request.output is not None:
        try:
            atomic_write(request.output, [content], mode=0o600)
        except OSError as error:
            raise ScrubberError(
                f"cannot write {request.output}: {error.strerror}; nothing was written",
                "check the folder exists and is writable",
            ) from None
    return ExportResult(info.id, request.format, request.output, content, redacted, notes)


def _refuse_output(output: Path, config_dir: Path) -> None:
    if output.is_dir():
        raise UsageError(f"-o {output}: is a folder", hint="name a file")
    resolved = output.resolve()
    projects = projects_dir(config_dir).resolve()
    if resolved == projects or projects in resolved.parents:
        raise UsageError(
            f"-o {output}: inside Claude Code's projects folder",
            hint="Claude Code reads (and its cleanup deletes) files there; write elsewhere",
        )
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: the folder {output.parent} does not exist")


def _redacted_copies(
    info: SessionInfo,
    transcripts: tuple[Path, ...],
    workdir: Path,
    scanner: SecretScanner,
    known: KnownValues,
) -> Path:
    """The transcript and its subagents' (`transcripts`, the main one first) redacted together
    into `workdir` (subagents under `subagents/`); the redacted transcript's path."""
    transcript = workdir / info.transcript.name
    pairs = [(info.transcript, transcript)]
    pairs += [(path, workdir / "subagents" / path.name) for path in transcripts[1:]]
    redact_copies(pairs, scanner, thinking=ThinkingMode.REDACT, known=known)
    return transcript


def _header(
    info: SessionInfo, scanner: SecretScanner, index: ValueIndex, known: KnownValues
) -> Header:
    """The header's metadata, redacted: a title, or a project folder named after the working
    directory, can hold a token (the check of the output would then fail the export); in the
    folder's name it stands in its folder form (redaction/project_name.py)."""
    title = _redact_label(info.title, scanner, index, info.id) if info.title else None
    cwds = (info.cwd,) if info.cwd else ()
    return Header(
        info.id,
        title,
        ProjectNames(scanner, known).shown(info.project, info.id, cwds),
        info.first_timestamp,
        info.last_timestamp,
        f"scrub {__version__}",
    )


def _redact_label(text: str, scanner: SecretScanner, index: ValueIndex, scope: str) -> str:
    return index.redact(scanner.redact_text(text), scope)


def _rendered(
    request: ExportRequest,
    info: SessionInfo,
    transcript: Path,
    scanner: SecretScanner,
    index: ValueIndex,
    known: KnownValues,
) -> tuple[bytes, list[Redaction], list[str]]:
    subagents = subagent_files(transcript.parent / "subagents")
    conversation = read_conversation(
        transcript, "Conversation", thinking=request.thinking, subagents=subagents
    )
    redacted = redactions(conversation)
    header = _header(info, scanner, index, known)
    render = render_html if request.format is ExportFormat.HTML else render_markdown
    # Checked without the closing table: it is made of the placeholders and places of what is
    # checked, and a row (a kind, a place, 8 hex digits) reads to a rule as a labelled value.
    body = render(header, conversation, [])
    if request.format is ExportFormat.HTML:
        # What a browser shows: tags gone, entities decoded (a secret could hide behind `&amp;`).
        _check_text(html.unescape(_TAGS.sub(" ", body)), scanner, index, info.id)
    _check_text(body, scanner, index, info.id)
    text = render(header, conversation, redacted)
    # A lone surrogate (JSON can escape one; UTF-8 cannot hold it) becomes U+FFFD.
    data = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")
    return data, redacted, list(conversation.notes)


def _jsonl(
    transcript: Path, info: SessionInfo, scanner: SecretScanner, index: ValueIndex
) -> tuple[bytes, list[Redaction], list[str]]:
    check = check_redacted(transcript, scanner, info.transcript)
    left = check.findings + check.findings_in_thinking
    if left:
        raise _leak(left, "the redacted transcript")
    data = transcript.read_bytes()
    _check_text(data.decode("utf-8", "surrogateescape"), scanner, index, info.id, detectors=False)
    return data, _replaced(info.transcript, transcript), []


def _replaced(original: Path, redacted: Path) -> list[Redaction]:
    """Every replacement the redaction made in the transcript, by line, as `scrub redact`
    counts them: each line's placeholders less those the original line already held. (Not
    the conversation's placeholders: those are on the active path only, once per place, and
    miss the fields no rendering shows, such as `toolUseResult`, and the summaries.)"""
    found: list[Redaction] = []
    with original.open("rb") as before, redacted.open("rb") as after:
        for number, (old, new) in enumerate(zip(before, after, strict=False), 1):
            if old == new:
                continue
            there = Counter(_placeholders(old))
            for kind, short in _placeholders(new):
                if there[(kind, short)]:
                    there[(kind, short)] -= 1
                else:
                    found.append(Redaction(kind, f"line {number}", short))
    return found


def _placeholders(line: bytes) -> list[tuple[str, str]]:
    text = line.decode("utf-8", "surrogateescape")
    return [(m["kind"], m["short"]) for m in PLACEHOLDER_RE.finditer(text)]


def _check_text(
    text: str, scanner: SecretScanner, index: ValueIndex, scope: str, *, detectors: bool = True
) -> None:
    """Fail closed when the output holds a secret: the detectors' findings (in overlapping
    pieces) and every copy of a value the redaction found."""
    found = 0
    if detectors:
        start = 0
        while start < len(text):
            piece = text[start : start + _CHECK_PIECE + _OVERLAP]
            found += len(scanner.scan_text(piece))
            start += _CHECK_PIECE
    if index:
        found += len(index.text_copies(text, scope))
    if found:
        raise _leak(found, "the export")


def _leak(count: int, what: str) -> ExportLeakError:
    return ExportLeakError(
        f"{what} still held {count} secret(s) after redaction; nothing was written",
        "this is a bug in scrubber: please report it (scrub audit --session ID shows where)",
    )
