"""Text from a transcript never reaches a terminal with its control characters (terminal_text.py):
a title, a tool label, a search hit's context and where-label, and a project folder's name
holding ESC sequences, BEL, C1 controls or a bidi override print as visible escapes in every
text report, after redaction; `--format json` keeps the exact text. Fake secrets are built at
run time.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.cli.terminal_text import terminal_lines, terminal_safe
from scrubber.demo import fake_github_token
from tests.conftest import CliResult, Sandbox, TranscriptBuilder

ESC, BEL, CSI_C1, RLO = "\x1b", "\x07", "\x9b", "\u202e"
CLEAR = f"{ESC}[2J"
SET_TITLE = f"{ESC}]0;owned{BEL}"
# Any of these in a text report would act on the terminal, or reorder what it shows.
ACTING = (ESC, BEL, CSI_C1, RLO, "\x7f", "\u2028")

Scrub = Callable[..., CliResult]


def _assert_inert(text: str) -> None:
    assert not [c for c in ACTING if c in text], repr(text)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"a{CLEAR}b", "a\\x1b[2Jb"),
        (SET_TITLE, "\\x1b]0;owned\\x07"),
        ("del\x7f c1\x9b", "del\\x7f c1\\x9b"),
        (f"{RLO}txt.exe", "\\u202etxt.exe"),
        ("one\u2028two\u2029", "one\\u2028two\\u2029"),
        ("forged\nline\ttab\r", "forged\\x0aline\\x09tab\\x0d"),
        ("lone \udcff byte", "lone \\udcff byte"),
        ("tag \U000e0041", "tag \\U000e0041"),
    ],
)
def test_every_non_printable_character_is_shown_as_its_escape(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown
    assert terminal_safe(shown) == shown  # already safe: unchanged


def test_printable_text_and_placeholders_are_left_as_they_are() -> None:
    text = "café 東京 ✓ [REDACTED:github-token:3f9a1c2e] C:\\path ×2 …"
    assert terminal_safe(text) is text


def test_lines_are_made_safe_each_and_joined_by_our_own_breaks() -> None:
    assert terminal_lines(["a\nb", "", f"c{BEL}"]) == "a\\x0ab\n\nc\\x07"


@pytest.fixture
def hostile(sandbox: Sandbox) -> str:
    """A session whose title, tool label and tool output carry terminal escapes, and whose
    output holds a fake token; returns the token (compare, never print)."""
    token = fake_github_token(random.Random(3003))
    builder = TranscriptBuilder(cwd="/w")
    builder.prompt("run tests")
    builder.tool(
        "Read",
        {"file_path": f"/w/{SET_TITLE}{CLEAR}.env"},
        f"{ESC}[31mFAIL{ESC}[0m checkout spec {SET_TITLE}{CLEAR}{RLO} TOKEN={token}",
    )
    title = {"type": "custom-title", "customTitle": f"evil {CLEAR}{CSI_C1} title"}
    builder.add({**title, "sessionId": builder.session_id})
    builder.write(sandbox.config / "projects" / "-w" / f"{builder.session_id}.jsonl")
    return token


def test_audit_text_report_shows_titles_and_tool_labels_inert(
    hostile: str, scrub_cli: Scrub
) -> None:
    result = scrub_cli("audit")
    assert result.returncode == 1, result.stderr
    _assert_inert(result.output)
    assert hostile not in result.output
    assert "evil \\x1b[2J\\x9b title  (session" in result.stdout
    assert "output of Read(/w/\\x1b]0;owned\\x07\\x1b[2J.env): github-token [" in result.stdout


def test_audit_json_keeps_the_exact_text(hostile: str, scrub_cli: Scrub) -> None:
    result = scrub_cli("audit", "--format", "json")
    report = json.loads(result.stdout)
    assert hostile not in result.stdout
    assert report["sessions"][0]["title"] == f"evil {CLEAR}{CSI_C1} title"
    assert report["findings"][0]["source"] == f"Read(/w/{SET_TITLE}{CLEAR}.env)"


def test_search_text_shows_contexts_and_where_labels_inert(hostile: str, scrub_cli: Scrub) -> None:
    result = scrub_cli("search", "checkout spec")
    assert result.returncode == 0, result.stderr
    _assert_inert(result.output)
    assert hostile not in result.output
    assert "output of Read(/w/\\x1b]0;owned\\x07\\x1b[2J.env)  (" in result.stdout
    assert (
        "\\x1b[31mFAIL\\x1b[0m checkout spec \\x1b]0;owned\\x07\\x1b[2J\\u202e "
        "TOKEN=[REDACTED:github-token:" in result.stdout
    )


def test_search_json_keeps_the_exact_context(hostile: str, scrub_cli: Scrub) -> None:
    result = scrub_cli("search", "checkout spec", "--format", "json")
    hit = json.loads(result.stdout)["hits"][0]
    assert hostile not in result.stdout
    assert hit["context"].startswith(f"{ESC}[31mFAIL{ESC}[0m checkout spec {SET_TITLE}")
    assert hit["where"] == f"output of Read(/w/{SET_TITLE}{CLEAR}.env)"


HOSTILE_FOLDER = f"-w-{ESC}]0;owned{BEL}{ESC}[2J{RLO}"
SESSION = "0a1b2c3d-4444-4aaa-8bbb-000000000004"


@pytest.fixture
def hostile_folder(sandbox: Sandbox) -> Path:
    """An idle session in a project folder whose name carries terminal escapes."""
    project = sandbox.config / "projects" / HOSTILE_FOLDER
    project.mkdir(parents=True)
    record = {
        "type": "user",
        "uuid": "00000000-0000-4000-8000-000000000004",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "cwd": "/w",
        "message": {"role": "user", "content": "deploy here"},
    }
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(record) + "\n")
    idle = datetime(2026, 1, 5, 10, tzinfo=UTC).timestamp()
    os.utime(transcript, (idle, idle))
    return project


FOLDER_SHOWN = "-w-\\x1b]0;owned\\x07\\x1b[2J\\u202e"


@pytest.mark.parametrize("command", [["sessions"], ["retention"]])
def test_project_folder_names_are_printed_inert(
    hostile_folder: Path, scrub_cli: Scrub, command: list[str]
) -> None:
    result = scrub_cli(*command)
    assert result.returncode in (0, 1), result.stderr
    _assert_inert(result.output)
    assert f"{FOLDER_SHOWN}/{SESSION}" in result.stdout


def test_sessions_json_keeps_the_folder_name_exact(hostile_folder: Path, scrub_cli: Scrub) -> None:
    result = scrub_cli("sessions", "--format", "json")
    assert json.loads(result.stdout)["sessions"][0]["project"] == HOSTILE_FOLDER


def test_redact_and_verify_print_folder_names_inert(
    hostile_folder: Path, scrub_cli: Scrub, tmp_path: Path
) -> None:
    source = hostile_folder / f"{SESSION}.jsonl"
    copy = tmp_path / "copy.jsonl"
    for args in (("redact", source, "--output", copy), ("verify", copy, "--original", source)):
        result = scrub_cli(*args)
        assert result.returncode == 0, result.stderr
        _assert_inert(result.output)
        assert FOLDER_SHOWN in result.stdout
