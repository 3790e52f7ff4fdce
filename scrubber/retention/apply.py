"""Carrying out a retention plan: the lock, archive-first, moving to the trash (`trash.py`),
purges, and completing what a crash left half-done.

Safety rules, each checked right before the act it guards, not only when planning:

- One run at a time: an exclusive `flock` on `$SCRUB_HOME/state/retention.lock`; a second run
  fails at once with BusyError (exit 4) instead of queueing behind a long archive.
- Every destructive act (moving a session to the trash, purging trash, purging an archive) asks
  `rules.select_deletable` with the pins as they are at that moment.
- A session that changed since it was planned (mtime or size) is left alone: Claude Code may
  have resumed it.
- When the policy requires archives, a session moves only after its newest archive verifies and
  matches the bundle as it is now; trash is purged only while that archive still verifies.
- The unit is the whole session bundle, moved and brought back as `trash.py` says (transcript
  last out and last back, links never followed, a full disk leaves the original in place).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from scrubber import paths
from scrubber.errors import BusyError, ExitCode, ScrubberError
from scrubber.policy.model import Pins
from scrubber.retention.plan import (
    Action,
    ArchiveFacts,
    RetentionPlan,
    SessionKey,
    key_of,
    subject_of,
)
from scrubber.retention.rules import ArchiveStatus, Reason, Subject, select_deletable
from scrubber.retention.trash import (
    BundleSession,
    list_trash,
    purge_trash_slot,
    trash_session,
    undelete_slot,
)
from scrubber.retention.trash_crash import remove_crashed_trash
from scrubber.retention.trash_manifest import TrashError, read_trash_manifest, write_trash_manifest

LOCK_NAME = "retention.lock"


# --- the archive seam -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArchiveCheck:
    """The newest archive of a session, verified and compared with the bundle as it is now."""

    status: ArchiveStatus
    ref: str | None = None  # which archive (its path), when there is one
    # The newest archive is a `--redact` copy of the session as it is now (same last
    # timestamp): current, but by design not the same content, so never one retention may
    # delete the session on (its status stays STALE); shown as such by `scrub sessions`.
    redacted: bool = False


class ArchiveIndex(Protocol):
    """What retention needs from the archive store. The implementation lives above retention
    (the CLI wires `scrubber.archive`); tests use fakes."""

    @property
    def can_archive(self) -> bool:
        """An archive can be written now (recipients are configured)."""
        ...

    def newest(self, session: BundleSession) -> ArchiveCheck: ...

    def archive(self, session: BundleSession) -> ArchiveCheck:
        """Write an archive of the session as it is now, read it back and verify it."""
        ...

    def verify(self, ref: str) -> bool:
        """The archive still verifies (keyless: header, recipients, ciphertext hash)."""
        ...

    def files(self) -> tuple[ArchiveFacts, ...]: ...

    def remove(self, ref: str) -> None:
        """Delete one archive and its sidecar."""
        ...


# --- the lock -------------------------------------------------------------------------------


def lock_file(home: Path) -> Path:
    return paths.state_dir(home) / LOCK_NAME


@contextlib.contextmanager
def retention_lock(home: Path) -> Iterator[None]:
    """Hold the retention lock, or raise BusyError at once when another run holds it."""
    folder = paths.ensure_private_dir(paths.state_dir(home))
    fd = paths.try_lock_own_file(folder / LOCK_NAME)  # a planted link or FIFO: ScrubberError
    if fd is None:
        raise BusyError(
            "another retention run (or undelete) is in progress",
            f"it holds {folder / LOCK_NAME}; try again when it has finished",
        )
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# --- applying a plan ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one session (or trash entry, or archive) when the plan was applied."""

    subject: str  # "<project>/<session-id>", a trash folder's name, or an archive path
    planned: Action
    done: Action
    reason: Reason
    detail: str | None = None  # why it failed; paths and error names only
    error: bool = False  # an I/O error (exit 3), not a decision

    @property
    def warning(self) -> bool:
        return self.done is Action.KEEP and self.planned is not Action.KEEP


@dataclass(frozen=True, slots=True)
class ApplyReport:
    sessions: tuple[Outcome, ...]
    trash: tuple[Outcome, ...]
    archives: tuple[Outcome, ...]

    @property
    def all(self) -> tuple[Outcome, ...]:
        return (*self.sessions, *self.trash, *self.archives)

    @property
    def errors(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.all if o.error)


def _unchanged(session: BundleSession) -> bool:
    try:
        st = session.transcript.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == session.size and st.st_mtime == session.mtime


def _describe(error: BaseException) -> str:
    if isinstance(error, ScrubberError):
        return error.message
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}{error.strerror or type(error).__name__}"
    return type(error).__name__  # never the text: it might quote input


def _is_io_error(error: BaseException) -> bool:
    """An I/O failure (exit 3), as opposed to a check that said no (a warning, exit 1)."""
    if isinstance(error, ScrubberError):
        return error.exit_code is ExitCode.RUNTIME
    return isinstance(error, OSError)


def _pinned_now(pins_now: Callable[[], Pins], subject: Subject) -> bool:
    """The selector, with the pins read again; unreadable pins count as pinned."""
    try:
        pins = pins_now()
    except ScrubberError:
        return True
    return not select_deletable([subject], pins, lambda s: s).deletable


def _remove_session(
    session: BundleSession,
    action: Action,
    plan: RetentionPlan,
    *,
    config_dir: Path,
    home: Path,
    index: ArchiveIndex,
    pins_now: Callable[[], Pins],
    clock: Callable[[], datetime],
) -> Outcome:
    name = str(key_of(session))

    def kept(reason: Reason, detail: str | None = None, *, error: bool = False) -> Outcome:
        return Outcome(name, action, Action.KEEP, reason, detail, error)

    if _pinned_now(pins_now, subject_of(session)):
        return kept(Reason.PINNED)
    if not _unchanged(session):
        return kept(Reason.ACTIVE, "changed since it was planned")
    archive_ref: str | None = None
    if action is Action.ARCHIVE_THEN_TRASH:
        try:
            check = index.archive(session)
        except (ScrubberError, OSError) as error:
            return kept(
                Reason.NO_VERIFIED_ARCHIVE,
                f"archiving failed: {_describe(error)}",
                error=_is_io_error(error),
            )
        if check.status is not ArchiveStatus.VERIFIED:
            # The store may keep an existing archive of the same content rather than write
            # another; if that one is damaged, a person has to look at it.
            return kept(
                Reason.NO_VERIFIED_ARCHIVE,
                f"after archiving, the newest archive is {check.status}"
                + (f" ({check.ref}): check it with `scrub archives verify`" if check.ref else ""),
            )
    if plan.rules.require_archive:
        # Checked again after archiving, whatever the plan said: this is the last word.
        try:
            check = index.newest(session)
        except (ScrubberError, OSError) as error:
            return kept(Reason.NO_VERIFIED_ARCHIVE, f"verification failed: {_describe(error)}")
        if check.status is not ArchiveStatus.VERIFIED:
            return kept(Reason.NO_VERIFIED_ARCHIVE, f"newest archive is {check.status}")
        archive_ref = check.ref
        if not _unchanged(session):
            return kept(Reason.ACTIVE, "changed while it was being archived")
    if _pinned_now(pins_now, subject_of(session)):
        return kept(Reason.PINNED)
    try:
        trash_session(
            session, config_dir=config_dir, home=home, now=clock(), archive_ref=archive_ref
        )
    except (ScrubberError, OSError) as error:
        return kept(Reason.FAILED, _describe(error), error=True)
    reason = Reason.ARCHIVED if action is Action.ARCHIVE_THEN_TRASH else Reason.EXPIRED
    return Outcome(name, action, action, reason)


def apply_plan(
    plan: RetentionPlan,
    sessions: Mapping[SessionKey, BundleSession],
    *,
    config_dir: Path,
    home: Path,
    index: ArchiveIndex,
    pins_now: Callable[[], Pins],
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> ApplyReport:
    """Carry out `plan`. The caller holds `retention_lock`. Each act re-checks what it relies
    on; a failure keeps that item and the run goes on with the next."""
    removing = {d.key for d in plan.removals}
    recovered = recover_incomplete(home, config_dir, removing, now=clock())
    outcomes = []
    for decision in plan.sessions:
        name = str(decision.key)
        if not decision.removes:
            outcomes.append(Outcome(name, decision.action, Action.KEEP, decision.reason))
            continue
        session = sessions.get(decision.key)
        if session is None:
            outcomes.append(
                Outcome(name, decision.action, Action.KEEP, Reason.FAILED, "no longer listed")
            )
            continue
        outcomes.append(
            _remove_session(
                session,
                decision.action,
                plan,
                config_dir=config_dir,
                home=home,
                index=index,
                pins_now=pins_now,
                clock=clock,
            )
        )

    trash_outcomes = []
    root = paths.trash_dir(home)
    for item in plan.trash_purges:
        outcome = _purge_trash(root / item.slot, item.slot, plan, index, pins_now)
        trash_outcomes.append(outcome)

    archive_outcomes = []
    facts = {f.ref: f for f in index.files()} if plan.archive_purges else {}
    for purge in plan.archive_purges:
        archive_outcomes.append(_purge_archive(purge.ref, facts.get(purge.ref), index, pins_now))
    return ApplyReport(tuple(outcomes), (*recovered, *trash_outcomes), tuple(archive_outcomes))


def recover_incomplete(
    home: Path,
    config_dir: Path,
    removing: frozenset[SessionKey] | set[SessionKey],
    *,
    now: datetime,
) -> tuple[Outcome, ...]:
    """Finish what a crash interrupted. A half-filled trash entry whose transcript already
    moved (it moves last) is complete, even when a transcript is back at its place (a
    `restore --force` put the archived version there since: this one is a version of its
    own); one whose session this run removes anyway is completed by that removal; any other
    goes back where it came from, so no session stays split."""
    outcomes = [
        Outcome(
            path.relative_to(paths.trash_dir(home)).as_posix(),
            Action.PURGE,
            Action.PURGE,
            Reason.EXPIRED,
            "removed what a killed run left in the trash (no session file was in it)",
        )
        for path in remove_crashed_trash(home)
    ]
    for slot, manifest in list_trash(home).incomplete:
        key = SessionKey(manifest.project, manifest.session_id)
        if os.path.lexists(slot / manifest.transcript):
            write_trash_manifest(slot, replace(manifest, complete=True, trashed_at=now))
            outcomes.append(
                Outcome(
                    slot.name,
                    Action.TRASH,
                    Action.TRASH,
                    Reason.EXPIRED,
                    "completed a move a previous run started",
                )
            )
        elif key not in removing:
            try:
                undelete_slot(home, config_dir, slot, manifest, now=now, keep_mtime=True)
            except (ScrubberError, OSError) as error:
                outcomes.append(
                    Outcome(
                        slot.name,
                        Action.TRASH,
                        Action.KEEP,
                        Reason.FAILED,
                        f"a half-moved session could not be put back: {_describe(error)}",
                        error=True,
                    )
                )
            else:
                outcomes.append(
                    Outcome(
                        slot.name,
                        Action.TRASH,
                        Action.KEEP,
                        Reason.FAILED,
                        "put back the part a previous run had moved",
                    )
                )
    return tuple(outcomes)


def _purge_trash(
    slot: Path,
    name: str,
    plan: RetentionPlan,
    index: ArchiveIndex,
    pins_now: Callable[[], Pins],
) -> Outcome:
    def kept(reason: Reason, detail: str | None = None, *, error: bool = False) -> Outcome:
        return Outcome(name, Action.PURGE, Action.KEEP, reason, detail, error)

    try:
        manifest = read_trash_manifest(slot)
    except TrashError as error:
        return kept(Reason.FAILED, error.message, error=True)
    if _pinned_now(pins_now, manifest.subject):
        return kept(Reason.PINNED)
    if plan.rules.require_archive:
        # Trash is still local data: it goes for good only while its archive verifies.
        try:
            verified = manifest.archive_ref is not None and index.verify(manifest.archive_ref)
        except (ScrubberError, OSError):
            verified = False
        if not verified:
            return kept(Reason.NO_VERIFIED_ARCHIVE, "its archive is missing or fails verification")
    try:
        pins = pins_now()
        purge_trash_slot(slot, pins)
    except (ScrubberError, OSError) as error:
        return kept(Reason.FAILED, _describe(error), error=True)
    return Outcome(name, Action.PURGE, Action.PURGE, Reason.EXPIRED)


def _purge_archive(
    ref: str, facts: ArchiveFacts | None, index: ArchiveIndex, pins_now: Callable[[], Pins]
) -> Outcome:
    def kept(reason: Reason, detail: str | None = None, *, error: bool = False) -> Outcome:
        return Outcome(ref, Action.PURGE, Action.KEEP, reason, detail, error)

    if facts is None:
        return kept(Reason.FAILED, "no longer listed")
    try:
        pins = pins_now()
    except ScrubberError:
        return kept(Reason.PINNED, "pins unreadable")
    # The plan enriched the subject with local facts; here the sidecar's own are checked too.
    if not select_deletable([facts], pins, lambda f: f.subject).deletable:
        return kept(Reason.PINNED)
    try:
        index.remove(ref)
    except (ScrubberError, OSError) as error:
        return kept(Reason.FAILED, _describe(error), error=True)
    return Outcome(ref, Action.PURGE, Action.PURGE, Reason.EXPIRED)
