"""A real Claude Code session with planted secrets, then `scrub audit`, `redact` and `verify` on
the transcript it wrote.

The fake model Reads a planted `.env`, runs Bash `printenv` with a token in Claude Code's own
environment, and Writes a config file holding an API key; Claude Code runs those tools for real
and writes its transcript (each tool output twice: `tool_result` and `toolUseResult`).
"""

from __future__ import annotations

import json

import pytest

from .conftest import Box
from .planted import finding_values, plant

pytestmark = pytest.mark.claude


def test_audit_redact_verify_on_a_real_transcript(box: Box) -> None:
    scenario = plant(box.project)
    run = box.claude("Set up the deploy config.", script=scenario.script(), env=dict(scenario.env))
    assert run.returncode == 0, run.stderr[-2000:]
    session = run.session_id
    assert box.api.remaining == 0, "Claude Code did not play the whole script"
    # The real client ran the tools: the config file was written with the token in it.
    assert scenario.config_file.read_text() == scenario.config_text()

    transcript = box.transcript(session)
    assert transcript.parent.parent == box.config / "projects"
    raw = transcript.read_text()
    # Every planted secret reached the transcript (else the rest proves nothing).
    assert scenario.planted.labels_missing(raw) == []

    # Audit: finds every planted secret, prints none, exits 1 (findings).
    audit = box.scrub("audit", "--format", "json")
    assert audit.returncode == 1, audit.stderr[-2000:]
    assert scenario.planted.labels_in(audit.stdout + audit.stderr) == []
    report = json.loads(audit.stdout)
    findings = [f for f in report["findings"] if f["session_id"] == session]
    found = finding_values(findings)
    unfound = [
        label
        for label, value in scenario.planted.values.items()
        if not any(value in text for text in found)
    ]
    assert unfound == [], f"audit missed {unfound}"
    kinds = {f["kind"] for f in findings}
    assert {"aws-access-key", "github-token", "anthropic-api-key"} <= kinds, kinds
    # Each tool output is stored twice (tool_result and toolUseResult); audit sees both.
    printenv_places = {
        f["json_path"]
        for f, text in zip(findings, found, strict=True)
        if text == scenario.planted.values["printenv-github-token"]
    }
    assert any(p.startswith("/toolUseResult") for p in printenv_places), printenv_places
    assert any(p.startswith("/message/content") for p in printenv_places), printenv_places

    # Redact the session: a copy outside projects/ (Claude Code's sweep), without any secret.
    redact = box.scrub("redact", "--session", session)
    assert redact.returncode == 0, redact.stderr[-2000:]
    assert scenario.planted.labels_in(redact.stdout + redact.stderr) == []
    copy = box.scrub_home / "redacted" / "projects" / transcript.parent.name / transcript.name
    text = copy.read_text()
    assert scenario.planted.labels_in(text) == []
    assert "[REDACTED:" in text
    assert len(text.splitlines()) == len(raw.splitlines())
    assert copy.stat().st_mode & 0o777 == 0o600
    for side in (box.scrub_home / "redacted").rglob("*"):
        if side.is_file():
            assert scenario.planted.labels_in(side.read_text(errors="replace")) == [], side
    # The original is untouched.
    assert transcript.read_text() == raw

    # Verify proves the copy against the original; audit finds nothing in it.
    verify = box.scrub("verify", str(copy), "--original", str(transcript))
    assert verify.returncode == 0, (verify.stdout[-2000:], verify.stderr[-2000:])
    clean = box.scrub("audit", str(copy), "--format", "json")
    assert clean.returncode == 0, clean.stdout[-2000:]
    assert json.loads(clean.stdout)["findings"] == []
