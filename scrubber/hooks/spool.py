"""Durable SessionEnd jobs: one JSON file per session in `$SCRUB_HOME/spool/`.

Standard library only, and only what the SessionEnd hook needs to start fast: the hook writes a
job here and hands it to a detached worker; a crash or a reboot between the two loses nothing,
because the next hook, `scrub worker` or the scheduled run finds the file.

Layout:
- `spool/<session-id>.json`   pending: one per session, so the plugin's hook and the one
                              `scrub install` registered, both firing for one session, make one job
- `spool/active/<id>.json`    claimed by the worker (moved there by rename, so a hook that
                              re-queues the same session meanwhile writes a new pending file
                              instead of one the worker is about to delete); a worker that dies
                              leaves it there and the next one moves it back
- `spool/failed/<id>.json`    impossible by configuration (no recipients, a policy that does not
                              load): kept for `scrub doctor` and `scrub worker --retry-failed`

Every write goes through a temp file and a rename, so a reader sees the old job or the new one.
Job files hold paths, ids and times, never transcript content.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from scrubber import paths
from scrubber.hooks.files import fsync_dir, valid_session_id, write_json_atomic
from scrubber.hooks.status_state import plain_word
from scrubber.untrusted import MAX_RECORD_BYTES, load_json

TYPE_CHECKING = False  # the SessionEnd hook imports this module: no `typing` at run time
if TYPE_CHECKING:
    from typing import Any

JOB_FORMAT = 1
_SUFFIX = ".json"


class SpoolState(Enum):
    PENDING = "pending"
    ACTIVE = "active"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker must do for one ended session, and how far it got."""

    session_id: str
    transcript_path: str
    reason: str = "other"
    cwd: str | None = None
    ended_at: float = 0.0  # epoch seconds when the hook ran
    # The transcript as the hook saw it (None: missing then). Two hooks for one session that
    # see the same file are one job.
    transcript_size: int | None = None
    transcript_mtime_ns: int | None = None
    attempts: int = 0  # failed attempts so far (transient errors)
    not_before: float = 0.0  # epoch seconds; the worker leaves the job alone until then
    done: tuple[str, ...] = ()  # actions already completed, so a re-run skips them
    settle_waits: int = 0  # times the job was put back because the transcript kept changing
    last_error: str | None = None  # a short description, never a value

    def to_json(self) -> dict[str, Any]:
        return {
            "format": JOB_FORMAT,
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "reason": self.reason,
            "cwd": self.cwd,
            "ended_at": self.ended_at,
            "transcript_size": self.transcript_size,
            "transcript_mtime_ns": self.transcript_mtime_ns,
            "attempts": self.attempts,
            "not_before": self.not_before,
            "done": list(self.done),
            "settle_waits": self.settle_waits,
            "last_error": self.last_error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Job:
        """Read a job file's content; raises ValueError on anything malformed."""
        if data.get("format") != JOB_FORMAT:
            raise ValueError("unknown job format")
        session_id = data.get("session_id")
        transcript = data.get("transcript_path")
        if not isinstance(session_id, str) or not valid_session_id(session_id):
            raise ValueError("job without a valid session id")
        if not isinstance(transcript, str) or not transcript:
            raise ValueError("job without a transcript path")

        def opt_int(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        def num(key: str) -> float:
            value = data.get(key, 0)
            return float(value) if isinstance(value, int | float) else 0.0

        done = data.get("done", [])
        reason = data.get("reason")
        cwd = data.get("cwd")
        error = data.get("last_error")
        return cls(
            session_id=session_id,
            transcript_path=transcript,
            # A job file is read as untrusted: its reason reaches the logs (status_state).
            reason=reason if isinstance(reason, str) and plain_word(reason) else "other",
            cwd=cwd if isinstance(cwd, str) else None,
            ended_at=num("ended_at"),
            transcript_size=opt_int("transcript_size"),
            transcript_mtime_ns=opt_int("transcript_mtime_ns"),
            attempts=opt_int("attempts") or 0,
            not_before=num("not_before"),
            done=tuple(d for d in done if isinstance(d, str)) if isinstance(done, list) else (),
            settle_waits=opt_int("settle_waits") or 0,
            last_error=error if isinstance(error, str) else None,
        )

    def same_transcript_as(self, other: Job) -> bool:
        return (
            self.transcript_path == other.transcript_path
            and self.transcript_size == other.transcript_size
            and self.transcript_mtime_ns == other.transcript_mtime_ns
        )


@dataclass(frozen=True, slots=True)
class SpooledJob:
    job: Job
    state: SpoolState
    path: Path


class EnqueueResult(Enum):
    QUEUED = "queued"
    REPLACED = "replaced"  # a pending job for the session was there: the new one replaces it
    DUPLICATE = "duplicate"  # the same session and transcript are already queued or in work


class Spool:
    """The job folder of one scrubber home."""

    def __init__(self, home: Path) -> None:
        self.root = paths.spool_dir(home)
        self.active_dir = self.root / "active"
        self.failed_dir = self.root / "failed"

    def _file(self, folder: Path, session_id: str) -> Path:
        if not valid_session_id(session_id):
            raise ValueError("not a valid session id")
        return folder / f"{session_id}{_SUFFIX}"

    def pending_path(self, session_id: str) -> Path:
        return self._file(self.root, session_id)

    def active_path(self, session_id: str) -> Path:
        return self._file(self.active_dir, session_id)

    def failed_path(self, session_id: str) -> Path:
        return self._file(self.failed_dir, session_id)

    def ensure(self) -> None:
        for folder in (self.root, self.active_dir, self.failed_dir):
            paths.ensure_private_dir(folder)

    # -- the hook's side ----------------------------------------------------------------------

    def enqueue(self, job: Job, *, fsync: bool = True) -> EnqueueResult:
        """Record `job`, deduplicated by session id."""
        paths.ensure_private_dir(self.root)
        target = self.pending_path(job.session_id)
        for existing_path in (target, self.active_path(job.session_id)):
            existing = read_job(existing_path)
            if existing is not None and existing.same_transcript_as(job):
                return EnqueueResult.DUPLICATE
        replaced = target.exists()
        write_json_atomic(target, job.to_json(), fsync=fsync)
        return EnqueueResult.REPLACED if replaced else EnqueueResult.QUEUED

    # -- the worker's side --------------------------------------------------------------------

    def jobs(self, state: SpoolState = SpoolState.PENDING) -> list[SpooledJob]:
        """Jobs in one state, oldest first. Unreadable files are moved to failed/ (pending) or
        skipped (failed/), so one bad file never blocks the queue."""
        folder = {
            SpoolState.PENDING: self.root,
            SpoolState.ACTIVE: self.active_dir,
            SpoolState.FAILED: self.failed_dir,
        }[state]
        found: list[SpooledJob] = []
        for path in _job_files(folder):
            job = read_job(path)
            if job is None:
                if state is not SpoolState.FAILED:
                    self._quarantine(path)
                continue
            found.append(SpooledJob(job, state, path))
        found.sort(key=lambda s: (s.job.ended_at, s.job.session_id))
        return found

    def claim(self, session_id: str) -> Job | None:
        """Move a pending job to active/; None when another process took it first."""
        paths.ensure_private_dir(self.active_dir)
        source = self.pending_path(session_id)
        target = self.active_path(session_id)
        try:
            source.replace(target)
        except FileNotFoundError:
            return None
        fsync_dir(self.root)
        return read_job(target)

    def save_progress(self, job: Job) -> None:
        """Rewrite an active job (after each completed action)."""
        write_json_atomic(self.active_path(job.session_id), job.to_json())

    def complete(self, job: Job) -> None:
        """The job fully succeeded (or has nothing left to do): remove it."""
        self.active_path(job.session_id).unlink(missing_ok=True)
        fsync_dir(self.active_dir)

    def release(self, job: Job) -> None:
        """Put an active job back in the queue (to retry later), unless the hook queued a newer
        one for the same session meanwhile: that one covers the newer transcript."""
        active = self.active_path(job.session_id)
        pending = self.pending_path(job.session_id)
        if pending.exists():
            active.unlink(missing_ok=True)
            return
        write_json_atomic(active, job.to_json())
        # link + unlink rather than rename: a pending file written between the check and here
        # must win, and a hard link never replaces an existing file.
        with contextlib.suppress(FileExistsError):
            pending.hardlink_to(active)
        active.unlink(missing_ok=True)
        fsync_dir(self.root)

    def fail(self, job: Job, why: str) -> Path:
        """Park a job that cannot succeed as configured; `why` must hold no secret."""
        paths.ensure_private_dir(self.failed_dir)
        target = self.failed_path(job.session_id)
        write_json_atomic(target, replace(job, last_error=why).to_json())
        self.active_path(job.session_id).unlink(missing_ok=True)
        return target

    def recover(self) -> list[Job]:
        """Move jobs a dead worker left in active/ back to pending (call under the worker lock)."""
        recovered = []
        for spooled in self.jobs(SpoolState.ACTIVE):
            self.release(spooled.job)
            recovered.append(spooled.job)
        return recovered

    def retry_failed(self) -> list[Job]:
        """Queue every failed job again (after the configuration was fixed)."""
        queued = []
        for spooled in self.jobs(SpoolState.FAILED):
            fresh = replace(spooled.job, attempts=0, not_before=0.0, last_error=None)
            target = self.pending_path(fresh.session_id)
            if not target.exists():
                write_json_atomic(target, fresh.to_json())
                queued.append(fresh)
            spooled.path.unlink(missing_ok=True)
        return queued

    def _quarantine(self, path: Path) -> None:
        paths.ensure_private_dir(self.failed_dir)
        with contextlib.suppress(OSError):
            path.replace(self.failed_dir / f"unreadable-{path.name}")


def _job_files(folder: Path) -> Iterator[Path]:
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        name = entry.name
        if name.endswith(_SUFFIX) and not name.startswith(".") and entry.is_file():
            yield folder / name


def read_job(path: Path) -> Job | None:
    """The job in a file; None when it is missing or unreadable, or not a regular file (a FIFO
    planted at a job's name would hang the hook, which Claude Code gives 1.5 s), a link, too
    large or damaged (nested too deeply, a number too long: untrusted.DamagedDocument is a
    ValueError), so that the worker quarantines it instead of dying on it at every run."""
    try:
        data = load_json(path, MAX_RECORD_BYTES, follow=False)
        return Job.from_json(data) if isinstance(data, dict) else None
    except (OSError, ValueError, OverflowError):  # float() of a 400-digit integer overflows
        return None
