"""The UserPromptSubmit hook: a prompt holding a secret is blocked with a reason naming the
kind only; the blocked prompt's records in the transcript are scrubbed; bad input passes."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo.fakes import fake_github_token
from scrubber.hooks import prompt_scrub, user_prompt_submit
from scrubber.hooks.live_common import build_scanner, load_live_settings, write_live_settings
from scrubber.policy.model import LiveMode, LivePolicy, Policy

PROJECT = "-work-app"
SESSION = "0b0c9a52-7a4e-4a57-9b55-2f3d1f6a0d11"


@pytest.fixture(params=["full", "fast"])
def env(
    tmp_path: Path, request: pytest.FixtureRequest, warm_prefilter: Any
) -> Iterator[dict[str, str]]:
    """Each test without state/live.json (the full path) and with it (the prescan first), in
    a home that has scanned before (a key and compiled prefilter databases, tests/conftest.py):
    the hook is the subject, not the first compile."""
    config = tmp_path / "config"
    (config / "projects" / PROJECT).mkdir(parents=True)
    warm_prefilter.seed(tmp_path / "home")
    if request.param == "fast":
        write_live_settings(Policy(), tmp_path / "home")
    yield {
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "SCRUB_PROMPT_SCRUB_LINGER": "0",
    }
    warm_prefilter.keep(tmp_path / "home")


def token() -> str:
    return fake_github_token(random.Random(3))


def transcript(env: dict[str, str]) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{SESSION}.jsonl"


def run_hook(env: dict[str, str], prompt: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    started: list[str] = []
    monkeypatch.setattr(prompt_scrub, "start_scrub", lambda path, _env: started.append(path) or "")
    data = {
        "session_id": SESSION,
        "transcript_path": str(transcript(env)),
        "cwd": "/work/app",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    out = io.StringIO()
    assert (
        user_prompt_submit.main(
            [], stdin=io.BytesIO(json.dumps(data).encode()), stdout=out, env=env
        )
        == 0
    )
    return out.getvalue()


def test_a_prompt_with_a_secret_is_blocked_naming_the_kind(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = token()
    printed = run_hook(env, f"deploy with {secret} please", monkeypatch)
    answer = json.loads(printed)
    assert answer["decision"] == "block"
    assert "github-token" in answer["reason"] and secret not in answer["reason"]
    assert "environment variable" in answer["reason"] and "`!`" in answer["reason"]
    activity = (Path(env["SCRUB_HOME"]) / "log" / "activity.jsonl").read_text()
    assert '"event":"blocked"' in activity and secret not in activity


def test_a_clean_prompt_passes(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_hook(env, "list the files of commit 3f9a1c2e0b7d", monkeypatch) == ""


@pytest.mark.parametrize("mode", [LiveMode.WARN, LiveMode.OFF])
def test_warn_and_off_let_it_through(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, mode: LiveMode
) -> None:
    write_live_settings(Policy(live=LivePolicy(user_prompt_submit=mode)), Path(env["SCRUB_HOME"]))
    assert run_hook(env, f"x {token()}", monkeypatch) == ""


@pytest.mark.parametrize("data", [b"", b"nope", b"[]", b'{"prompt": 3}'])
def test_bad_input_passes_and_logs(env: dict[str, str], data: bytes) -> None:
    out = io.StringIO()
    assert user_prompt_submit.main([], stdin=io.BytesIO(data), stdout=out, env=env) == 0
    assert out.getvalue() == ""
    assert "user-prompt-submit" in (Path(env["SCRUB_HOME"]) / "log" / "live.log").read_text()


def test_the_blocked_prompt_records_are_scrubbed(env: dict[str, str]) -> None:
    secret = token()
    prompt = f"use {secret}"
    records = [
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": SESSION,
         "content": prompt},
        {"type": "system", "subtype": "informational", "uuid": "u1", "parentUuid": None,
         "content": f"UserPromptSubmit operation blocked by hook:\nreason\n\nOriginal prompt: {prompt}"},
        {"type": "last-prompt", "lastPrompt": prompt, "sessionId": SESSION},
        {"type": "user", "message": {"role": "user", "content": "untouched " + secret}},
    ]  # fmt: skip
    path = transcript(env)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    path.chmod(0o600)
    assert prompt_scrub.scrub_main(path, env) == 0
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    assert all(secret not in line for line in lines[:3])
    assert all("[REDACTED:github-token:" in line for line in lines[:3])
    assert lines[3] == json.dumps(records[3], separators=(",", ":"))  # conversation untouched
    assert json.loads(lines[1])["uuid"] == "u1"
    assert path.stat().st_mode & 0o777 == 0o600
    scanner = build_scanner(Path(env["SCRUB_HOME"]), load_live_settings(Path(env["SCRUB_HOME"])))
    assert prompt_scrub.scrub_transcript(path, scanner) == (0, True)  # idempotent


def test_the_shim_blocks_and_imports_nothing_heavy(env: dict[str, str]) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    forbidden = ("detect_secrets", "typer", "click", "yaml", "cryptography")
    data = json.dumps(
        {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": f"x {token()}"}
    ).encode()
    shim = str(root / "hooks" / "user-prompt-submit")
    probe = (
        "import runpy, sys; sys.argv = ['user-prompt-submit']\n"
        f"try:\n    runpy.run_path({shim!r}, run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"sys.stderr.write(repr(sorted(m for m in {forbidden!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input=data, capture_output=True,
        env={**os.environ, **env}, check=True,
    )  # fmt: skip
    assert done.stderr.decode().strip() == "[]"
    assert json.loads(done.stdout)["decision"] == "block"


def test_a_clean_prompt_is_answered_without_the_scanner_or_the_policy(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "SCRUB_HOME": str(tmp_path / "h"),
           "HOME": str(tmp_path)}  # fmt: skip
    write_live_settings(Policy(), Path(env["SCRUB_HOME"]))
    root = Path(__file__).resolve().parents[3]
    heavy = ("scrubber.detection.scan", "scrubber.policy.model", "pathlib")
    probe = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "from scrubber.hooks import user_prompt_submit\n"
        "user_prompt_submit.main([])\n"
        f"sys.stderr.write(repr(sorted(m for m in {heavy!r} if m in sys.modules)))\n"
    )
    data = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the acca 4b1d bug " * 20}
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        input=json.dumps(data).encode(),
        capture_output=True,
        env={**os.environ, **env},
        check=True,
    )
    assert (done.stdout, done.stderr.decode()) == (b"", "[]")
