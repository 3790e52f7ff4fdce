"""The worker: drains the SessionEnd spool, one session at a time, under a lock.

For each job it waits for the transcript to settle (Claude Code can still append a few records
after an interactive `/exit`), then hands the session to the SessionEnd use case
(`usecases/session_end.py`: the policy's `on_session_end` actions, or an audit summary when
there are none). A job leaves the spool only after every action succeeded; progress is saved
after each action, so a worker killed mid-job is resumed by the next one without redoing
finished work (and an archive is never overwritten anyway). Transient errors are retried with exponential backoff;
jobs that cannot succeed as configured are parked in `spool/failed/` with the reason.

Every step is one JSON line in `$SCRUB_HOME/log/activity.jsonl`: ids, paths, counts, kinds and
error types, never a secret's value.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from scrubber import paths
from scrubber.errors import BusyError, ConfigError, KeyMaterialError, ScrubberError, UsageError
from scrubber.hooks import status_line
from scrubber.hooks.spool import Job, Spool
from scrubber.policy.model import Policy
from scrubber.usecases.session_end import (
    AUDIT_SUMMARY,
    ActionDone,
    EndedSession,
    PipelineActions,
    SessionActions,
    SessionEndResult,
    end_session,
)

LOCK_NAME = "worker.lock"
MAX_ATTEMPTS = 8  # unexpected errors: after this many, the job is parked in failed/


def lock_file(home: Path) -> Path:
    return paths.state_dir(home) / LOCK_NAME


def append_activity(home: Path, record: Mapping[str, Any], *, now: float | None = None) -> None:
    """One JSON line in the activity log shared with retention (`time` first, UTC)."""
    # Imported on first use: the activity module brings urllib (for its healthcheck ping), a
    # cost for every importer of this module (`scrub hook …`) that never logs.
    from scrubber.activity import append_activity as append_line

    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    append_line(home, {"time": moment.isoformat(timespec="seconds"), **record})


# -- seams ------------------------------------------------------------------------------------


class Clock(Protocol):
    def time(self) -> float: ...  # wall clock, epoch seconds (compared with file mtimes)

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


PolicyLoader = Callable[[Mapping[str, str]], Policy]


def load_policy_from_env(env: Mapping[str, str]) -> Policy:
    from scrubber.policy.load import load_policy

    return load_policy(None, env).policy


# -- settings ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    settle_seconds: float = 3.0  # unchanged this long = settled
    max_settle_wait: float = 30.0  # then the job goes back to the queue
    missing_grace: float = 15.0  # a missing transcript is waited for this long after the end
    linger: float = 90.0  # wait at most this long for deferred jobs before exiting
    retry_base: float = 30.0
    retry_cap: float = 3600.0
    max_attempts: int = MAX_ATTEMPTS

    def backoff(self, attempt: int) -> float:
        return float(min(self.retry_cap, self.retry_base * (2 ** max(0, attempt - 1))))


class Settle(Enum):
    SETTLED = "settled"
    MISSING = "missing"
    CHANGING = "changing"


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def wait_for_settle(
    path: Path, clock: Clock, *, settle: float, max_wait: float, missing_wait: float
) -> Settle:
    """Wait until `path` has kept its size, mtime and inode for `settle` seconds.

    A file whose mtime is already `settle` seconds old is settled at once (the common case after
    `claude -p`); otherwise it is watched, at most `max_wait` seconds. A missing file is waited
    for at most `missing_wait` seconds.
    """
    start = clock.monotonic()
    seen = _identity(path)
    stable_since = start
    while True:
        now = clock.monotonic()
        if seen is None:
            if now - start >= missing_wait:
                return Settle.MISSING
        else:
            age = clock.time() - seen[3] / 1e9
            if age >= settle or now - stable_since >= settle:
                return Settle.SETTLED
            if now - start >= max_wait:
                return Settle.CHANGING
        clock.sleep(min(0.5, settle / 4) if seen is not None else 0.5)
        current = _identity(path)
        if current != seen:
            seen = current
            stable_since = clock.monotonic()


# -- the worker -------------------------------------------------------------------------------


class JobOutcome(Enum):
    DONE = "done"
    SKIPPED = "skipped"  # nothing to do (no transcript): removed
    DEFERRED = "deferred"  # back in the queue for later
    FAILED = "failed"  # parked in spool/failed/


@dataclass(slots=True)
class WorkerReport:
    busy: bool = False
    outcomes: list[tuple[str, JobOutcome]] = field(default_factory=list)
    left: int = 0  # jobs still queued when the worker stopped


_PARK = (ConfigError, KeyMaterialError, UsageError)


class Worker:
    def __init__(
        self,
        home: Path,
        config_dir: Path,
        env: Mapping[str, str],
        actions: SessionActions,
        *,
        settings: WorkerSettings | None = None,
        clock: Clock | None = None,
        policy_loader: PolicyLoader = load_policy_from_env,
    ) -> None:
        self.home = home
        self.config_dir = config_dir
        self.env = env
        self.actions = actions
        self.settings = settings or WorkerSettings()
        self.clock = clock or SystemClock()
        self.spool = Spool(home)
        self.load_policy = policy_loader

    # -- logging ----------------------------------------------------------------------------

    def log(self, event: str, job: Job | None = None, **fields: Any) -> None:
        record: dict[str, Any] = {"component": "worker", "event": event}
        if job is not None:
            record["session_id"] = job.session_id
        record.update(fields)
        with contextlib.suppress(OSError):
            append_activity(self.home, record, now=self.clock.time())

    # -- locking ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[bool]:
        path = lock_file(self.home)
        paths.ensure_private_dir(path.parent)
        try:
            fd = paths.try_lock_own_file(path)
        except ScrubberError as refused:  # a link or a FIFO planted there: never truncated
            self.log("refused", reason=refused.message)
            raise
        if fd is None:
            yield False
            return
        try:
            # Only now, the file known to be a regular one of ours and locked: the pid.
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield True
        finally:
            os.close(fd)  # closing drops the lock; so does the process dying

    # -- the loop ---------------------------------------------------------------------------

    def run(self, *, once: bool = False) -> WorkerReport:
        """Drain the spool. `once`: one pass over the ready jobs, no lingering."""
        report = WorkerReport()
        deadline = self.clock.monotonic() + self.settings.linger
        first = True
        while True:
            with self._locked() as held:
                if not held:
                    report.busy = first
                    return report
                if first:
                    self._start_of_run()
                    first = False
                wait = self._drain(report)
                self._push_uploads()
            # The lock is released before deciding to stop: a hook that queued a job while we
            # held it saw its own worker fail to take the lock, so we look once more.
            if self._ready_jobs():
                continue
            if wait is None or once or self.clock.monotonic() + wait > deadline:
                break
            self.clock.sleep(wait)
        report.left = len(self.spool.jobs())
        return report

    def _start_of_run(self) -> None:
        self.spool.ensure()
        for job in self.spool.recover():
            self.log("recovered", job, note="an earlier worker stopped mid-job; resuming")
        try:
            policy = self.load_policy(self.env)
        except ScrubberError:
            return  # reported per job below
        with contextlib.suppress(OSError):
            status_line.write_allowlist_state(policy, self.home)
            from scrubber.hooks.live_common import write_live_settings

            write_live_settings(policy, self.home)
            status_line.prune_states(self.home, now=self.clock.time())

    def _push_uploads(self) -> None:
        """Archives waiting for object storage (`archive.destination: s3://…`): each try is
        logged by the use case; a failed one waits longer each time in spool/uploads/."""
        from scrubber.usecases.archive_push import push_uploads, waiting_uploads

        if not waiting_uploads(self.home):
            return
        try:
            policy = self.load_policy(self.env)
            if policy.archive.s3 is None:
                return
            push_uploads(
                policy,
                self.home,
                self.env,
                now=datetime.fromtimestamp(self.clock.time(), UTC),
                everything=False,
            )
        except Exception as error:  # the session jobs must not suffer from the store
            self.log("upload-failed", reason=describe_error(error))

    def _ready_jobs(self) -> list[Job]:
        now = self.clock.time()
        return [s.job for s in self.spool.jobs() if s.job.not_before <= now]

    def _drain(self, report: WorkerReport) -> float | None:
        """Process every ready job; the seconds until the next deferred one, or None."""
        while True:
            jobs = self.spool.jobs()
            if not jobs:
                return None
            now = self.clock.time()
            ready = [s.job for s in jobs if s.job.not_before <= now]
            if not ready:
                return max(0.0, min(s.job.not_before for s in jobs) - now)
            for job in ready:
                claimed = self.spool.claim(job.session_id)
                if claimed is None:
                    continue
                report.outcomes.append((claimed.session_id, self.process(claimed)))

    def process(self, job: Job) -> JobOutcome:
        """Run one claimed job to an outcome; never raises for the job's own errors."""
        try:
            return self._process(job)
        except Exception as error:  # one job's failure must not stop the queue
            return self._failed_attempt(job, error)

    def _process(self, job: Job) -> JobOutcome:
        transcript = Path(job.transcript_path)
        try:
            policy = self.load_policy(self.env)
        except _PARK as error:
            return self._park(job, error)
        not_settled = self._unless_settled(job, transcript)
        if not_settled is not None:
            return not_settled
        self._scrub_blocked_prompts(job, transcript)
        now = datetime.fromtimestamp(self.clock.time(), UTC)
        session = EndedSession(
            job.session_id, transcript, self.config_dir, self.home, policy, self.env, now
        )
        return self._end_session(job, session)

    def _scrub_blocked_prompts(self, job: Job, transcript: Path) -> None:
        """The backstop of the UserPromptSubmit hook's detached scrub: once the session has
        ended, mask live secrets left in the records Claude Code writes for a blocked prompt
        (queue-operation, system, last-prompt; never conversation records)."""
        from scrubber.hooks import live_common, prompt_scrub

        with contextlib.suppress(OSError, ValueError):
            settings = live_common.load_live_settings(self.home)
            if settings.live.user_prompt_submit.value != "mask":
                return
            count, _ = prompt_scrub.scrub_transcript(
                transcript, live_common.build_scanner(self.home, settings)
            )
            if count:
                self.log("prompt-scrubbed", job, secrets=count)

    def _unless_settled(self, job: Job, transcript: Path) -> JobOutcome | None:
        """Wait for the transcript to settle: None once it has, else the job's outcome (skipped
        when there is no transcript, deferred while it keeps changing)."""
        s = self.settings
        elapsed = self.clock.time() - job.ended_at
        settled = wait_for_settle(
            transcript,
            self.clock,
            settle=s.settle_seconds,
            max_wait=s.max_settle_wait,
            missing_wait=max(0.0, s.missing_grace - elapsed),
        )
        if settled is Settle.MISSING:
            self.spool.complete(job)
            self.log("skipped", job, reason="no transcript (the session never wrote one)")
            return JobOutcome.SKIPPED
        if settled is Settle.CHANGING:
            waits = job.settle_waits + 1
            later = self.clock.time() + min(600.0, s.retry_base * waits)
            self.spool.release(replace(job, settle_waits=waits, not_before=later))
            self.log("deferred", job, reason="the transcript is still being written")
            return JobOutcome.DEFERRED
        return None

    def _end_session(self, job: Job, session: EndedSession) -> JobOutcome:
        """The use case, with each finished action logged and saved in the job's progress."""
        progress = job

        def save_progress(step: ActionDone) -> None:
            nonlocal progress
            # Logged before the progress is saved: a crash in between repeats the action (an
            # archive of the same version is not written again) rather than losing its line.
            self.log(step.action.value, job, status="ok", seconds=step.seconds, **step.fields)
            progress = replace(progress, done=(*progress.done, step.action.value))
            self.spool.save_progress(progress)

        result = end_session(
            session,
            self.actions,
            done=job.done,
            monotonic=self.clock.monotonic,
            on_action_done=save_progress,
        )
        return self._conclude(progress, result)

    def _conclude(self, job: Job, result: SessionEndResult) -> JobOutcome:
        """Take the job out of the spool, park it or put it back, as the result says."""
        error = result.error
        if error is None:
            if result.summary is not None:
                self.log(AUDIT_SUMMARY, job, status="ok", **result.summary)
            self.spool.complete(job)
            self.log("done", job, actions=[a.value for a in result.actions], reason=job.reason)
            return JobOutcome.DONE
        if isinstance(error, _PARK):
            return self._park(job, error, action=result.failed)
        if result.vanished:
            self.spool.complete(job)
            self.log("skipped", job, action=result.failed, reason="transcript vanished")
            return JobOutcome.SKIPPED
        return self._failed_attempt(job, error, action=result.failed)

    def _park(self, job: Job, error: ScrubberError, *, action: str | None = None) -> JobOutcome:
        why = error.message + (f" ({error.hint})" if error.hint else "")
        self.spool.fail(job, why)
        self.log("failed", job, action=action, error=type(error).__name__, reason=why)
        return JobOutcome.FAILED

    def _failed_attempt(
        self, job: Job, error: BaseException, *, action: str | None = None
    ) -> JobOutcome:
        attempts = job.attempts + 1
        described = describe_error(error)
        if attempts >= self.settings.max_attempts and not isinstance(error, BusyError):
            why = f"gave up after {attempts} attempts; last error: {described}"
            self.spool.fail(replace(job, attempts=attempts), why)
            self.log("failed", job, action=action, error=type(error).__name__, reason=why)
            return JobOutcome.FAILED
        later = self.clock.time() + self.settings.backoff(attempts)
        self.spool.release(replace(job, attempts=attempts, not_before=later, last_error=described))
        self.log(
            "retry-later",
            job,
            action=action,
            error=type(error).__name__,
            reason=described,
            attempt=attempts,
            retry_in=round(later - self.clock.time()),
        )
        return JobOutcome.DEFERRED


def describe_error(error: BaseException) -> str:
    """A log-safe description: our own errors' messages (they never hold values, by rule),
    otherwise only the type and errno, since other exceptions can quote input."""
    if isinstance(error, ScrubberError):
        return error.message
    if isinstance(error, OSError):
        return f"{type(error).__name__} (errno {error.errno})"
    return type(error).__name__


# -- entry point ------------------------------------------------------------------------------


def run_worker(
    env: Mapping[str, str],
    *,
    once: bool = False,
    retry_failed: bool = False,
    actions: SessionActions | None = None,
    settings: WorkerSettings | None = None,
) -> WorkerReport:
    home = paths.scrub_home(env)
    config = paths.config_dir(env)
    worker = Worker(home, config, env, actions or PipelineActions(), settings=settings)
    if retry_failed:
        worker.spool.ensure()
        for job in worker.spool.retry_failed():
            worker.log("requeued", job, note="moved back from spool/failed/")
    return worker.run(once=once)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m scrubber.hooks.worker`: what the SessionEnd hook starts (detached)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        report = run_worker(os.environ, once="--once" in args)
    except ScrubberError as error:  # stderr is the worker's log; the activity log has it too
        sys.stderr.write(
            f"scrub worker: {error.message}\n" + (f"hint: {error.hint}\n" if error.hint else "")
        )
        return int(error.exit_code)
    return 4 if report.busy else 0


if __name__ == "__main__":
    raise SystemExit(main())
