"""The worker with fake actions and a fake clock: order, progress, retries, parking, crashes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scrubber.errors import BusyError, ConfigError, KeyMaterialError, ScrubberError
from scrubber.hooks import worker as worker_module
from scrubber.hooks.spool import Job, Spool, SpoolState
from scrubber.hooks.worker import (
    JobOutcome,
    Settle,
    Worker,
    WorkerSettings,
    wait_for_settle,
)
from scrubber.policy.model import Policy, SessionEndAction
from scrubber.usecases.session_end import EndedSession

SID = "3f2c9a4e-1b7d-4c8e-9f00-6a5b4c3d2e1f"
START = 1_800_000_000.0


class FakeClock:
    def __init__(self, on_sleep: Callable[[float], None] | None = None) -> None:
        self.now = START
        self.mono = 0.0
        self.slept: list[float] = []
        self.on_sleep = on_sleep

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        self.mono += seconds
        if self.on_sleep is not None:
            self.on_sleep(seconds)


class Crash(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing in the worker catches it."""


@dataclass
class FakeActions:
    calls: list[str] = field(default_factory=list)
    fail: dict[str, list[BaseException]] = field(default_factory=dict)  # queued errors per action

    def run(self, action: SessionEndAction, ctx: EndedSession) -> Mapping[str, Any]:
        self.calls.append(action.value)
        errors = self.fail.get(action.value)
        if errors:
            raise errors.pop(0)
        return {"files": 1, "replaced": 2}

    def summarize(self, ctx: EndedSession) -> Mapping[str, Any]:
        self.calls.append("summary")
        errors = self.fail.get("summary")
        if errors:
            raise errors.pop(0)
        return {"occurrences": 3, "distinct": 2, "by_kind": {"github-token": 1}}


@dataclass
class World:
    root: Path
    clock: FakeClock
    actions: FakeActions
    policy: Policy

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def transcript(self) -> Path:
        return self.config / "projects" / "p" / f"{SID}.jsonl"

    def enqueue(self, **fields: Any) -> None:
        Spool(self.home).enqueue(
            Job(SID, str(self.transcript), ended_at=self.clock.time(), **fields)
        )

    def worker(self, policy_error: ScrubberError | None = None, **settings: Any) -> Worker:
        def load(env: Mapping[str, str]) -> Policy:
            if policy_error is not None:
                raise policy_error
            return self.policy

        return Worker(
            self.home,
            self.config,
            {},
            self.actions,
            settings=WorkerSettings(**{"linger": 0.0, **settings}),
            clock=self.clock,
            policy_loader=load,
        )

    def activity(self) -> list[dict[str, Any]]:
        path = self.home / "log" / "activity.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def events(self) -> list[str]:
        return [r["event"] for r in self.activity()]


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(
        tmp_path,
        FakeClock(),
        FakeActions(),
        Policy(on_session_end=(SessionEndAction.REDACT_IN_PLACE, SessionEndAction.REDACT_COPY)),
    )
    w.transcript.parent.mkdir(parents=True)
    w.transcript.write_text('{"type":"user"}\n')
    old = START - 60
    os.utime(w.transcript, (old, old))
    return w


def test_actions_run_in_the_fixed_order_and_the_job_is_removed(world: World) -> None:
    world.enqueue()
    report = world.worker().run()
    assert report.outcomes == [(SID, JobOutcome.DONE)]
    assert world.actions.calls == ["redact-copy", "redact-in-place"]
    assert Spool(world.home).jobs() == [] and Spool(world.home).jobs(SpoolState.ACTIVE) == []
    assert world.events() == ["redact-copy", "redact-in-place", "done"]
    first = world.activity()[0]
    assert first["session_id"] == SID and first["status"] == "ok" and first["replaced"] == 2
    assert first["time"].startswith("2027-")


def test_no_actions_records_an_audit_summary(world: World) -> None:
    world.policy = Policy()
    world.enqueue()
    world.worker().run()
    assert world.actions.calls == ["summary"]
    summary = world.activity()[0]
    assert summary["event"] == "audit-summary" and summary["by_kind"] == {"github-token": 1}


def test_a_transient_error_is_retried_later_and_done_actions_are_not_redone(
    world: World,
) -> None:
    world.actions.fail["redact-in-place"] = [BusyError("the transcript is being rewritten")]
    world.enqueue()
    report = world.worker().run()
    assert report.outcomes == [(SID, JobOutcome.DEFERRED)]
    [pending] = Spool(world.home).jobs()
    assert pending.job.attempts == 1
    assert pending.job.done == ("redact-copy",)
    assert pending.job.not_before == pytest.approx(START + 30)
    assert pending.job.last_error == "the transcript is being rewritten"
    assert world.events()[-1] == "retry-later"
    # Before the backoff: nothing happens. After it: only the missing action runs.
    world.worker().run(once=True)
    assert world.actions.calls == ["redact-copy", "redact-in-place"]
    world.clock.now += 31
    world.worker().run()
    assert world.actions.calls == ["redact-copy", "redact-in-place", "redact-in-place"]
    assert Spool(world.home).jobs() == []


def test_the_worker_lingers_for_a_retry_that_is_due_soon(world: World) -> None:
    world.actions.fail["redact-copy"] = [OSError(28, "No space left on device")]
    world.enqueue()
    report = world.worker(linger=120.0).run()
    assert [o for _, o in report.outcomes] == [JobOutcome.DEFERRED, JobOutcome.DONE]
    assert world.clock.slept and sum(world.clock.slept) >= 30
    retry = next(r for r in world.activity() if r["event"] == "retry-later")
    assert retry["reason"] == "OSError (errno 28)"  # never the exception's text


@pytest.mark.parametrize(
    "error",
    [ConfigError("archive.recipients: none"), KeyMaterialError("bad recipient")],
)
def test_configuration_errors_park_the_job(world: World, error: ScrubberError) -> None:
    world.actions.fail["redact-copy"] = [error]
    world.enqueue()
    report = world.worker().run()
    assert report.outcomes == [(SID, JobOutcome.FAILED)]
    [failed] = Spool(world.home).jobs(SpoolState.FAILED)
    assert error.message in (failed.job.last_error or "")
    assert Spool(world.home).jobs() == []
    assert world.events()[-1] == "failed"


def test_an_unloadable_policy_parks_the_job(world: World) -> None:
    world.enqueue()
    world.worker(policy_error=ConfigError("policy.yaml: retention.days: expected …")).run()
    assert len(Spool(world.home).jobs(SpoolState.FAILED)) == 1
    assert world.actions.calls == []


def test_unexpected_errors_give_up_after_max_attempts(world: World) -> None:
    world.actions.fail["redact-copy"] = [ValueError("boom: quoted input")] * 3
    world.enqueue()
    for _ in range(3):
        world.worker(max_attempts=3).run(once=True)
        world.clock.now += 10_000
    [failed] = Spool(world.home).jobs(SpoolState.FAILED)
    assert "gave up after 3 attempts" in (failed.job.last_error or "")
    assert "quoted input" not in json.dumps(world.activity())
    assert "quoted input" not in (failed.job.last_error or "")


def test_a_crash_mid_job_is_completed_by_the_next_run_without_redoing(world: World) -> None:
    world.actions.fail["redact-in-place"] = [Crash()]
    world.enqueue()
    with pytest.raises(Crash):
        world.worker().run()
    assert [s.job.done for s in Spool(world.home).jobs(SpoolState.ACTIVE)] == [("redact-copy",)]
    report = world.worker().run()
    assert report.outcomes == [(SID, JobOutcome.DONE)]
    assert world.actions.calls == ["redact-copy", "redact-in-place", "redact-in-place"]
    assert "recovered" in world.events()
    assert Spool(world.home).jobs(SpoolState.ACTIVE) == []


def test_a_missing_transcript_is_waited_for_then_skipped(world: World) -> None:
    world.transcript.unlink()
    world.enqueue()
    report = world.worker(missing_grace=5.0).run()
    assert report.outcomes == [(SID, JobOutcome.SKIPPED)]
    assert 4.5 <= sum(world.clock.slept) <= 6
    assert world.actions.calls == []
    assert world.activity()[0]["reason"].startswith("no transcript")


def test_a_transcript_that_keeps_changing_goes_back_to_the_queue(world: World) -> None:
    def append(_: float) -> None:
        with world.transcript.open("a") as handle:
            handle.write('{"type":"assistant"}\n')
        os.utime(world.transcript, (world.clock.now, world.clock.now))

    world.clock.on_sleep = append
    os.utime(world.transcript, (START, START))
    world.enqueue()
    report = world.worker(max_settle_wait=5.0).run(once=True)
    assert report.outcomes == [(SID, JobOutcome.DEFERRED)]
    [pending] = Spool(world.home).jobs()
    assert pending.job.settle_waits == 1 and pending.job.not_before > world.clock.now
    assert world.actions.calls == []


def test_settle_waits_for_a_quiet_period(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("x\n")
    clock = FakeClock()
    os.utime(path, (START, START))  # written "just now"
    assert wait_for_settle(path, clock, settle=3, max_wait=30, missing_wait=1) is Settle.SETTLED
    assert 3 <= sum(clock.slept) <= 4
    clock = FakeClock()
    os.utime(path, (START - 10, START - 10))
    assert wait_for_settle(path, clock, settle=3, max_wait=30, missing_wait=1) is Settle.SETTLED
    assert clock.slept == []
    clock = FakeClock()
    os.utime(path, (START + 3600, START + 3600))  # a clock-skewed future mtime: watched instead
    assert wait_for_settle(path, clock, settle=3, max_wait=30, missing_wait=1) is Settle.SETTLED
    assert 3 <= sum(clock.slept) <= 4


def test_a_busy_lock_makes_the_second_worker_leave(world: World) -> None:
    world.enqueue()
    first = world.worker()
    with first._locked() as held:
        assert held
        report = world.worker().run()
    assert report.busy and report.outcomes == []
    assert len(Spool(world.home).jobs()) == 1


@pytest.mark.parametrize("deferred_too", [False, True])
def test_jobs_queued_while_the_lock_was_held_are_picked_up(
    world: World, deferred_too: bool
) -> None:
    """A hook that queues a job while the worker finishes sees its own worker fail to get the
    lock: the running worker must look at the queue once more after releasing it (also when
    a job deferred for long would otherwise make it leave)."""
    world.enqueue()
    if deferred_too:
        Spool(world.home).enqueue(
            Job("later-session", str(world.transcript), ended_at=START, not_before=START + 9999)
        )
    worker = world.worker()
    original = worker._drain
    queued = []

    def drain_then_queue(report: Any) -> float | None:
        result = original(report)
        if not queued:
            queued.append(True)
            Spool(world.home).enqueue(Job("other-session", str(world.transcript), ended_at=START))
        return result

    worker._drain = drain_then_queue  # type: ignore[method-assign]
    report = worker.run()
    assert [s for s, _ in report.outcomes] == [SID, "other-session"]
    assert [s.job.session_id for s in Spool(world.home).jobs()] == (
        ["later-session"] if deferred_too else []
    )


def test_the_run_refreshes_the_status_line_allowlist(world: World) -> None:
    world.enqueue()
    world.worker().run()
    compiled = json.loads((world.home / "state" / "allowlist.json").read_text())
    assert compiled["format"] == 1 and compiled["patterns"] == []


def test_backoff_doubles_up_to_the_cap() -> None:
    settings = WorkerSettings(retry_base=10, retry_cap=100)
    assert [settings.backoff(n) for n in (1, 2, 3, 4, 5)] == [10, 20, 40, 80, 100]


def test_describe_error_never_uses_foreign_messages() -> None:
    assert worker_module.describe_error(ScrubberError("ours")) == "ours"
    assert worker_module.describe_error(OSError(2, "x")) == "FileNotFoundError (errno 2)"
    assert worker_module.describe_error(KeyError("a-secret-value")) == "KeyError"


def test_the_worker_scrubs_a_blocked_prompt_left_in_the_transcript(world: World) -> None:
    """The backstop of the UserPromptSubmit hook: records Claude Code writes for a blocked
    prompt (here a `last-prompt` written at the session's end) lose the secret; conversation
    records are left alone."""
    import random

    from scrubber.demo.fakes import fake_github_token

    secret = fake_github_token(random.Random(21))
    user = json.dumps({"type": "user", "message": {"role": "user", "content": secret}})
    world.transcript.write_text(
        json.dumps({"type": "last-prompt", "lastPrompt": f"use {secret}"}) + "\n" + user + "\n"
    )
    old = START - 60
    os.utime(world.transcript, (old, old))
    world.policy = Policy()
    world.enqueue()
    world.worker().run()
    first, second = world.transcript.read_text().splitlines()
    assert secret not in first and "[REDACTED:github-token:" in first
    assert second == user
    assert "prompt-scrubbed" in world.events()
