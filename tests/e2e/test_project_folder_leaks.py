"""A secret in a session's cwd is in its project folder's name, altered: Claude Code makes every
character but letters and digits `-` (cwd `/home/u/w-ghp_…` is the folder `-home-u-w-ghp-…`),
so neither the detectors nor a value matched as itself catch it there. Every command that
names a project folder (audit in every format and its warnings, sessions, search, search
--archives, export, archive, archives list, the --project hint) and every file under
$SCRUB_HOME is searched for every 12-character piece of the planted values. Fake values are
built at run time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.demo import fake_aws_secret_key, fake_github_token
from tests.conftest import CliResult, Sandbox

PIECE = 12
DETECTED = "0a1b2c3d-1111-4aaa-8bbb-000000000001"  # a GitHub token in its cwd
SIDE = "0a1b2c3d-2222-4aaa-8bbb-000000000002"  # a value known from its file-history, in its cwd
NAMED = "AWS_SECRET_ACCESS_KEY="


def folder_of(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def _session(config: Path, session: str, cwd: str) -> Path:
    project = config / "projects" / folder_of(cwd)
    project.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "user",
        "uuid": "00000000-0000-4000-8000-000000000001",
        "parentUuid": None,
        "sessionId": session,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": cwd,
        "gitBranch": "main",
        "message": {"role": "user", "content": "deploy here"},
    }
    transcript = project / f"{session}.jsonl"
    transcript.write_text(json.dumps(record) + "\n")
    transcript.chmod(0o644)  # the audit's warnings name the file, and its folder
    project.chmod(0o755)
    return transcript


def _aws_like(rng: random.Random) -> str:
    """40 characters of an AWS secret key's alphabet, with a `/` and a `+` in it."""
    value = fake_aws_secret_key(rng)
    return value[:9] + "/" + value[10:24] + "+" + value[25:]


@pytest.fixture
def planted(sandbox: Sandbox) -> tuple[str, str]:
    rng = random.Random(2026)
    token, secret = fake_github_token(rng), _aws_like(rng)
    sandbox.config.mkdir(parents=True, mode=0o700)
    _session(sandbox.config, DETECTED, f"/home/u/w-{token}")
    _session(sandbox.config, SIDE, f"/home/u/w/{secret}")
    history = sandbox.config / "file-history" / SIDE
    history.mkdir(parents=True)
    (history / "0123abcd@v1").write_text(f"{NAMED}{secret}\n")
    return token, secret


def _leaks(texts: dict[str, str], secrets: tuple[str, ...]) -> dict[str, list[int]]:
    """Where a 12-character piece of a secret shows: output name -> offsets in the secret."""
    found: dict[str, list[int]] = {}
    for name, text in texts.items():
        for secret in secrets:
            at = [i for i in range(len(secret) - PIECE + 1) if secret[i : i + PIECE] in text]
            if at:
                found.setdefault(name, []).extend(at)
    return found


def _home_files(sandbox: Sandbox) -> dict[str, str]:
    return {
        str(path.relative_to(sandbox.scrub_home)): path.read_bytes().decode("latin-1")
        for path in sorted(sandbox.scrub_home.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def _run(scrub_cli: Callable[..., CliResult], *args: str, codes: tuple[int, ...]) -> str:
    done = scrub_cli(*args)
    assert done.returncode in codes, (args, done.returncode, done.output[-600:])
    assert "Traceback" not in done.output
    return done.output


def test_no_piece_of_a_secret_in_a_cwd_shows_in_any_project_folder_shown(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], planted: tuple[str, str]
) -> None:
    token, secret = planted
    shown: dict[str, str] = {}
    for fmt in ("text", "json", "sarif"):  # twice: cold, then answered from the scan cache
        shown[f"audit {fmt}"] = _run(scrub_cli, "audit", "-v", "--format", fmt, codes=(1,))
        shown[f"audit {fmt} warm"] = _run(scrub_cli, "audit", "-v", "--format", fmt, codes=(1,))
    # One session grows: it is scanned again, the other answers from the cache (its values
    # are not known in this run; its place must stay as the cache showed it).
    grown = next((sandbox.config / "projects").glob(f"*/{DETECTED}.jsonl"))
    with grown.open("a") as out:
        out.write(grown.read_text().replace("deploy here", "deploy again"))
    for fmt in ("text", "json"):
        shown[f"audit {fmt} grown"] = _run(scrub_cli, "audit", "-v", "--format", fmt, codes=(1,))
    report = json.loads(scrub_cli("audit", "--format", "json").stdout)
    assert report["warnings"], "the planted modes make warnings that name the files"
    projects = {s["session_id"]: s["project"] for s in report["sessions"]}
    readable_kept = projects[SIDE].startswith("-home-u-w-[REDACTED:")
    assert readable_kept, "the folder's name keeps its readable part, not the value"
    for fmt in ("text", "json"):
        shown[f"sessions {fmt}"] = _run(scrub_cli, "sessions", "--format", fmt, codes=(0,))
        shown[f"search {fmt}"] = _run(scrub_cli, "search", "deploy", "--format", fmt, codes=(0,))
    assert json.loads(shown["search json"])["hits"]
    hint = scrub_cli("search", "deploy", "--project", "nosuch")
    assert hint.returncode == 2 and "known projects: " in hint.output
    shown["search hint"] = hint.output
    shown["audit hint"] = scrub_cli("audit", "--project", "nosuch").output
    for session in (DETECTED, SIDE):
        for fmt in ("markdown", "html"):
            out = sandbox.root / f"{session}.{fmt}"
            shown[f"export {session} {fmt}"] = _run(
                scrub_cli, "export", session, "--format", fmt, "-o", str(out), codes=(0,)
            )
            shown[f"export {session} {fmt} file"] = out.read_text()
        assert "project `" in shown[f"export {session} markdown file"]
    key = sandbox.root / "key.txt"
    identity = generate_identity()
    write_identity_file(key, identity, datetime.now(UTC))
    recipient = identity.recipient().encode()
    shown["archive"] = _run(scrub_cli, "archive", "--all", "-r", recipient, codes=(0,))
    shown["archive json"] = _run(
        scrub_cli, "archive", "--all", "-r", recipient, "--format", "json", codes=(0,)
    )
    for fmt in ("text", "json"):
        shown[f"archives list {fmt}"] = _run(
            scrub_cli, "archives", "list", "--format", fmt, codes=(0,)
        )
        shown[f"archives verify {fmt}"] = _run(
            scrub_cli, "archives", "verify", "-i", str(key), "--format", fmt, codes=(0,)
        )
        shown[f"search --archives {fmt}"] = _run(
            scrub_cli, "search", "deploy", "--archives", "-i", str(key), "--format", fmt,
            codes=(0,),
        )  # fmt: skip
    assert "archived" in shown["archive"] and DETECTED in shown["archives list text"]
    assert json.loads(shown["search --archives json"])["hits"]
    leaked = _leaks({**shown, **_home_files(sandbox)}, (token, secret))
    assert not leaked, f"a piece of a planted value shows in: {sorted(leaked)}"
