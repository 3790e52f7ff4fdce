"""`scrub audit --format json` and `sarif` are written by orjson where it can (the stdlib's
indenting encoder is pure Python: a third of a warm audit's time): the same bytes as the
stdlib's encoder, and what orjson refuses (a file name with lone surrogates) or cannot write
(SARIF's ASCII-only escapes) still comes out, from the stdlib."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scrubber.cli import render
from scrubber.detection.finding import Finding
from scrubber.usecases.audit_report import AuditReport, FileAudit, ScanTarget

pytest.importorskip("orjson", reason="pip install orjson (a dependency of scrubber)")


def _report(path: Path, title: str) -> AuditReport:
    findings = [
        Finding(str(path), n + 1, "/message/content", (3, 43), kind, "rule", f"{n:016x}", "sid")
        for n, kind in enumerate(("github-token", "jwt", "github-token"))
    ]
    audit = FileAudit(ScanTarget(path, True, "sid", "-home-u-app"), findings, title=title)
    audit.problems = [(7, "invalid-json")]
    return AuditReport([audit], ["a warning: café"])


def _both(monkeypatch: pytest.MonkeyPatch, render_it: object) -> tuple[str, str]:
    assert callable(render_it)
    fast = render_it()
    assert render._orjson is not None
    monkeypatch.setattr(render, "_orjson", None)
    slow = render_it()
    monkeypatch.undo()
    return fast, slow


def test_json_report_is_the_stdlibs_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report(tmp_path / "s.jsonl", "déployer l’app ✓")
    fast, slow = _both(monkeypatch, lambda: render.render_json(report, preview=True))
    assert fast == slow
    assert json.loads(fast) == json.loads(slow)
    assert "✓" in fast  # not escaped: `ensure_ascii=False`, as before


def test_sarif_log_keeps_its_ascii_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report(tmp_path / "é.jsonl", "t")
    fast, slow = _both(monkeypatch, lambda: render.render_sarif(report, url=None))
    assert fast == slow and fast.isascii()
    plain = _report(tmp_path / "s.jsonl", "t")
    fast, slow = _both(monkeypatch, lambda: render.render_sarif(plain, url=None))
    assert fast == slow
    assert json.loads(fast) == json.loads(slow)


def test_a_file_name_orjson_refuses_is_written_by_the_stdlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name with a byte that is not UTF-8 becomes a lone surrogate (surrogateescape).
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/s\xff.jsonl"))
    report = _report(odd, "t")
    fast, slow = _both(monkeypatch, lambda: render.render_json(report))
    assert fast == slow
    assert json.loads(fast)["findings"][0]["file"] == str(odd)
