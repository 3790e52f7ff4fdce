"""Retention rules: why a session is kept, and the one gate every deletion goes through.

A session is removed only when no keep-rule holds for it. The rules are small values composed
in a fixed order (`FirstMatch`, the AnyOf shape of sigstore-python's policies), so the reason a
session is kept is always the first that applies and never depends on the order sessions were
listed in. Everything here is pure: facts come in as a `Candidate` built by `plan.py`.

`select_deletable` is the single function every destructive path calls (the plan, moving a
session to the trash, purging expired trash, purging expired archives), right before it acts:
a pin added while a run is under way is still honoured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Generic, Protocol, TypeVar

from scrubber.errors import ConfigError
from scrubber.policy.model import Pins, RetentionPolicy


class Reason(StrEnum):
    """Why a session (or a trashed session, or an archive) is kept or removed."""

    # kept
    PINNED = "pinned"
    PIN_UNKNOWN = "pin-status-unknown"  # an archive whose title/tags are not readable in clear
    UNREADABLE = "unreadable"
    ACTIVE = "possibly-active"  # modified within min_idle_minutes (or changed since planned)
    TOO_YOUNG = "too-young"
    NEWEST_IN_PROJECT = "newest-in-project"
    NO_VERIFIED_ARCHIVE = "no-verified-archive"
    OVER_CAP = "over-cap"
    IN_GRACE = "in-grace-period"  # trash not yet expired
    PROTECTS_SESSION = "protects-session"  # newest archive of a session still local or in trash
    NOT_EXPIRED = "not-expired"  # archive younger than archive_days
    FAILED = "failed"  # apply: an I/O error or a check failed; nothing was removed
    # removed
    EXPIRED = "expired"
    ARCHIVED = "archived"  # apply: archived (and verified) before it went to the trash


# Keeps that mean "retention was asked to remove this and did not": they make a run exit 1.
WARNING_REASONS = frozenset(
    {Reason.NO_VERIFIED_ARCHIVE, Reason.OVER_CAP, Reason.UNREADABLE, Reason.FAILED}
)


# --- pins ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subject:
    """What a pin can match, for a session, a trashed session or an archive. An archive's
    sidecar may keep the title, tags and cwd inside the encryption: those are then unknown,
    which is not the same as empty, and a pin on an unknown field makes the status unknown."""

    session_id: str
    project: str | None = None
    cwd: str | None = None
    custom_title: str | None = field(default=None, repr=False)  # may quote a secret
    tags: tuple[str, ...] = field(default=(), repr=False)
    title_known: bool = True
    tags_known: bool = True
    cwd_known: bool = True


def pin_status(subject: Subject, pins: Pins) -> bool | None:
    """True when pinned, False when not, None when it cannot be told (a pin matches on a field
    whose value is unknown, and no other pin settles it)."""
    if subject.session_id in pins.sessions:
        return True
    unknown = False
    if pins.names:
        if subject.title_known:
            if subject.custom_title is not None and subject.custom_title in pins.names:
                return True
        else:
            unknown = True
    if pins.tags:
        if subject.tags_known:
            if any(tag in pins.tags for tag in subject.tags):
                return True
        else:
            unknown = True
    if pins.projects:
        places = [p for p in (subject.project, subject.cwd if subject.cwd_known else None) if p]
        if any(fnmatchcase(place, glob) for glob in pins.projects for place in places):
            return True
        unknown |= not subject.cwd_known
    return None if unknown else False


def _status_of_any(subjects: Subject | Sequence[Subject], pins: Pins) -> bool | None:
    """Pinned when any subject is; unknown when none is and one cannot be told (or there is
    none to tell by); not pinned only when every one is not."""
    if isinstance(subjects, Subject):
        return pin_status(subjects, pins)
    statuses = [pin_status(one, pins) for one in subjects]
    if True in statuses:
        return True
    return None if None in statuses or not statuses else False


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Selection(Generic[T]):
    deletable: tuple[T, ...]
    kept: tuple[T, ...]  # pinned, or pin status unknown: never deleted
    unknown: tuple[T, ...] = ()  # the part of `kept` whose pin status could not be told


def select_deletable(
    items: Iterable[T], pins: Pins, subject: Callable[[T], Subject | Sequence[Subject]]
) -> Selection[T]:
    """THE selector: of these items, which may be deleted. Every destructive path in scrubber
    goes through here, with the pins as they are at that moment; anything pinned, or whose pin
    status cannot be told, is never deletable. `subject` may give several subjects for one
    item (an archive of a session the trash holds in several versions, each with the title it
    had then): a pin on any of them keeps it."""
    deletable: list[T] = []
    kept: list[T] = []
    unknown: list[T] = []
    for item in items:
        status = _status_of_any(subject(item), pins)
        if status is False:
            deletable.append(item)
        else:
            kept.append(item)
            if status is None:
                unknown.append(item)
    return Selection(tuple(deletable), tuple(kept), tuple(unknown))


# --- sessions -------------------------------------------------------------------------------


class ArchiveStatus(StrEnum):
    """The newest archive of a session, compared with the session as it is now."""

    NONE = "none"  # checked: there is no archive
    STALE = "stale"  # the newest archive is of an older version of the session
    UNVERIFIED = "unverified"  # the newest archive fails verification
    VERIFIED = "verified"  # verifies, and its manifest matches the bundle as it is now
    # Not looked at: verifying reads every archive whole, so retention checks only the sessions
    # whose fate depends on it (`needs_archive_status`). Never taken for "none" (issue 14).
    NOT_CHECKED = "not checked"


@dataclass(frozen=True, slots=True)
class Candidate:
    """The facts the rules look at, for one session, with every time already clamped to now."""

    last_activity: datetime  # newest timestamp inside, else mtime; never after now
    last_write: datetime  # the later of mtime and last_activity; never after now
    readable: bool
    pinned: bool
    rank_in_project: int  # 0 for the most recent session of its project
    days: int  # the retention period that applies to this session
    archive: ArchiveStatus

    def due_at(self) -> datetime:
        return self.last_activity + timedelta(days=self.days)


@dataclass(frozen=True, slots=True)
class RuleContext:
    now: datetime
    min_idle: timedelta
    keep_newest_per_project: int


class KeepRule(Protocol):
    @property
    def reason(self) -> Reason: ...

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool: ...


@dataclass(frozen=True, slots=True)
class IsPinned:
    reason: Reason = Reason.PINNED

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool:
        return candidate.pinned


@dataclass(frozen=True, slots=True)
class IsUnreadable:
    """Its age cannot be told from inside it, so it is not judged at all."""

    reason: Reason = Reason.UNREADABLE

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool:
        return not candidate.readable


@dataclass(frozen=True, slots=True)
class IsPossiblyActive:
    """Written to recently: Claude Code may still be appending to it."""

    reason: Reason = Reason.ACTIVE

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool:
        return context.now - candidate.last_write < context.min_idle


@dataclass(frozen=True, slots=True)
class IsTooYoung:
    """Claude Code's rule, on the newest timestamp inside: older than now minus the period."""

    reason: Reason = Reason.TOO_YOUNG

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool:
        return candidate.last_activity >= context.now - timedelta(days=candidate.days)


@dataclass(frozen=True, slots=True)
class IsNewestInProject:
    reason: Reason = Reason.NEWEST_IN_PROJECT

    def keeps(self, candidate: Candidate, context: RuleContext) -> bool:
        return candidate.rank_in_project < context.keep_newest_per_project


@dataclass(frozen=True, slots=True)
class FirstMatch:
    """The first rule that keeps a candidate, or None when none does."""

    rules: Sequence[KeepRule]

    def reason(self, candidate: Candidate, context: RuleContext) -> Reason | None:
        for rule in self.rules:
            if rule.keeps(candidate, context):
                return rule.reason
        return None


# The order is the order of reasons a user reads first: a pin explains more than an age.
KEEP_RULES = FirstMatch(
    (IsPinned(), IsUnreadable(), IsPossiblyActive(), IsTooYoung(), IsNewestInProject())
)


# --- the policy as a whole ------------------------------------------------------------------


def check_policy(retention: RetentionPolicy, days: int) -> None:
    """Refuse a retention policy that makes no sense as a whole (the model checks each key).

    Raises ConfigError (exit 2): retention then does nothing at all rather than something odd.
    """
    if days < 1:
        # The model refuses 0 too; this guards a value computed elsewhere (settings, flags).
        raise ConfigError(
            f"retention period of {days} days: the minimum is 1",
            "Claude Code rejects cleanupPeriodDays 0 as well; use a whole number of days >= 1",
        )
    if retention.archive_days is not None and retention.archive_days < days:
        raise ConfigError(
            f"retention.archive_days ({retention.archive_days}) is shorter than the retention "
            f"period ({days} days): archives would expire before the sessions they keep",
            "raise retention.archive_days, or remove it to keep archives forever",
        )
