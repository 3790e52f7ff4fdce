"""The worker: drains the SessionEnd spool, one session at a time, under a lock.

For each job it waits for the transcript to settle (Claude Code can still append a few records
after an interactive `/exit`), then applies the policy's `on_session_end` actions in their fixed
order (archive, redact-copy, redact-in-place), or records an audit summary when there are none.
A job leaves the spool only after every action succeeded; progress is saved after each action,
so a worker killed mid-job is resumed by the next one without redoing finished work (and an
archive is never overwritten anyway). Transient errors are retried with exponential backoff;
jobs that cannot succeed as configured are parked in `spool/failed/` with the reason.

Every step is one JSON line in `$SCRUB_HOME/log/activity.jsonl`: ids, paths, counts, kinds and
error types, never a secret's value.
"""

from __future__ import annotations

import contextlib
import fcntl
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
from scrubber.errors import (
    BusyError,
    ConfigError,
    InputError,
    KeyMaterialError,
    ScrubberError,
    UsageError,
)
from scrubber.hooks import status_line
from scrubber.hooks.spool import Job, Spool
from scrubber.policy.model import Policy, SessionEndAction

LOCK_NAME = "worker.lock"
MAX_ATTEMPTS = 8  # unexpected errors: after this many, the job is parked in failed/
AUDIT_SUMMARY = "audit-summary"


def activity_log(home: Path) -> Path:
    return paths.activity_log(home)


def lock_file(home: Path) -> Path:
    return paths.state_dir(home) / LOCK_NAME


def append_activity(home: Path, record: Mapping[str, Any], *, now: float | None = None) -> None:
    """One JSON line in the activity log shared with retention (`time` first, UTC)."""
    from scrubber.retention.apply import append_activity as append_line

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


@dataclass(frozen=True, slots=True)
class JobContext:
    """Everything an action needs for one session."""

    job: Job
    transcript: Path
    config_dir: Path
    home: Path
    policy: Policy
    env: Mapping[str, str] = field(repr=False)

    @property
    def project(self) -> str:
        return self.transcript.parent.name


class SessionActions(Protocol):
    """What the worker does with a settled session. Results are activity-log fields (counts,
    paths, kinds), never values. Raise ScrubberError subclasses: the class decides whether the
    job is retried (runtime, busy) or parked (usage, config, key material)."""

    def run(self, action: SessionEndAction, ctx: JobContext) -> Mapping[str, Any]: ...

    def summarize(self, ctx: JobContext) -> Mapping[str, Any]: ...


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
        fd = os.open(path, os.O_RDWR | os.O_CREAT, paths.PRIVATE_FILE_MODE)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
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
            status_line.prune_states(self.home, now=self.clock.time())

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
        s = self.settings
        transcript = Path(job.transcript_path)
        try:
            policy = self.load_policy(self.env)
        except _PARK as error:
            return self._park(job, error)
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
        ctx = JobContext(job, transcript, self.config_dir, self.home, policy, self.env)
        actions = policy.session_end_actions
        for action in actions:
            if action.value in job.done:
                continue
            started = self.clock.monotonic()
            try:
                result = self.actions.run(action, ctx)
            except _PARK as error:
                return self._park(job, error, action=action.value)
            except InputError as error:
                if not transcript.exists():
                    self.spool.complete(job)
                    self.log("skipped", job, action=action.value, reason="transcript vanished")
                    return JobOutcome.SKIPPED
                return self._failed_attempt(job, error, action=action.value)
            except (BusyError, ScrubberError, OSError) as error:
                return self._failed_attempt(job, error, action=action.value)
            # Logged before the progress is saved: a crash in between repeats the action (an
            # archive of the same version is not written again) rather than losing its line.
            self.log(
                action.value,
                job,
                status="ok",
                seconds=round(self.clock.monotonic() - started, 3),
                **dict(result),
            )
            job = replace(job, done=(*job.done, action.value))
            self.spool.save_progress(job)
        if not actions:
            try:
                summary = self.actions.summarize(ctx)
            except _PARK as error:
                return self._park(job, error, action=AUDIT_SUMMARY)
            except (ScrubberError, OSError) as error:
                return self._failed_attempt(job, error, action=AUDIT_SUMMARY)
            self.log(AUDIT_SUMMARY, job, status="ok", **dict(summary))
        self.spool.complete(job)
        self.log("done", job, actions=[a.value for a in actions], reason=job.reason)
        return JobOutcome.DONE

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


# -- the default actions: the use cases of audit, redaction and archiving -----------------------


class PipelineActions:
    """The real actions (imported lazily: the use cases pull in detect_secrets and age)."""

    def run(self, action: SessionEndAction, ctx: JobContext) -> Mapping[str, Any]:
        if action is SessionEndAction.ARCHIVE:
            return _archive(ctx)
        if action is SessionEndAction.REDACT_COPY:
            return _redact_copy(ctx)
        return _redact_in_place(ctx)

    def summarize(self, ctx: JobContext) -> Mapping[str, Any]:
        from scrubber.detection.registry import build_scanner
        from scrubber.usecases.audit import audit, update_audit_cache

        scanner = build_scanner(ctx.policy, ctx.home)
        if not ctx.transcript.is_file():
            raise InputError(f"cannot read {ctx.transcript}: no such file")
        report = audit(session_targets(ctx), scanner, env=ctx.env)
        totals = report.totals()
        update_audit_cache(ctx.home, report)
        return {
            "occurrences": totals["occurrences"],
            "distinct": totals["distinct"],
            "by_kind": totals["by_kind"],
            "files": len(report.files),
            "unreadable": sum(1 for f in report.files if f.error),
        }


def session_targets(ctx: JobContext) -> list[Any]:
    """The session's transcript and, when the policy scans side files, its bundle's files."""
    from scrubber.transcript.sessions import session_bundle
    from scrubber.usecases.audit_report import ScanTarget
    from scrubber.usecases.audit_targets import targets_from_paths

    targets = [ScanTarget(ctx.transcript, True, ctx.job.session_id, ctx.project, None)]
    if not ctx.policy.detection.scan_side_files:
        return targets
    extra = [
        p
        for p in session_bundle(ctx.config_dir, ctx.project, ctx.job.session_id)
        if p != ctx.transcript and not p.is_symlink()
    ]
    with contextlib.suppress(InputError):
        targets.extend(targets_from_paths(extra))
    return targets


def session_info(ctx: JobContext) -> Any:
    """The session as `transcript.sessions` describes it, read for this one transcript only
    (discovering the whole config dir would cost seconds on a large one)."""
    from scrubber.transcript.sessions import SessionInfo, read_metadata

    try:
        st = ctx.transcript.stat()
        meta = read_metadata(ctx.transcript)
    except OSError as exc:
        raise InputError(f"cannot read {ctx.transcript}: {exc.strerror}") from None
    return SessionInfo(
        id=ctx.job.session_id,
        project=ctx.project,
        transcript=ctx.transcript,
        config_dir=ctx.config_dir,
        size=st.st_size,
        mtime=st.st_mtime,
        cwd=meta.cwd,
        title=meta.title,
        custom_title=meta.custom_title,
        tags=meta.tags,
        first_timestamp=meta.first_timestamp,
        last_timestamp=meta.last_timestamp,
    )


def bundle_files(ctx: JobContext) -> list[Path]:
    """The regular files of the session's bundle (transcript first); symlinks are neither
    followed nor listed, as in an archive."""
    import stat

    from scrubber.archive.bundle import walk_bundle
    from scrubber.transcript.sessions import session_bundle

    bundle = session_bundle(ctx.config_dir, ctx.project, ctx.job.session_id)
    return [path for path, _, st in walk_bundle(ctx.config_dir, bundle) if stat.S_ISREG(st.st_mode)]


def _archive(ctx: JobContext) -> Mapping[str, Any]:
    from scrubber.archiving import archive_sessions, resolve_encryption

    # Recipients come from the policy (a hook has no flags); none is a configuration error.
    encryption = resolve_encryption(ctx.policy, encrypt=True)
    [outcome] = archive_sessions(
        [session_info(ctx)],
        policy=ctx.policy,
        home=ctx.home,
        encryption=encryption,
        now=datetime.now(UTC),
    )
    if outcome.error is not None or outcome.written is None:
        raise outcome.error or ScrubberError(f"session {ctx.job.session_id}: nothing archived")
    return {
        "archive": str(outcome.written.entry.path),
        "created": outcome.written.created,  # False: this version was archived already
        "recipients": len(encryption.recipients),
    }


def _redaction_summary(results: Sequence[Any]) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    for result in results:
        for kind, count in result.by_kind.items():
            by_kind[kind] = by_kind.get(kind, 0) + count
    return {
        "files": len(results),
        "replaced": sum(r.replaced for r in results),
        "left_in_thinking": sum(r.left_in_thinking for r in results),
        "skipped": sum(1 for r in results if r.skipped),
        "by_kind": dict(sorted(by_kind.items())),
    }


def _redact_copy(ctx: JobContext) -> Mapping[str, Any]:
    """Redacted copies under `$SCRUB_HOME/redacted/`, shaped like the config dir (never under
    `projects/`, where Claude Code's sweep deletes every top-level `*.jsonl`)."""
    from scrubber.detection.registry import build_scanner
    from scrubber.usecases.redact import redact_copies

    scanner = build_scanner(ctx.policy, ctx.home)
    dest_root = paths.redacted_dir(ctx.home)
    # All of the session's files at once: a value found in one is redacted in all of them.
    pairs = [
        (source, dest_root / source.relative_to(ctx.config_dir)) for source in bundle_files(ctx)
    ]
    results = redact_copies(pairs, scanner, thinking=ctx.policy.redaction.thinking, env=ctx.env)
    summary = _redaction_summary(results)
    summary["destination"] = str(dest_root / ctx.transcript.relative_to(ctx.config_dir))
    return summary


def _redact_in_place(ctx: JobContext) -> Mapping[str, Any]:
    """Rewrite the session's files with secrets replaced (thinking text untouched: reported).
    The lock folder is the one `scrub redact --in-place` uses, so the two never overlap."""
    from scrubber.detection.registry import build_scanner
    from scrubber.usecases.redact_in_place import redact_files_in_place

    scanner = build_scanner(ctx.policy, ctx.home)
    lock_dir = paths.state_dir(ctx.home) / "locks"
    # All of the session's files at once: a value found in one is redacted in all of them.
    results = redact_files_in_place(bundle_files(ctx), scanner, lock_dir, env=ctx.env)
    return _redaction_summary(results)


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
    report = run_worker(os.environ, once="--once" in args)
    return 4 if report.busy else 0


if __name__ == "__main__":
    raise SystemExit(main())
