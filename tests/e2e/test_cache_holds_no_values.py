"""The scan cache (`state/scan-cache/`) holds fingerprints, never values: what it keeps that came
from a transcript (the tool calls it remembers, by name and target, the findings' labels, the
title, the shown path) is redacted with the detectors and with the values known in the session,
even a value no detector sees where it sits, known only because a tool-results file of the
session names it. Every cache file is searched for every 12-character piece of the value, after
a cold audit, a warm one and one that resumes an appended transcript. Fake values are built at
run time.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable

from scrubber.demo import fake_github_token
from scrubber.detection.context import ClassifiedCall
from scrubber.detection.detector import SourceKind
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.usecases.scan_cache import calls_to_cache
from tests.conftest import CliResult, Sandbox

SESSION = "6c2f1d4e-8b3a-4d2c-9f8e-1a2b3c4d5e6f"
PIECE = 12
NAMED = "GITHUB" + "_TOKEN="  # what makes the detectors take the bare value in tool-results


def _record(n: int, **fields: object) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "parentUuid": None if n == 1 else f"00000000-0000-4000-8000-{n - 1:012d}",
        "sessionId": SESSION,
        "cwd": "/work/app",
        "timestamp": "2026-12-02T10:00:00.000Z",
        **fields,
    }


def _call(n: int, call_id: str, name: str, tool_input: dict[str, str]) -> dict[str, object]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    return _record(n, type="assistant", message={"role": "assistant", "content": [block]})


def _result(n: int, call_id: str, text: str) -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return _record(n, message={"role": "user", "content": [block]}, toolUseResult=text)


def _pieces_in(text: str, value: str) -> list[int]:
    """The offsets in `value` of its 12-character pieces `text` holds (never the piece)."""
    return [i for i in range(len(value) - PIECE + 1) if value[i : i + PIECE] in text]


def _leaks_in_cache(sandbox: Sandbox, values: dict[str, str]) -> dict[str, list[int]]:
    folder = sandbox.scrub_home / "state" / "scan-cache"
    files = sorted(folder.glob("*.json"))
    assert files, "the audit wrote no scan cache"
    leaks = {}
    for file in files:
        text = file.read_bytes().decode("latin-1")
        for name, value in values.items():
            if found := _pieces_in(text, value):
                leaks[f"{name} in {file.name}"] = found
    return leaks


def _audit(scrub_cli: Callable[..., CliResult], *options: str) -> dict[str, object]:
    done = scrub_cli("audit", "--format", "json", *options)
    assert done.returncode == 1, done.output[-400:]
    assert "Traceback" not in done.output
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_the_cache_keeps_no_piece_of_a_value_known_from_tool_results(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    rng = random.Random(2612)
    bare = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    token = fake_github_token(rng)
    values = {"bare value": bare, "token": token}
    project = sandbox.config / "projects" / "-work-app"
    results = project / SESSION / "tool-results"
    results.mkdir(parents=True, mode=0o700)
    (results / "toolu_0002.txt").write_text(f"{NAMED}{bare}\n")
    transcript = project / f"{SESSION}.jsonl"
    records = [
        _record(1, message={"role": "user", "content": "deploy now"}),
        # The tool's name and input hold the value bare: no detector sees it there.
        _call(2, "toolu_0002", f"mcp__{bare}__run", {"q": f"deploy {bare}"}),
        _result(3, "toolu_0002", f"deploy token {token}"),
        # A call no result answers yet, named after the token: the cache remembers it.
        _call(4, "toolu_0004", f"mcp__{token}__run", {"q": "deploy"}),
        _call(5, "toolu_0005", f"mcp__{bare}__wait", {"q": f"wait {bare}"}),
        {"type": "custom-title", "customTitle": f"deploy {bare}", "sessionId": SESSION},
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    for _cold_then_warm in range(2):
        report = _audit(scrub_cli)
        assert report["findings"], "the planted values were not found"
        assert _leaks_in_cache(sandbox, values) == {}
    # Appended to: the scan resumes with the calls the cache remembered, and writes it again.
    with transcript.open("a") as out:
        out.write(json.dumps(_result(6, "toolu_0005", f"done {token}")) + "\n")
        out.write(json.dumps(_result(7, "toolu_0004", f"done {token}")) + "\n")
    resumed = _audit(scrub_cli)
    assert _leaks_in_cache(sandbox, values) == {}
    # What the resumed scan labels with the cached calls is what a scan from scratch shows
    # (line 8 aside: its call's name holds a token the detectors redact in the cache, and a
    # scan from scratch redacts it as the session's known value: both hide it).
    resumed_labels = _labels(resumed)
    cold_labels = _labels(_audit(scrub_cli, "--no-cache"))
    assert {line for line, _ in resumed_labels} >= {7, 8}
    assert [x for x in resumed_labels if x[0] != 8] == [x for x in cold_labels if x[0] != 8]
    for line, label in resumed_labels + cold_labels:
        assert not [v for v in values.values() if _pieces_in(label or "", v)], line


def _labels(report: dict[str, object]) -> list[tuple[int, str | None]]:
    findings: list[dict[str, object]] = report["findings"]  # type: ignore[assignment]
    return [(f["line"], f["source"]) for f in findings if f["found_by"] == "detector"]  # type: ignore[misc]


def test_cached_calls_keep_what_resuming_needs(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult]
) -> None:
    """A redacted name is still the call's: a Read of `.env` answered after an append is
    still a credential source, as in a scan from scratch."""
    project = sandbox.config / "projects" / "-work-app"
    project.mkdir(parents=True, mode=0o700)
    transcript = project / f"{SESSION}.jsonl"
    records = [
        _record(1, message={"role": "user", "content": "read it"}),
        _call(2, "toolu_0002", "Read", {"file_path": "/work/app/.env"}),
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = scrub_cli("audit", "--format", "json")
    assert done.returncode == 0, done.output[-400:]
    short = "db" + "Pw4" + "xQ"  # short: found only because the call read a .env file
    with transcript.open("a") as out:
        out.write(json.dumps(_result(3, "toolu_0002", f"DB_PASSWORD={short}\n")) + "\n")
    resumed = _audit(scrub_cli)
    lines = {f["line"] for f in resumed["findings"]}  # type: ignore[attr-defined]
    assert lines == {3}
    cold = json.loads(scrub_cli("audit", "--format", "json", "--no-cache").stdout)
    assert [f["source"] for f in cold["findings"]] == [
        f["source"]
        for f in resumed["findings"]  # type: ignore[attr-defined]
    ]


def test_calls_to_cache_redacts_names_and_targets_with_the_detectors() -> None:
    """A token only in a tool's name (no detector reads names, so it is no known value): the
    cache keeps the name redacted all the same."""
    scanner = SecretScanner(
        build_detectors(Policy.default()), Fingerprinter(b"cache-holds-no-values-key-32-by.")
    )
    token = fake_github_token(random.Random(2613))
    calls = {
        "toolu_1": ClassifiedCall(f"mcp__{token}__run", f"deploy {token}", SourceKind.UNKNOWN),
        "toolu_2": ClassifiedCall("Read", "/work/app/.env", SourceKind.DOTENV),
    }
    kept = calls_to_cache(calls, scanner)
    assert not _pieces_in(json.dumps(kept), token)
    assert kept[1] == ("toolu_2", "Read", "/work/app/.env", "dotenv")
    assert kept[0][0] == "toolu_1" and "[REDACTED:github-token:" in kept[0][1]
