"""The retention use case: `scrub retention` (plan, and with --apply carry out, the removal of
old sessions) and `scrub undelete`, each logged as one line of the activity log.

The facts are gathered at the edge (discovery, the policy, pins, Claude Code's settings, the
archive store, the clock), handed to the pure plan (`retention.plan`), carried out under the
retention lock (`retention.apply`), and returned as a `RetentionRun` the CLI renders. The exit
code follows the Contracts: 0 done, 1 kept sessions it was asked to remove, 2 policy or settings
error (retention paused), 3 I/O error, 4 busy.

Notes and warnings go to `warn` as they happen (a discovery problem is said before a settings
file that cannot be read pauses the run), and the activity record given as `log` is filled as
the run goes, so that a run that fails half-way still logs how far it got.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from scrubber import paths
from scrubber.activity import append_activity, ping_healthcheck
from scrubber.archive.leftovers import remove_leftovers
from scrubber.errors import ExitCode, ScrubberError, UsageError
from scrubber.policy.load import LoadedPolicy, load_policy
from scrubber.policy.model import Pins
from scrubber.retention import pins as pin_store
from scrubber.retention.apply import ApplyReport, ArchiveIndex, apply_plan, retention_lock
from scrubber.retention.plan import (
    Action,
    Periods,
    RetentionPlan,
    RetentionRules,
    SessionKey,
    needs_archive_status,
    plan_retention,
)
from scrubber.retention.rules import Reason, check_policy
from scrubber.retention.settings import MANAGED_SETTINGS, effective_cleanup_periods
from scrubber.retention.trash import UndeleteResult, list_trash
from scrubber.retention.trash_versions import describe_versions, undelete
from scrubber.transcript.sessions import Discovery, SessionInfo, discover
from scrubber.usecases.archive_index import StoreArchiveIndex
from scrubber.usecases.shown_names import FolderNames, Titles, folder_names

# Tests (and unusual installs) point this at another managed-settings file.
ENV_MANAGED_SETTINGS = "SCRUB_CLAUDE_MANAGED_SETTINGS"

Warn = Callable[[str], None]  # a note for the user, said at once (the CLI: stderr)
_Result = TypeVar("_Result")


# --- gathering the facts --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Facts:
    """What a retention or sessions command reads before it decides anything."""

    config: Path
    home: Path
    loaded: LoadedPolicy
    pins: Pins
    discovery: Discovery
    now: datetime
    env: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Period:
    periods: Periods
    source: str  # for humans and the log
    overrides: int = 0  # projects whose own settings set another period


def gather_facts(env: Mapping[str, str], policy_path: Path | None, now: datetime) -> Facts:
    config = paths.config_dir(env)
    paths.require_config_dir(config)
    home = paths.scrub_home(env)
    loaded = load_policy(policy_path, env)
    pins = pin_store.effective_pins(loaded.policy.pins, home)
    return Facts(config, home, loaded, pins, discover(config), now, env)


def _managed_settings(env: Mapping[str, str]) -> Path:
    configured = env.get(ENV_MANAGED_SETTINGS, "")
    return Path(configured) if configured else MANAGED_SETTINGS


def claude_periods(facts: Facts) -> tuple[Periods, str, int]:
    """Claude Code's effective cleanupPeriodDays. Raises ConfigError (pause) when unreadable."""
    cwds = [s.cwd for s in facts.discovery.sessions]
    found = effective_cleanup_periods(facts.config, cwds, managed=_managed_settings(facts.env))
    where = (
        f"Claude Code's cleanupPeriodDays in {found.default.source}"
        if found.default.source is not None
        else "Claude Code's default cleanupPeriodDays"
    )
    return found.periods(), where, len(found.by_cwd)


def retention_period(facts: Facts, days: int | None) -> Period:
    if days is not None:
        if days < 1:
            raise UsageError(
                f"--days {days}: the minimum is 1",
                "Claude Code rejects cleanupPeriodDays 0 too; give a whole number of days >= 1",
            )
        return Period(Periods(days), "--days")
    configured = facts.loaded.policy.retention.days
    if configured is not None:
        return Period(Periods(configured), f"retention.days in {facts.loaded.describe()}")
    periods, where, overrides = claude_periods(facts)
    return Period(periods, where, overrides)


def archive_index(facts: Facts) -> StoreArchiveIndex:
    if facts.loaded.policy.archive.s3 is not None:
        # Archives in a bucket count only once the store confirmed them (Contracts).
        from scrubber.usecases.archive_index_s3 import BucketArchiveIndex

        return BucketArchiveIndex(facts.loaded.policy, facts.home, facts.now, facts.env)
    return StoreArchiveIndex(facts.loaded.policy, facts.home, facts.now)


def _rules(facts: Facts, period: Period, index: ArchiveIndex, *, force: bool) -> RetentionRules:
    retention = facts.loaded.policy.retention
    longest = max([period.periods.default, *period.periods.by_cwd.values()])
    check_policy(retention, longest)
    return RetentionRules.from_policy(
        retention, facts.pins, period.periods, can_archive=index.can_archive, force=force
    )


def _plan(
    facts: Facts, rules: RetentionRules, index: ArchiveIndex
) -> tuple[RetentionPlan, dict[SessionKey, SessionInfo]]:
    sessions = {SessionKey(s.project, s.id): s for s in facts.discovery.sessions}
    wanted = needs_archive_status(sessions.values(), rules, facts.now)
    statuses = {key: index.newest(sessions[key]).status for key in sorted(wanted)}
    archive_files = index.files() if rules.archive_days is not None else ()
    plan = plan_retention(
        sessions.values(),
        rules,
        facts.now,
        archives=statuses,
        trashed=list_trash(facts.home).trashed(),
        archive_files=archive_files,
    )
    return plan, sessions


# --- the retention run ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetentionRun:
    """What a retention run planned and (with --apply) did, for the CLI to render."""

    plan: RetentionPlan
    report: ApplyReport | None  # None for a dry run
    sessions: Mapping[SessionKey, SessionInfo]
    titles: Titles
    period: Period
    exit_code: ExitCode
    folders: FolderNames  # project folders as every report shows them (display only)


def exit_code_of(plan: RetentionPlan, report: ApplyReport | None) -> ExitCode:
    if report is not None:
        if report.errors:
            return ExitCode.RUNTIME
        warned = any(o.warning or o.reason is Reason.FAILED for o in report.all) or any(
            d.warning for d in plan.sessions
        )
        return ExitCode.FINDINGS if warned else ExitCode.OK
    return ExitCode.FINDINGS if plan.warnings else ExitCode.OK


def _apply(
    facts: Facts, rules: RetentionRules, index: ArchiveIndex
) -> tuple[RetentionPlan, dict[SessionKey, SessionInfo], ApplyReport]:
    with retention_lock(facts.home):
        # What a killed run left while it archived (issue 11); the trash is seen to by
        # apply_plan itself.
        remove_leftovers(
            facts.home, archives=facts.loaded.policy.archive.destination_in(facts.home)
        )
        # Planned under the lock: what the plan saw is what this run acts on.
        plan, sessions = _plan(facts, rules, index)
        policy_pins = facts.loaded.policy.pins
        report = apply_plan(
            plan,
            sessions,
            config_dir=facts.config,
            home=facts.home,
            index=index,
            pins_now=lambda: pin_store.effective_pins(policy_pins, facts.home),
        )
    return plan, sessions, report


def run_retention(
    env: Mapping[str, str],
    *,
    apply: bool,
    days: int | None,
    policy_path: Path | None,
    force: bool,
    now: datetime,
    warn: Warn,
) -> RetentionRun:
    """Plan retention, and carry the plan out when `apply`; one activity-log line either way
    (none for a config dir Claude Code never used: the log would go into it)."""
    paths.require_config_dir(paths.config_dir(env))
    return _logged(
        paths.scrub_home(env),
        "retention",
        "apply" if apply else "dry-run",
        lambda log: _run(env, apply, days, policy_path, force, now, log, warn),
        exit_code=lambda run: run.exit_code,
        warn=warn,
    )


def _run(
    env: Mapping[str, str],
    apply: bool,
    days: int | None,
    policy_path: Path | None,
    force: bool,
    now: datetime,
    log: dict[str, Any],
    warn: Warn,
) -> RetentionRun:
    facts = gather_facts(env, policy_path, now)
    log["policy"] = facts.loaded.describe()
    folders = folder_names(facts.loaded.policy, facts.home, env, facts.discovery.sessions)
    for problem in facts.discovery.problems:
        warn(folders.text(f"note: {problem.path}: {problem.reason}"))
    period = retention_period(facts, days)
    log.update(days=period.periods.default, days_source=period.source)
    index = archive_index(facts)
    rules = _rules(facts, period, index, force=force)
    titles = Titles(facts.loaded.policy, facts.home)
    report: ApplyReport | None = None
    if apply:
        plan, sessions, report = _apply(facts, rules, index)
    else:
        plan, sessions = _plan(facts, rules, index)
    code = exit_code_of(plan, report)
    run = RetentionRun(plan, report, sessions, titles, period, code, folders)
    if report is not None:
        for outcome in report.errors:
            warn(folders.text(f"{outcome.subject}: {outcome.detail}"))
        done = [o for o in report.sessions if o.done is not Action.KEEP]
        # The log names folders as every report shows them: a folder name can hold a token.
        log.update(
            trashed=[folders.text(o.subject) for o in done],
            archived=[folders.text(o.subject) for o in done if o.done is Action.ARCHIVE_THEN_TRASH],
            purged_trash=[folders.text(o.subject) for o in report.trash if o.done is Action.PURGE],
            purged_archives=sum(1 for o in report.archives if o.done is Action.PURGE),
            errors=len(report.errors),
        )
    log.update(
        sessions=len(plan.sessions), to_remove=len(plan.removals), kept_due=len(plan.warnings)
    )
    url = facts.loaded.policy.retention.healthcheck_url
    if apply and url and code in (ExitCode.OK, ExitCode.FINDINGS):
        # A failed run sends no ping: the monitor's missing-ping alert is the signal.
        failure = ping_healthcheck(url)
        log["healthcheck"] = "ok" if failure is None else f"failed: {failure}"
        if failure is not None:
            warn(f"warning: healthcheck ping failed ({failure})")
    return run


@dataclass(frozen=True, slots=True)
class Undeleted:
    """A session put back: what came back, and its project folder as shown."""

    result: UndeleteResult
    project_shown: str

    @property
    def session_id(self) -> str:
        return self.result.session_id


def undelete_session(
    env: Mapping[str, str],
    query: str,
    *,
    keep_mtime: bool,
    now: datetime,
    warn: Warn,
    version: int | None = None,
) -> Undeleted:
    """Put a session back from the trash (its newest version, or `version`), under the
    retention lock; one activity-log line. The versions left in the trash are warned about."""
    home = paths.scrub_home(env)

    def body(log: dict[str, Any]) -> Undeleted:
        config = paths.config_dir(env)
        policy = load_policy(None, env).policy
        # Read before the session leaves the trash: its manifest holds the cwd.
        folders = folder_names(policy, home, env)
        with retention_lock(home):
            try:
                result = undelete(
                    home, config, query, now=now, keep_mtime=keep_mtime, version=version
                )
            except ScrubberError as error:
                # The path of what is in the way names the project folder, which is named
                # after the cwd and can hold a token: said as every report shows it.
                error.message = folders.text(error.message)
                error.args = (error.message,)
                raise
        shown = folders.project(result.project, result.session_id) or "?"
        log.update(session=f"{shown}/{result.session_id}", paths=len(result.restored))
        if result.remaining:
            _warn_remaining(result, warn)
        return Undeleted(result, shown)

    return _logged(home, "undelete", "apply", body, exit_code=lambda _: ExitCode.OK, warn=warn)


def _warn_remaining(result: UndeleteResult, warn: Warn) -> None:
    """Older versions stay in the trash, each with its own grace period: say so, and how."""
    remaining = result.remaining
    count = len(remaining)
    age = "older" if all(number < result.version for number, _at in remaining) else "other"
    single = "an older version" if age == "older" else "another version"
    what = single if count == 1 else f"{count} {age} versions"
    warn(
        f"warning: {what} of this session {'remains' if count == 1 else 'remain'} in the trash "
        f"({'version' if count == 1 else 'versions'} {describe_versions(remaining)}); to bring "
        f"{'it' if count == 1 else 'one'} back instead, move this one aside, then run: "
        f"scrub undelete {result.session_id} --version {remaining[0][0]}"
    )


# --- the activity log -------------------------------------------------------------------------


def _log(home: Path, record: dict[str, Any], warn: Warn) -> None:
    try:
        append_activity(home, record)
    except OSError as error:
        warn(f"could not write the activity log ({error.strerror})")


def _logged(
    home: Path,
    event: str,
    mode: str,
    body: Callable[[dict[str, Any]], _Result],
    *,
    exit_code: Callable[[_Result], ExitCode],
    warn: Warn,
) -> _Result:
    """Run a command and append one line to the activity log whatever happens."""
    started = time.monotonic()
    record: dict[str, Any] = {"time": datetime.now(UTC).isoformat(), "event": event, "mode": mode}
    try:
        result = body(record)
    except ScrubberError as error:
        record.update(exit=int(error.exit_code), error=error.message)
        record["seconds"] = round(time.monotonic() - started, 3)
        _log(home, record, warn)
        raise
    record.update(exit=int(exit_code(result)), seconds=round(time.monotonic() - started, 3))
    _log(home, record, warn)
    return result
