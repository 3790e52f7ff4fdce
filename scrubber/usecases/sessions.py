"""The sessions use case (`scrub sessions`): every session with its size, its secrets (from the
audit cache, while fresh), its pin and archive, and when Claude Code's own sweep and scrubber's
retention would each remove it. Read-only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from scrubber.detection.registry import build_scanner
from scrubber.errors import ConfigError, ScrubberError, UsageError
from scrubber.retention.forecast import Forecast, forecast
from scrubber.retention.plan import Periods, RetentionRules, SessionKey
from scrubber.retention.rules import ArchiveStatus
from scrubber.retention.settings import TAKE_OVER_DAYS
from scrubber.transcript.sessions import SessionInfo
from scrubber.usecases.archive_push import waiting_uploads
from scrubber.usecases.reported_projects import ReportedNames, audited_projects, read_audit_cache
from scrubber.usecases.retention import (
    archive_index,
    claude_periods,
    gather_facts,
    retention_period,
)
from scrubber.usecases.shown_names import Titles


class SortOrder(StrEnum):
    urgency = "urgency"
    recent = "recent"
    size = "size"


@dataclass(frozen=True, slots=True)
class SessionRow:
    info: SessionInfo
    forecast: Forecast
    archived: ArchiveStatus
    secrets: int | None  # None: not audited, or changed since
    # An archive of it waits in spool/uploads/ for object storage (archive.destination s3://).
    upload_waiting: bool = False
    # The project folder's name as shown: redacted (it is named after the cwd, and a cwd may
    # hold a token); "" until set.
    project_shown: str = ""
    # The newest archive is a `--redact` copy of the session as it is now (ArchiveCheck).
    archive_redacted: bool = False


@dataclass(frozen=True, slots=True)
class SessionListing:
    now: datetime
    notes: tuple[str, ...]  # why a clock is paused
    rows: tuple[SessionRow, ...]
    retention_known: bool  # False: retention is paused (its settings cannot be read)
    titles: Titles
    # Claude Code's own period (managed or user settings) is the one --take-over-cleanup sets:
    # only a project's own settings can still make its sweep delete.
    sweep_taken_over: bool = False
    uploads_waiting: int = 0  # archives in spool/uploads/, of any session


def _secrets(cache: Mapping[str, Any], info: SessionInfo) -> int | None:
    item = cache.get(info.id)
    if not isinstance(item, dict):
        return None
    try:
        st = info.transcript.stat()
    except OSError:
        return None
    fresh = (
        item.get("transcript_size") == st.st_size
        and item.get("transcript_mtime_ns") == st.st_mtime_ns
    )
    count = item.get("distinct")
    return count if fresh and isinstance(count, int) else None


def _project_shown(info: SessionInfo, names: ReportedNames) -> str:
    """The project folder's name, shown as the reports show it (usecases/reported_projects.py)."""
    return names.shown(info.project, (info.id,), (info.cwd,) if info.cwd else ())


def _sorted(rows: list[SessionRow], sort: SortOrder) -> tuple[SessionRow, ...]:
    if sort is SortOrder.urgency:
        rows.sort(key=lambda r: (r.forecast.urgency, r.forecast.key))
    elif sort is SortOrder.recent:
        rows.sort(key=lambda r: (r.forecast.last_activity, r.forecast.key), reverse=True)
    else:
        rows.sort(key=lambda r: (r.forecast.size, r.forecast.key), reverse=True)
    return tuple(rows)


def _in_project(session: SessionInfo, project: str) -> bool:
    return bool(project.strip()) and (project in session.project or project == (session.cwd or ""))


def list_sessions(
    env: Mapping[str, str],
    *,
    projects: Sequence[str] = (),
    sort: SortOrder,
    policy_path: Path | None,
    now: datetime,
) -> SessionListing:
    facts = gather_facts(env, policy_path, now)
    notes: list[str] = []
    try:
        period = retention_period(facts, None)
    except ConfigError as error:
        notes.append(f"retention paused: {error.message}")
        period = None
    try:
        claude, _, _ = claude_periods(facts)
        sweep_periods: Periods | None = claude
    except ConfigError as error:
        notes.append(
            f"Claude Code's sweep is skipped while its settings cannot be read: {error.message}"
        )
        sweep_periods = None
    index = archive_index(facts)
    for project in projects:  # each one given must name something: a typo is not "none"
        if not any(_in_project(s, project) for s in facts.discovery.sessions):
            raise UsageError(f"no session matches --project {project}")
    chosen = [
        s
        for s in facts.discovery.sessions
        if not projects or any(_in_project(s, project) for project in projects)
    ]
    rules = RetentionRules.from_policy(
        facts.loaded.policy.retention,
        facts.pins,
        period.periods if period else Periods(1),
        can_archive=index.can_archive,
    )
    # Newest-per-project counts the whole project, not only the sessions shown.
    forecasts = {
        f.key: f for f in forecast(facts.discovery.sessions, rules, facts.now, sweep_periods)
    }
    # A count is shown only while the transcript is the one audited (same size and mtime).
    cache = read_audit_cache(facts.home)
    titles = Titles(facts.loaded.policy, facts.home)
    scanner = build_scanner(facts.loaded.policy, facts.home, facts.env)
    names = ReportedNames(scanner, audited_projects(cache))
    waiting = waiting_uploads(facts.home)
    # A job names <archives>/<project>/<session-id>/<file>.
    waiting_for = {(j.archive.parent.parent.name, j.archive.parent.name) for j in waiting}
    rows = []
    for info in chosen:
        try:
            check = index.newest(info)
            archived, archive_redacted = check.status, check.redacted
        except (ScrubberError, OSError):
            archived, archive_redacted = ArchiveStatus.UNVERIFIED, False
        item = forecasts[SessionKey(info.project, info.id)]
        rows.append(
            SessionRow(
                info,
                item,
                archived,
                _secrets(cache, info),
                (info.project, info.id) in waiting_for,
                _project_shown(info, names),
                archive_redacted,
            )
        )
    taken_over = sweep_periods is not None and sweep_periods.default >= TAKE_OVER_DAYS
    return SessionListing(
        facts.now,
        tuple(notes),
        _sorted(rows, sort),
        period is not None,
        titles,
        taken_over,
        len(waiting),
    )
