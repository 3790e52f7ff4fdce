"""What an export shows of control characters and of times that cannot be: `scrub export ID`
writes to a terminal, so an ESC from a transcript or from a project folder's name must print as
`\\x1b`, never act; a record that says it was written in the year 5138 is not dated so."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.export.conversation import Conversation, Entry, EntryKind
from scrubber.export.html import render_html
from scrubber.export.markdown import INVALID_DATE, Header, render_markdown, when
from scrubber.export.visible import visible
from scrubber.policy.model import Policy
from scrubber.usecases.export import ExportFormat, ExportRequest, run_export

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"export-control-chars-key-32-byte")
)
ESC, BEL, CSI = "\x1b", "\x07", "\x9b"
CLEAR = ESC + "[2J"
TITLE = ESC + "]0;pwn" + BEL
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _controls(text: str) -> list[str]:
    """The control characters in `text` but newline and tab (named by code point)."""
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0) and c not in "\n\t"
        }
    )


def test_visible_shows_every_control_but_newline_and_tab() -> None:
    every = "".join(chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)))
    shown = visible(every + "\u202e")
    assert _controls(shown) == []
    assert "\n" in shown and "\t" in shown
    assert "\\x1b" in shown and "\\x9b" in shown and "\\x0d" in shown and "\\u202e" in shown
    assert visible("a\r\nb") == "a\nb"  # a CR LF is a line break


def _conversation() -> Conversation:
    conversation = Conversation("Conversation")
    conversation.entries += [
        Entry(EntryKind.PROMPT, text=f"deploy {CLEAR} now", timestamp=NOW),
        Entry(EntryKind.TOOL, text=f"ls {TITLE}", tool=f"Bash(ls {CSI}31m)", output=f"out{CLEAR}"),
        Entry(EntryKind.ANSWER, text="done\r\nok\tyes"),
    ]
    conversation.notes.append(f"a note {ESC}[5m")
    return conversation


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_renderers_show_controls_from_every_place(render: Any) -> None:
    future = datetime(5138, 11, 16, 9, 46, 39, tzinfo=UTC)
    header = Header("6c2f1d4e", f"title {TITLE}", f"-home-u-{CLEAR}red\nline", NOW, future, "scrub")
    text = render(header, _conversation(), [])
    assert _controls(text) == []
    assert text.count("\\x1b") >= 5 and "\\x9b" in text and "\\x07" in text
    assert "ok\tyes" in text and "done\nok" in text
    assert "5138" not in text and INVALID_DATE in text
    assert "2026-12-02 12:00 UTC" in text


def test_when_says_a_time_that_cannot_be_is_invalid() -> None:
    assert when(datetime(5138, 1, 1, tzinfo=UTC), NOW) == INVALID_DATE
    assert when(datetime(1970, 1, 1, tzinfo=UTC), NOW) == INVALID_DATE
    assert when(NOW, NOW) == "2026-12-02 12:00 UTC"
    assert when(None, NOW) == ""


def _record(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "parentUuid": None if n == 1 else f"00000000-0000-4000-8000-{n - 1:012d}",
        "sessionId": "6c2f1d4e-8b3a-4d2c-9f8e-1a2b3c4d5e6f",
        "cwd": f"/home/u/{CLEAR}",
        "timestamp": "2026-12-01T10:00:00.000Z",
        **fields,
    }


@pytest.mark.parametrize("fmt", [ExportFormat.MARKDOWN, ExportFormat.HTML])
def test_an_export_of_a_hostile_session_prints_no_control(tmp_path: Path, fmt: Any) -> None:
    """End to end, as the reviewer's v8.sh: a folder name and texts holding escapes, and a
    record timestamped in milliseconds far in the future."""
    session = "6c2f1d4e-8b3a-4d2c-9f8e-1a2b3c4d5e6f"
    folder = tmp_path / "projects" / f"-home-u-{CLEAR}red\nline"
    folder.mkdir(parents=True)
    records = [
        _record(
            1, message={"role": "user", "content": [{"type": "text", "text": f"deploy {CLEAR}"}]}
        ),
        _record(2, type="assistant", message={"role": "assistant", "content": f"ok {TITLE}"}),
        _record(3, message={"role": "user", "content": "later"}, timestamp=99999999999999),
    ]
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_export(ExportRequest(session[:8], tmp_path, format=fmt), SCANNER, "auto")
    text = result.content.decode()
    assert "deploy" in text and "later" in text
    assert _controls(text) == []
    assert "\\x1b[2J" in text and "\\x1b]0;pwn\\x07" in text
    assert "5138" not in text and INVALID_DATE in text
