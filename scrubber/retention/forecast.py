"""Forecasts, for `scrub sessions` and `scrub doctor`: when scrubber's retention and Claude
Code's own sweep would remove each session, if nothing changes in the meantime.

Pure, like the plan it builds on: the sessions are judged by the same keep rules
(`plan.judge_sessions`), the clock comes in as `now`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from scrubber.retention.plan import (
    LATEST,
    Periods,
    RetentionEntry,
    RetentionRules,
    SessionKey,
    as_aware,
    judge_sessions,
    mtime_of,
)
from scrubber.retention.rules import Reason


@dataclass(frozen=True, slots=True)
class Forecast:
    """When each clock would remove a session, if nothing changes in the meantime.

    `retention_at` is None when scrubber's retention never removes it as things stand (pinned,
    unreadable, the newest of its project); `claude_sweep_at` is None when Claude Code's sweep
    is paused (its settings cannot be read). Claude Code's sweep keys on the file mtime only and
    ignores pins; both times can be in the past ("at the next run").
    """

    key: SessionKey
    last_activity: datetime
    size: int
    pinned: bool
    retention_at: datetime | None
    retention_note: Reason | None  # why retention_at is None, or why it is later than due
    claude_sweep_at: datetime | None

    @property
    def urgency(self) -> datetime:
        """The earlier of the two removal times (datetime.max when neither applies)."""
        times = [t for t in (self.retention_at, self.claude_sweep_at) if t is not None]
        return min(times) if times else LATEST

    @property
    def claude_first(self) -> bool:
        """Claude Code's sweep would remove it before (or instead of) scrubber's retention:
        with no archive and no trash, and whatever the pins say."""
        if self.claude_sweep_at is None:
            return False
        return self.retention_at is None or self.claude_sweep_at < self.retention_at


def _plus(moment: datetime, days: int) -> datetime:
    try:
        return moment + timedelta(days=days)
    except OverflowError:
        return LATEST


def forecast(
    entries: Iterable[RetentionEntry],
    rules: RetentionRules,
    now: datetime,
    claude_periods: Periods | None,
) -> tuple[Forecast, ...]:
    """For each session: when retention and Claude Code's own sweep would remove it."""
    now = as_aware(now)
    result = []
    for item in judge_sessions(entries, rules, now, {}):
        candidate = item.candidate
        note: Reason | None = None
        retention_at: datetime | None
        if candidate.pinned or not candidate.readable:
            retention_at, note = None, (Reason.PINNED if candidate.pinned else Reason.UNREADABLE)
        elif candidate.rank_in_project < rules.keep_newest_per_project:
            retention_at, note = None, Reason.NEWEST_IN_PROJECT
        else:
            due = candidate.due_at()
            idle_until = candidate.last_write + rules.min_idle
            retention_at = max(due, idle_until)
            if idle_until > due:
                note = Reason.ACTIVE
        sweep_at = None
        if claude_periods is not None:
            days = claude_periods.days_for(item.entry.cwd)
            sweep_at = _plus(mtime_of(item.entry), days)
        result.append(
            Forecast(
                key=item.key,
                last_activity=candidate.last_activity,
                size=item.entry.size,
                pinned=candidate.pinned,
                retention_at=retention_at,
                retention_note=note,
                claude_sweep_at=sweep_at,
            )
        )
    return tuple(result)
