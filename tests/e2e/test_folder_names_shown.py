"""A token in a session's cwd is in its project folder's name, in Claude Code's folder form
(cwd `/home/u/w-ghp_…` is the folder `-home-u-w-ghp-…`): the commands that name a folder
(`pin`, `unpin`, `pins`, `retention`, `undelete`, `redact`) show it as every report does
(redaction/project_name.py), never a 12-character piece of the token. The folders on disk keep
their names. Fake values are built at run time.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.demo import fake_github_token
from tests.conftest import CliResult, Sandbox

PIECE = 12
SESSION = "0a1b2c3d-3333-4aaa-8bbb-000000000003"


def _folder_form(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


@pytest.fixture
def planted(sandbox: Sandbox) -> tuple[str, Path]:
    """A session, idle since January, whose cwd holds a token: the token and its folder."""
    token = fake_github_token(random.Random(2027))
    assert token.startswith("ghp" + "_") and len(token) == 40
    cwd = f"/home/u/w-{token}"
    project = sandbox.config / "projects" / _folder_form(cwd)
    project.mkdir(parents=True)
    record = {
        "type": "user",
        "uuid": "00000000-0000-4000-8000-000000000003",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "cwd": cwd,
        "gitBranch": "main",
        "message": {"role": "user", "content": "deploy here"},
    }
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(record) + "\n")
    idle = datetime(2026, 1, 5, 10, tzinfo=UTC).timestamp()
    os.utime(transcript, (idle, idle))  # not "possibly active"
    sandbox.scrub_home.mkdir(parents=True, mode=0o700)
    policy = sandbox.scrub_home / "policy.yaml"
    policy.write_text("version: 1\nretention:\n  keep_newest_per_project: 0\n")
    policy.chmod(0o600)
    return token, project


def _pieces_shown(token: str, texts: dict[str, str]) -> dict[str, list[int]]:
    """Where a 12-character piece of the token's body shows: output -> offsets in the body."""
    body = token[4:]
    found: dict[str, list[int]] = {}
    for name, text in texts.items():
        at = [i for i in range(len(body) - PIECE + 1) if body[i : i + PIECE] in text]
        if at:
            found[name] = at
    return found


def _run(scrub_cli: Callable[..., CliResult], *args: str, codes: tuple[int, ...]) -> str:
    done = scrub_cli(*args)
    assert done.returncode in codes, (args, done.returncode, done.output[-600:])
    assert "Traceback" not in done.output
    return done.output


def test_pin_unpin_and_pins_show_the_folder_without_the_token(
    scrub_cli: Callable[..., CliResult], planted: tuple[str, Path]
) -> None:
    token, project = planted
    shown = {
        "pin": _run(scrub_cli, "pin", SESSION, codes=(0,)),
        "pin again": _run(scrub_cli, "pin", SESSION, codes=(0,)),
        "pins": _run(scrub_cli, "pins", codes=(0,)),
        "pins json": _run(scrub_cli, "pins", "--format", "json", codes=(0,)),
        "unpin": _run(scrub_cli, "unpin", SESSION, codes=(0,)),
        "unpin again": _run(scrub_cli, "unpin", SESSION, codes=(2,)),
    }
    assert SESSION in shown["pins"] and "is not pinned" in shown["unpin again"]
    [pin] = json.loads(shown["pins json"])["cli"]
    assert pin["project"].startswith("-home-u-") and "[REDACTED:github-token:" in pin["project"]
    assert _pieces_shown(token, shown) == {}
    assert project.is_dir(), "the folder on disk keeps its name"


def test_retention_and_undelete_show_the_folder_without_the_token(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], planted: tuple[str, Path]
) -> None:
    token, project = planted
    transcript = project / f"{SESSION}.jsonl"
    shown = {
        "dry run": _run(scrub_cli, "retention", "--days", "30", codes=(0,)),
        "dry run json": _run(
            scrub_cli, "retention", "--days", "30", "--format", "json", codes=(0,)
        ),
        "apply": _run(scrub_cli, "retention", "--days", "30", "--apply", codes=(0,)),
    }
    assert not transcript.exists(), "retention still trashes the real session"
    shown["trash"] = _run(scrub_cli, "retention", "--days", "30", codes=(0,))
    shown["trash json"] = _run(
        scrub_cli, "retention", "--days", "30", "--format", "json", codes=(0,)
    )
    assert SESSION in shown["trash"]
    shown["pin in trash"] = _run(scrub_cli, "pin", SESSION, codes=(0,))
    _run(scrub_cli, "unpin", SESSION, codes=(0,))
    shown["unpin in trash"] = _run(scrub_cli, "unpin", SESSION, codes=(2,))
    transcript.write_bytes(b"")  # in the way: undelete refuses, naming the folder as shown
    shown["undelete in the way"] = _run(scrub_cli, "undelete", SESSION, codes=(2,))
    assert "something is in the way" in shown["undelete in the way"]
    transcript.unlink()
    shown["undelete"] = _run(scrub_cli, "undelete", SESSION, codes=(0,))
    assert transcript.is_file(), "undelete brings back the real files"
    # The activity log names what was trashed and undeleted: as the reports show it.
    logs = [p for p in sandbox.scrub_home.rglob("*") if p.is_file() and "activity" in p.name]
    assert logs, "retention and undelete write the activity log"
    log_text = "\n".join(p.read_text(errors="replace") for p in logs)
    named, redacted = SESSION in log_text, "[REDACTED:github-token:" in log_text
    assert named and redacted  # booleans: a failure must not print the log (it holds the token)
    shown["activity log"] = log_text
    session = json.loads(shown["dry run json"])["sessions"][0]
    assert (
        session["project"].startswith("-home-u-")
        and "[REDACTED:github-token:" in session["project"]
    )
    assert _pieces_shown(token, shown) == {}


def test_redact_names_sources_and_copies_without_the_token(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], planted: tuple[str, Path]
) -> None:
    token, project = planted
    shown = {
        "copies": _run(scrub_cli, "redact", "--all", "--no-cache", codes=(0,)),
        "copies json": _run(
            scrub_cli, "redact", "--session", SESSION, "--no-cache", "--format", "json", codes=(0,)
        ),
        "in place": _run(scrub_cli, "redact", "--session", SESSION, "--in-place", codes=(0,)),
    }
    [copy] = json.loads(shown["copies json"])["files"]
    assert "[REDACTED:github-token:" in copy["source"] and "[REDACTED:" in copy["dest"]
    assert (sandbox.scrub_home / "redacted").is_dir()
    # The copy's folder is named as the reports show it: a copy made to be kept or shared
    # carries no token in its path either.
    [placed] = (sandbox.scrub_home / "redacted" / "projects").glob(f"*/{SESSION}.jsonl")
    assert "[REDACTED:github-token:" in placed.parent.name
    assert not any(sandbox.scrub_home.rglob(project.name)), "a path under SCRUB_HOME holds it"
    assert _pieces_shown(token, shown) == {}
