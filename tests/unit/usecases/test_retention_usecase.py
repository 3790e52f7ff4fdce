"""usecases.retention: the run takes its environment and clock explicitly, returns what it
planned and did for the CLI to render, and logs one activity line either way."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scrubber.errors import ExitCode, UsageError
from scrubber.retention.plan import Action
from scrubber.usecases.retention import run_retention, undelete_session
from tests.unit.retention.sessions_writer import write_session

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "claude"
    (config / "projects").mkdir(parents=True)  # a config dir Claude Code has used
    return {
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(config / "scrubber"),
        "SCRUB_CLAUDE_MANAGED_SETTINGS": str(tmp_path / "no-managed-settings.json"),
    }


def _activity(env: dict[str, str]) -> list[dict[str, object]]:
    log = Path(env["SCRUB_HOME"]) / "log" / "activity.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_dry_run_plans_returns_and_logs_without_touching_anything(
    env: dict[str, str],
) -> None:
    config = Path(env["CLAUDE_CONFIG_DIR"])
    old = write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=45), seed=1)
    write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=3), seed=2)
    notes: list[str] = []
    run = run_retention(
        env, apply=False, days=30, policy_path=None, force=False, now=NOW, warn=notes.append
    )
    assert run.report is None and run.exit_code is ExitCode.OK and run.period.source == "--days"
    assert [d.key.session_id for d in run.plan.removals] == [old.session_id]
    assert {d.action for d in run.plan.removals} == {Action.TRASH}
    assert old.transcript.exists()  # a dry run
    [line] = _activity(env)
    assert line["event"] == "retention" and line["mode"] == "dry-run" and line["exit"] == 0
    assert line["to_remove"] == 1 and line["days_source"] == "--days"


def test_apply_trashes_and_undelete_brings_back(env: dict[str, str]) -> None:
    config = Path(env["CLAUDE_CONFIG_DIR"])
    old = write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=45), seed=1)
    write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=3), seed=2)
    run = run_retention(
        env, apply=True, days=30, policy_path=None, force=False, now=NOW, warn=print
    )
    assert run.report is not None and not run.report.errors
    assert not old.transcript.exists()
    back = undelete_session(env, old.session_id, keep_mtime=False, now=NOW, warn=print)
    assert back.session_id == old.session_id and old.transcript.exists()
    assert [(r["event"], r["exit"]) for r in _activity(env)] == [("retention", 0), ("undelete", 0)]


def test_a_refused_run_still_logs_its_line(env: dict[str, str]) -> None:
    with pytest.raises(UsageError, match="--days 0"):
        run_retention(env, apply=False, days=0, policy_path=None, force=False, now=NOW, warn=print)
    [line] = _activity(env)
    assert line["exit"] == int(ExitCode.USAGE) and "--days 0" in str(line["error"])
