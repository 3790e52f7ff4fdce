"""The retention plan: entries + rules + now -> one decision per session, trash and archive
(`forecast.py` tells, from the same judgement, when each session would be removed).

Pure: no files, no clock. Sessions come in through `RetentionEntry` (discovery's `SessionInfo`
satisfies it as is), archive state as a mapping computed at the edge, trashed sessions and
archives as small values. The plan never depends on the order of its inputs: every group is
sorted on a total order (time, then project and id) before anything is ranked or capped, and
every output is sorted by key.

A session's age is the newest `timestamp` inside it, its mtime when it has none; times in the
future count as now (some Claude Code releases rewrite mtimes in bulk; clocks skew).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from itertools import pairwise
from types import MappingProxyType
from typing import Protocol

from scrubber.errors import UsageError
from scrubber.policy.model import MAX_DAYS, Pins, RetentionPolicy
from scrubber.retention.rules import (
    KEEP_RULES,
    WARNING_REASONS,
    ArchiveStatus,
    Candidate,
    Reason,
    RuleContext,
    Subject,
    select_deletable,
)
from scrubber.retention.trash_names import slot_name


class RetentionEntry(Protocol):
    """One session as retention sees it. `last_timestamp` is the newest timestamp inside."""

    @property
    def id(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def custom_title(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def last_timestamp(self) -> datetime | None: ...
    @property
    def mtime(self) -> float: ...
    @property
    def size(self) -> int: ...
    @property
    def readable(self) -> bool: ...


@dataclass(frozen=True, slots=True, order=True)
class SessionKey:
    """A session's identity on disk: the same id can exist in two project folders (a copy)."""

    project: str
    session_id: str

    def __str__(self) -> str:
        return f"{self.project}/{self.session_id}"


def key_of(entry: RetentionEntry) -> SessionKey:
    return SessionKey(entry.project, entry.id)


def subject_of(entry: RetentionEntry) -> Subject:
    return Subject(entry.id, entry.project, entry.cwd, entry.custom_title, tuple(entry.tags))


@dataclass(frozen=True, slots=True)
class Periods:
    """The retention period in days: one default, and per working directory where a
    project's own Claude Code settings say otherwise."""

    default: int
    by_cwd: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        # The policy and the settings reader bound their values already; `--days` comes here
        # as typed, and a period past MAX_DAYS makes `now - period` leave the datetime range.
        for days in (self.default, *self.by_cwd.values()):
            if days > MAX_DAYS:
                raise UsageError(
                    f"a retention period of {days} days is too large (at most {MAX_DAYS}, "
                    "about 274 years)",
                    f"give --days (or retention.days) {MAX_DAYS} or less",
                )

    def days_for(self, cwd: str | None) -> int:
        if cwd is None:
            return self.default
        return self.by_cwd.get(cwd, self.default)


@dataclass(frozen=True, slots=True)
class RetentionRules:
    """Everything the plan needs besides the entries and the clock."""

    periods: Periods
    pins: Pins = field(default_factory=Pins)
    keep_newest_per_project: int = 1
    min_idle: timedelta = timedelta(minutes=60)
    max_deletions: int = 50
    require_archive: bool = False
    can_archive: bool = False  # an archiver is configured (recipients known)
    trash_days: int = 7
    archive_days: int | None = None
    force: bool = False  # lift the per-run cap

    @classmethod
    def from_policy(
        cls,
        retention: RetentionPolicy,
        pins: Pins,
        periods: Periods,
        *,
        can_archive: bool,
        force: bool = False,
    ) -> RetentionRules:
        return cls(
            periods=periods,
            pins=pins,
            keep_newest_per_project=retention.keep_newest_per_project,
            min_idle=timedelta(minutes=retention.min_idle_minutes),
            max_deletions=retention.max_deletions_per_run,
            require_archive=retention.require_archive,
            can_archive=can_archive,
            trash_days=retention.trash_days,
            archive_days=retention.archive_days,
            force=force,
        )


class Action(StrEnum):
    KEEP = "keep"
    TRASH = "trash"
    ARCHIVE_THEN_TRASH = "archive-then-trash"
    PURGE = "purge"  # trash and archives: delete for good


REMOVALS = frozenset({Action.TRASH, Action.ARCHIVE_THEN_TRASH})


@dataclass(frozen=True, slots=True)
class Decision:
    """What happens to one session, and why."""

    key: SessionKey
    action: Action
    reason: Reason
    last_activity: datetime  # clamped to now
    days: int
    size: int
    mtime: float
    pinned: bool
    archive: ArchiveStatus

    @property
    def due_at(self) -> datetime:
        return self.last_activity + timedelta(days=self.days)

    @property
    def removes(self) -> bool:
        return self.action in REMOVALS

    @property
    def warning(self) -> bool:
        """Retention was asked to remove this session and keeps it."""
        return self.action is Action.KEEP and self.reason in WARNING_REASONS


@dataclass(frozen=True, slots=True)
class TrashedSession:
    """A session in scrubber's trash, as its trash manifest describes it."""

    session_id: str
    project: str
    trashed_at: datetime
    subject: Subject
    version: int = 1  # of the session's trashed versions, each in its own folder


@dataclass(frozen=True, slots=True)
class TrashDecision:
    session_id: str
    project: str
    action: Action  # PURGE or KEEP
    reason: Reason
    trashed_at: datetime
    purge_at: datetime
    version: int = 1

    @property
    def slot(self) -> str:
        """Its folder in the trash, which also names it in apply's outcomes."""
        return slot_name(self.session_id, self.version)


@dataclass(frozen=True, slots=True)
class ArchiveFacts:
    """One archive file as its sidecar describes it. `ref` identifies it (its path)."""

    ref: str
    session_id: str
    project: str | None
    last_timestamp: datetime | None  # of the session version archived
    created: datetime  # when the archive was written (file mtime as fallback)
    subject: Subject  # what its clear fields say about pins


@dataclass(frozen=True, slots=True)
class ArchiveDecision:
    ref: str
    session_id: str
    action: Action  # PURGE or KEEP
    reason: Reason
    expires_at: datetime | None  # None: archives are kept forever


@dataclass(frozen=True, slots=True)
class RetentionPlan:
    now: datetime
    rules: RetentionRules = field(repr=False)
    sessions: tuple[Decision, ...]
    trash: tuple[TrashDecision, ...] = ()
    archives: tuple[ArchiveDecision, ...] = ()

    @property
    def removals(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.sessions if d.removes)

    @property
    def warnings(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.sessions if d.warning)

    @property
    def trash_purges(self) -> tuple[TrashDecision, ...]:
        return tuple(t for t in self.trash if t.action is Action.PURGE)

    @property
    def archive_purges(self) -> tuple[ArchiveDecision, ...]:
        return tuple(a for a in self.archives if a.action is Action.PURGE)

    def decision(self, key: SessionKey) -> Decision | None:
        for decision in self.sessions:
            if decision.key == key:
                return decision
        return None


# --- building the plan ----------------------------------------------------------------------


def _clamp(moment: datetime, now: datetime) -> datetime:
    return moment if moment <= now else now


def as_aware(moment: datetime) -> datetime:
    """A naive time taken as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


LATEST = datetime.max.replace(tzinfo=UTC)  # also "never", where a time must be ranked
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def mtime_of(entry: RetentionEntry) -> datetime:
    """The entry's mtime as an aware time, whatever number the file system gave."""
    try:
        return datetime.fromtimestamp(entry.mtime, tz=UTC)
    except (OverflowError, OSError, ValueError):
        # An mtime beyond what datetime holds: the far future clamps to now where it matters.
        return LATEST if entry.mtime > 0 else _EARLIEST


def last_activity(entry: RetentionEntry, now: datetime) -> datetime:
    """The newest timestamp inside, else the mtime; never after `now`."""
    moment = entry.last_timestamp
    return _clamp(as_aware(moment) if moment is not None else mtime_of(entry), now)


@dataclass(frozen=True, slots=True)
class JudgedSession:
    """One session as the keep rules see it (the plan's and the forecast's common step)."""

    entry: RetentionEntry
    key: SessionKey
    candidate: Candidate
    reason: Reason | None  # the keep reason, None when retention would remove it


def judge_sessions(
    entries: Iterable[RetentionEntry],
    rules: RetentionRules,
    now: datetime,
    archives: Mapping[SessionKey, ArchiveStatus],
) -> list[JudgedSession]:
    """Every session's facts for the keep rules (age, last write, pins, rank in its project,
    period, archive state: NOT_CHECKED for a session `archives` leaves out) and the keep reason
    they give, sorted by key. Raises ValueError when a session is listed twice."""
    # Tuples rather than lookups by key: 20,000 sessions plan in well under a second.
    rows: list[tuple[SessionKey, RetentionEntry, datetime, datetime]] = []
    for entry in entries:
        activity = last_activity(entry, now)
        rows.append((key_of(entry), entry, activity, max(activity, _clamp(mtime_of(entry), now))))
    rows.sort(key=lambda row: row[0])
    for before, after in pairwise(rows):
        if before[0] == after[0]:
            raise ValueError(f"session {after[0]} listed twice")
    kept = select_deletable(range(len(rows)), rules.pins, lambda i: subject_of(rows[i][1])).kept
    pinned = set(kept)  # the selector
    # Rank within each project, most recent first, on a total order.
    projects: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        projects.setdefault(row[0].project, []).append(index)
    rank = [0] * len(rows)
    for members in projects.values():
        members.sort(key=lambda i: (rows[i][2], rows[i][3], rows[i][0].session_id), reverse=True)
        for position, index in enumerate(members):
            rank[index] = position
    context = RuleContext(now, rules.min_idle, rules.keep_newest_per_project)
    judged = []
    for index, (key, entry, activity, written) in enumerate(rows):
        candidate = Candidate(
            last_activity=activity,
            last_write=written,
            readable=entry.readable,
            pinned=index in pinned,
            rank_in_project=rank[index],
            days=rules.periods.days_for(entry.cwd),
            archive=archives.get(key, ArchiveStatus.NOT_CHECKED),
        )
        judged.append(JudgedSession(entry, key, candidate, KEEP_RULES.reason(candidate, context)))
    return judged


def needs_archive_status(
    entries: Iterable[RetentionEntry], rules: RetentionRules, now: datetime
) -> frozenset[SessionKey]:
    """The sessions whose archive state decides their fate: everything else is kept (or
    removed) whatever its archives say, so the edge verifies only these."""
    if not rules.require_archive:
        return frozenset()
    return frozenset(j.key for j in judge_sessions(entries, rules, now, {}) if j.reason is None)


def plan_retention(
    entries: Iterable[RetentionEntry],
    rules: RetentionRules,
    now: datetime,
    *,
    archives: Mapping[SessionKey, ArchiveStatus] | None = None,
    trashed: Iterable[TrashedSession] = (),
    archive_files: Iterable[ArchiveFacts] = (),
) -> RetentionPlan:
    """Decide, for every session, trashed session and archive, what happens and why.

    `archives` holds the archive state of the sessions `needs_archive_status` named; a session
    missing from it was not checked (ArchiveStatus.NOT_CHECKED), which counts as no verified
    archive.
    """
    now = as_aware(now)
    judged = judge_sessions(entries, rules, now, archives or {})

    # Removals first, then the cap: oldest go first, the rest wait for the next run.
    decided: list[tuple[Action, Reason]] = []
    removable: list[int] = []
    for index, item in enumerate(judged):
        if item.reason is not None:
            decided.append((Action.KEEP, item.reason))
            continue
        if not rules.require_archive or item.candidate.archive is ArchiveStatus.VERIFIED:
            decided.append((Action.TRASH, Reason.EXPIRED))
        elif rules.can_archive:
            decided.append((Action.ARCHIVE_THEN_TRASH, Reason.EXPIRED))
        else:
            decided.append((Action.KEEP, Reason.NO_VERIFIED_ARCHIVE))
            continue
        removable.append(index)
    # judged is sorted by key, so (time, position) is a total order independent of input order.
    removable.sort(key=lambda i: (judged[i].candidate.last_activity, i))
    if not rules.force:
        for index in removable[rules.max_deletions :]:
            decided[index] = (Action.KEEP, Reason.OVER_CAP)

    sessions = tuple(
        Decision(
            key=item.key,
            action=decided[index][0],
            reason=decided[index][1],
            last_activity=item.candidate.last_activity,
            days=item.candidate.days,
            size=item.entry.size,
            mtime=item.entry.mtime,
            pinned=item.candidate.pinned,
            archive=item.candidate.archive,
        )
        for index, item in enumerate(judged)
    )
    trashed = tuple(trashed)
    archive_files = tuple(archive_files)
    local = (
        {item.key.session_id: subject_of(item.entry) for item in judged} if archive_files else {}
    )
    return RetentionPlan(
        now=now,
        rules=rules,
        sessions=sessions,
        trash=_plan_trash(trashed, rules, now),
        archives=_plan_archives(archive_files, rules, now, local, trashed),
    )


def _plan_trash(
    trashed: tuple[TrashedSession, ...], rules: RetentionRules, now: datetime
) -> tuple[TrashDecision, ...]:
    seen: set[str] = set()
    for item in trashed:  # each version of a session on its own, by its own trashed_at
        slot = slot_name(item.session_id, item.version)
        if slot in seen:
            raise ValueError(f"trashed session {slot} listed twice")
        seen.add(slot)
    kept = {id(t) for t in select_deletable(trashed, rules.pins, lambda t: t.subject).kept}
    decisions = []
    for item in trashed:
        trashed_at = _clamp(as_aware(item.trashed_at), now)
        purge_at = trashed_at + timedelta(days=rules.trash_days)
        if id(item) in kept:
            action, reason = Action.KEEP, Reason.PINNED
        elif now >= purge_at:
            action, reason = Action.PURGE, Reason.EXPIRED
        else:
            action, reason = Action.KEEP, Reason.IN_GRACE
        facts = (item.session_id, item.project, action, reason, trashed_at, purge_at)
        decisions.append(TrashDecision(*facts, item.version))
    return tuple(sorted(decisions, key=lambda d: (d.project, d.session_id, d.version)))


def _plan_archives(
    files: tuple[ArchiveFacts, ...],
    rules: RetentionRules,
    now: datetime,
    local: Mapping[str, Subject],
    trashed: tuple[TrashedSession, ...],
) -> tuple[ArchiveDecision, ...]:
    refs = [f.ref for f in files]
    if len(set(refs)) != len(refs):
        raise ValueError("an archive is listed twice")
    # Every trashed version's subject, each with the title it had (a pin on any keeps).
    in_trash: dict[str, list[Subject]] = {}
    for t in trashed:
        in_trash.setdefault(t.session_id, []).append(t.subject)

    def basis(facts: ArchiveFacts) -> datetime:
        moment = facts.last_timestamp or facts.created
        return _clamp(as_aware(moment), now)

    newest: dict[str, ArchiveFacts] = {}
    for facts in sorted(files, key=lambda f: (basis(f), as_aware(f.created), f.ref)):
        newest[facts.session_id] = facts  # the last one wins: the newest

    def subject(facts: ArchiveFacts) -> Subject | list[Subject]:
        # What we know of the session locally beats what the sidecar keeps in clear.
        return local.get(facts.session_id) or in_trash.get(facts.session_id) or facts.subject

    selection = select_deletable(files, rules.pins, subject)
    kept, unknown = {f.ref for f in selection.kept}, {f.ref for f in selection.unknown}
    decisions = []
    for facts in files:
        expires_at = (
            None
            if rules.archive_days is None
            else basis(facts) + timedelta(days=rules.archive_days)
        )
        sid = facts.session_id
        protects = newest[sid] is facts and (sid in local or sid in in_trash)
        if expires_at is None or now < expires_at:
            action, reason = Action.KEEP, Reason.NOT_EXPIRED
        elif facts.ref in unknown:
            action, reason = Action.KEEP, Reason.PIN_UNKNOWN
        elif facts.ref in kept:
            action, reason = Action.KEEP, Reason.PINNED
        elif protects:
            action, reason = Action.KEEP, Reason.PROTECTS_SESSION
        else:
            action, reason = Action.PURGE, Reason.EXPIRED
        decisions.append(ArchiveDecision(facts.ref, facts.session_id, action, reason, expires_at))
    return tuple(sorted(decisions, key=lambda d: d.ref))
