"""`scrub install` and `scrub uninstall`: register scrubber with Claude Code, or take it back.

Thin over `scrubber.install`: options in, a report out. Everything works under
`CLAUDE_CONFIG_DIR` (the user settings file is `<config dir>/settings.json`) and `SCRUB_HOME`.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.install.report import InstallOptions, InstallReport
from scrubber.install.run import install, uninstall


class ScheduleKind(StrEnum):
    systemd = "systemd"
    cron = "cron"


def _print(report: InstallReport) -> None:
    if report.dry_run:
        typer.echo(report.diff.rstrip("\n") or f"{report.settings_path}: no change")
    for title, text in report.previews:
        typer.echo(f"\n--- {title}\n{text.rstrip()}")
    for line in report.done:
        typer.echo(line)
    for note in report.notes:
        typer.echo(f"note: {note}")


def _actions(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


# The install command's options (module-level, so the command reads as its work).
RecipientOption = Annotated[
    list[str] | None,
    typer.Option(
        "--recipient",
        "-r",
        help="age1… recipient archives are encrypted to (repeatable). Only shapes a new policy.",
    ),
]

RecipientsFileOption = Annotated[
    Path | None,
    typer.Option("-R", "--recipients-file", help="A file of age recipients (age's format)."),
]

OnSessionEndOption = Annotated[
    str | None,
    typer.Option(
        "--on-session-end",
        help="What the worker does when a session ends: a comma list from archive, "
        "redact-copy, redact-in-place (empty: audit only). Default: archive when "
        "recipients are set.",
    ),
]

StatusLineOption = Annotated[
    bool,
    typer.Option(
        "--status-line",
        help="Also install the status line (an existing one is kept and shown first).",
    ),
]

LiveOption = Annotated[
    bool,
    typer.Option(
        "--live",
        help="Also register the live hooks: secrets in tool output are masked before the "
        "model sees them (PostToolUse), prompts holding a secret are blocked (UserPromptSubmit).",
    ),
]

SessionEndTimeoutOption = Annotated[
    int | None,
    typer.Option(
        "--session-end-timeout",
        help="Seconds Claude Code allows our SessionEnd hook (1-60; raises its 1.5 s "
        "budget). The hook itself needs well under a second.",
    ),
]

ScheduleOption = Annotated[
    ScheduleKind | None,
    typer.Option("--schedule", help="Run `scrub retention --apply` nightly: systemd or cron."),
]

TakeOverCleanupOption = Annotated[
    bool,
    typer.Option(
        "--take-over-cleanup",
        help="Copy Claude Code's cleanupPeriodDays into the policy, then raise it so "
        "that only scrubber (which honours pins and archives first) deletes sessions.",
    ),
]

DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Show the settings diff; change nothing.")
]


def register(app: typer.Typer) -> None:
    # In this order: `scrub --help` lists the commands as they are registered.
    app.command("install")(install_command)
    app.command("uninstall")(uninstall_command)


def install_command(
    recipient: RecipientOption = None,
    recipients_file: RecipientsFileOption = None,
    on_session_end: OnSessionEndOption = None,
    status_line: StatusLineOption = False,
    session_end_timeout: SessionEndTimeoutOption = None,
    schedule: ScheduleOption = None,
    take_over_cleanup: TakeOverCleanupOption = False,
    dry_run: DryRunOption = False,
    live: LiveOption = False,
) -> None:
    """Register scrubber's hooks with Claude Code, write a policy.

    Merges a SessionEnd hook (and with --status-line, a status line) into the settings.json
    of the config directory without losing any key; running it again changes nothing; a
    backup of the previous file goes to $SCRUB_HOME/backups/. `scrub uninstall` undoes it.

    Examples:

      scrub install --recipient age1… --status-line

      scrub install --live

      scrub install --on-session-end archive,redact-copy -R ~/keys.txt

      scrub install --schedule systemd --take-over-cleanup
    """
    options = InstallOptions(
        recipients=tuple(recipient or ()),
        recipients_file=recipients_file,
        on_session_end=_actions(on_session_end),
        status_line=status_line,
        live=live,
        session_end_timeout=session_end_timeout,
        schedule=schedule.value if schedule else None,
        take_over_cleanup=take_over_cleanup,
        dry_run=dry_run,
    )
    report = install(options, common.env())
    _print(report)
    if not dry_run:
        typer.echo("next: `scrub doctor` checks the installation end to end")


def uninstall_command(dry_run: DryRunOption = False) -> None:
    """Remove scrubber's hooks and status line from Claude Code.

    Restores the status line it wrapped and the cleanupPeriodDays it raised (when still
    ours), removes the launchers and the schedule, and keeps everything the user added since,
    plus the policy, queued jobs, archives and backups.

    Examples:

      scrub uninstall --dry-run           # the settings diff, nothing written

      scrub uninstall
    """
    _print(uninstall(common.env(), dry_run=dry_run))
