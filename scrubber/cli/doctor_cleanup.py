"""`scrub doctor`'s look at Claude Code's own cleanup sweep: its effective period, and the
sessions it would delete soon that scrubber has not archived or that are pinned."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from scrubber.cli.common import plural
from scrubber.cli.doctor_model import Check, Level
from scrubber.errors import ScrubberError
from scrubber.install import settings
from scrubber.policy.model import Policy

# Sessions Claude Code's sweep would delete within this many days are "at risk".
RISK_DAYS = 3


def check_cleanup(config: Path, home: Path, policy: Policy | None, now: datetime) -> list[Check]:
    """Claude Code's sweep: its effective period, and the sessions it would delete soon that
    scrubber has not archived or that are pinned (the sweep ignores pins)."""
    from scrubber.archive.layout import archives_of
    from scrubber.retention.pins import effective_pins
    from scrubber.retention.settings import MANAGED_SETTINGS, effective_cleanup_periods
    from scrubber.transcript.metadata import read_metadata
    from scrubber.transcript.sessions import discover

    found = discover(config, metadata=False)
    try:
        periods = effective_cleanup_periods(config, [], managed=MANAGED_SETTINGS)
    except ScrubberError as error:
        return [Check("cleanupPeriodDays", Level.WARN, error.message, error.hint)]
    setting = periods.default
    source = str(setting.source) if setting.source else "Claude Code's default"
    checks = [
        Check(
            "cleanupPeriodDays",
            Level.OK if setting.days >= settings.TAKE_OVER_DAYS else Level.INFO,
            f"{setting.days} days ({source}): Claude Code deletes sessions whose files are older",
        )
    ]
    if setting.days >= settings.TAKE_OVER_DAYS or policy is None:
        return checks
    horizon = setting.days - RISK_DAYS
    archive_root = policy.archive.destination_in(home)
    try:
        pins = effective_pins(policy.pins, home)
    except ScrubberError:
        pins = policy.pins
    unarchived = pinned = 0
    for session in found.sessions:
        age_days = (now.timestamp() - session.mtime) / 86400
        if age_days < horizon:
            continue
        if not archives_of(archive_root, session.project, session.id):
            unarchived += 1
        meta = read_metadata(session.transcript) if (pins.names or pins.tags) else None
        if pins.covers(
            session_id=session.id,
            title=meta.custom_title if meta else None,
            tags=meta.tags if meta else (),
            project=session.project,
            cwd=meta.cwd if meta else None,
        ):
            pinned += 1
    take_over = "`scrub install --take-over-cleanup` makes scrubber's retention the one clock"
    soon = f"will be deleted by Claude Code within {RISK_DAYS} days"
    if pinned:
        checks.append(
            Check(
                "cleanup sweep",
                Level.WARN,
                f"{plural(pinned, 'pinned session')} {soon}: its sweep ignores pins",
                take_over,
            )
        )
    if unarchived:
        checks.append(
            Check(
                "cleanup sweep",
                Level.WARN,
                f"{plural(unarchived, 'session')} {soon} and have no archive",
                f"{_archive_now(policy, max(1, horizon))}; {take_over}",
            )
        )
    days = policy.retention.days
    if days is not None and days > setting.days:
        checks.append(
            Check(
                "cleanup sweep",
                Level.WARN,
                f"the policy keeps sessions {days} days but Claude Code deletes them after "
                f"{setting.days}",
                take_over,
            )
        )
    return checks


def _archive_now(policy: Policy, days: int) -> str:
    """The archive command that saves what the sweep takes soon. Without a recipient the bare
    command is refused: say what makes it work."""
    if policy.archive.has_recipients:
        return f"`scrub archive --all --older-than {days}d` now"
    return (
        f"`scrub archive --all --older-than {days}d -r age1…` now (your recipient: `scrub keygen` "
        "makes a pair; with `--redact` instead of -r, copies without their secrets, in clear)"
    )
