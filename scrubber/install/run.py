"""`scrub install` and `scrub uninstall`: the policy (if none), the launchers, the compiled
allowlist, the SessionEnd hook and status line in the user settings, the schedule; and their
exact undoing. A dry run says what would be done and changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrubber import paths
from scrubber.durable import PRIVATE_FILE_MODE, atomic_write
from scrubber.errors import UsageError
from scrubber.install.launchers import (
    LIVE_LAUNCHERS,
    SESSION_END_LAUNCHER,
    STATUS_LINE_LAUNCHER,
    Launchers,
    is_ours,
    launcher_dir,
    live_launcher,
    pinned_environment,
)
from scrubber.install.record import read_record, record_file, remove_record, write_record
from scrubber.install.report import InstallOptions, InstallReport
from scrubber.install.scheduling import (
    Runner,
    check_cron_available,
    install_schedule,
    remove_schedule,
    run_command,
    schedule_preview,
)
from scrubber.install.settings import (
    MAX_SESSION_END_TIMEOUT,
    TAKE_OVER_DAYS,
    Settings,
    add_session_end_hook,
    install_status_line,
    remove_session_end_hook,
    remove_status_line,
    restore_cleanup_days,
    set_cleanup_days,
)
from scrubber.install.settings_file import (
    SettingsText,
    backup_settings,
    backups_dir,
    read_settings,
    render_settings,
    settings_diff,
    settings_file,
    write_settings,
)
from scrubber.untrusted import MAX_SETTINGS_BYTES, parse_json, read_bounded

if TYPE_CHECKING:
    from scrubber.policy.model import Policy


def _set_policy_days(text: str, days: int) -> str | None:
    """The policy text with `retention.days` set, when it is the template's empty `days:` line
    (comments kept); None when the text has another shape (the user is told to set it)."""
    import re

    section = re.search(r"^retention:[ \t]*(?:#.*)?$", text, re.MULTILINE)
    if section is None:
        return None
    rest = text[section.end() :]
    line = re.search(r"^  days:[ \t]*(?:#.*)?$", rest, re.MULTILINE)
    block_end = re.search(r"^\S", rest, re.MULTILINE)
    if line is None or (block_end is not None and block_end.start() < line.start()):
        return None
    start = section.end() + line.start()
    return f"{text[:start]}  days: {days}{text[section.end() + line.end() :]}"


def install(
    options: InstallOptions,
    env: Mapping[str, str],
    *,
    now: datetime | None = None,
    python: str | None = None,
    run: Runner = run_command,
) -> InstallReport:
    """Write the policy (if none), the launchers and the compiled allowlist, register the hooks
    in the user settings file, and set up the schedule; or, with `dry_run`, say what would be
    done and change nothing. Raises ConfigError/UsageError before writing anything when an input
    is wrong (a malformed settings file, a bad recipient)."""
    now = now or datetime.now(UTC)
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    settings_path = settings_file(config)
    report = InstallReport(options.dry_run, settings_path)
    _check_options(options)
    current = read_settings(settings_path)  # refuses a malformed file before anything is written
    record = read_record(home)
    policy_path = paths.policy_file(home)
    policy, policy_text = _policy_to_use(options, env, home, report)

    # Claude Code's own sweep: scrubber's policy becomes the one clock.
    new = current.data
    cleanup_record = record.get("cleanup")
    if options.take_over_cleanup:
        new, policy_text, cleanup_record = _take_over_cleanup(
            new, config, policy_path, policy_text, policy, record, report
        )

    launchers = Launchers.for_home(home, python, pinned_environment(env))
    new = add_session_end_hook(
        new, launchers.session_end_command(), options.session_end_timeout, where=str(settings_path)
    )
    new = _add_live_hooks(new, options, launchers, home, str(settings_path))
    status_record = record.get("status_line")
    if options.status_line:
        existing = new.get("statusLine")
        was_ours = isinstance(existing, dict) and is_ours(existing.get("command"))
        new, previous = install_status_line(new, launchers.status_line_command)
        if status_record is None and not was_ours:
            # The first time: remember what ours replaced. (Ours there but no record, say after
            # the record was lost: uninstall reads the wrapped command back from ours.)
            status_record = {"previous": previous}
    new_text = render_settings(new) if new != current.data else current.text
    report.diff = settings_diff(settings_path, current.text, new_text)

    if options.dry_run:
        _dry_run_steps(options, env, home, launchers, policy_text, report)
        changes = new_text != current.text
        if changes and current.text is not None:
            report.step(f"would back up {settings_path} into {backups_dir(home)}")
        if changes:
            report.step(f"would write {settings_path}")
        report.notes.append("dry run: nothing was written")
        return report
    if options.schedule == "cron":
        check_cron_available(env, home)  # before anything is written
    paths.ensure_private_dir(home, home)  # the env given, not the process's
    if new_text != current.text:
        report.backup = backup_settings(current, home, now=now)
    new_record = _new_record(current, record, report, launchers)
    new_record.update(status_line=status_record, cleanup=cleanup_record)
    write_record(home, new_record)
    _write_files(policy, policy_text, policy_path, launchers, home, report)
    _write_live_files(policy, options, launchers, home, report)
    _write_new_settings(settings_path, current.text, new_text, report)
    if options.schedule:
        new_record["schedule"] = install_schedule(options.schedule, env, home, report, run)
        write_record(home, new_record)
    _closing_notes(policy, new, report)
    return report


def _dry_run_steps(
    options: InstallOptions,
    env: Mapping[str, str],
    home: Path,
    launchers: Launchers,
    policy_text: str | None,
    report: InstallReport,
) -> None:
    """What a real run would write, file by file, in the order it writes them (the settings
    file is the caller's)."""
    from scrubber.hooks.live_common import live_settings_file
    from scrubber.hooks.status_scan import allowlist_state_file

    report.step(f"would write the install record {record_file(home)}")
    if policy_text is not None:
        report.step(f"would write the policy {paths.policy_file(home)} (the commented template)")
    report.step(f"would write the launchers {launchers.session_end}, {launchers.status_line}")
    pins = dict(launchers.pins)
    if pins:
        shown = ", ".join(f"{k}={v}" for k, v in pins.items())
        report.step(f"the launchers would run scrub with {shown}")
    report.step(f"would write the status line's allowlist {allowlist_state_file(home)}")
    report.step(f"would write the live settings {live_settings_file(home)}")
    if options.live:
        live = ", ".join(str(live_launcher(home, event)) for event in LIVE_LAUNCHERS)
        report.step(f"would write the live hooks' launchers {live}")
    if options.schedule:
        report.previews.append(schedule_preview(options.schedule, env, home))


def _add_live_hooks(
    settings: Settings, options: InstallOptions, launchers: Launchers, home: Path, where: str
) -> Settings:
    """With --live, our PostToolUse and UserPromptSubmit handlers (idempotent)."""
    from scrubber.install.launchers import live_command
    from scrubber.install.settings import add_event_hook

    if not options.live:
        return settings
    for event, (_, _, matcher) in LIVE_LAUNCHERS.items():
        command = live_command(launchers, home, event)
        settings = add_event_hook(settings, event, command, matcher=matcher, where=where)
    return settings


def _write_live_files(
    policy: Policy, options: InstallOptions, launchers: Launchers, home: Path, report: InstallReport
) -> None:
    """The live settings compiled from the policy (always: the plugin's live hooks read them
    too) and, with --live, the live launchers."""
    from scrubber.hooks.live_common import write_live_settings
    from scrubber.install.launchers import write_live_launchers

    report.step(f"live settings: {write_live_settings(policy, home)}")
    if options.live:
        written = write_live_launchers(launchers, home)
        report.step("live hooks: " + " and ".join(str(p) for p in written))


def _remove_live_hooks(settings: Settings, where: str) -> Settings:
    from scrubber.install.launchers import LIVE_LAUNCHERS
    from scrubber.install.settings import remove_event_hook

    for event in LIVE_LAUNCHERS:
        settings = remove_event_hook(settings, event, where=where)
    return settings


def _check_options(options: InstallOptions) -> None:
    timeout = options.session_end_timeout
    if timeout is not None and not 1 <= timeout <= MAX_SESSION_END_TIMEOUT:
        raise UsageError(
            f"--session-end-timeout {timeout}: expected 1 to {MAX_SESSION_END_TIMEOUT} seconds",
            "Claude Code caps a hook's timeout at 60 seconds",
        )
    if options.schedule not in (None, "systemd", "cron"):
        raise UsageError(f"--schedule {options.schedule!r}: expected systemd or cron")


def _policy_to_use(
    options: InstallOptions, env: Mapping[str, str], home: Path, report: InstallReport
) -> tuple[Policy, str | None]:
    """The policy in force, and the text to write when there is none yet (from the commented
    template, shaped by the options)."""
    from scrubber.policy.load import load_policy, parse_policy, render_default_policy

    policy_path = paths.policy_file(home)
    asked = bool(options.recipients or options.recipients_file or options.on_session_end)
    if policy_path.exists() or env.get("SCRUB_POLICY"):
        loaded = load_policy(None, env)
        if asked:
            report.notes.append(
                f"the policy {loaded.describe()} exists and was not changed: --recipient, "
                "-R and --on-session-end only shape a new policy; edit the file instead"
            )
        return loaded.policy, None
    policy_text = render_default_policy(
        recipients=list(options.recipients) or None,
        on_session_end=list(options.on_session_end) if options.on_session_end is not None else None,
        recipients_file=options.recipients_file,
    )
    return parse_policy(policy_text, origin=str(policy_path), base_dir=home, env=env), policy_text


def _new_record(
    current: SettingsText, record: Mapping[str, Any], report: InstallReport, launchers: Launchers
) -> dict[str, Any]:
    """The install record, without status_line and cleanup (the caller sets those)."""
    # What the settings looked like before the first install, kept from that install on. The
    # record is written before the settings, so an install interrupted later can be undone.
    original = {
        "original_backup": str(report.backup or ""),
        "had_settings_file": current.text is not None,
        "created_hooks": "hooks" not in current.data,
        "created_event": _no_session_end(current.data),
    }
    original.update({k: record[k] for k in original if k in record})
    return {
        "settings": str(report.settings_path),
        **original,
        "status_line": None,
        "cleanup": None,
        "schedule": record.get("schedule"),
        "launchers": [str(launchers.session_end), str(launchers.status_line)],
        "python": launchers.python,
    }


def _write_files(
    policy: Policy,
    policy_text: str | None,
    policy_path: Path,
    launchers: Launchers,
    home: Path,
    report: InstallReport,
) -> None:
    """The policy (when new or changed), the launchers and the status line's allowlist."""
    from scrubber.hooks.status_line import write_allowlist_state

    if policy_text is not None:
        existed = policy_path.exists()
        atomic_write(policy_path, [policy_text.encode()], mode=PRIVATE_FILE_MODE)
        report.step(
            f"policy: retention.days written into {policy_path}"
            if existed
            else f"policy: wrote {policy_path} (every key commented)"
        )
    launchers.write()
    report.step(f"launchers: {launchers.session_end} and {launchers.status_line}")
    write_allowlist_state(policy, home)


def _write_new_settings(
    settings_path: Path, old_text: str | None, new_text: str | None, report: InstallReport
) -> None:
    if new_text != old_text:
        write_settings(settings_path, new_text or "{}\n")
        report.step(
            f"settings: updated {settings_path}"
            + (f" (backup: {report.backup})" if report.backup else " (new file)")
        )
    else:
        report.step(f"settings: {settings_path} already up to date")


def _closing_notes(policy: Policy, settings: Settings, report: InstallReport) -> None:
    if not policy.session_end_actions:
        report.notes.append(
            "sessions are only audited when they end: add your age recipient under "
            "archive.recipients in the policy to archive them (`scrub keygen` makes a key pair)"
        )
    status = settings.get("statusLine")
    if not (isinstance(status, dict) and is_ours(status.get("command"))):
        report.notes.append(
            "no status line installed: `scrub install --status-line` adds one (a plugin "
            "cannot); an existing status line is kept and shown first"
        )


def _no_session_end(data: Mapping[str, Any]) -> bool:
    hooks = data.get("hooks")
    return not (isinstance(hooks, dict) and "SessionEnd" in hooks)


def _take_over_cleanup(
    settings: Settings,
    config: Path,
    policy_path: Path,
    policy_text: str | None,
    policy: Policy,
    record: Mapping[str, Any],
    report: InstallReport,
) -> tuple[Settings, str | None, Any]:
    from scrubber.retention.settings import KEY, MANAGED_SETTINGS, effective_cleanup_periods

    effective = effective_cleanup_periods(config, [], managed=MANAGED_SETTINGS).default
    if effective.source == MANAGED_SETTINGS:
        report.notes.append(
            f"{MANAGED_SETTINGS} sets {KEY} to {effective.days} and always wins: scrubber "
            "cannot take over Claude Code's cleanup here (ask whoever manages that file)"
        )
        return settings, policy_text, record.get("cleanup")
    if policy.retention.days is None:
        text = policy_text if policy_text is not None else policy_path.read_text("utf-8")
        updated = _set_policy_days(text, effective.days)
        if updated is None:
            report.notes.append(
                f"set retention.days: {effective.days} in {policy_path} yourself (its text "
                "has no empty `days:` line under retention to fill in)"
            )
        else:
            policy_text = updated
            report.notes.append(
                f"retention.days is now {effective.days} (Claude Code's effective "
                f"{KEY}): `scrub retention` keeps Claude Code's clock, with pins and archives"
            )
    previous = settings.get(KEY)
    cleanup = record.get("cleanup") or {
        "had_key": KEY in settings,
        "previous": previous,
        "set": TAKE_OVER_DAYS,
    }
    if previous != TAKE_OVER_DAYS:
        report.notes.append(
            f"Claude Code's {KEY} raised from {previous if previous is not None else 'its default 30'}"
            f" to {TAKE_OVER_DAYS} in settings.json: its own sweep (which ignores pins) no "
            "longer deletes sessions; schedule `scrub retention --apply` (--schedule)"
        )
    return set_cleanup_days(settings, TAKE_OVER_DAYS), policy_text, cleanup


def uninstall(
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    run: Runner = run_command,
) -> InstallReport:
    """Remove exactly our entries from the user settings (restoring the status line we wrapped
    and the cleanupPeriodDays we raised, when still ours), the launchers and the schedule.
    Keeps the policy, the spool, archives, redacted copies and every backup."""
    now = now or datetime.now(UTC)
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    settings_path = settings_file(config)
    report = InstallReport(dry_run, settings_path)
    current = read_settings(settings_path)
    record = read_record(home)
    new = remove_session_end_hook(
        current.data,
        drop_empty_event=bool(record.get("created_event", True)),
        drop_empty_hooks=bool(record.get("created_hooks", True)),
        where=str(settings_path),
    )
    new = _remove_live_hooks(new, str(settings_path))
    status = record.get("status_line")
    new = remove_status_line(
        new,
        status.get("previous") if isinstance(status, dict) else None,
        known=isinstance(status, dict),
    )
    cleanup = record.get("cleanup")
    if isinstance(cleanup, dict):
        new = restore_cleanup_days(new, cleanup)
    new_text = current.text if new == current.data else _restored_text(new, record)
    report.diff = settings_diff(settings_path, current.text, new_text)
    if dry_run:
        report.notes.append("dry run: nothing was changed")
        return report
    if new_text != current.text:
        report.backup = backup_settings(current, home, now=now)
        if new_text is None:
            settings_path.unlink()
            report.step(f"settings: removed {settings_path} (scrubber had created it)")
        else:
            write_settings(settings_path, new_text)
            report.step(f"settings: our entries removed from {settings_path}")
    else:
        report.step(f"settings: nothing of ours in {settings_path}")
    for launcher in (
        launcher_dir(home) / SESSION_END_LAUNCHER,
        launcher_dir(home) / STATUS_LINE_LAUNCHER,
        *(launcher_dir(home) / name for name, _, _ in LIVE_LAUNCHERS.values()),
    ):
        if launcher.exists():
            launcher.unlink()
            report.step(f"removed {launcher}")
    with contextlib.suppress(OSError):
        launcher_dir(home).rmdir()  # only when empty
    schedule_record = record.get("schedule")
    if isinstance(schedule_record, dict):
        remove_schedule(schedule_record, env, report, run)
    remove_record(home)
    report.notes.append(
        f"kept: the policy, spool, archives, redacted copies and backups under {home}"
    )
    return report


def _restored_text(data: Settings, record: Mapping[str, Any]) -> str | None:
    """The file as it was before the first install when the data is back to that state (so
    its formatting comes back too); else the data rendered."""
    original = record.get("original_backup")
    if isinstance(original, str) and original:
        # The record names the backup; it is read as untrusted (scrubber/untrusted.py): a path
        # planted there (a FIFO, /dev/zero, a file nested 100,000 deep) must not hang or crash
        # the uninstall, which then renders the settings instead.
        try:
            raw = read_bounded(Path(original), MAX_SETTINGS_BYTES, follow=False)
            if parse_json(raw, original) == data:
                return raw.decode("utf-8-sig")
        except (OSError, ValueError):  # DamagedDocument is a ValueError
            pass
    elif record.get("had_settings_file") is False and not data:
        return None  # we created the file, and nothing else is in it
    return render_settings(data)
