"""A value found once is a secret everywhere in its session (issue 12): audit reports every
copy (marked as found by value), redaction removes every copy, structure is kept.

The world: one session whose tool-results file holds `AWS_SECRET_ACCESS_KEY=<value>` (the
detectors find it there by its name) while the transcript holds the same value bare, on the
stderr of a failing command (`err <value>`), where no detector alone would see it. Fake values
are built at run time.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.demo import fake_aws_secret_key
from scrubber.detection.known_values import KnownValues
from scrubber.detection.registry import build_scanner
from scrubber.policy.model import Policy, SessionEndAction
from scrubber.usecases.redact import redact_copies
from scrubber.usecases.redact_in_place import redact_files_in_place
from scrubber.usecases.session_end import EndedSession, PipelineActions
from tests.conftest import CliResult, Sandbox

SESSION = "5b1f0c3e-7d2a-4c1b-9e8f-0a1b2c3d4e5f"
OTHER = "9c2e1d4f-8a3b-4d2c-8f9e-1b2c3d4e5f60"
PROJECT = "-work-app"


def _record(uuid: int, parent: int | None, **fields: object) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": f"00000000-0000-4000-8000-{uuid:012d}",
        "parentUuid": None if parent is None else f"00000000-0000-4000-8000-{parent:012d}",
        "sessionId": SESSION,
        "timestamp": "2026-11-30T10:00:00.000Z",
        **fields,
    }


def _bash_failure(uuid: int, stderr: str) -> dict[str, object]:
    return _record(
        uuid,
        uuid - 1,
        message={
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{uuid:04d}", "content": stderr}
            ],
        },
        toolUseResult={"stdout": "", "stderr": stderr, "interrupted": False},
    )


def _prose(uuid: int, text: str) -> dict[str, object]:
    return _record(uuid, uuid - 1, message={"role": "user", "content": text})


def build_world(config: Path, secret: str, *, filler: int = 0, copy_first: bool = False) -> Path:
    """The session: transcript lines (a copy of `secret` on an `err` line, optionally before
    `filler` harmless lines), its tool-results file with the named secret, and history."""
    project = config / "projects" / PROJECT
    results = project / SESSION / "tool-results"
    results.mkdir(parents=True)
    config.chmod(0o700)
    (results / "toolu_0001.txt").write_text(f"export AWS_SECRET_ACCESS_KEY={secret}\n")
    lines = [_prose(1, "run the deploy script")]
    copy = _bash_failure(2, f"err {secret}")
    if copy_first:
        lines.append(copy)
    lines += [_prose(3 + i, f"step {i} is fine") for i in range(filler)]
    if not copy_first:
        lines.append(copy)
    lines.append(
        {
            "type": "summary",
            "summary": f"deploy failed with {json.dumps(secret)} in the logs",
            "leafUuid": "x",
        }
    )
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    history = [
        {"display": f"why does it say err {secret}", "sessionId": SESSION, "timestamp": 1},
        {"display": f"unrelated {secret}", "sessionId": OTHER, "timestamp": 2},
    ]
    (config / "history.jsonl").write_text("".join(json.dumps(h) + "\n" for h in history))
    return transcript


@pytest.fixture
def secret() -> str:
    return fake_aws_secret_key(random.Random(1207))


def _audit(scrub_cli: Callable[..., CliResult], *args: str) -> dict[str, object]:
    done = scrub_cli("audit", *args, "--format", "json")
    assert done.returncode == 1, done.output
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _by_file(report: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for item in report["findings"]:  # type: ignore[attr-defined]
        found.setdefault(Path(item["file"]).name, []).append(item)
    return found


def test_audit_reports_the_copy_on_an_err_line(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str
) -> None:
    transcript = build_world(sandbox.config, secret)
    found = _by_file(_audit(scrub_cli))
    [named] = found["toolu_0001.txt"]
    assert named["found_by"] == "detector"
    copies = found[transcript.name]
    # The err line holds it twice (tool_result and toolUseResult), the summary once (quoted).
    assert sorted((c["line"], c["json_path"]) for c in copies) == [
        (2, "/message/content/0/content"),
        (2, "/toolUseResult/stderr"),
        (3, "/summary"),
    ]
    for copy in copies:
        assert copy["found_by"] == "value"
        assert copy["kind"] == named["kind"] and copy["fingerprint"] == named["fingerprint"]
        assert copy["length"] == len(secret)
    # History: only the line of this session.
    [in_history] = found["history.jsonl"]
    assert in_history["line"] == 1 and in_history["found_by"] == "value"
    text = scrub_cli("audit").stdout
    assert secret not in text and "found by value" in text


@pytest.mark.parametrize("copy_first", [True, False])
def test_copies_far_apart_are_found(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str, copy_first: bool
) -> None:
    transcript = build_world(sandbox.config, secret, filler=10_000, copy_first=copy_first)
    copies = _by_file(_audit(scrub_cli, "--session", SESSION))[transcript.name]
    lines = {c["line"] for c in copies}
    assert lines == ({2, 10_003} if copy_first else {10_002, 10_003})


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [(k, _leaves(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_leaves(v) for v in value]
    return [type(value).__name__]


def _assert_clean_and_same_shape(original: Path, redacted: Path, secret: str) -> None:
    before = original.read_text().splitlines()
    after = redacted.read_text().splitlines()
    assert len(before) == len(after)
    assert secret not in redacted.read_text()
    assert json.dumps(secret)[1:-1] not in redacted.read_text()
    for old, new in zip(before, after, strict=True):
        assert _leaves(json.loads(old)) == _leaves(json.loads(new))


def _session_files(config: Path) -> list[Path]:
    """The session's files, transcript first, as `scrub redact --session` lists them."""
    project = config / "projects" / PROJECT
    return [project / f"{SESSION}.jsonl", *sorted((project / SESSION).rglob("*.txt"))]


def test_redact_session_copies_remove_every_copy(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str
) -> None:
    """The transcript is redacted before the tool-results file where the value is found: the
    copy in the transcript goes all the same, and history's line of the session with it."""
    transcript = build_world(sandbox.config, secret)
    original = transcript.read_text()
    scanner = build_scanner(Policy(), sandbox.scrub_home)
    dest = sandbox.root / "redacted"
    files = _session_files(sandbox.config)
    pairs = [(f, dest / f.relative_to(sandbox.config)) for f in files]
    known = KnownValues()
    results = redact_copies(pairs, scanner, known=known)
    out = dest / transcript.relative_to(sandbox.config)
    _assert_clean_and_same_shape(transcript, out, secret)
    assert results[0].replaced == 3 and results[0].by_kind == {"aws-secret-access-key": 3}
    side = out.parent / SESSION / "tool-results" / "toolu_0001.txt"
    assert secret not in side.read_text()
    assert transcript.read_text() == original  # copies only
    assert not list(dest.rglob("*.scrub-pending"))
    assert scrub_cli("verify", out, "--original", transcript).returncode == 0
    # The values found reach history.jsonl's lines of the session, not the other session's.
    history = sandbox.config / "history.jsonl"
    redact_files_in_place([history], scanner, sandbox.scrub_home / "locks", known=known)
    first, second = history.read_text().splitlines()
    assert secret not in first and secret in second


def test_redact_in_place_removes_every_copy(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str
) -> None:
    transcript = build_world(sandbox.config, secret)
    keep = sandbox.root / "original.jsonl"
    keep.write_bytes(transcript.read_bytes())
    mtime = transcript.stat().st_mtime_ns
    scanner = build_scanner(Policy(), sandbox.scrub_home)
    files = _session_files(sandbox.config)
    results = redact_files_in_place(files, scanner, sandbox.scrub_home / "locks")
    _assert_clean_and_same_shape(keep, transcript, secret)
    assert transcript.stat().st_mtime_ns == mtime
    assert results[0].replaced == 3
    side = transcript.parent / SESSION / "tool-results" / "toolu_0001.txt"
    assert secret not in side.read_text()
    again = scrub_cli("audit", "--session", SESSION, "--format", "json")
    assert again.returncode == 0, again.output


def test_single_file_copy_removes_a_copy_before_the_finding(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str, tmp_path: Path
) -> None:
    """Within one file: the value is named on a later line, its bare copy comes first."""
    lines = [
        _bash_failure(2, f"err {secret}"),
        _prose(3, f"AWS_SECRET_ACCESS_KEY={secret}"),
    ]
    source = tmp_path / f"{SESSION}.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out.jsonl"
    done = scrub_cli("redact", source, "--output", out)
    assert done.returncode == 0, done.output
    _assert_clean_and_same_shape(source, out, secret)


@pytest.mark.parametrize("action", [SessionEndAction.REDACT_COPY, SessionEndAction.REDACT_IN_PLACE])
def test_the_worker_redacts_copies_across_the_session(
    sandbox: Sandbox, secret: str, action: SessionEndAction
) -> None:
    """SessionEnd's actions go through the same code: the copy on the err line goes too."""
    transcript = build_world(sandbox.config, secret)
    keep = sandbox.root / "original.jsonl"
    keep.write_bytes(transcript.read_bytes())
    ctx = EndedSession(
        session_id=SESSION,
        transcript=transcript,
        config_dir=sandbox.config,
        home=sandbox.scrub_home,
        policy=Policy(),
        env=dict(os.environ),
        now=datetime.now(UTC),
    )
    summary = PipelineActions().run(action, ctx)
    assert summary["replaced"] == 4  # 3 copies in the transcript, 1 in tool-results
    if action is SessionEndAction.REDACT_COPY:
        written = sandbox.scrub_home / "redacted" / transcript.relative_to(sandbox.config)
    else:
        written = transcript
    _assert_clean_and_same_shape(keep, written, secret)
    audit = PipelineActions().summarize(ctx)
    assert audit["occurrences"] == (4 if action is SessionEndAction.REDACT_COPY else 0)


@pytest.mark.parametrize("in_place", [False, True])
def test_cli_redact_session_removes_the_copy(
    sandbox: Sandbox, scrub_cli: Callable[..., CliResult], secret: str, in_place: bool
) -> None:
    transcript = build_world(sandbox.config, secret)
    done = scrub_cli("redact", "--session", SESSION, *(["--in-place"] if in_place else []))
    assert done.returncode == 0, done.output
    written = transcript
    if not in_place:
        written = sandbox.scrub_home / "redacted" / transcript.relative_to(sandbox.config)
    assert secret not in written.read_text()


def test_a_killed_runs_first_passes_are_removed(sandbox: Sandbox, tmp_path: Path) -> None:
    """kill -9 between a first pass and its publication leaves hidden temp files beside the
    destination; the next run of that destination removes them."""
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps(_prose(1, "nothing here")) + "\n")
    dest = tmp_path / "out" / "s.jsonl"
    dest.parent.mkdir(mode=0o700)
    stale = [
        dest.parent / ".s.jsonl.abc123.scrub-pending",
        dest.parent / "..s.jsonl.x.scrub-pending.y.tmp",
    ]
    for path in stale:
        path.write_text("left by a killed run")
    other = dest.parent / ".other.jsonl.abc123.scrub-pending"
    other.write_text("another destination's")
    redact_copies([(source, dest)], build_scanner(Policy(), sandbox.scrub_home))
    assert dest.read_bytes() == source.read_bytes()
    assert not any(path.exists() for path in stale) and other.exists()


def test_a_line_appended_during_an_in_place_rewrite_loses_its_copy(
    sandbox: Sandbox, tmp_path: Path, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code appends while the rewrite runs: the tail folded in after the pass over
    copies gets the known values replaced line by line (here the append happens right after
    the main pass, as a writer's would)."""
    from scrubber.usecases import redact_in_place as in_place

    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(_prose(1, f"AWS_SECRET_ACCESS_KEY={secret}")) + "\n")
    real = in_place._without_copies

    def append_then_go_on(*args: object, **kwargs: object) -> object:
        with transcript.open("a") as late:
            late.write(json.dumps(_bash_failure(2, f"err {secret}")) + "\n")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(in_place, "_without_copies", append_then_go_on)
    scanner = build_scanner(Policy(), sandbox.scrub_home)
    result = in_place.redact_in_place(transcript, scanner, sandbox.scrub_home / "locks")
    lines = transcript.read_text().splitlines()
    assert len(lines) == 2 and result.folded_tail_bytes > 0
    assert secret not in transcript.read_text()
    assert result.replaced == 3
