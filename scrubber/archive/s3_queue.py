"""The object-storage side of an archive that stays on disk (no boto3 here): object keys, the
upload queue in the spool, and the receipt of a verified upload.

- Object keys mirror the local layout: `<prefix>/<host>/<project>/<session-id>/<name>`, and the
  sidecar `<name>.json` beside it.
- `spool/uploads/<id>.json`: one job per archive still to upload. It names the local archive;
  the key is derived again from the archive's own place when the job runs, so a planted job
  file can at most ask to upload one of our own archives.
- `<archive>.s3.json` beside the local archive: the receipt, written only once the store
  confirmed size and SHA-256 of both the archive and its sidecar. Only an archive with a
  receipt counts as archived when the policy's destination is a bucket.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.archive.layout import SIDECAR_SUFFIX, ArchiveEntry
from scrubber.durable import write_json_state
from scrubber.policy.object_store import S3Destination

RECEIPT_SUFFIX = ".s3.json"
RECEIPT_SCHEMA = "scrubber.s3-receipt"
JOB_FORMAT = 1
_MAX_FILE = 64 * 1024


def object_key(destination: S3Destination, host: str, entry: ArchiveEntry) -> str:
    parts = [destination.prefix, host, entry.project, entry.session_id, entry.path.name]
    return "/".join(part for part in parts if part)


def sidecar_key(archive_key: str) -> str:
    return archive_key + SIDECAR_SUFFIX


def keys_prefix(destination: S3Destination, host: str | None) -> str:
    """Where one host's archives start (every host's when `host` is None)."""
    parts = [destination.prefix, host or ""]
    joined = "/".join(part for part in parts if part)
    return joined + "/" if joined else ""


@dataclass(frozen=True, slots=True)
class RemoteName:
    key: str
    host: str
    project: str
    session_id: str
    name: str


def parse_key(destination: S3Destination, key: str) -> RemoteName | None:
    """The parts of an archive's key, None for anything else (a sidecar, a stray object)."""
    start = keys_prefix(destination, None)
    if not key.startswith(start):
        return None
    parts = key[len(start) :].split("/")
    if len(parts) != 4 or not all(parts) or any(p in (".", "..") for p in parts):
        return None
    host, project, session_id, name = parts
    if not (name.endswith(".tar.gz.age") or name.endswith(".tar.gz")) or name.startswith("."):
        return None
    return RemoteName(key, host, project, session_id, name)


# -------------------------------------------------------------------------------- receipts


def receipt_path(archive: Path) -> Path:
    return archive.with_name(archive.name + RECEIPT_SUFFIX)


@dataclass(frozen=True, slots=True)
class Receipt:
    url: str  # s3://bucket/prefix
    key: str
    size: int
    sha256: str
    checksum: str
    proven_by: str
    uploaded: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": RECEIPT_SCHEMA,
            "format": 1,
            "url": self.url,
            "key": self.key,
            "size": self.size,
            "sha256": self.sha256,
            "checksum": self.checksum,
            "proven_by": self.proven_by,
            "uploaded": self.uploaded.astimezone(UTC).isoformat(),
        }


def write_receipt(archive: Path, receipt: Receipt) -> None:
    write_json_state(receipt_path(archive), receipt.to_json())


def read_receipt(archive: Path) -> Receipt | None:
    """The receipt beside an archive; None when missing or not one of ours."""
    data = _read_json(receipt_path(archive))
    if data is None or data.get("schema") != RECEIPT_SCHEMA:
        return None
    try:
        size = data["size"]
        if not isinstance(size, int) or isinstance(size, bool):
            return None
        texts = [data[k] for k in ("url", "key", "sha256", "checksum", "proven_by")]
        if not all(isinstance(t, str) for t in texts):
            return None
        return Receipt(
            url=data["url"],
            key=data["key"],
            size=size,
            sha256=data["sha256"],
            checksum=data["checksum"],
            proven_by=data["proven_by"],
            uploaded=datetime.fromisoformat(data["uploaded"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with paths.open_regular(path) as handle:
            data = json.loads(handle.read(_MAX_FILE))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------ the queue


@dataclass(frozen=True, slots=True)
class UploadJob:
    archive: Path  # the local archive file
    queued: float  # epoch seconds
    attempts: int = 0
    not_before: float = 0.0
    last_error: str | None = None  # our own message (never a value)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": JOB_FORMAT,
            "archive": str(self.archive),
            "queued": self.queued,
            "attempts": self.attempts,
            "not_before": self.not_before,
            "last_error": self.last_error,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UploadJob | None:
        archive = data.get("archive")
        if data.get("format") != JOB_FORMAT or not isinstance(archive, str) or not archive:
            return None

        def number(key: str) -> float:
            value = data.get(key, 0)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            return float(value) if ok else 0.0

        error = data.get("last_error")
        return cls(
            archive=Path(archive),
            queued=number("queued"),
            attempts=int(number("attempts")),
            not_before=number("not_before"),
            last_error=error if isinstance(error, str) else None,
        )


class UploadQueue:
    """`$SCRUB_HOME/spool/uploads/`: archives waiting for their upload."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = paths.spool_dir(home) / "uploads"

    def _file(self, archive: Path) -> Path:
        name = hashlib.sha256(str(archive).encode()).hexdigest()[:32]
        return self.root / f"{name}.json"

    def add(self, archive: Path, *, now: float) -> None:
        """Queue an archive (again: an existing job keeps its attempts)."""
        if self._file(archive).exists():
            return
        paths.ensure_private_dir(self.root, self.home)
        write_json_state(self._file(archive), UploadJob(archive, now).to_json())

    def save(self, job: UploadJob) -> None:
        paths.ensure_private_dir(self.root, self.home)
        write_json_state(self._file(job.archive), job.to_json())

    def failed_attempt(self, job: UploadJob, error: str, *, now: float) -> UploadJob:
        """Record a failed try: the next automatic one waits longer each time (max 6 h)."""
        attempts = job.attempts + 1
        wait = min(30.0 * 2 ** min(attempts - 1, 12), 6 * 3600.0)
        later = replace(job, attempts=attempts, not_before=now + wait, last_error=error)
        self.save(later)
        return later

    def done(self, job: UploadJob) -> None:
        self._file(job.archive).unlink(missing_ok=True)

    def jobs(self) -> list[UploadJob]:
        """Every queued job, oldest first; unreadable files are skipped (left for a look)."""
        try:
            names = sorted(p.name for p in self.root.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        found: list[UploadJob] = []
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            data = _read_json(self.root / name)
            job = UploadJob.from_json(data) if data is not None else None
            if job is not None and self._file(job.archive).name == name:
                found.append(job)
        found.sort(key=lambda j: (j.queued, str(j.archive)))
        return found

    def waiting_for(self, archive: Path) -> UploadJob | None:
        data = _read_json(self._file(archive))
        return UploadJob.from_json(data) if data is not None else None


def remove_local_copy(archive: Path) -> None:
    """The archive file itself, after a verified upload (its sidecar and receipt stay: they
    say what is in the bucket without asking it)."""
    with contextlib.suppress(FileNotFoundError):
        archive.unlink()
