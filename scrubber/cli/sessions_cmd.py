"""`scrub sessions`: parses, calls `usecases.sessions.list_sessions`, renders (text or JSON)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption, human_size, plural
from scrubber.cli.retention_text import FormatOption, OutputFormat, ago, dumps, until, warn
from scrubber.cli.terminal_text import terminal_safe
from scrubber.retention.forecast import Forecast
from scrubber.retention.rules import ArchiveStatus, Reason
from scrubber.retention.settings import TAKE_OVER_DAYS
from scrubber.usecases.sessions import SessionListing, SessionRow, SortOrder, list_sessions


def register(app: typer.Typer) -> None:
    @app.command("sessions")
    def sessions_command(
        project: Annotated[
            list[str] | None,
            typer.Option(
                "--project", help="Only sessions whose project folder contains this; repeatable."
            ),
        ] = None,
        output_format: FormatOption = OutputFormat.text,
        sort: Annotated[
            SortOrder,
            typer.Option("--sort", help="urgency (soonest removal first), recent, or size."),
        ] = SortOrder.urgency,
        policy_path: PolicyOption = None,
    ) -> None:
        """List sessions, and when each would be removed.

        For each: title, project, last activity, size, secrets, pins, archives, and when
        Claude Code's own sweep and scrubber's retention would each remove it.

        Claude Code's sweep goes by file mtime and ignores pins: a pinned session can still
        be deleted by it (`scrub install --take-over-cleanup` hands the clock to scrubber;
        the CLAUDE SWEEP column then says "off (taken over)", except for projects whose own
        .claude/settings files set a shorter cleanupPeriodDays).

        Examples:

          scrub sessions

          scrub sessions --project shop-api --sort size

          scrub sessions --format json
        """
        listing = list_sessions(
            common.env(),
            projects=tuple(project or ()),
            sort=sort,
            policy_path=policy_path,
            now=datetime.now(UTC),
        )
        if output_format is OutputFormat.json:
            typer.echo(dumps(_as_json(listing)))
            return
        for note in listing.notes:
            warn(note)
        typer.echo(_as_text(listing))


def _as_json(listing: SessionListing) -> dict[str, Any]:
    titles = listing.titles
    return {
        "now": listing.now.isoformat(),
        "notes": list(listing.notes),
        "claude_sweep_taken_over": listing.sweep_taken_over,
        "uploads_waiting": listing.uploads_waiting,
        "sessions": [
            {
                "session_id": row.info.id,
                "project": row.project_shown,
                "title": titles.show(row.info.title, None),
                "last_activity": row.forecast.last_activity.isoformat(),
                "size": row.info.size,
                "secrets": row.secrets,
                "pinned": row.forecast.pinned,
                "archived": str(row.archived),
                "archive_redacted": row.archive_redacted,
                "upload_waiting": row.upload_waiting,
                "claude_sweep_at": None
                if row.forecast.claude_sweep_at is None
                else row.forecast.claude_sweep_at.isoformat(),
                "claude_sweep_off": row.forecast.claude_sweep_off,
                "retention_at": None
                if not listing.retention_known or row.forecast.retention_at is None
                else row.forecast.retention_at.isoformat(),
                "retention_note": None
                if row.forecast.retention_note is None
                else str(row.forecast.retention_note),
                "claude_first": row.forecast.claude_first,
            }
            for row in listing.rows
        ],
    }


def _as_text(listing: SessionListing) -> str:
    now = listing.now
    header = (
        f"{'CLAUDE SWEEP':<22}{'RETENTION':<26}{'LAST ACTIVITY':<16}{'SIZE':>9} {'SECRETS':>7} "
        f"{'PIN':<4}{'ARCHIVED':<11}SESSION  TITLE"
    )
    lines = [header]
    for row in listing.rows:
        info, item, secrets = row.info, row.forecast, row.secrets
        sweep = _sweep_when(item, now)
        text = (
            f"{sweep:<22}{_retention_when(item, listing.retention_known, now):<26}"
            f"{ago(item.last_activity, now):<16}{human_size(info.size):>9} "
            f"{'?' if secrets is None else str(secrets):>7} {'yes' if item.pinned else '':<4}"
            f"{_archived_cell(row):<11}"
            f"{row.project_shown}/{info.id}  "
            f"{listing.titles.show(info.title)}"
        )
        # The folder's name is the cwd's (terminal_text.py); the title lost its controls already.
        lines.append(terminal_safe(text.rstrip()))
    lines += _sweep_summary(listing)
    if listing.uploads_waiting:
        lines.append(
            f"{listing.uploads_waiting} archive(s) wait for their upload to object storage: "
            "`scrub archives push` uploads them now"
        )
    return "\n".join(lines)


def _sweep_when(item: Forecast, now: datetime) -> str:
    if item.claude_sweep_at is None:
        return "paused"
    if item.claude_sweep_off:
        return "off (taken over)"
    return until(item.claude_sweep_at, now, past="next Claude start")


def _sweep_summary(listing: SessionListing) -> list[str]:
    at_risk = sum(1 for row in listing.rows if row.forecast.claude_first)
    if at_risk and listing.sweep_taken_over:
        # --take-over-cleanup raised the user's setting; a project's own settings win over it.
        return [
            f"\n{plural(at_risk, 'session')} would still be deleted by Claude Code's own sweep first "
            "(no trash, no archive, pins ignored): their project's own .claude/settings files "
            "set a shorter cleanupPeriodDays, which `--take-over-cleanup` does not change; "
            "remove it there to leave them to scrubber's retention"
        ]
    if at_risk:
        return [
            f"\n{plural(at_risk, 'session')} would be deleted by Claude Code's own sweep first (no trash, "
            "no archive, pins ignored): `scrub install --take-over-cleanup` makes scrubber's "
            "policy the one clock"
        ]
    if listing.sweep_taken_over:
        return [
            f"\nClaude Code's own sweep is taken over (cleanupPeriodDays {TAKE_OVER_DAYS}: it "
            "deletes nothing): scrubber's retention is the one clock, and `scrub retention "
            "--apply` removes only what the policy says"
        ]
    return []


def _retention_when(item: Forecast, known: bool, now: datetime) -> str:
    if not known:
        return "paused"
    if item.retention_at is None:
        return {
            Reason.PINNED: "never (pinned)",
            Reason.UNREADABLE: "never (unreadable)",
            Reason.NEWEST_IN_PROJECT: "kept (newest)",
        }.get(item.retention_note or Reason.PINNED, "never")
    return until(item.retention_at, now, past="next run")


def _archived_cell(row: SessionRow) -> str:
    if row.upload_waiting:
        return "to upload"
    # Current, with its secrets gone: not the "older" version a stale archive is.
    return "redacted" if row.archive_redacted else _archived_text(row.archived)


def _archived_text(status: ArchiveStatus) -> str:
    return {
        ArchiveStatus.VERIFIED: "verified",
        ArchiveStatus.STALE: "older",
        ArchiveStatus.UNVERIFIED: "BROKEN",
        ArchiveStatus.NONE: "no",
        ArchiveStatus.NOT_CHECKED: "?",
    }[status]
