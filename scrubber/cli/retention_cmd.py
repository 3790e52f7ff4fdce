"""`scrub retention`, `scrub sessions`, `scrub pin` / `unpin` / `pins`, `scrub undelete`.

Thin commands over `scrubber.retention`: this module gathers the facts at the edge (discovery,
the policy, pins, Claude Code's settings, the archive store, the clock), hands them to the pure
plan, renders the result, and turns it into an exit code (Contracts): 0 done, 1 kept sessions it
was asked to remove, 2 policy or settings error (retention paused), 3 I/O error, 4 busy.

The archive store sits beside retention in the layers (neither imports the other), so the
adapter that lets retention use it (`StoreArchiveIndex`) lives here, above both.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.activity import append_activity, ping_healthcheck
from scrubber.archive.bundle import collect_bundle, content_digest
from scrubber.archive.leftovers import remove_leftovers
from scrubber.archive.store import archives_of, list_archives, sidecar_path, verify_archive
from scrubber.cli import common
from scrubber.cli.common import PolicyOption, human_size
from scrubber.errors import ConfigError, ExitCode, ScrubberError, UsageError
from scrubber.policy.load import LoadedPolicy
from scrubber.policy.model import Pins, Policy
from scrubber.retention import pins as pin_store
from scrubber.retention.apply import (
    ApplyReport,
    ArchiveCheck,
    ArchiveIndex,
    BundleSession,
    Outcome,
    find_in_trash,
    list_trash,
    retention_lock,
    undelete,
)
from scrubber.retention.apply import apply_plan as run_plan
from scrubber.retention.plan import (
    Action,
    ArchiveFacts,
    Decision,
    Forecast,
    Periods,
    RetentionPlan,
    RetentionRules,
    SessionKey,
    forecast,
    needs_archive_status,
    plan_retention,
)
from scrubber.retention.rules import ArchiveStatus, Reason, Subject, check_policy
from scrubber.retention.settings import MANAGED_SETTINGS, effective_cleanup_periods
from scrubber.transcript.sessions import Discovery, SessionInfo, discover, find_session

# Tests (and unusual installs) point this at another managed-settings file.
ENV_MANAGED_SETTINGS = "SCRUB_CLAUDE_MANAGED_SETTINGS"
_TITLE_WIDTH = 40


def _dumps(body: object) -> str:
    """Indented JSON. orjson when present: the stdlib's indenting encoder is pure Python and
    takes seconds on 20,000 sessions."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib still works
        return json.dumps(body, indent=2, ensure_ascii=False)
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode()


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class SortOrder(StrEnum):
    urgency = "urgency"
    recent = "recent"
    size = "size"


# --- the archive store, as retention sees it ----------------------------------------------------


class StoreArchiveIndex:
    """`ArchiveIndex` over `scrubber.archive.store` and `scrubber.usecases.archive`."""

    def __init__(self, policy: Policy, home: Path, now: datetime) -> None:
        self._policy = policy
        self._home = home
        self._now = now
        self.root = policy.archive.destination_in(home)

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
        # Contracts: the newest archive must match the bundle as it is now.
        info = _as_session_info(session)
        contents = collect_bundle(info.config_dir, info.bundle_paths())
        same = (
            entry.sidecar.content_sha256 == content_digest(contents.files)
            and entry.last_timestamp == session.last_timestamp
        )
        return ArchiveCheck(ArchiveStatus.VERIFIED if same else ArchiveStatus.STALE, ref)

    def archive(self, session: BundleSession) -> ArchiveCheck:
        from scrubber.usecases.archive import archive_sessions, resolve_encryption

        encryption = resolve_encryption(self._policy, encrypt=True)
        (outcome,) = archive_sessions(
            [_as_session_info(session)],
            policy=self._policy,
            home=self._home,
            encryption=encryption,
            now=self._now,
        )
        if outcome.error is not None:
            raise outcome.error
        return self.newest(session)

    def verify(self, ref: str) -> bool:
        try:
            verify_archive(Path(ref))
        except (ScrubberError, OSError):
            return False
        return True

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


def _as_session_info(session: BundleSession) -> SessionInfo:
    if not isinstance(session, SessionInfo):
        raise TypeError("the archive store needs a discovered session")
    return session


# --- gathering the facts --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Facts:
    config: Path
    home: Path
    loaded: LoadedPolicy
    pins: Pins
    discovery: Discovery
    now: datetime


@dataclass(frozen=True, slots=True)
class _Period:
    periods: Periods
    source: str  # for humans and the log
    overrides: int = 0  # projects whose own settings set another period


def _gather(policy_path: Path | None) -> _Facts:
    config = common.config_dir()
    if not config.is_dir():
        raise UsageError(
            f"no Claude Code config directory at {config}",
            "set CLAUDE_CONFIG_DIR to the folder that holds projects/",
        )
    home = common.scrub_home()
    loaded = common.policy(policy_path)
    pins = pin_store.effective_pins(loaded.policy.pins, home)
    return _Facts(config, home, loaded, pins, discover(config), datetime.now(UTC))


def _managed_settings() -> Path:
    configured = common.env().get(ENV_MANAGED_SETTINGS, "")
    return Path(configured) if configured else MANAGED_SETTINGS


def _claude_periods(facts: _Facts) -> tuple[Periods, str, int]:
    """Claude Code's effective cleanupPeriodDays. Raises ConfigError (pause) when unreadable."""
    cwds = [s.cwd for s in facts.discovery.sessions]
    found = effective_cleanup_periods(facts.config, cwds, managed=_managed_settings())
    where = (
        f"Claude Code's cleanupPeriodDays in {found.default.source}"
        if found.default.source is not None
        else "Claude Code's default cleanupPeriodDays"
    )
    return found.periods(), where, len(found.by_cwd)


def _retention_period(facts: _Facts, days: int | None) -> _Period:
    if days is not None:
        if days < 1:
            raise UsageError(
                f"--days {days}: the minimum is 1",
                "Claude Code rejects cleanupPeriodDays 0 too; give a whole number of days >= 1",
            )
        return _Period(Periods(days), "--days")
    configured = facts.loaded.policy.retention.days
    if configured is not None:
        return _Period(Periods(configured), f"retention.days in {facts.loaded.describe()}")
    periods, where, overrides = _claude_periods(facts)
    return _Period(periods, where, overrides)


def _archive_index(facts: _Facts) -> ArchiveIndex:
    return StoreArchiveIndex(facts.loaded.policy, facts.home, facts.now)


def _rules(facts: _Facts, period: _Period, index: ArchiveIndex, *, force: bool) -> RetentionRules:
    retention = facts.loaded.policy.retention
    longest = max([period.periods.default, *period.periods.by_cwd.values()])
    check_policy(retention, longest)
    return RetentionRules.from_policy(
        retention, facts.pins, period.periods, can_archive=index.can_archive, force=force
    )


def _sessions_by_key(discovery: Discovery) -> dict[SessionKey, SessionInfo]:
    return {SessionKey(s.project, s.id): s for s in discovery.sessions}


def _plan(
    facts: _Facts, rules: RetentionRules, index: ArchiveIndex
) -> tuple[RetentionPlan, dict[SessionKey, SessionInfo]]:
    sessions = _sessions_by_key(facts.discovery)
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


# --- rendering ------------------------------------------------------------------------------------


def _span(delta: timedelta) -> str:
    seconds = abs(delta.total_seconds())
    if seconds >= 86400 * 2:
        return f"{int(seconds // 86400)} days"
    if seconds >= 7200:
        return f"{int(seconds // 3600)} hours"
    if seconds >= 120:
        return f"{int(seconds // 60)} minutes"
    return "a minute"


def _ago(moment: datetime, now: datetime) -> str:
    return f"{_span(now - moment)} ago" if now - moment >= timedelta(minutes=1) else "just now"


def _until(moment: datetime | None, now: datetime, *, past: str) -> str:
    if moment is None:
        return "never"
    if moment <= now:
        return past
    return f"in {_span(moment - now)}"


class _Titles:
    """Titles pass through the secret scanner before they are shown (Contracts), and lose any
    control characters (a title is text an attacker may have put in a transcript)."""

    def __init__(self, policy: Policy, home: Path) -> None:
        self._policy = policy
        self._home = home
        self._redact: Callable[[str], str] | None = None

    def show(self, title: str | None, width: int | None = _TITLE_WIDTH) -> str:
        if not title:
            return ""
        if self._redact is None:
            from scrubber.pipeline import build_scanner

            self._redact = build_scanner(self._policy, self._home).redact_text
        text = self._redact(title)
        text = "".join(c if c.isprintable() else " " for c in text)
        if width is not None and len(text) > width:
            text = text[: width - 1] + "…"
        return text


_REASON_TEXT = {
    Reason.PINNED: "pinned",
    Reason.PIN_UNKNOWN: "pin status unknown (fields not in clear)",
    Reason.UNREADABLE: "unreadable: age unknown",
    Reason.ACTIVE: "possibly active (written recently)",
    Reason.TOO_YOUNG: "too young",
    Reason.NEWEST_IN_PROJECT: "newest in its project",
    Reason.NO_VERIFIED_ARCHIVE: "no verified archive",
    Reason.OVER_CAP: "over the per-run cap (--force lifts it)",
    Reason.IN_GRACE: "in its grace period",
    Reason.PROTECTS_SESSION: "newest archive of a session still here",
    Reason.NOT_EXPIRED: "not expired",
    Reason.FAILED: "failed",
    Reason.EXPIRED: "expired",
    Reason.ARCHIVED: "archived and verified",
}


def _why(decision: Decision, now: datetime) -> str:
    text = _REASON_TEXT[decision.reason]
    if decision.reason is Reason.TOO_YOUNG:
        text += f" (due {_until(decision.due_at, now, past='now')})"
    elif decision.reason is Reason.EXPIRED:
        text += f" (idle {_span(now - decision.last_activity)}, period {decision.days} days)"
    return text


def _session_json(
    decision: Decision, info: SessionInfo | None, titles: _Titles, outcome: Outcome | None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "session_id": decision.key.session_id,
        "project": decision.key.project,
        "title": titles.show(info.title if info else None, None),
        "action": str(decision.action),
        "reason": str(decision.reason),
        "last_activity": decision.last_activity.isoformat(),
        "due_at": decision.due_at.isoformat(),
        "days": decision.days,
        "size": decision.size,
        "pinned": decision.pinned,
        "archive": str(decision.archive),
    }
    if outcome is not None:
        item["done"] = str(outcome.done)
        item["outcome_reason"] = str(outcome.reason)
        if outcome.detail:
            item["detail"] = outcome.detail
    return item


def _exit_code(plan: RetentionPlan, report: ApplyReport | None) -> ExitCode:
    if report is not None:
        if report.errors:
            return ExitCode.RUNTIME
        warned = any(o.warning or o.reason is Reason.FAILED for o in report.all) or any(
            d.warning for d in plan.sessions
        )
        return ExitCode.FINDINGS if warned else ExitCode.OK
    return ExitCode.FINDINGS if plan.warnings else ExitCode.OK


def _render_text(
    plan: RetentionPlan,
    report: ApplyReport | None,
    sessions: Mapping[SessionKey, SessionInfo],
    titles: _Titles,
    period: _Period,
) -> str:
    now = plan.now
    outcomes = {o.subject: o for o in report.sessions} if report else {}
    lines = [
        ("retention: applied" if report else "retention: dry run, nothing changed"),
        f"period: {period.periods.default} days ({period.source})"
        + (f"; {period.overrides} project(s) set their own" if period.overrides else ""),
        "",
        f"{'ACTION':<19}{'WHY':<45} {'LAST ACTIVITY':<17}{'SIZE':>9}  SESSION",
    ]
    for decision in plan.sessions:
        info = sessions.get(decision.key)
        outcome = outcomes.get(str(decision.key))
        action = str(decision.action)
        why = _why(decision, now)
        if outcome is not None and decision.removes:
            if outcome.done is Action.KEEP:
                action = "kept"
                why = _REASON_TEXT[outcome.reason] + (
                    f": {outcome.detail}" if outcome.detail else ""
                )
            else:
                action = (
                    "archived, trashed" if outcome.done is Action.ARCHIVE_THEN_TRASH else "trashed"
                )
        title = titles.show(info.title if info else None)
        lines.append(
            f"{action:<19}{why:<45} {_ago(decision.last_activity, now):<17}"
            f"{human_size(decision.size):>9}  {decision.key}" + (f"  {title}" if title else "")
        )
    if plan.trash:
        lines += ["", "trash:"]
        trash_outcomes = {o.subject: o for o in report.trash} if report else {}
        for item in plan.trash:
            outcome = trash_outcomes.get(item.session_id)
            if item.action is Action.PURGE:
                state = "purge (grace period over)"
                if outcome is not None:
                    state = (
                        "purged"
                        if outcome.done is Action.PURGE
                        else f"kept: {_REASON_TEXT[outcome.reason]}"
                        + (f": {outcome.detail}" if outcome.detail else "")
                    )
            else:
                state = f"keep: {_REASON_TEXT[item.reason]}"
                if item.reason is Reason.IN_GRACE:
                    state += f", purge {_until(item.purge_at, now, past='next run')}"
            lines.append(
                f"  {item.project}/{item.session_id}  trashed {_ago(item.trashed_at, now)}: {state}"
            )
    if report is not None:
        for outcome in report.trash:
            if outcome.detail and outcome.planned is Action.TRASH:
                lines.append(f"  {outcome.subject}: {outcome.detail}")
    purges = plan.archive_purges
    if purges:
        lines += ["", "archives:"]
        archive_outcomes = {o.subject: o for o in report.archives} if report else {}
        for purge in purges:
            outcome = archive_outcomes.get(purge.ref)
            state = "purge (expired)"
            if outcome is not None:
                state = (
                    "purged"
                    if outcome.done is Action.PURGE
                    else f"kept: {_REASON_TEXT[outcome.reason]}"
                )
            lines.append(f"  {purge.ref}: {state}")
    unknown = [a for a in plan.archives if a.reason is Reason.PIN_UNKNOWN]
    if unknown:
        lines += [
            "",
            f"archives: {len(unknown)} past retention.archive_days kept because their pin status "
            "cannot be told (title, tags and cwd are encrypted and the policy pins by name, tag "
            "or path): pin by session id, or list those fields in "
            "archive.clear_manifest_fields",
        ]
    counts = _counts(plan, report)
    lines += [
        "",
        f"{len(plan.sessions)} sessions: {counts['kept']} kept, {counts['trash']} to trash "
        f"({counts['archive_then_trash']} archived first); trash: {counts['trash_purge']} to purge; "
        f"archives: {counts['archive_purge']} to purge"
        if report is None
        else f"{len(plan.sessions)} sessions: {counts['trashed']} trashed ({counts['archived']} "
        f"archived first), {counts['kept']} kept; trash: {counts['trash_purged']} purged; "
        f"archives: {counts['archive_purged']} purged",
    ]
    warned = plan.warnings
    if warned:
        lines.append(
            f"warning: {len(warned)} session(s) due for removal are kept "
            "(no verified archive, over the cap, or unreadable): see above"
        )
    if report is None:
        lines.append("dry run: nothing was changed; run with --apply to act")
    return "\n".join(lines)


def _counts(plan: RetentionPlan, report: ApplyReport | None) -> dict[str, int]:
    counts = {
        "kept": sum(1 for d in plan.sessions if not d.removes),
        "trash": len(plan.removals),
        "archive_then_trash": sum(
            1 for d in plan.removals if d.action is Action.ARCHIVE_THEN_TRASH
        ),
        "trash_purge": len(plan.trash_purges),
        "archive_purge": len(plan.archive_purges),
        "warnings": len(plan.warnings),
    }
    if report is not None:
        done = [o for o in report.sessions if o.done is not Action.KEEP]
        counts.update(
            trashed=len(done),
            archived=sum(1 for o in done if o.done is Action.ARCHIVE_THEN_TRASH),
            kept=len(report.sessions) - len(done),
            trash_purged=sum(1 for o in report.trash if o.done is Action.PURGE),
            archive_purged=sum(1 for o in report.archives if o.done is Action.PURGE),
            errors=len(report.errors),
        )
    return counts


def _render_json(
    plan: RetentionPlan,
    report: ApplyReport | None,
    sessions: Mapping[SessionKey, SessionInfo],
    titles: _Titles,
    period: _Period,
    code: ExitCode,
) -> str:
    outcomes = {o.subject: o for o in report.sessions} if report else {}
    trash_outcomes = {o.subject: o for o in report.trash} if report else {}
    archive_outcomes = {o.subject: o for o in report.archives} if report else {}
    body = {
        "mode": "apply" if report else "dry-run",
        "now": plan.now.isoformat(),
        "period": {
            "days": period.periods.default,
            "source": period.source,
            "by_project_settings": period.overrides,
        },
        "sessions": [
            _session_json(d, sessions.get(d.key), titles, outcomes.get(str(d.key)))
            for d in plan.sessions
        ],
        "trash": [
            {
                "session_id": t.session_id,
                "project": t.project,
                "action": str(t.action),
                "reason": str(t.reason),
                "trashed_at": t.trashed_at.isoformat(),
                "purge_at": t.purge_at.isoformat(),
                **(
                    {"done": str(trash_outcomes[t.session_id].done)}
                    if t.session_id in trash_outcomes
                    else {}
                ),
            }
            for t in plan.trash
        ],
        "archives": [
            {
                "archive": a.ref,
                "session_id": a.session_id,
                "action": str(a.action),
                "reason": str(a.reason),
                "expires_at": None if a.expires_at is None else a.expires_at.isoformat(),
                **(
                    {"done": str(archive_outcomes[a.ref].done)} if a.ref in archive_outcomes else {}
                ),
            }
            for a in plan.archives
        ],
        "summary": _counts(plan, report),
        "exit_code": int(code),
    }
    return _dumps(body)


# --- the retention command ----------------------------------------------------------------------


def _log(home: Path, record: dict[str, Any]) -> None:
    try:
        append_activity(home, record)
    except OSError as error:
        sys.stderr.write(f"scrub: could not write the activity log ({error.strerror})\n")


def _run_retention(
    *,
    apply: bool,
    days: int | None,
    policy_path: Path | None,
    output_format: OutputFormat,
    force: bool,
    log: dict[str, Any],
) -> ExitCode:
    facts = _gather(policy_path)
    log["policy"] = facts.loaded.describe()
    for problem in facts.discovery.problems:
        sys.stderr.write(f"scrub: note: {problem.path}: {problem.reason}\n")
    period = _retention_period(facts, days)
    log.update(days=period.periods.default, days_source=period.source)
    index = _archive_index(facts)
    rules = _rules(facts, period, index, force=force)
    titles = _Titles(facts.loaded.policy, facts.home)

    report: ApplyReport | None = None
    if apply:
        with retention_lock(facts.home):
            # What a killed run left while it archived (issue 11); the trash is seen to by
            # run_plan itself.
            remove_leftovers(
                facts.home, archives=facts.loaded.policy.archive.destination_in(facts.home)
            )
            # Planned under the lock: what the plan saw is what this run acts on.
            plan, sessions = _plan(facts, rules, index)
            policy_pins = facts.loaded.policy.pins
            report = run_plan(
                plan,
                sessions,
                config_dir=facts.config,
                home=facts.home,
                index=index,
                pins_now=lambda: pin_store.effective_pins(policy_pins, facts.home),
            )
    else:
        plan, sessions = _plan(facts, rules, index)
    code = _exit_code(plan, report)
    if output_format is OutputFormat.json:
        typer.echo(_render_json(plan, report, sessions, titles, period, code))
    else:
        typer.echo(_render_text(plan, report, sessions, titles, period))
    if report is not None:
        for outcome in report.errors:
            sys.stderr.write(f"scrub: {outcome.subject}: {outcome.detail}\n")
        done = [o for o in report.sessions if o.done is not Action.KEEP]
        log.update(
            trashed=[o.subject for o in done],
            archived=[o.subject for o in done if o.done is Action.ARCHIVE_THEN_TRASH],
            purged_trash=[o.subject for o in report.trash if o.done is Action.PURGE],
            purged_archives=sum(1 for o in report.archives if o.done is Action.PURGE),
            errors=len(report.errors),
        )
    log.update(
        sessions=len(plan.sessions),
        to_remove=len(plan.removals),
        kept_due=len(plan.warnings),
    )
    url = facts.loaded.policy.retention.healthcheck_url
    if apply and url and code in (ExitCode.OK, ExitCode.FINDINGS):
        # A failed run sends no ping: the monitor's missing-ping alert is the signal.
        failure = ping_healthcheck(url)
        log["healthcheck"] = "ok" if failure is None else f"failed: {failure}"
        if failure is not None:
            sys.stderr.write(f"scrub: warning: healthcheck ping failed ({failure})\n")
    return code


def _finish(code: ExitCode) -> None:
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))


def _logged(
    home: Path, event: str, mode: str, body: Callable[[dict[str, Any]], ExitCode]
) -> ExitCode:
    """Run a command and append one line to the activity log whatever happens."""
    started = time.monotonic()
    record: dict[str, Any] = {"time": datetime.now(UTC).isoformat(), "event": event, "mode": mode}
    try:
        code = body(record)
    except ScrubberError as error:
        record.update(exit=int(error.exit_code), error=error.message)
        record["seconds"] = round(time.monotonic() - started, 3)
        _log(home, record)
        raise
    record.update(exit=int(code), seconds=round(time.monotonic() - started, 3))
    _log(home, record)
    return code


FormatOption = Annotated[OutputFormat, typer.Option("--format", help="text or json.")]


def register(app: typer.Typer) -> None:
    @app.command("retention")
    def retention_command(
        apply: Annotated[
            bool, typer.Option("--apply", help="Act. Without it, only show what would happen.")
        ] = False,
        days: Annotated[
            int | None,
            typer.Option(
                "--days",
                help="Remove sessions idle longer than this. Default: retention.days in the "
                "policy, else Claude Code's effective cleanupPeriodDays (30 if unset).",
                show_default=False,
            ),
        ] = None,
        policy_path: PolicyOption = None,
        output_format: FormatOption = OutputFormat.text,
        force: Annotated[
            bool,
            typer.Option("--force", help="Lift the per-run cap (retention.max_deletions_per_run)."),
        ] = False,
    ) -> None:
        """Archive, trash and purge old sessions by policy; a dry run unless --apply.

        Mirrors Claude Code's cleanupPeriodDays with the safety it lacks: pinned sessions are
        never removed; sessions written to in the last hour, and the newest of each project,
        are kept; when the policy requires archives a session goes only after its archive
        verifies; removed sessions wait in $SCRUB_HOME/trash for retention.trash_days
        (`scrub undelete` brings one back); at most retention.max_deletions_per_run go per run.
        A session's age is the newest timestamp inside it (mtime as fallback).

        Exit codes (for monitoring): 0 done; 1 sessions due for removal were kept (no verified
        archive, over the cap, unreadable, a failed step); 2 policy or settings error (a
        Claude Code settings file that cannot be read pauses retention); 3 I/O error; 4
        another run holds the lock. Each run appends a line to $SCRUB_HOME/log/activity.jsonl
        and, with --apply, pings retention.healthcheck_url when it ends with 0 or 1.

        $SCRUB_CLAUDE_MANAGED_SETTINGS names another managed-settings file than
        /etc/claude-code/managed-settings.json.
        """
        home = common.scrub_home()
        code = _logged(
            home,
            "retention",
            "apply" if apply else "dry-run",
            lambda record: _run_retention(
                apply=apply,
                days=days,
                policy_path=policy_path,
                output_format=output_format,
                force=force,
                log=record,
            ),
        )
        _finish(code)

    @app.command("sessions")
    def sessions_command(
        project: Annotated[
            str | None,
            typer.Option("--project", help="Only sessions whose project folder contains this."),
        ] = None,
        output_format: FormatOption = OutputFormat.text,
        sort: Annotated[
            SortOrder,
            typer.Option("--sort", help="urgency (soonest removal first), recent, or size."),
        ] = SortOrder.urgency,
        policy_path: PolicyOption = None,
    ) -> None:
        """List sessions: title, project, last activity, size, secrets, pins, archives, and
        when Claude Code's own sweep and scrubber's retention would each remove them.

        Claude Code's sweep goes by file mtime and ignores pins: a pinned session can still
        be deleted by it (`scrub install --take-over-cleanup` hands the clock to scrubber).
        """
        _sessions(project, output_format, sort, policy_path)

    @app.command("pin")
    def pin_command(
        session: Annotated[
            str, typer.Argument(metavar="SESSION|NAME", help="Id, id prefix or title.")
        ],
        reason: Annotated[str | None, typer.Option("--reason", help="Why it is kept.")] = None,
    ) -> None:
        """Pin a session: retention never removes it (Claude Code's own sweep still can)."""
        _pin(session, reason)

    @app.command("unpin")
    def unpin_command(
        session: Annotated[
            str, typer.Argument(metavar="SESSION|NAME", help="Id, id prefix or name.")
        ],
    ) -> None:
        """Remove a pin made with `scrub pin` (pins in the policy are edited there)."""
        _unpin(session)

    @app.command("pins")
    def pins_command(
        output_format: FormatOption = OutputFormat.text,
        policy_path: PolicyOption = None,
    ) -> None:
        """List pins: those made with `scrub pin` and those in the policy."""
        _list_pins(output_format, policy_path)

    @app.command("undelete")
    def undelete_command(
        session: Annotated[str, typer.Argument(metavar="SESSION", help="Id, id prefix or title.")],
        keep_mtime: Annotated[
            bool,
            typer.Option(
                "--keep-mtime",
                help="Keep the files' old mtimes (Claude Code's sweep may then delete the "
                "session again at its next start).",
            ),
        ] = False,
    ) -> None:
        """Put a session back from scrubber's trash, where Claude Code finds it.

        Refuses, changing nothing, when a file is in the way. The restored files' mtimes
        become now, so Claude Code's sweep gives a full period to resume the session.
        """
        home = common.scrub_home()

        def body(record: dict[str, Any]) -> ExitCode:
            config = common.config_dir()
            with retention_lock(home):
                result = undelete(
                    home, config, session, now=datetime.now(UTC), keep_mtime=keep_mtime
                )
            record.update(
                session=f"{result.project}/{result.session_id}", paths=len(result.restored)
            )
            typer.echo(
                f"restored {result.project}/{result.session_id} ({len(result.restored)} paths)"
                f"{'' if keep_mtime else '; mtimes set to now'}: claude --resume {result.session_id}"
            )
            # Retention ages a session by the timestamps inside it, not by mtime.
            typer.echo(
                "note: its last activity is unchanged, so the next retention run removes it "
                f"again unless it is resumed or pinned (scrub pin {result.session_id})"
            )
            return ExitCode.OK

        _finish(_logged(home, "undelete", "apply", body))


# --- sessions ------------------------------------------------------------------------------------


def _audit_cache(home: Path) -> Mapping[str, Any]:
    """The audit cache in `state/`: {"format": 1, "sessions": {id: {"transcript_size",
    "transcript_mtime_ns", "distinct"}}}. A count is shown only while the transcript is the
    one that was audited (same size and mtime); anything else shows "?"."""
    from scrubber.pipeline import AUDIT_CACHE_NAME

    path = common.scrub_home() / "state" / AUDIT_CACHE_NAME
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict) or value.get("format") != 1:
        return {}
    sessions = value.get("sessions")
    return sessions if isinstance(sessions, dict) else {}


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


def _sessions(
    project: str | None, output_format: OutputFormat, sort: SortOrder, policy_path: Path | None
) -> None:
    facts = _gather(policy_path)
    notes: list[str] = []
    try:
        period = _retention_period(facts, None)
    except ConfigError as error:
        notes.append(f"retention paused: {error.message}")
        period = None
    try:
        claude, _, _ = _claude_periods(facts)
        claude_periods: Periods | None = claude
    except ConfigError as error:
        notes.append(
            f"Claude Code's sweep is skipped while its settings cannot be read: {error.message}"
        )
        claude_periods = None
    index = _archive_index(facts)
    chosen = [
        s
        for s in facts.discovery.sessions
        if project is None or project in s.project or project == (s.cwd or "")
    ]
    if project is not None and not chosen:
        raise UsageError(f"no session matches --project {project}")
    rules = RetentionRules.from_policy(
        facts.loaded.policy.retention,
        facts.pins,
        period.periods if period else Periods(1),
        can_archive=index.can_archive,
    )
    # Newest-per-project counts the whole project, not only the sessions shown.
    forecasts = {
        f.key: f for f in forecast(facts.discovery.sessions, rules, facts.now, claude_periods)
    }
    cache = _audit_cache(facts.home)
    titles = _Titles(facts.loaded.policy, facts.home)
    rows = []
    for info in chosen:
        key = SessionKey(info.project, info.id)
        item = forecasts[key]
        try:
            archived = index.newest(info).status
        except (ScrubberError, OSError):
            archived = ArchiveStatus.UNVERIFIED
        rows.append((info, item, archived, _secrets(cache, info)))
    if sort is SortOrder.urgency:
        rows.sort(key=lambda r: (r[1].urgency, r[1].key))
    elif sort is SortOrder.recent:
        rows.sort(key=lambda r: (r[1].last_activity, r[1].key), reverse=True)
    else:
        rows.sort(key=lambda r: (r[1].size, r[1].key), reverse=True)
    now = facts.now
    if output_format is OutputFormat.json:
        body = {
            "now": now.isoformat(),
            "notes": notes,
            "sessions": [
                {
                    "session_id": info.id,
                    "project": info.project,
                    "title": titles.show(info.title, None),
                    "last_activity": item.last_activity.isoformat(),
                    "size": info.size,
                    "secrets": secrets,
                    "pinned": item.pinned,
                    "archived": str(archived),
                    "claude_sweep_at": None
                    if item.claude_sweep_at is None
                    else item.claude_sweep_at.isoformat(),
                    "retention_at": None
                    if period is None or item.retention_at is None
                    else item.retention_at.isoformat(),
                    "retention_note": None
                    if item.retention_note is None
                    else str(item.retention_note),
                    "claude_first": item.claude_first,
                }
                for info, item, archived, secrets in rows
            ],
        }
        typer.echo(_dumps(body))
        return
    for note in notes:
        sys.stderr.write(f"scrub: {note}\n")
    header = (
        f"{'CLAUDE SWEEP':<22}{'RETENTION':<26}{'LAST ACTIVITY':<16}{'SIZE':>9} {'SECRETS':>7} "
        f"{'PIN':<4}{'ARCHIVED':<11}SESSION  TITLE"
    )
    lines = [header]
    for info, item, archived, secrets in rows:
        sweep = (
            "paused"
            if item.claude_sweep_at is None
            else _until(item.claude_sweep_at, now, past="next Claude start")
        )
        row = (
            f"{sweep:<22}{_retention_when(item, period is not None, now):<26}"
            f"{_ago(item.last_activity, now):<16}{human_size(info.size):>9} "
            f"{'?' if secrets is None else str(secrets):>7} {'yes' if item.pinned else '':<4}"
            f"{_archived_text(archived):<11}{info.project}/{info.id}  {titles.show(info.title)}"
        )
        lines.append(row.rstrip())
    at_risk = sum(1 for _, item, _, _ in rows if item.claude_first)
    if at_risk:
        lines.append(
            f"\n{at_risk} session(s) would be deleted by Claude Code's own sweep first (no trash, "
            "no archive, pins ignored): `scrub install --take-over-cleanup` makes scrubber's "
            "policy the one clock"
        )
    typer.echo("\n".join(lines))


def _retention_when(item: Forecast, known: bool, now: datetime) -> str:
    if not known:
        return "paused"
    if item.retention_at is None:
        return {
            Reason.PINNED: "never (pinned)",
            Reason.UNREADABLE: "never (unreadable)",
            Reason.NEWEST_IN_PROJECT: "kept (newest)",
        }.get(item.retention_note or Reason.PINNED, "never")
    return _until(item.retention_at, now, past="next run")


def _archived_text(status: ArchiveStatus) -> str:
    return {
        ArchiveStatus.VERIFIED: "verified",
        ArchiveStatus.STALE: "older",
        ArchiveStatus.UNVERIFIED: "BROKEN",
        ArchiveStatus.NONE: "no",
    }[status]


# --- pins ---------------------------------------------------------------------------------------


def _pin(query: str, reason: str | None) -> None:
    config = common.config_dir()
    home = common.scrub_home()
    loaded = common.policy(None)
    titles = _Titles(loaded.policy, home)
    discovery = discover(config) if config.is_dir() else None
    record: pin_store.PinRecord
    try:
        if discovery is None:
            raise UsageError("no Claude Code config directory")
        info = find_session(config, query, discovery=discovery)
        record = pin_store.PinRecord(info.id, info.project, info.custom_title, reason)
        shown = f"{info.project}/{info.id}"
        title = info.title
    except UsageError as error:
        if discovery is not None and not error.message.startswith("no session matches"):
            raise  # ambiguous: the user must say which
        # Not here: perhaps in the trash, where a pin stops it from being purged.
        try:
            _slot, manifest = find_in_trash(home, query)
        except UsageError:
            raise error from None
        record = pin_store.PinRecord(
            manifest.session_id, manifest.project, manifest.custom_title, reason
        )
        shown = f"{manifest.project}/{manifest.session_id} (in the trash)"
        title = manifest.custom_title
    added = pin_store.add_pin(home, record)
    label = titles.show(title)
    typer.echo(
        f"{'pinned' if added else 'already pinned'}: {shown}" + (f"  {label}" if label else "")
    )


def _unpin(query: str) -> None:
    home = common.scrub_home()
    config = common.config_dir()
    loaded = common.policy(None)
    records = pin_store.read_pins(home)
    matches = pin_store.match_pins(records, query)
    if not matches and config.is_dir():
        with contextlib.suppress(UsageError):
            info = find_session(config, query)
            matches = tuple(r for r in records if r.session_id == info.id)
    if not matches:
        policy_pins = loaded.policy.pins
        if query in policy_pins.sessions or query in policy_pins.names:
            raise UsageError(
                "that session is pinned by the policy, not by `scrub pin`",
                f"edit the pins section of {loaded.describe()}",
            )
        raise UsageError("no pin matches that name", "`scrub pins` lists the pins")
    ids = frozenset(r.session_id for r in matches)
    if len(ids) > 1:
        raise UsageError(
            f"{len(ids)} pins match", "name one by its full id: " + ", ".join(sorted(ids)[:5])
        )
    removed = pin_store.remove_pins(home, ids)
    for record in removed:
        typer.echo(f"unpinned: {record.project or '?'}/{record.session_id}")


def _list_pins(output_format: OutputFormat, policy_path: Path | None) -> None:
    home = common.scrub_home()
    loaded = common.policy(policy_path)
    titles = _Titles(loaded.policy, home)
    records = pin_store.read_pins(home)
    policy_pins = loaded.policy.pins
    if output_format is OutputFormat.json:
        body = {
            "cli": [
                {**r.to_json(), "name": titles.show(r.name, None) or None, "reason": r.reason}
                for r in records
            ],
            "policy": {
                "source": loaded.describe(),
                "sessions": list(policy_pins.sessions),
                "names": [titles.show(n, None) for n in policy_pins.names],
                "tags": list(policy_pins.tags),
                "projects": list(policy_pins.projects),
            },
        }
        typer.echo(_dumps(body))
        return
    lines = [f"pins made with `scrub pin` ({pin_store.pins_file(home)}):"]
    if not records:
        lines.append("  none")
    for record in records:
        when = record.pinned_at.date().isoformat() if record.pinned_at else "?"
        name = titles.show(record.name)
        reason = titles.show(record.reason, 60)
        lines.append(
            f"  {record.project or '?'}/{record.session_id}  pinned {when}"
            + (f"  {name}" if name else "")
            + (f"  ({reason})" if reason else "")
        )
    lines.append(f"pins in the policy ({loaded.describe()}):")
    any_policy = False
    for label, values in (
        ("session", policy_pins.sessions),
        ("name", tuple(titles.show(n) for n in policy_pins.names)),
        ("tag", policy_pins.tags),
        ("project", policy_pins.projects),
    ):
        for value in values:
            any_policy = True
            lines.append(f"  {label}: {value}")
    if not any_policy:
        lines.append("  none")
    typer.echo("\n".join(lines))
