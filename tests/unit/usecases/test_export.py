"""`run_export` in process: the active path rendered (fork, compaction, subagent where it was
started, a huge output cut), every secret redacted and listed, HTML that can load and run
nothing, jsonl identical to `scrub redact`'s copy, and an export that fails closed."""

from __future__ import annotations

import random
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

import scrubber.usecases.export as export_module
from scrubber.demo import fake_github_token, fake_password, fake_stripe_key
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.errors import ExitCode, UsageError
from scrubber.policy.model import Policy
from scrubber.usecases.export import ExportFormat, ExportLeakError, ExportRequest, run_export
from scrubber.usecases.redact import redact_copy

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"export-tests-key-of-32-bytes!!!!")
)
PROJECT = "-home-u-work-app"
SESSION = "e1e1e1e1-0000-4000-8000-000000000018"
AGENT = "a1b2c3d4"
RNG = random.Random(1818)
TOKEN = fake_github_token(RNG)
STRIPE = fake_stripe_key(RNG)
DB_PASSWORD = fake_password(RNG)
HUGE = "log line\n" * 5000


def _rewind_to(builder: Any, parent: str) -> None:
    builder._last = parent  # what /rewind does: the next record hangs off an earlier one


def _compact(builder: Any) -> None:
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "parentUuid": None,
        "logicalParentUuid": builder._last,
        "uuid": str(uuid.uuid4()),
        "sessionId": builder.session_id,
        "timestamp": "2026-03-02T09:30:00.000Z",
        "content": "Conversation compacted",
    }
    builder.add(boundary)
    builder._last = boundary["uuid"]
    summary = builder.prompt("Summary: the deploy failed on the Stripe key, now rotated.")
    summary["isCompactSummary"] = True
    builder.lines[-1] = builder.lines[-1].replace(
        b'"type":"user"', b'"type":"user","isCompactSummary":true'
    )


@pytest.fixture
def config(tmp_path: Path, transcript_builder: Any) -> Path:
    root = tmp_path / ".claude"
    main = transcript_builder(session_id=SESSION)
    first = main.prompt("Why does the <script>alert(1)</script> deploy fail?")
    main.say("A branch that was rewound away.")
    _rewind_to(main, first["uuid"])
    main.read("/home/u/work/app/.env", f"DB_PASSWORD={DB_PASSWORD}\nGITHUB_TOKEN={TOKEN}")
    main.say("The password is set.", thinking=f"It is {DB_PASSWORD}, fine.")
    main.tool(
        "Task",
        {"description": "Find the deploy script", "prompt": "find it", "subagent_type": "Explore"},
        "Found deploy.sh",
        {"status": "completed", "agentId": AGENT},
    )
    main.bash("cat build.log", HUGE)
    _compact(main)
    main.prompt(f"Is {DB_PASSWORD} still used anywhere?")
    main.say(f"Stripe uses {STRIPE}; nothing else.")
    main.raw(b'{"type":"user","torn \xff')
    main.write(root / "projects" / PROJECT / f"{SESSION}.jsonl")
    agent = transcript_builder(session_id=SESSION)
    agent.prompt("find the deploy script")
    agent.bash("grep -rl deploy .", f"deploy.sh: export GITHUB_TOKEN={TOKEN}")
    agent.say("It is deploy.sh.")
    agent.write(root / "projects" / PROJECT / SESSION / "subagents" / f"agent-{AGENT}.jsonl")
    return root


def _export(config: Path, fmt: ExportFormat, **options: Any) -> tuple[str, Any]:
    result = run_export(ExportRequest(SESSION[:8], config, format=fmt, **options), SCANNER, "auto")
    return result.content.decode("utf-8", "surrogateescape"), result


def _no_secret(text: str) -> None:
    for value in (TOKEN, STRIPE, DB_PASSWORD):
        assert value not in text


def test_markdown_follows_the_active_path_with_the_subagent_where_it_started(config: Path) -> None:
    text, result = _export(config, ExportFormat.MARKDOWN)
    _no_secret(text)
    assert "A branch that was rewound away." not in text  # off the path a resume replays
    task = text.index("Tool call `Task(Find the deploy script)`")
    subagent = text.index(f"> #### subagent {AGENT}")
    bash = text.index("Tool call `Bash(cat build.log)`")
    assert task < subagent < bash < text.index("Conversation compacted")
    assert "> deploy.sh: export GITHUB_TOKEN=[REDACTED:github-token:" in text
    assert text.index("Compaction summary") < text.index("Is [REDACTED:dotenv-value:")
    assert "characters cut here; the whole text is in the transcript" in text
    assert len(text) < len(HUGE)
    assert "It is [REDACTED" not in text  # thinking only with --thinking
    assert any("forks 1 time" in note for note in result.notes)
    assert any("could not be read" in note for note in result.notes)
    kinds = {r.kind for r in result.redacted}
    assert {"dotenv-value", "github-token", "stripe-secret-key"} <= kinds
    assert any(r.where.startswith(f"subagent {AGENT}") for r in result.redacted)
    assert "## What was redacted" in text and "| github-token |" in text


def test_thinking_is_shown_redacted_when_asked(config: Path) -> None:
    text, _ = _export(config, ExportFormat.MARKDOWN, thinking=True)
    _no_secret(text)
    assert "> It is [REDACTED:dotenv-value:" in text


def test_html_is_one_file_that_loads_and_runs_nothing(config: Path) -> None:
    text, _ = _export(config, ExportFormat.HTML)
    _no_secret(text)
    assert (
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"
        in text
    )
    assert "<script" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert " src=" not in text and "href=" not in text and "@import" not in text


def test_jsonl_is_the_redacted_transcript_as_scrub_redact_writes_it(
    config: Path, tmp_path: Path
) -> None:
    text, _ = _export(config, ExportFormat.JSONL)
    source = config / "projects" / PROJECT / f"{SESSION}.jsonl"
    copy = tmp_path / "copy.jsonl"
    redact_copy(source, copy, SCANNER)
    assert text.encode("utf-8", "surrogateescape") == copy.read_bytes()
    _no_secret(text)


def test_written_with_o_as_0600_and_never_inside_projects(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.md"
    _export(config, ExportFormat.MARKDOWN, output=out)
    assert out.stat().st_mode & 0o777 == 0o600
    _no_secret(out.read_text())
    with pytest.raises(UsageError, match="projects folder"):
        _export(config, ExportFormat.MARKDOWN, output=config / "projects" / PROJECT / "x.md")


def test_an_export_fails_closed_when_its_output_still_holds_a_secret(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def copy_without_redacting(pairs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        for source, dest in pairs:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        return []

    monkeypatch.setattr(export_module, "redact_copies", copy_without_redacting)
    out = tmp_path / "leak.html"
    for fmt in ExportFormat:
        with pytest.raises(ExportLeakError) as caught:
            _export(config, fmt, output=out)
        assert caught.value.exit_code is ExitCode.RUNTIME
        assert "nothing was written" in caught.value.message
        _no_secret(caught.value.message + str(caught.value.hint))
    assert not out.exists()
