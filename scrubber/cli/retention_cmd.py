"""`scrub retention`: parses, calls `usecases.retention.run_retention`, renders the plan and
what was done (text or JSON), and exits with the run's code (Contracts): 0 done, 1 kept
sessions it was asked to remove, 2 policy or settings error (retention paused), 3 I/O error,
4 busy.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption, human_size, plural
from scrubber.cli.retention_text import (
    FormatOption,
    OutputFormat,
    ago,
    dumps,
    finish,
    span,
    until,
    warn,
)
from scrubber.cli.terminal_text import terminal_lines
from scrubber.retention.apply import ApplyReport, Outcome
from scrubber.retention.plan import Action, Decision, RetentionPlan
from scrubber.retention.rules import Reason
from scrubber.transcript.sessions import SessionInfo
from scrubber.usecases.retention import RetentionRun, run_retention
from scrubber.usecases.shown_names import FolderNames, Titles


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
        """Archive, trash and purge old sessions (dry run unless --apply).

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

        Examples:

          scrub retention                     # the plan: what would go, and why

          scrub retention --apply

          scrub retention --days 30 --format json
        """
        run = run_retention(
            common.env(),
            apply=apply,
            days=days,
            policy_path=policy_path,
            force=force,
            now=datetime.now(UTC),
            warn=warn,
        )
        if output_format is OutputFormat.json:
            typer.echo(_render_json(run))
        else:
            typer.echo(_render_text(run))
        finish(run.exit_code)


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
        text += f" (due {until(decision.due_at, now, past='now')})"
    elif decision.reason is Reason.EXPIRED:
        text += f" (idle {span(now - decision.last_activity)}, period {decision.days} days)"
    return text


def _session_json(
    decision: Decision,
    info: SessionInfo | None,
    titles: Titles,
    outcome: Outcome | None,
    folders: FolderNames,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "session_id": decision.key.session_id,
        "project": folders.project(decision.key.project, decision.key.session_id),
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
            item["detail"] = folders.text(outcome.detail)
    return item


def _render_text(run: RetentionRun) -> str:
    plan, report, period = run.plan, run.report, run.period
    lines = [
        ("retention: applied" if report else "retention: dry run, nothing changed"),
        f"period: {period.periods.default} days ({period.source})"
        + (f"; {period.overrides} project(s) set their own" if period.overrides else ""),
        "",
        f"{'ACTION':<19}{'WHY':<45} {'LAST ACTIVITY':<17}{'SIZE':>9}  SESSION",
        *_session_lines(run),
        *_trash_lines(plan, report, run.folders),
        *_archive_lines(plan, report, run.folders),
    ]
    counts = _counts(plan, report)
    lines += [
        "",
        f"{plural(len(plan.sessions), 'session')}: {counts['kept']} kept, {counts['trash']} to trash "
        f"({counts['archive_then_trash']} archived first); trash: {counts['trash_purge']} to purge; "
        f"archives: {counts['archive_purge']} to purge"
        if report is None
        else f"{plural(len(plan.sessions), 'session')}: {counts['trashed']} trashed ({counts['archived']} "
        f"archived first), {counts['kept']} kept; trash: {counts['trash_purged']} purged; "
        f"archives: {counts['archive_purged']} purged",
    ]
    warned = plan.warnings
    if warned:
        lines.append(
            f"warning: {plural(len(warned), 'session')} due for removal kept "
            "(no verified archive, over the cap, or unreadable): see above"
        )
    if report is None:
        lines.append("dry run: nothing was changed; run with --apply to act")
    # Folder names and titles come from transcripts and cwds (terminal_text.py).
    return terminal_lines(lines)


def _session_lines(run: RetentionRun) -> list[str]:
    now = run.plan.now
    outcomes = {o.subject: o for o in run.report.sessions} if run.report else {}
    lines = []
    for decision in run.plan.sessions:
        info = run.sessions.get(decision.key)
        outcome = outcomes.get(str(decision.key))
        action = str(decision.action)
        why = _why(decision, now)
        if outcome is not None and decision.removes:
            if outcome.done is Action.KEEP:
                action = "kept"
                why = _REASON_TEXT[outcome.reason] + (
                    f": {run.folders.text(outcome.detail)}" if outcome.detail else ""
                )
            else:
                action = (
                    "archived, trashed" if outcome.done is Action.ARCHIVE_THEN_TRASH else "trashed"
                )
        title = run.titles.show(info.title if info else None)
        lines.append(
            f"{action:<19}{why:<45} {ago(decision.last_activity, now):<17}"
            f"{human_size(decision.size):>9}  {run.folders.text(str(decision.key))}"
            + (f"  {title}" if title else "")
        )
    return lines


def _trash_lines(
    plan: RetentionPlan, report: ApplyReport | None, folders: FolderNames
) -> list[str]:
    now = plan.now
    lines = []
    if plan.trash:
        lines += ["", "trash:"]
        trash_outcomes = {o.subject: o for o in report.trash} if report else {}
        versions = Counter(item.session_id for item in plan.trash)
        for item in plan.trash:
            outcome = trash_outcomes.get(item.slot)
            if item.action is Action.PURGE:
                state = "purge (grace period over)"
                if outcome is not None:
                    state = (
                        "purged"
                        if outcome.done is Action.PURGE
                        else f"kept: {_REASON_TEXT[outcome.reason]}"
                        + (f": {folders.text(outcome.detail)}" if outcome.detail else "")
                    )
            else:
                state = f"keep: {_REASON_TEXT[item.reason]}"
                if item.reason is Reason.IN_GRACE:
                    state += f", purge {until(item.purge_at, now, past='next run')}"
            folder = folders.project(item.project, item.session_id)
            # Each trashed version on its own line, numbered as `undelete --version` takes it.
            several = item.version > 1 or versions[item.session_id] > 1
            version = f" (version {item.version})" if several else ""
            lines.append(
                f"  {folder}/{item.session_id}{version}  trashed {ago(item.trashed_at, now)}: "
                f"{state}"
            )
    if report is not None:
        for outcome in report.trash:
            if outcome.detail and outcome.planned is Action.TRASH:
                lines.append(folders.text(f"  {outcome.subject}: {outcome.detail}"))
    return lines


def _archive_lines(
    plan: RetentionPlan, report: ApplyReport | None, folders: FolderNames
) -> list[str]:
    lines = []
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
            lines.append(f"  {folders.text(purge.ref)}: {state}")
    unknown = [a for a in plan.archives if a.reason is Reason.PIN_UNKNOWN]
    if unknown:
        lines += [
            "",
            f"archives: {len(unknown)} past retention.archive_days kept because their pin status "
            "cannot be told (title, tags and cwd are encrypted and the policy pins by name, tag "
            "or path): pin by session id, or list those fields in "
            "archive.clear_manifest_fields",
        ]
    return lines


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


def _render_json(run: RetentionRun) -> str:
    plan, report, period, sessions, titles = (
        run.plan,
        run.report,
        run.period,
        run.sessions,
        run.titles,
    )
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
            _session_json(d, sessions.get(d.key), titles, outcomes.get(str(d.key)), run.folders)
            for d in plan.sessions
        ],
        "trash": [
            {
                "session_id": t.session_id,
                "version": t.version,
                "project": run.folders.project(t.project, t.session_id),
                "action": str(t.action),
                "reason": str(t.reason),
                "trashed_at": t.trashed_at.isoformat(),
                "purge_at": t.purge_at.isoformat(),
                **({"done": str(trash_outcomes[t.slot].done)} if t.slot in trash_outcomes else {}),
            }
            for t in plan.trash
        ],
        "archives": [
            {
                "archive": run.folders.text(a.ref),
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
        "exit_code": int(run.exit_code),
    }
    return dumps(body)
