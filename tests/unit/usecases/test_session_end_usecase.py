"""usecases.session_end with fake actions: the policy's order, finished actions skipped, each
action handed over before the next starts, and errors returned (never raised) for the worker."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrubber.errors import InputError, ScrubberError
from scrubber.policy.model import Policy, SessionEndAction
from scrubber.usecases.session_end import (
    AUDIT_SUMMARY,
    ActionDone,
    EndedSession,
    end_session,
)

SID = "3f2c9a4e-1b7d-4c8e-9f00-6a5b4c3d2e1f"
# Archiving needs recipients in a valid policy; the redactions show the order just as well.
ALL = (SessionEndAction.REDACT_COPY, SessionEndAction.REDACT_IN_PLACE)


@dataclass
class FakeActions:
    calls: list[str] = field(default_factory=list)
    fail: dict[str, BaseException] = field(default_factory=dict)

    def run(self, action: SessionEndAction, session: EndedSession) -> Mapping[str, Any]:
        self.calls.append(action.value)
        if action.value in self.fail:
            raise self.fail[action.value]
        return {"files": 1}

    def summarize(self, session: EndedSession) -> Mapping[str, Any]:
        self.calls.append("summary")
        if "summary" in self.fail:
            raise self.fail["summary"]
        return {"occurrences": 0}


def _session(tmp_path: Path, *actions: SessionEndAction) -> EndedSession:
    transcript = tmp_path / "projects" / "p" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text('{"type":"user"}\n')
    return EndedSession(
        SID,
        transcript,
        tmp_path,
        tmp_path / "home",
        Policy(on_session_end=actions),
        {},
        datetime(2026, 5, 1, tzinfo=UTC),
    )


def _run(
    session: EndedSession, actions: FakeActions, done: tuple[str, ...] = ()
) -> tuple[Any, list[ActionDone]]:
    handed: list[ActionDone] = []

    def on_done(step: ActionDone) -> None:
        handed.append(step)
        actions.calls.append(f"saved {step.action.value}")

    result = end_session(session, actions, done=done, monotonic=lambda: 1.0, on_action_done=on_done)
    return result, handed


def test_actions_run_in_order_each_handed_over_before_the_next(tmp_path: Path) -> None:
    actions = FakeActions()
    result, handed = _run(_session(tmp_path, *ALL), actions)
    assert actions.calls == ["redact-copy", "saved redact-copy", "redact-in-place", "saved redact-in-place"]  # fmt: skip
    assert [s.action for s in handed] == list(ALL)
    assert result.error is None and result.summary is None and result.actions == ALL


def test_actions_already_done_are_skipped(tmp_path: Path) -> None:
    actions = FakeActions()
    _, handed = _run(_session(tmp_path, *ALL), actions, done=("redact-copy",))
    assert actions.calls == ["redact-in-place", "saved redact-in-place"]
    assert [s.action for s in handed] == [SessionEndAction.REDACT_IN_PLACE]


def test_no_actions_means_an_audit_summary(tmp_path: Path) -> None:
    actions = FakeActions()
    result, handed = _run(_session(tmp_path), actions)
    assert actions.calls == ["summary"] and handed == []
    assert result.summary == {"occurrences": 0} and result.error is None


def test_the_first_error_stops_the_run_and_comes_back(tmp_path: Path) -> None:
    actions = FakeActions(fail={"redact-in-place": ScrubberError("busy")})
    result, handed = _run(_session(tmp_path, *ALL), actions)
    assert [s.action for s in handed] == [SessionEndAction.REDACT_COPY]
    assert result.failed == "redact-in-place" and not result.vanished
    assert isinstance(result.error, ScrubberError)
    summary = _run(_session(tmp_path), FakeActions(fail={"summary": OSError(5, "EIO")}))[0]
    assert summary.failed == AUDIT_SUMMARY and isinstance(summary.error, OSError)


def test_an_input_error_on_a_vanished_transcript_says_so(tmp_path: Path) -> None:
    session = _session(tmp_path, SessionEndAction.REDACT_COPY)
    session.transcript.unlink()
    result, _ = _run(session, FakeActions(fail={"redact-copy": InputError("gone")}))
    assert result.vanished and result.failed == "redact-copy"


def test_a_redacted_copy_is_placed_under_its_folder_as_shown(tmp_path: Path) -> None:
    """The SessionEnd copy goes where `scrub redact --session` puts it: a cwd that holds a
    token names the project folder, and the copy's folder is named with it redacted."""
    import json
    import random
    import re

    from scrubber.demo import fake_github_token
    from scrubber.usecases.session_end import PipelineActions

    token = fake_github_token(random.Random(4))
    cwd = f"/home/u/{token}/app"
    folder = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    config = tmp_path / "claude"
    transcript = config / "projects" / folder / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    record = {"type": "user", "cwd": cwd, "sessionId": SID, "message": {"content": "hello"}}
    transcript.write_text(json.dumps(record) + "\n")
    home = tmp_path / "home"
    session = EndedSession(
        SID, transcript, config, home, Policy(), {}, datetime(2026, 5, 1, tzinfo=UTC)
    )
    summary = PipelineActions().run(SessionEndAction.REDACT_COPY, session)
    [copy] = (home / "redacted" / "projects").glob(f"*/{SID}.jsonl")
    assert copy.parent.name != folder
    assert "[REDACTED:github-token:" in copy.parent.name
    assert token not in copy.read_text()
    assert str(copy) == summary["destination"]
