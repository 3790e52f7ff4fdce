"""The archive store as retention sees it: `StoreArchiveIndex`, retention's `ArchiveIndex`
over `scrubber.archive` (layout, verify, bundle) and the archive use case.

The archive store and retention sit side by side in the layers (neither imports the other), so
the adapter that lets retention use the store lives here, above both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrubber.archive.bundle import collect_bundle, content_digest
from scrubber.archive.layout import archives_of, list_archives, sidecar_path
from scrubber.archive.manifest import BundleFile
from scrubber.archive.sidecar import Sidecar
from scrubber.archive.verify import verify_archive
from scrubber.errors import ScrubberError, UsageError
from scrubber.policy.model import Policy
from scrubber.retention.apply import ArchiveCheck
from scrubber.retention.plan import ArchiveFacts
from scrubber.retention.rules import ArchiveStatus, Subject
from scrubber.retention.trash import BundleSession
from scrubber.transcript.sessions import SessionInfo


class StoreArchiveIndex:
    """`ArchiveIndex` over `scrubber.archive` and `scrubber.usecases.archive`."""

    def __init__(self, policy: Policy, home: Path, now: datetime) -> None:
        self._policy = policy
        self._home = home
        self._now = now
        self.root = policy.archive.destination_in(home)
        # The environment an archive's upload takes its credentials from (None: no upload).
        self._upload_env: Mapping[str, str] | None = None
        self._wanted: frozenset[str] | None = None  # the policy's recipients' fingerprints

    @property
    def can_archive(self) -> bool:
        return self._policy.archive.has_recipients

    def newest(self, session: BundleSession) -> ArchiveCheck:
        entries = archives_of(self.root, session.project, session.id)
        if not entries:
            return ArchiveCheck(ArchiveStatus.NONE)
        entry = entries[-1]
        ref = str(entry.path)
        try:
            verify_archive(entry.path)
        except (ScrubberError, OSError):
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, ref)
        if entry.sidecar is None:
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, ref)
        if not self._opens_with_policy_keys(entry.sidecar.recipients):
            # Not one the policy's keys open: archiving again writes one they do.
            return ArchiveCheck(ArchiveStatus.STALE, ref)
        # Contracts: the newest archive must match the bundle as it is now.
        info = _as_session_info(session)
        contents = collect_bundle(info.config_dir, info.bundle_paths())
        same = (
            entry.sidecar.content_sha256 == content_digest(contents.files)
            and entry.last_timestamp == session.last_timestamp
        )
        if same:
            return ArchiveCheck(ArchiveStatus.VERIFIED, ref)
        current = redacted_current(
            entry.sidecar, entry.last_timestamp, session, contents.files, entry.path
        )
        return ArchiveCheck(ArchiveStatus.STALE, ref, current)

    def archive(self, session: BundleSession) -> ArchiveCheck:
        from scrubber.usecases.archive import archive_sessions, resolve_encryption

        encryption = resolve_encryption(self._policy, encrypt=True)
        (outcome,) = archive_sessions(
            [_as_session_info(session)],
            policy=self._policy,
            home=self._home,
            encryption=encryption,
            now=self._now,
            upload_env=self._upload_env,
        )
        if outcome.error is not None:
            raise outcome.error
        if outcome.upload is not None and outcome.upload.error is not None:
            raise outcome.upload.error
        return self.newest(session)

    def verify(self, ref: str) -> bool:
        try:
            report = verify_archive(Path(ref))
        except (ScrubberError, OSError):
            return False
        sidecar = report.entry.sidecar
        return sidecar is not None and self._opens_with_policy_keys(sidecar.recipients)

    def _opens_with_policy_keys(self, recipients: Sequence[str]) -> bool:
        """Whether an archive whose sidecar names `recipients` (fingerprints) is one of the
        policy's keys can open. An archive made for another key (an old one, a colleague's, one
        planted in the folder) is no copy the user can restore: a session must not be deleted
        on its account. Without recipients in the policy there is nothing to compare with, and
        the archive counts as it did. The sidecar is what the fingerprints come from: a keyless
        check cannot tell whom an X25519 stanza is for, so a forged sidecar is caught only by a
        full `scrub archives verify -i KEY`."""
        if not self._policy.archive.has_recipients:
            return True
        if self._wanted is None:
            from scrubber.archive.keys import recipient_fingerprint
            from scrubber.usecases.archive import policy_recipients

            try:
                self._wanted = frozenset(
                    recipient_fingerprint(r) for r in policy_recipients(self._policy)
                )
            except (ScrubberError, OSError):
                self._wanted = frozenset()  # unreadable keys vouch for no archive
        return not self._wanted.isdisjoint(recipients)

    def files(self) -> tuple[ArchiveFacts, ...]:
        found = []
        for entry in list_archives(self.root):
            sidecar = entry.sidecar
            clear: Mapping[str, Any] = sidecar.manifest if sidecar is not None else {}
            created = sidecar.created if sidecar is not None else None
            if created is None:
                try:
                    created = datetime.fromtimestamp(entry.path.lstat().st_mtime, UTC)
                except OSError:
                    created = self._now
            title = clear.get("title")
            tags = clear.get("tags")
            cwd = clear.get("cwd")
            subject = Subject(
                session_id=entry.session_id,
                project=entry.project,
                cwd=cwd if isinstance(cwd, str) else None,
                custom_title=title if isinstance(title, str) else None,
                tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
                # A title redacted before it went into the sidecar can no longer match a pin.
                title_known="title" in clear
                and not (isinstance(title, str) and "[REDACTED:" in title),
                tags_known="tags" in clear,
                cwd_known="cwd" in clear,
            )
            found.append(
                ArchiveFacts(
                    ref=str(entry.path),
                    session_id=entry.session_id,
                    project=entry.project,
                    last_timestamp=entry.last_timestamp,
                    created=created if created.tzinfo else created.replace(tzinfo=UTC),
                    subject=subject,
                )
            )
        return tuple(found)

    def remove(self, ref: str) -> None:
        path = Path(ref)
        if path.parent.parent.parent != self.root:
            raise UsageError(f"{path}: not an archive under {self.root}; not removed")
        for item in (sidecar_path(path), path):
            with contextlib.suppress(FileNotFoundError):
                item.unlink()  # unlink never follows a link


def redacted_current(
    sidecar: Sidecar,
    last: datetime | None,
    session: BundleSession,
    files: Sequence[BundleFile],
    checked: Path | None = None,
) -> bool:
    """Whether an archive that does not match the bundle is a `--redact` copy of the session
    as it is now: its secrets are gone, so its content differs by design (ArchiveCheck). Its
    digest cannot tell, so: the same last timestamp, and no file of the bundle (`files`, as
    collected for the digest) changed since the archive was written (a side file appended to
    keeps the transcript's timestamp), or since `scrub archive --redact` last found it the same
    (the sidecar's mtime, of the local archive `checked`)."""
    if not sidecar.redacted or last is None or last != session.last_timestamp:
        return False
    written_ns = int(sidecar.created.timestamp() * 1e9)
    if checked is not None:
        # `scrub archive --redact` found it to hold the session as it is at that moment.
        with contextlib.suppress(OSError):
            written_ns = max(written_ns, sidecar_path(checked).stat().st_mtime_ns)
    return all(f.mtime_ns <= written_ns for f in files)


def _as_session_info(session: BundleSession) -> SessionInfo:
    if not isinstance(session, SessionInfo):
        raise TypeError("the archive store needs a discovered session")
    return session
