"""`run_export` on what a transcript can hold besides a clean conversation: a broken chain, a
lone surrogate, no conversation at all, an unknown session: a clear result, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.errors import UsageError
from scrubber.policy.model import Policy
from scrubber.usecases.export import ExportFormat, ExportRequest, run_export

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"export-bad-input-key-32-bytes!!!")
)
PROJECT = "-home-u-work-app"


def _export(config: Path, session: str, fmt: ExportFormat = ExportFormat.MARKDOWN) -> Any:
    return run_export(ExportRequest(session, config, format=fmt), SCANNER, "auto")


def test_a_broken_chain_is_told_and_what_follows_the_break_is_shown(
    tmp_path: Path, transcript_builder: Any
) -> None:
    builder = transcript_builder()
    builder.prompt("before the break")
    builder._last = "not-in-this-file"  # a parent that was cut out of the file
    builder.prompt("after the break")
    builder.say("still here")
    builder.write(tmp_path / "projects" / PROJECT / f"{builder.session_id}.jsonl")
    result = _export(tmp_path, builder.session_id)
    text = result.content.decode()
    assert "after the break" in text and "still here" in text
    assert "before the break" not in text
    assert any("The chain is broken" in note for note in result.notes)


def test_a_lone_surrogate_becomes_a_replacement_character(
    tmp_path: Path, transcript_builder: Any
) -> None:
    builder = transcript_builder()
    record = builder.prompt("half a pair: X")
    builder.lines[-1] = builder.lines[-1].replace(b"pair: X", b"pair: \\ud800")
    builder.write(tmp_path / "projects" / PROJECT / f"{builder.session_id}.jsonl")
    del record
    for fmt in (ExportFormat.MARKDOWN, ExportFormat.HTML):
        assert "half a pair: \ufffd" in _export(tmp_path, builder.session_id, fmt).content.decode()


def test_a_transcript_without_conversation_says_so(tmp_path: Path) -> None:
    path = tmp_path / "projects" / PROJECT / "0badf00d-0000-4000-8000-000000000000.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"type":"summary","summary":"x"}\nnot json at all\n')
    result = _export(tmp_path, "0badf00d")
    assert "No conversation records" in result.content.decode()
    assert any("could not be read" in note for note in result.notes)


def test_an_unknown_session_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    with pytest.raises(UsageError, match="no session matches"):
        _export(tmp_path, "nothing-like-this")
