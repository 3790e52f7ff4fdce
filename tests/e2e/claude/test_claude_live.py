"""Live protection with the real Claude Code CLI (`scrub install --live`) and the fake API: a
session that reads a `.env`, runs `printenv` and greps for a token sends no planted secret to
the API and writes none into the transcript (placeholders instead); a prompt holding a secret is
blocked before any request, and the records Claude Code still writes for it are scrubbed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scrubber.demo.fakes import fake_anthropic_key, fake_aws_access_key, fake_github_token

from .conftest import Box
from .fake_api import text_turn, tool_turn

pytestmark = pytest.mark.claude


def session_files(box: Box) -> list[Path]:
    return [p for p in box.config.rglob("*") if p.is_file() and "scrubber" not in p.parts]


def test_tool_outputs_reach_neither_the_api_nor_the_transcript(box: Box) -> None:
    rng = random.Random(11)
    github, aws, anthropic = (
        fake_github_token(rng),
        fake_aws_access_key(rng),
        fake_anthropic_key(rng),
    )
    (box.project / ".env").write_text(f"GITHUB_TOKEN={github}\nAWS_ACCESS_KEY_ID={aws}\n")
    (box.project / "deploy.sh").write_text(f"curl -H 'x-api-key: {anthropic}' https://x\n")
    box.scrub_ok("install", "--live")
    script = [
        tool_turn("Read", file_path=str(box.project / ".env")),
        tool_turn("Bash", command="printenv", description="show the environment"),
        tool_turn("Grep", pattern="x-api-key", path=str(box.project), output_mode="content"),
        text_turn("Done."),
    ]
    run = box.claude("Check the config.", script=script, env={"DEPLOY_KEY": anthropic})
    assert run.returncode == 0, run.stderr[-2000:]
    bodies = [r.text() for r in box.api.main_requests()]
    assert len(bodies) == 4
    for secret in (github, aws, anthropic):
        assert not any(secret in body for body in bodies)
        for path in session_files(box):
            assert secret not in path.read_text(errors="replace"), path
    last = bodies[-1]
    for kind in ("github-token", "aws-access-key", "anthropic-api-key"):
        assert f"[REDACTED:{kind}:" in last, kind
    transcript = box.transcript(run.session_id).read_text()
    assert "[REDACTED:github-token:" in transcript
    masked = [r for r in box.activity() if r.get("component") == "live"]
    assert {r["tool"] for r in masked} == {"Read", "Bash", "Grep"}


def test_a_prompt_with_a_secret_is_blocked_and_scrubbed(box: Box) -> None:
    secret = fake_github_token(random.Random(12))
    box.scrub_ok("install", "--live")
    run = box.claude(f"push with {secret}", script=[text_turn("never")])
    assert run.returncode == 0, run.stderr[-2000:]
    assert box.api.main_requests() == []
    [transcript] = box.transcripts()

    def clean() -> bool:
        return all(secret not in p.read_text(errors="replace") for p in session_files(box))

    box.wait_for(clean, timeout=30, what="the blocked prompt to be scrubbed")
    text = transcript.read_text()
    assert "[REDACTED:github-token:" in text
    for line in text.splitlines():
        json.loads(line)


def test_a_failing_command_is_the_documented_gap_and_audit_covers_it(box: Box) -> None:
    """A command that fails fires PostToolUseFailure, where no replacement is possible: its
    output reaches the API unchanged (the gap README.md documents). `scrub audit` still finds
    the secret in the transcript, and `scrub redact` removes it from the copy."""
    secret = fake_github_token(random.Random(13))
    box.scrub_ok("install", "--live")
    script = [
        tool_turn("Bash", command="printenv DEPLOY_KEY; exit 3", description="fails"),
        text_turn("Done."),
    ]
    run = box.claude("Try it.", script=script, env={"DEPLOY_KEY": secret})
    assert run.returncode == 0, run.stderr[-2000:]
    assert any(secret in r.text() for r in box.api.main_requests())  # the gap, as documented
    audit = box.scrub("audit", "--format", "json")
    assert audit.returncode == 1 and secret not in audit.stdout + audit.stderr
    kinds = {f["kind"] for f in json.loads(audit.stdout)["findings"]}
    assert "github-token" in kinds
    redact = box.scrub("redact", "--session", run.session_id)
    assert redact.returncode == 0, redact.stderr[-2000:]
    copies = [p for p in box.scrub_home.rglob("*.jsonl") if "redacted" in p.parts]
    assert copies and all(secret not in p.read_text() for p in copies)


def test_the_plugin_masks_tool_output_too(box: Box) -> None:
    """`claude --plugin-dir <repo>`: the plugin's hooks.json runs the post-tool-use shim."""
    from .conftest import ROOT

    secret = fake_github_token(random.Random(14))
    (box.project / ".env").write_text(f"GITHUB_TOKEN={secret}\n")
    script = [tool_turn("Read", file_path=str(box.project / ".env")), text_turn("Done.")]
    run = box.claude("Read it.", "--plugin-dir", str(ROOT), script=script)
    assert run.returncode == 0, run.stderr[-2000:]
    bodies = [r.text() for r in box.api.main_requests()]
    assert not any(secret in body for body in bodies)
    assert "[REDACTED:github-token:" in bodies[-1]
    assert secret not in box.transcript(run.session_id).read_text()
