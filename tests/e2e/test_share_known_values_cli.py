"""`scrub search` and `scrub export` never show a value the session's side files or history
lines reveal as a secret, nor a token in the project folder's name or the session's cwd; and an
export as jsonl counts its redactions as `scrub redact` does (real processes, real files).

The world: one session whose prompts hold three values bare (`mytoken <value>`: no detector
sees them there); the detectors find each of them elsewhere in the session only: one in a
file-history snapshot of a .env, one in a tool-results file, one in the session's line of
history.jsonl. A second session lives in a project folder (and cwd) named after a GitHub token.
Fake values are built at run time.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.demo.fakes import fake_github_token
from scrubber.policy.model import Policy
from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import archive_sessions, resolve_encryption
from tests.conftest import CliResult, Sandbox

pytestmark = pytest.mark.slow  # real processes

SESSION = "6c2f1d4e-8e3b-4d2c-9f0a-1b2c3d4e5f61"
NAMED_CWD_SESSION = "7d3a2e5f-9f4c-4e3d-8a1b-2c3d4e5f6a72"
PROJECT = "-home-u-app"


def _bare(rng: random.Random) -> str:
    """A random 40-character value, in a shape no detector knows."""
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def _record(session: str, uuid: int, kind: str, content: object, cwd: str) -> dict[str, object]:
    return {
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{uuid:012d}",
        "parentUuid": None if uuid == 1 else f"00000000-0000-4000-8000-{uuid - 1:012d}",
        "sessionId": session,
        "cwd": cwd,
        "gitBranch": "main",
        "timestamp": f"2026-11-30T10:00:0{uuid}.000Z",
        "message": {"role": "user" if kind == "user" else "assistant", "content": content},
    }


def _call(command: str) -> dict[str, object]:
    return {"type": "tool_use", "id": "toolu_0006", "name": "Bash", "input": {"command": command}}


def _output(text: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": "toolu_0006", "content": text}


def _write(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="module")
def world(sandbox_factory: Callable[[str], Sandbox]) -> tuple[Sandbox, list[str], str]:
    box = sandbox_factory("share-known-values")
    rng = random.Random(1811)
    snapshot, result, typed = _bare(rng), _bare(rng), _bare(rng)
    config = box.config
    cwd = "/home/u/app"
    prompts = [
        _record(SESSION, 1, "user", f"use mytoken {snapshot} for the staging api", cwd),
        _record(SESSION, 2, "assistant", [{"type": "text", "text": "Done."}], cwd),
        _record(SESSION, 3, "user", f"and mytoken {result} for the mirror", cwd),
        _record(SESSION, 4, "assistant", [{"type": "text", "text": "Noted."}], cwd),
        _record(SESSION, 5, "user", f"last one: mytoken {typed} for prod", cwd),
        _record(SESSION, 6, "assistant", [_call("ls /srv")], cwd),
        # The same copy twice on one line (the output, and toolUseResult, which no rendering
        # shows), and once in a summary off the conversation's path.
        {
            **_record(SESSION, 7, "user", [_output(f"err {result}")], cwd),
            "toolUseResult": {"stdout": "", "stderr": f"err {result}", "interrupted": False},
        },
        {"type": "summary", "summary": f"rotated {typed}", "leafUuid": "x"},
    ]
    _write(config / "projects" / PROJECT / f"{SESSION}.jsonl", prompts)
    history = config / "file-history" / SESSION / "3f2a1b0c9d8e7f6a@v1"
    history.parent.mkdir(parents=True)
    history.write_text(f"GITHUB_TOKEN={snapshot}\nDEBUG=1\n")
    results = config / "projects" / PROJECT / SESSION / "tool-results" / "toolu_01.txt"
    results.parent.mkdir(parents=True)
    results.write_text(f"export AWS_SECRET_ACCESS_KEY={result}\n")
    line = {"display": f"export API_TOKEN={typed}", "sessionId": SESSION, "timestamp": 1}
    (config / "history.jsonl").write_text(json.dumps(line) + "\n")
    # The second session: a token in its project folder's name and in its cwd.
    token = fake_github_token(rng)
    token_cwd = f"/home/u/{token}"
    records = [
        _record(NAMED_CWD_SESSION, 1, "user", "mytoken rotation plan, please", token_cwd),
        _record(NAMED_CWD_SESSION, 2, "assistant", [{"type": "text", "text": "Sure."}], token_cwd),
    ]
    _write(config / "projects" / f"-home-u-{token}" / f"{NAMED_CWD_SESSION}.jsonl", records)
    config.chmod(0o700)
    return box, [snapshot, result, typed], token


def _clean(done: CliResult, values: list[str]) -> None:
    for value in values:
        assert value not in done.output
        assert value[8:28] not in done.output


def test_search_redacts_values_found_in_side_files_and_history(
    world: tuple[Sandbox, list[str], str],
) -> None:
    box, values, token = world
    for form in ("text", "json"):
        done = box.scrub("search", "mytoken", "--format", form)
        assert done.returncode == 0, done.stderr
        _clean(done, [*values, token])
        assert done.stdout.count("mytoken") >= 4  # every prompt is a hit, with its context


def test_search_redacts_a_token_in_the_project_and_cwd(
    world: tuple[Sandbox, list[str], str],
) -> None:
    box, _, token = world
    done = box.scrub("search", "rotation plan", "--format", "json")
    assert done.returncode == 0, done.stderr
    _clean(done, [token])
    hits = json.loads(done.stdout)["hits"]
    assert [hit["session_id"] for hit in hits] == [NAMED_CWD_SESSION]
    assert "[REDACTED:github-token:" in hits[0]["project"]
    assert hits[0]["source"].endswith(f"/projects/{hits[0]['project']}/{NAMED_CWD_SESSION}.jsonl")


def test_search_of_an_archive_redacts_values_found_in_its_side_files(
    world: tuple[Sandbox, list[str], str],
) -> None:
    box, values, _ = world
    key = box.root / "key.txt"
    identity = generate_identity()
    write_identity_file(key, identity, datetime(2026, 1, 1, tzinfo=UTC))
    policy = Policy.default()
    session = [s for s in discover(box.config).sessions if s.id == SESSION]
    encryption = resolve_encryption(policy, recipients=[identity.recipient().encode()])
    (outcome,) = archive_sessions(
        session, policy=policy, home=box.scrub_home, encryption=encryption, now=datetime.now(UTC)
    )
    assert outcome.error is None
    done = box.scrub("search", "mytoken", "--archives", "-i", key, "--format", "json")
    assert done.returncode == 0, done.stderr
    # The history line is in no archive: the config dir's history.jsonl tells it.
    _clean(done, values)
    archived = [h for h in json.loads(done.stdout)["hits"] if h["origin"] == "archive"]
    assert len(archived) == 3


@pytest.mark.parametrize("form", ["markdown", "html", "jsonl"])
def test_export_redacts_values_found_in_side_files_and_history(
    world: tuple[Sandbox, list[str], str], form: str
) -> None:
    box, values, _ = world
    out = box.root / f"export.{form}"
    done = box.scrub("export", SESSION, "--format", form, "-o", out)
    assert done.returncode == 0, done.stderr
    _clean(done, values)
    text = out.read_text()
    for value in values:
        assert value not in text
    assert text.count("mytoken") == 3


@pytest.mark.parametrize("form", ["markdown", "html", "jsonl"])
def test_export_of_a_session_whose_project_and_cwd_hold_a_token(
    world: tuple[Sandbox, list[str], str], form: str
) -> None:
    box, _, token = world
    done = box.scrub("export", NAMED_CWD_SESSION, "--format", form)
    assert done.returncode == 0, done.stderr
    _clean(done, [token])
    assert "rotation plan" in done.stdout


def _redact_count(box: Sandbox, session: str) -> int:
    done = box.scrub("redact", "--session", session, "--output", box.root / "redacted")
    assert done.returncode == 0, done.stderr
    transcript = f"{session}.jsonl"
    lines = [line for line in done.stdout.splitlines() if transcript in line]
    assert len(lines) == 1, done.stdout
    return int(lines[0].split(": ", 1)[1].split()[0])


def test_export_jsonl_counts_redactions_as_redact_does(
    world: tuple[Sandbox, list[str], str],
) -> None:
    box, _, _ = world
    expected = _redact_count(box, SESSION)
    # Each value in its prompt, twice on the output line, once in the summary: all by value.
    assert expected == 6
    done = box.scrub("export", SESSION, "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    assert f"as jsonl, {expected} redactions listed" in done.stderr
