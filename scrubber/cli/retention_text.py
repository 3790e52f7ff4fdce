"""What the retention, sessions, pins and undelete commands share: the output formats,
indented JSON, spans of time in words, and how a note reaches the user."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated

import typer

from scrubber.cli.terminal_text import terminal_safe
from scrubber.errors import ExitCode


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", help="text or json.")]


def dumps(body: object) -> str:
    """Indented JSON. orjson when present: the stdlib's indenting encoder is pure Python and
    takes seconds on 20,000 sessions."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib still works
        return json.dumps(body, indent=2, ensure_ascii=False)
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode()


def warn(text: str) -> None:
    """A note or warning from a use case, said at once on stderr (it may name a folder:
    terminal_text.py)."""
    sys.stderr.write(f"scrub: {terminal_safe(text)}\n")


def finish(code: ExitCode) -> None:
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))


def span(delta: timedelta) -> str:
    seconds = abs(delta.total_seconds())
    if seconds >= 86400 * 2:
        return f"{int(seconds // 86400)} days"
    if seconds >= 7200:
        return f"{int(seconds // 3600)} hours"
    if seconds >= 120:
        return f"{int(seconds // 60)} minutes"
    return "a minute"


def ago(moment: datetime, now: datetime) -> str:
    return f"{span(now - moment)} ago" if now - moment >= timedelta(minutes=1) else "just now"


def until(moment: datetime | None, now: datetime, *, past: str) -> str:
    if moment is None:
        return "never"
    if moment <= now:
        return past
    return f"in {span(moment - now)}"
