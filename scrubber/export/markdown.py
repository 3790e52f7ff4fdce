"""A conversation as Markdown, for tickets and handovers: one heading per turn, tool inputs and
outputs in code fences (each fence longer than any run of backticks inside it, so no content can
close it), subagent conversations quoted where their calls are, and the list of redactions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from scrubber.export.conversation import Conversation, Entry, EntryKind, Redaction
from scrubber.export.visible import visible

_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class Header:
    """What the rendering says about the session, already redacted."""

    session_id: str
    title: str | None
    project: str
    first: datetime | None
    last: datetime | None
    tool: str  # `scrub 0.x`


# A record's timestamp is what its file says: one later than now (give or take a clock a day
# fast) or before Claude Code existed is not a time anything happened, and is not shown as one.
INVALID_DATE = "(invalid date)"
_EARLIEST = datetime(2020, 1, 1, tzinfo=UTC)
_CLOCK_SLACK = timedelta(days=1)


def when(moment: datetime | None, now: datetime | None = None) -> str:
    """A record's time as the export shows it: "" when it has none, INVALID_DATE when the file
    says a time that cannot be (in the future, or before 2020)."""
    if moment is None:
        return ""
    latest = (now or datetime.now(UTC)) + _CLOCK_SLACK
    if moment.tzinfo is None or not _EARLIEST <= moment <= latest:
        return INVALID_DATE
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _inline(text: str) -> str:
    """Text for a heading or a table cell: one line, no markup characters that matter there."""
    return " ".join(text.split()).replace("|", "\\|").replace("`", "'")


def _entry(entry: Entry, number: int, level: int) -> list[str]:
    stamp = f" · {when(entry.timestamp)}" if entry.timestamp else ""
    hashes = "#" * min(level, 6)
    if entry.kind is EntryKind.COMPACTED:
        return [f"{hashes} {number}. Conversation compacted{stamp}", ""]
    if entry.kind is EntryKind.SUBAGENT and entry.subagent is not None:
        return _quoted(entry.subagent, level)
    if entry.kind is EntryKind.TOOL:
        lines = [f"{hashes} {number}. Tool call `{_inline(entry.tool)}`{stamp}", ""]
        if entry.text:
            lines += ["Input:", "", _fence(entry.text), ""]
        if entry.output is not None:
            label = "Output (error):" if entry.is_error else "Output:"
            lines += [label, "", _fence(entry.output), ""]
        else:
            lines += ["No output on this path.", ""]
        if entry.subagent is not None:
            lines += _quoted(entry.subagent, level)
        return lines
    title = entry.kind.value.capitalize()
    body = _fence(entry.text) if entry.kind is EntryKind.SUMMARY else entry.text
    if entry.kind is EntryKind.THINKING:
        body = "\n".join("> " + line for line in entry.text.split("\n"))
    return [f"{hashes} {number}. {title}{stamp}", "", body, ""]


def _quoted(conversation: Conversation, level: int) -> list[str]:
    inner = "\n".join(_conversation(conversation, level + 1)).split("\n")
    return [*("> " + line if line else ">" for line in inner), ""]


def _conversation(conversation: Conversation, level: int) -> list[str]:
    lines = [f"{'#' * min(level, 6)} {_inline(conversation.name)}", ""]
    for note in conversation.notes:
        lines += [f"*Note: {note}*", ""]
    for number, entry in enumerate(conversation.entries, 1):
        lines += _entry(entry, number, level + 1)
    return lines


def render_markdown(header: Header, conversation: Conversation, redacted: list[Redaction]) -> str:
    title = _inline(header.title) if header.title else header.session_id
    span = " – ".join(filter(None, (when(header.first), when(header.last))))
    lines = [
        f"# {title}",
        "",
        f"Session `{header.session_id}` · project `{_inline(header.project)}`"
        + (f" · {span}" if span else ""),
        "",
        f"Exported by {header.tool}: every secret found is replaced by "
        "`[REDACTED:<kind>:<fingerprint>]`.",
        "",
    ]
    lines += _conversation(conversation, 2)
    lines += ["## What was redacted", ""]
    if not redacted:
        lines += ["Nothing: no secret was found in what is shown.", ""]
    else:
        lines += ["| kind | where | fingerprint |", "|---|---|---|"]
        lines += [f"| {r.kind} | {_inline(r.where)} | `{r.fingerprint}` |" for r in redacted]
        lines.append("")
    # Last, over the whole: every text in it came from the session (see visible.py).
    return visible("\n".join(lines) + "\n")
