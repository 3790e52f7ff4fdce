"""What `scrub audit` and `scrub sessions` show and what the scan cache keeps, where a secret sits
outside the strings the detectors read: a session's lines of history.jsonl (`--session`), a tool
label whose command holds a value found by value, a project folder named after a cwd that holds
a token. Every output format and every cache file is searched for the planted value and for
every 12-character piece of it. Fake values are built at run time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrubber.demo import fake_aws_secret_key, fake_github_token
from tests.conftest import CliResult, Sandbox

SESSION = "5b1f0c3e-7d2a-4c1b-9e8f-0a1b2c3d4e5f"
OTHER = "9c2e1d4f-8a3b-4d2c-8f9e-1b2c3d4e5f60"
NAMED = "AWS_SECRET_ACCESS_KEY="  # the name a detector finds a value by
PIECE = 12


def _record(session: str, n: int, **fields: object) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "parentUuid": None if n == 1 else f"00000000-0000-4000-8000-{n - 1:012d}",
        "sessionId": session,
        "cwd": "/work/app",
        "timestamp": "2026-11-30T10:00:00.000Z",
        **fields,
    }


def _prose(session: str, n: int, text: str) -> dict[str, object]:
    return _record(session, n, message={"role": "user", "content": text})


def _bash(session: str, n: int, command: str, stderr: str) -> list[dict[str, object]]:
    """A Bash call and its failing result (the result's strings are labelled with the call)."""
    call_id = f"toolu_{n:04d}"
    call = _record(
        session,
        n,
        type="assistant",
        message={
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
            ],
        },
    )
    result = _record(
        session,
        n + 1,
        message={
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": stderr}],
        },
        toolUseResult={"stdout": "", "stderr": stderr, "interrupted": False},
    )
    return [call, result]


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    path.chmod(0o600)


def _leaks(text: str, secret: str) -> list[str]:
    """Which 12-character pieces of `secret` (the whole of it included) `text` holds: their
    offsets in the secret only, never the piece."""
    return [
        f"piece at {i}" for i in range(len(secret) - PIECE + 1) if secret[i : i + PIECE] in text
    ]


def _outputs(scrub_cli: Callable[..., CliResult], *args: str) -> dict[str, str]:
    """Every format of `scrub audit ARGS`, with stderr (warnings name files)."""
    shown = {}
    for name, extra in (
        ("text", ("--verbose",)),
        ("json", ("--format", "json")),
        ("sarif", ("--format", "sarif")),
    ):
        done = scrub_cli("audit", *args, *extra)
        assert done.returncode == 1, done.output[-400:]
        assert "Traceback" not in done.output
        shown[name] = done.output
    return shown


def _cache_files(sandbox: Sandbox) -> dict[str, str]:
    folder = sandbox.scrub_home / "state" / "scan-cache"
    files = sorted(folder.glob("*.json"))
    assert files, "the audit wrote no scan cache"
    return {f.name: f.read_bytes().decode("latin-1") for f in files}


def _no_piece_anywhere(texts: dict[str, str], secret: str) -> None:
    leaked = {name: found for name, text in texts.items() if (found := _leaks(text, secret))}
    assert not leaked, f"the planted value shows in {sorted(leaked)}: {leaked}"


def test_audit_of_a_session_scans_its_lines_of_history(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    rng = random.Random(1601)
    mine, theirs = fake_aws_secret_key(rng), fake_aws_secret_key(rng)
    project = sandbox.config / "projects" / "-work-app"
    sandbox.config.mkdir(parents=True, mode=0o700, exist_ok=True)
    # The transcript holds the value bare (no detector sees it there); only the prompt in
    # history.jsonl names it.
    _write_jsonl(
        project / f"{SESSION}.jsonl",
        [_prose(SESSION, 1, "deploy"), *_bash(SESSION, 2, "./deploy.sh", f"err {mine}")],
    )
    _write_jsonl(project / f"{OTHER}.jsonl", [_prose(OTHER, 1, "hello")])
    history = [
        {"display": f"export {NAMED}{mine}", "sessionId": SESSION, "timestamp": 1},
        {"display": f"export {NAMED}{theirs}", "sessionId": OTHER, "timestamp": 2},
    ]
    _write_jsonl(sandbox.config / "history.jsonl", history)  # type: ignore[arg-type]
    for cache in ("--no-cache", "--no-cache", ""):  # written afresh, then answered from it
        done = scrub_cli(
            "audit", "--session", SESSION[:8], "--format", "json", *[cache] * bool(cache)
        )
        assert done.returncode == 1, done.output[-400:]
        findings = json.loads(done.stdout)["findings"]
        where = sorted((Path(f["file"]).name, f["line"], f["found_by"]) for f in findings)
        assert where == [
            (f"{SESSION}.jsonl", 3, "value"),
            (f"{SESSION}.jsonl", 3, "value"),
            ("history.jsonl", 1, "detector"),
        ]
        assert {f["session_id"] for f in findings} == {SESSION}
    # The other session's line is its own: reported for it, and by a whole audit.
    other = json.loads(scrub_cli("audit", "--session", OTHER[:8], "--format", "json").stdout)
    assert [(Path(f["file"]).name, f["line"]) for f in other["findings"]] == [("history.jsonl", 2)]
    whole = json.loads(scrub_cli("audit", "--format", "json").stdout)
    assert len([f for f in whole["findings"] if f["file"].endswith("history.jsonl")]) == 2


def test_tool_labels_and_cached_calls_lose_values_found_by_value(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    secret = fake_aws_secret_key(random.Random(1602))
    project = sandbox.config / "projects" / "-work-app"
    sandbox.config.mkdir(parents=True, mode=0o700, exist_ok=True)
    results = project / SESSION / "tool-results"
    results.mkdir(parents=True, mode=0o700)
    (results / "toolu_0009.txt").write_text(f"export {NAMED}{secret}\n")
    long_command = "./deploy.sh --region eu-west-1 --stage production --verbose " * 2
    records = [
        _prose(SESSION, 1, "deploy it"),
        # The command holds the value bare (no detector sees it there); the result names it, and
        # its finding's label is built from the command.
        *_bash(SESSION, 2, f"./deploy.sh {secret}", f"{NAMED}{secret}"),
        # A label cut short (at 120 characters) in the middle of the value: 24 of its first
        # characters end it.
        *_bash(SESSION, 4, f"{long_command[:90]}{secret}", f"{NAMED}{secret}"),
        # A call no result answers yet: remembered by the scan cache.
        _bash(SESSION, 6, f"./watch.sh {secret}", "")[0],
    ]
    _write_jsonl(project / f"{SESSION}.jsonl", records)
    shown = _outputs(scrub_cli)
    report = json.loads(shown["json"])
    labels = [f["source"] for f in report["findings"] if f["source"]]
    assert len(labels) >= 4 and all(label.startswith("Bash(") for label in labels)
    assert any("[REDACTED:" in label for label in labels)
    _no_piece_anywhere({**shown, **_cache_files(sandbox)}, secret)
    # Answered from the cache, the same.
    _no_piece_anywhere(_outputs(scrub_cli), secret)
    # Appended to: resumed with the calls the cache kept.
    with (project / f"{SESSION}.jsonl").open("a") as out:
        answer = _bash(SESSION, 6, "unused", f"{NAMED}{secret}")[1]
        out.write(json.dumps(answer) + "\n")
    appended = _outputs(scrub_cli)
    resumed = json.loads(appended["json"])["findings"]
    assert any(f["line"] == 7 and f["source"] for f in resumed)
    _no_piece_anywhere({**appended, **_cache_files(sandbox)}, secret)


def test_a_token_in_the_project_folder_and_cwd_is_shown_redacted(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    rng = random.Random(1603)
    token, secret = fake_github_token(rng), fake_aws_secret_key(rng)
    folder = f"-home-u-{token}"
    project = sandbox.config / "projects" / folder
    sandbox.config.mkdir(parents=True, mode=0o700, exist_ok=True)
    records: list[dict[str, Any]] = [
        _prose(SESSION, 1, "list it"),
        _prose(SESSION, 2, f"export {NAMED}{secret}"),
    ]
    for record in records:
        record["cwd"] = f"/home/u/{token}"
    _write_jsonl(project / f"{SESSION}.jsonl", records)
    (project / f"{SESSION}.jsonl").chmod(0o644)  # a warning names the file
    project.chmod(0o755)  # and one its folder
    shown = _outputs(scrub_cli)
    report = json.loads(shown["json"])
    [session] = report["sessions"]
    assert session["project"].startswith("-home-u-[REDACTED:")  # its readable part kept
    assert report["findings"] and report["warnings"]
    for fmt in ("text", "json"):
        done = scrub_cli("sessions", "--format", fmt)
        assert done.returncode == 0, done.output[-400:]
        shown[f"sessions {fmt}"] = done.output
    assert "-home-u-[REDACTED:" in shown["sessions text"]
    _no_piece_anywhere({**shown, **_cache_files(sandbox)}, token)
    # Answered from the cache: the same places, still redacted.
    again = _outputs(scrub_cli)
    assert json.loads(again["json"])["findings"] == report["findings"]
    _no_piece_anywhere({**again, **_cache_files(sandbox)}, token)


def test_a_project_folder_holding_a_value_found_by_value_stays_redacted_when_warm(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    """No detector sees a bare value in a folder's name: the session's known values redact it,
    and a warm audit (which knows no value of an unchanged session) shows what the cache
    kept of the redacted place."""
    rng = random.Random(1605)
    secret = fake_aws_secret_key(rng)
    while not secret.isalnum():  # a folder's name holds letters, digits and dashes only
        secret = fake_aws_secret_key(rng)
    project = sandbox.config / "projects" / f"-work-{secret}"
    sandbox.config.mkdir(parents=True, mode=0o700, exist_ok=True)
    _write_jsonl(project / f"{SESSION}.jsonl", [_prose(SESSION, 1, f"export {NAMED}{secret}")])
    cold = _outputs(scrub_cli)
    assert json.loads(cold["json"])["sessions"][0]["project"].startswith("-work-[REDACTED:")
    _no_piece_anywhere({**cold, **_cache_files(sandbox)}, secret)
    warm = _outputs(scrub_cli)
    assert json.loads(warm["json"]) == json.loads(cold["json"])
    _no_piece_anywhere(warm, secret)


def test_a_cache_written_the_old_way_is_ignored(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    """Format 1 named a shard by an unkeyed hash of the folder's name and kept the name in it:
    such a shard is neither read nor kept after an audit of everything."""
    import hashlib

    secret = fake_aws_secret_key(random.Random(1604))
    project = sandbox.config / "projects" / "-work-app"
    sandbox.config.mkdir(parents=True, mode=0o700, exist_ok=True)
    _write_jsonl(project / f"{SESSION}.jsonl", [_prose(SESSION, 1, f"export {NAMED}{secret}")])
    folder = sandbox.scrub_home / "state" / "scan-cache"
    folder.mkdir(parents=True, mode=0o700)
    sandbox.scrub_home.chmod(0o700)
    (sandbox.scrub_home / "state").chmod(0o700)
    old = folder / (hashlib.sha256(b"-work-app").hexdigest()[:40] + ".json")
    body = {"format": 1, "shard": "-work-app", "groups": {SESSION: {"x": {"state": []}}}}
    old.write_text("0" * 64 + "\n" + json.dumps(body))
    old.chmod(0o600)
    first = scrub_cli("audit", "--format", "json")
    assert first.returncode == 1 and "Traceback" not in first.output
    assert len(json.loads(first.stdout)["findings"]) == 1
    assert not old.exists()
    assert json.loads(scrub_cli("audit", "--format", "json").stdout) == json.loads(first.stdout)
