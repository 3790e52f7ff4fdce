"""Uploading archives to object storage (`archive.destination: s3://…`), from the spool.

An archive is always written locally first (`$SCRUB_HOME/archives`) and its upload queued
(`archive.s3_queue.UploadQueue`); the worker, `scrub archive` and `scrub archives push` run
the queue. A job leaves the queue only when the store confirmed the archive and its sidecar
(size and SHA-256), and a receipt beside the local archive says so; a failed try stays queued
with its reason and a growing wait. The local archive goes afterwards only when
`archive.s3.remove_local_after_upload` says so, and never before its receipt is on disk.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from scrubber import activity, paths
from scrubber.archive.layout import ArchiveEntry, read_entry, sidecar_path
from scrubber.archive.s3 import ObjectStore, UploadProof
from scrubber.archive.s3_queue import (
    Receipt,
    UploadJob,
    UploadQueue,
    object_key,
    read_receipt,
    remove_local_copy,
    sidecar_key,
    write_receipt,
)
from scrubber.archive.verify import verify_archive
from scrubber.errors import ConfigError, InputError, ScrubberError, path_error_hint
from scrubber.policy.model import Policy
from scrubber.policy.object_store import S3Destination

StoreFactory = Callable[[S3Destination, Mapping[str, str]], ObjectStore]


@dataclass(frozen=True, slots=True)
class PushOutcome:
    archive: Path
    key: str | None = None
    proof: UploadProof | None = None
    error: ScrubberError | None = None
    removed_local: bool = False

    @property
    def uploaded(self) -> bool:
        return self.proof is not None and self.error is None


@dataclass(frozen=True, slots=True)
class PushReport:
    destination: str
    outcomes: list[PushOutcome] = field(default_factory=list)
    waiting: int = 0  # jobs still queued afterwards
    deferred: int = 0  # jobs not tried (their wait after a failure is not over)


def s3_destination(policy: Policy, purpose: str = "nothing to push") -> S3Destination:
    """The policy's bucket; `purpose` says in the error what having none means here."""
    destination = policy.archive.s3
    if destination is None:
        raise ConfigError(
            f"archive.destination is not an s3:// bucket: {purpose}",
            hint="set archive.destination: s3://bucket/prefix (and archive.s3) in the policy",
        )
    return destination


def queue_upload(home: Path, entry: ArchiveEntry, *, now: datetime) -> bool:
    """Queue one written archive unless its verified upload is on record. True if queued."""
    if read_receipt(entry.path) is not None:
        return False
    UploadQueue(home).add(entry.path, now=now.timestamp())
    return True


def waiting_uploads(home: Path) -> list[UploadJob]:
    """What waits for its upload (for `scrub doctor` and `scrub sessions`)."""
    return UploadQueue(home).jobs()


def push_uploads(
    policy: Policy,
    home: Path,
    env: Mapping[str, str],
    *,
    now: datetime,
    everything: bool = True,
    only: Sequence[Path] | None = None,
    store_factory: StoreFactory = ObjectStore,
) -> PushReport:
    """Run the upload queue. `everything`: also the jobs still waiting after a failure (a
    user asking); the worker passes False. `only`: just these archives' jobs."""
    destination = s3_destination(policy)
    queue = UploadQueue(home)
    jobs = queue.jobs()
    if only is not None:
        wanted = set(only)
        jobs = [job for job in jobs if job.archive in wanted]
    stamp = now.timestamp()
    ready = [job for job in jobs if everything or job.not_before <= stamp]
    report = PushReport(destination.url, deferred=len(jobs) - len(ready))
    if ready:
        store: ObjectStore | None = None
        for job in ready:
            try:
                if store is None:
                    store = store_factory(destination, env)
                outcome = _push_one(store, job, policy, home, now)
            except (ScrubberError, OSError) as failure:
                error = _as_error(failure, job.archive)
                outcome = PushOutcome(job.archive, error=error)
                queue.failed_attempt(job, error.message, now=stamp)
            else:
                queue.done(job)
            report.outcomes.append(outcome)
            _log(home, outcome)
    return PushReport(report.destination, report.outcomes, len(queue.jobs()), report.deferred)


def _as_error(failure: ScrubberError | OSError, archive: Path) -> ScrubberError:
    if isinstance(failure, ScrubberError):
        return failure
    return InputError(
        f"cannot read {archive} to upload it: {failure.strerror or type(failure).__name__}",
        hint=path_error_hint(failure, writing=False),
    )


def _local_archive(job: UploadJob, root: Path) -> ArchiveEntry:
    """The job's archive, only if it is one of ours: a regular archive file in the archive
    folder (a planted job file may name anything)."""
    path = job.archive
    try:
        inside = path.resolve().parent.parent.parent == root.resolve()
    except OSError:
        inside = False
    if not inside or path.is_symlink():
        raise ConfigError(f"upload job names {path}, which is not an archive in {root}")
    try:
        entry = read_entry(path)
    except ScrubberError:
        raise ConfigError(f"upload job names {path}, which is not an archive") from None
    return entry


def _push_one(
    store: ObjectStore, job: UploadJob, policy: Policy, home: Path, now: datetime
) -> PushOutcome:
    destination = s3_destination(policy)
    entry = _local_archive(job, policy.archive.destination_in(home))
    if read_receipt(entry.path) is not None:
        return PushOutcome(entry.path, error=None)  # uploaded by an earlier run
    if entry.sidecar is None:
        raise ConfigError(f"{entry.path}: {entry.problem or 'no sidecar'}; not uploaded")
    # Never upload what does not match its sidecar: the bucket would keep a broken copy.
    verify_archive(entry.path)
    key = object_key(destination, destination.host_name(), entry)
    proof = store.upload(entry.path, key)
    if proof.sha256 != entry.sidecar.ciphertext_sha256 or proof.size != entry.sidecar.size:
        raise ScrubberError(f"{entry.path}: changed while it was uploaded; the job stays queued")
    store.upload(sidecar_path(entry.path), sidecar_key(key))
    write_receipt(
        entry.path,
        Receipt(
            url=destination.url,
            key=key,
            size=proof.size,
            sha256=proof.sha256,
            checksum=proof.checksum,
            proven_by=str(proof.proven_by),
            uploaded=now,
        ),
    )
    removed = False
    if destination.remove_local_after_upload:
        remove_local_copy(entry.path)
        removed = True
    return PushOutcome(entry.path, key, proof, removed_local=removed)


def _log(home: Path, outcome: PushOutcome) -> None:
    record: dict[str, object] = {"component": "archive", "event": "upload"}
    record["archive"] = str(outcome.archive)
    if outcome.proof is not None:
        record.update(
            key=outcome.key,
            size=outcome.proof.size,
            sha256=outcome.proof.sha256,
            proven_by=str(outcome.proof.proven_by),
            removed_local=outcome.removed_local,
        )
    if outcome.error is not None:
        record["error"] = outcome.error.message
    with contextlib.suppress(OSError):
        paths.ensure_private_dir(paths.activity_log(home).parent, home)
        activity.append_activity(home, record)
