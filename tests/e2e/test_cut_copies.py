"""A cut copy of a known value is a copy (issue 12 item 1): the full values sit in a session's
tool-results file, where the detectors find them by their names; the transcript holds only
pieces of them, as Claude Code writes them: its 2 KB preview cuts a token, an answer quotes a
key's first characters, a prompt breaks a key with a line break. Every output of the real CLI
(search text and json, export markdown, html and jsonl, audit json, redact) must hold no
12-character piece of any value. Fake values are built at run time.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, Sandbox

SESSION = "7d3c1b2a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
PROJECT = "-home-u-p"
PIECE = 12  # what a reader would take for a leak


def _random(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


@pytest.fixture
def values() -> dict[str, str]:
    rng = random.Random(2412)
    return {"github": "gh" + "p_" + _random(rng, 36), "plain": _random(rng, 40)}


def _record(i: int, kind: str, message: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "parentUuid": f"00000000-0000-4000-8000-{i - 1:012d}" if i else None,
        "sessionId": SESSION,
        "timestamp": f"2026-12-02T12:0{i}:00.000Z",
        "cwd": "/home/u/p",
        "message": message,
        **extra,
    }


def build_world(config: Path, values: dict[str, str]) -> Path:
    token, key = values["github"], values["plain"]
    project = config / "projects" / PROJECT
    results = project / SESSION / "tool-results"
    results.mkdir(parents=True)
    config.chmod(0o700)
    full = f"deploy log\nGITHUB_TOKEN={key}\nTOKEN2={token}\n" + "x" * 3000
    (results / "toolu_01.txt").write_text(full)
    # The preview: a token cut 26 characters past its prefix, a key's last 26 characters.
    preview = f"deploy preview {token[:30]}\ndeploy tail {key[14:]}"
    persisted = f"<persisted-output>\n{preview}\nFull output saved to: {results}/toolu_01.txt"
    records = [
        _record(0, "user", {"role": "user", "content": f"deploy with {key[:20]}\n{key[20:]}"}),
        _record(
            1,
            "assistant",
            {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "Bash",
                        "input": {"command": "cat deploy.log"},
                    }
                ],
            },
        ),
        _record(
            2,
            "user",
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": persisted}
                ],
            },
            toolUseResult={"stdout": preview, "stderr": ""},
        ),
        _record(
            3,
            "assistant",
            {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "text", "text": f"deploy: the key {key[:20]}... was used"}],
            },
        ),
    ]
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    return transcript


def pieces_in(text: str, values: dict[str, str]) -> list[tuple[str, int]]:
    """Which value's 12-character pieces (by name and offset, never the piece) `text` holds,
    raw or JSON-escaped."""
    escaped = json.dumps(text)
    return [
        (name, at)
        for name, value in values.items()
        for at in range(len(value) - PIECE + 1)
        if value[at : at + PIECE] in text or value[at : at + PIECE] in escaped
    ]


def _ok(done: CliResult, *codes: int) -> str:
    assert done.returncode in codes, done.output
    return done.output


def test_the_world_holds_the_cut_copies(sandbox: Sandbox, values: dict[str, str]) -> None:
    """The check itself can fail: the transcript holds pieces of both values, no whole one."""
    text = build_world(sandbox.config, values).read_text()
    assert {name for name, _ in pieces_in(text, values)} == {"github", "plain"}
    assert all(value not in text for value in values.values())


def test_search_and_export_show_no_piece(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], values: dict[str, str]
) -> None:
    build_world(sandbox.config, values)
    outputs = {
        "search text": _ok(scrub_cli("search", "deploy", "--limit", "0"), 0),
        "search json": _ok(scrub_cli("search", "deploy", "--format", "json", "--limit", "0"), 0),
    }
    for form in ("markdown", "html", "jsonl"):
        target = sandbox.root / f"export.{form}"
        _ok(scrub_cli("export", SESSION, "--format", form, "-o", str(target)), 0)
        outputs[f"export {form}"] = target.read_text()
    for what, output in outputs.items():
        assert "deploy" in output, what
        assert pieces_in(output, values) == [], what
    assert outputs["search json"].count("[REDACTED:") >= 4


def test_audit_reports_each_cut_copy_by_value(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], values: dict[str, str]
) -> None:
    transcript = build_world(sandbox.config, values)
    output = _ok(scrub_cli("audit", "--format", "json"), 1)
    assert pieces_in(output, values) == []
    report = json.loads(output)
    cut = [f for f in report["findings"] if Path(f["file"]).name == transcript.name]
    shown = sorted((f["line"], f["json_path"], f["length"]) for f in cut)
    # The prompt's two halves, the preview's cut token and tail (twice each: the tool result
    # and toolUseResult), the answer's quoted start (a detector may know that one by its
    # label: then the prompt's first half is its copy).
    assert shown == [
        (1, "/message/content", 20),
        (1, "/message/content", 20),
        (3, "/message/content/0/content", 26),
        (3, "/message/content/0/content", 30),
        (3, "/toolUseResult/stdout", 26),
        (3, "/toolUseResult/stdout", 30),
        (4, "/message/content/0/text", 20),
    ]
    assert all(f["found_by"] == "value" for f in cut if f["line"] == 3)


@pytest.mark.parametrize("in_place", [False, True])
def test_redact_removes_every_piece_and_settles(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], values: dict[str, str], in_place: bool
) -> None:
    transcript = build_world(sandbox.config, values)
    original = transcript.read_text()
    out = sandbox.root / "out"
    where = ["--in-place"] if in_place else ["--output", str(out)]
    _ok(scrub_cli("redact", "--session", SESSION, *where), 0)
    redacted = transcript if in_place else out / "projects" / PROJECT / f"{SESSION}.jsonl"
    text = redacted.read_text()
    assert pieces_in(text, values) == []
    side = redacted.parent / SESSION / "tool-results" / "toolu_01.txt"
    assert pieces_in(side.read_text(), values) == []
    check = ["verify", str(redacted)] + ([] if in_place else ["--original", str(transcript)])
    _ok(scrub_cli(*check), 0)
    if not in_place:
        assert transcript.read_text() == original
        # A second pass over the redacted copy replaces nothing.
        again = sandbox.root / "again.jsonl"
        _ok(scrub_cli("redact", str(redacted), "--output", str(again), "--no-cache"), 0)
        assert again.read_text() == text
    else:
        _ok(scrub_cli("redact", "--session", SESSION, "--in-place", "--no-cache"), 0)
        assert transcript.read_text() == text
