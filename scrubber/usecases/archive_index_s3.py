"""Retention's `ArchiveIndex` when archives go to object storage (Contracts: "only an upload
whose size and SHA-256 the store confirmed counts as archived, for retention's
`require_archive` too").

A session's newest archive counts when its upload receipt matches its sidecar and the store
still holds that object (HEAD: the same size and checksum). A write-only key cannot HEAD: the
receipt, written from the store's own answer to the PUT, is then the proof. A session whose
local archives are gone (a rebuilt host) is looked up in the bucket itself (List, Get): under
this host's name first, then under any host's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from scrubber.archive.bundle import collect_bundle, content_digest
from scrubber.archive.layout import ArchiveEntry, archives_of
from scrubber.archive.s3 import ObjectStore
from scrubber.archive.s3_errors import StoreDeniedError
from scrubber.archive.s3_queue import Receipt, parse_key, read_receipt
from scrubber.archive.sidecar import Sidecar
from scrubber.errors import ScrubberError
from scrubber.policy.model import Policy
from scrubber.retention.apply import ArchiveCheck
from scrubber.retention.rules import ArchiveStatus
from scrubber.retention.trash import BundleSession
from scrubber.usecases.archive_index import (
    StoreArchiveIndex,
    _as_session_info,
    redacted_current,
)
from scrubber.usecases.archive_push import StoreFactory, s3_destination
from scrubber.usecases.archive_remote import RemoteArchive, list_remote, object_problem


class BucketArchiveIndex(StoreArchiveIndex):
    def __init__(
        self,
        policy: Policy,
        home: Path,
        now: datetime,
        env: Mapping[str, str],
        store_factory: StoreFactory = ObjectStore,
    ) -> None:
        super().__init__(policy, home, now)
        self._env = env
        self._upload_env = env
        self._factory = store_factory
        self._store: ObjectStore | None = None
        self.destination = s3_destination(policy)

    @property
    def store(self) -> ObjectStore:
        if self._store is None:
            self._store = self._factory(self.destination, self._env)
        return self._store

    def _url(self, key: str) -> str:
        return f"s3://{self.destination.bucket}/{key}"

    def _confirmed(self, receipt: Receipt, sidecar: Sidecar) -> bool:
        if receipt.sha256 != sidecar.ciphertext_sha256 or receipt.size != sidecar.size:
            return False
        if receipt.url != self.destination.url:
            return False  # uploaded to another bucket or prefix than the policy's now
        try:
            found = self.store.head(receipt.key)
        except StoreDeniedError:
            return True  # write-only: the receipt holds what the store answered to the PUT
        return (
            found is not None and found.size == receipt.size and found.checksum == receipt.checksum
        )

    def newest(self, session: BundleSession) -> ArchiveCheck:
        entries = archives_of(self.root, session.project, session.id)
        if not entries:
            return self._newest_in_bucket(session)
        entry: ArchiveEntry = entries[-1]
        receipt = read_receipt(entry.path)
        if entry.sidecar is None or receipt is None:
            # Written, not uploaded yet (its job waits in the spool): not archived.
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, str(entry.path))
        ref = self._url(receipt.key)
        if not self._confirmed(receipt, entry.sidecar):
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, ref)
        return self._compared(session, entry.sidecar, entry.last_timestamp, ref, entry.path)

    def _newest_in_bucket(self, session: BundleSession) -> ArchiveCheck:
        try:
            found = list_remote(
                self.store,
                host=self.destination.host_name(),
                project=session.project,
                session=session.id,
            )
            if not found:
                # Across hosts: the same session archived under another host name (a host
                # renamed or rebuilt). It still has to match the bundle here exactly.
                found = [
                    a
                    for a in list_remote(self.store, host=None, project=session.project)
                    if a.name.session_id == session.id
                ]
        except ScrubberError:
            # Unreadable (a write-only key, the store down): none known. Retention then
            # archives the session again, locally first, and keeps it until that upload is
            # confirmed.
            return ArchiveCheck(ArchiveStatus.NONE)
        if not found:
            return ArchiveCheck(ArchiveStatus.NONE)
        newest: RemoteArchive = found[-1]
        try:
            problem = object_problem(newest, self.store.head(newest.name.key))
        except ScrubberError as error:
            problem = error.message
        if newest.sidecar is None or problem:
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, newest.url)
        return self._compared(session, newest.sidecar, newest.last_timestamp, newest.url)

    def _compared(
        self,
        session: BundleSession,
        sidecar: Sidecar,
        last: datetime | None,
        ref: str,
        local: Path | None = None,
    ) -> ArchiveCheck:
        """The archive's sidecar against the bundle as it is now (`local`: the archive's file
        here, when it has one)."""
        info = _as_session_info(session)
        files = collect_bundle(info.config_dir, info.bundle_paths()).files
        if sidecar.content_sha256 == content_digest(files) and last == session.last_timestamp:
            return ArchiveCheck(ArchiveStatus.VERIFIED, ref)
        current = redacted_current(sidecar, last, session, files, local)
        return ArchiveCheck(ArchiveStatus.STALE, ref, current)

    def verify(self, ref: str) -> bool:
        start = f"s3://{self.destination.bucket}/"
        if not ref.startswith(start):
            return super().verify(ref)
        name = parse_key(self.destination, ref[len(start) :])
        if name is None:
            return False
        local = self.root / name.project / name.session_id / name.name
        receipt = read_receipt(local)
        if receipt is None or receipt.key != name.key:
            return False
        try:
            found = self.store.head(name.key)
        except StoreDeniedError:
            return True
        return (
            found is not None and found.size == receipt.size and found.checksum == receipt.checksum
        )
