"""`scrub doctor`: check the installation end to end and say what to fix.

Read-only. Each check is a value (name, level, message, fix); the command prints them and exits 0
when everything is fine, 1 when something needs attention. The checks follow a session's way
through scrubber: Claude Code's config dir and settings, the hooks registered there, the policy
and its recipients, the archive folder, the spool and the worker, and Claude Code's own sweep
(`cleanupPeriodDays`), which deletes sessions by mtime whatever scrubber would keep.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.cli import common, doctor_plugin
from scrubber.cli.doctor_cleanup import check_cleanup
from scrubber.cli.doctor_launchers import check_home_folder, check_launcher_homes
from scrubber.cli.doctor_model import Check, Level
from scrubber.errors import ExitCode, ScrubberError
from scrubber.hooks import status_line, status_scan
from scrubber.hooks.spool import Spool, SpoolState
from scrubber.install import launchers, settings, settings_file
from scrubber.install import record as install_record
from scrubber.policy.model import Policy, SessionEndAction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.usecases.shown_names import FolderNames

STALE_JOB_SECONDS = 15 * 60


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def check_config_dir(config: Path, show: Callable[[Path], str] = str) -> Iterator[Check]:
    """`show`: how a warning names a path (a project folder's name can hold a token)."""
    mode = _mode(config)
    if mode is None:
        yield Check(
            "config dir",
            Level.FAIL,
            f"{config} does not exist",
            "run Claude Code once, or set CLAUDE_CONFIG_DIR to the folder it uses",
        )
        return
    if mode & 0o077:
        yield Check(
            "config dir",
            Level.WARN,
            f"{config} is open to group or others (mode {mode:04o}): transcripts are plaintext",
            f"chmod 700 {config}",
        )
    else:
        yield Check("config dir", Level.OK, f"{config} (mode {mode:04o})")
    from scrubber.usecases.audit import permission_warnings

    transcripts = sorted(paths.projects_dir(config).glob("*/*.jsonl"))
    for warning in permission_warnings(transcripts, show)[:5]:
        yield Check("permissions", Level.WARN, warning)


def check_hooks(config: Path, home: Path | None = None) -> list[Check]:
    checks: list[Check] = []
    path = settings_file.settings_file(config)
    try:
        current = settings_file.read_settings(path)
    except ScrubberError as error:
        checks.append(Check("settings", Level.FAIL, error.message, error.hint))
        return checks
    data = current.data
    commands = settings.has_session_end_hook(data)
    if not commands:
        if doctor_plugin.plugin_enabled(data, config):
            checks.append(Check("SessionEnd hook", Level.OK, "registered by the scrubber plugin"))
        elif home is not None and doctor_plugin.hook_has_run(home):
            checks.append(
                Check(
                    "SessionEnd hook",
                    Level.OK,
                    f"not in {path}, but it runs: registered by a plugin (or --plugin-dir)",
                )
            )
        else:
            checks.append(
                Check(
                    "SessionEnd hook",
                    Level.WARN,
                    f"not registered in {path}: ended sessions are not archived or redacted",
                    "run `scrub install` (or install the plugin: /plugin install scrubber@scrubber)",
                )
            )
    for command in commands:
        if launchers.command_program_exists(command):
            checks.append(Check("SessionEnd hook", Level.OK, f"registered in {path}"))
        else:
            checks.append(
                Check(
                    "SessionEnd hook",
                    Level.FAIL,
                    "registered, but its interpreter or launcher is missing: every session end "
                    "fails silently",
                    "run `scrub install` again (it rewrites the launchers)",
                )
            )
    if len(commands) > 1:
        checks.append(
            Check(
                "SessionEnd hook",
                Level.WARN,
                f"registered {len(commands)} times",
                "run `scrub install` again: it keeps one",
            )
        )
    status = data.get("statusLine")
    if isinstance(status, dict) and launchers.is_ours(status.get("command")):
        command = str(status["command"])
        wrapped = launchers.wrapped_command(command)
        if launchers.command_program_exists(command):
            extra = " (wrapping your previous status line)" if wrapped else ""
            checks.append(Check("status line", Level.OK, f"installed{extra}"))
        else:
            checks.append(
                Check(
                    "status line",
                    Level.FAIL,
                    "installed, but its interpreter or launcher is missing",
                    "run `scrub install --status-line` again",
                )
            )
    else:
        checks.append(
            Check(
                "status line",
                Level.INFO,
                "not installed (a plugin cannot install one)",
                "`scrub install --status-line` adds it and keeps any status line you have",
            )
        )
    return checks


def check_live_hooks(config: Path) -> list[Check]:
    """The live hooks (`scrub install --live`) in the user settings."""
    try:
        data = settings_file.read_settings(settings_file.settings_file(config)).data
    except ScrubberError:
        return []  # check_hooks reported it
    checks = []
    for event in ("PostToolUse", "UserPromptSubmit"):
        if settings.event_hook_commands(data, event):
            checks.append(Check(f"live hook {event}", Level.OK, "installed"))
        else:
            checks.append(
                Check(
                    f"live hook {event}",
                    Level.INFO,
                    "not installed in settings.json (the plugin registers it too)",
                    "`scrub install --live` masks secrets in tool output and blocks prompts "
                    "that hold one",
                )
            )
    return checks


def check_policy(env: Mapping[str, str], home: Path) -> tuple[list[Check], Policy | None]:
    from scrubber.policy.load import load_policy

    try:
        loaded = load_policy(None, env)
    except ScrubberError as error:
        return [Check("policy", Level.FAIL, error.message, error.hint)], None
    checks = [Check("policy", Level.OK, loaded.describe())]
    policy = loaded.policy
    notes = dict.fromkeys((*loaded.warnings, *policy.warnings()))
    checks += [Check("policy", Level.WARN, note) for note in notes]
    actions = policy.session_end_actions
    if not actions:
        checks.append(
            Check(
                "on session end",
                Level.INFO,
                "sessions are only audited when they end (no archive, no redaction)",
                "put your age1… recipient under archive.recipients in the policy (`scrub keygen` "
                "makes a key pair; keep the identity off this machine)",
            )
        )
    else:
        checks.append(Check("on session end", Level.OK, ", ".join(a.value for a in actions)))
    if SessionEndAction.ARCHIVE in actions:
        from scrubber.usecases.archive import resolve_encryption

        try:
            encryption = resolve_encryption(policy, encrypt=True)
        except ScrubberError as error:
            checks.append(Check("recipients", Level.FAIL, error.message, error.hint))
        else:
            checks.append(
                Check("recipients", Level.OK, f"{len(encryption.recipients)} age recipient(s)")
            )
    destination = policy.archive.destination_in(home)
    checks.append(_writable("archive folder", destination))
    allowlist = status_scan.allowlist_state_file(home)
    if not status_line.allowlist_state_is_current(policy, home):
        checks.append(
            Check(
                "status-line allowlist",
                Level.WARN,
                f"{allowlist} is missing or does not match the policy's allowlist",
                "run `scrub install` (or `scrub worker`) to compile it again",
            )
        )
    return checks, policy


def _writable(name: str, folder: Path) -> Check:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.is_dir() and os.access(probe, os.W_OK | os.X_OK):
        where = "" if probe == folder else f" (will be created under {probe})"
        return Check(name, Level.OK, f"{folder} is writable{where}")
    return Check(
        name, Level.FAIL, f"{folder} is not writable", "fix its permissions or archive.destination"
    )


def check_spool(home: Path, now: float, *, worker_can_run: bool = True) -> list[Check]:
    spool = Spool(home)
    pending = spool.jobs(SpoolState.PENDING)
    active = spool.jobs(SpoolState.ACTIVE)
    failed = spool.jobs(SpoolState.FAILED)
    checks = []
    if not pending and not active:
        checks.append(Check("spool", Level.OK, "empty: every ended session was processed"))
    else:
        oldest = min(s.job.ended_at for s in [*pending, *active])
        age = now - oldest
        waiting = [s for s in pending if s.job.last_error]
        if not worker_can_run:
            checks.append(
                Check(
                    "spool",
                    Level.WARN,
                    f"{len(pending) + len(active)} job(s) waiting for an install: scrubber is "
                    "not installed for any Python here, so no worker processes them",
                    "run install.sh (from the plugin's folder or a checkout); the worker then "
                    "processes the waiting jobs",
                )
            )
        elif age > STALE_JOB_SECONDS:
            reason = f" (last error: {waiting[0].job.last_error})" if waiting else ""
            checks.append(
                Check(
                    "spool",
                    Level.WARN,
                    f"{len(pending) + len(active)} job(s) queued, the oldest for "
                    f"{int(age // 60)} min{reason}",
                    "run `scrub worker` to process them now and see what fails",
                )
            )
        else:
            checks.append(Check("spool", Level.OK, f"{len(pending) + len(active)} job(s) draining"))
    if failed:
        reasons = sorted({s.job.last_error or "unknown" for s in failed})
        checks.append(
            Check(
                "spool",
                Level.WARN,
                f"{len(failed)} job(s) failed: " + "; ".join(reasons[:3]),
                "fix the cause, then `scrub worker --retry-failed`",
            )
        )
    return checks


def check_worker(home: Path, env: Mapping[str, str] | None = None) -> Check:
    """The interpreter the hook starts the worker with can import what the worker needs."""
    record = install_record.read_record(home)
    python = record.get("python")
    if not python:
        found = doctor_plugin.plugin_worker_python(os.environ if env is None else env)
        if found is None:
            return Check(
                "worker",
                Level.WARN,
                "scrubber is not installed for any Python here: the plugin's hook queues "
                "sessions, and nothing processes them",
                "run install.sh (it makes scrubber's own environment)",
            )
        if not found.endswith(os.sep + "python"):  # python3 on PATH, checked for the libraries
            return Check("worker", Level.OK, f"the plugin's hook runs it with {found}")
        python = found
    if not Path(str(python)).exists():
        return Check(
            "worker",
            Level.FAIL,
            f"the interpreter {python} is gone: queued sessions are never processed",
            "run install.sh (or `scrub install`) again",
        )
    probe = (
        "import scrubber.hooks.worker, scrubber.usecases.archive, scrubber.usecases.redact,"
        " scrubber.usecases.audit"
    )
    try:
        done = subprocess.run(
            [str(python), "-c", probe], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check("worker", Level.FAIL, f"cannot run {python} ({type(error).__name__})")
    if done.returncode != 0:
        return Check(
            "worker",
            Level.FAIL,
            f"{python} cannot import scrubber's worker",
            "run install.sh again to repair scrubber's environment",
        )
    return Check("worker", Level.OK, f"runs with {python}")


def check_leftovers(config: Path, home: Path, policy: Policy | None) -> list[Check]:
    """What killed commands left (issue 11): staging folders with decrypted plaintext, archive
    temp files, half-written trash entries. Each command removes its own at its next start."""
    from scrubber.archive.leftovers import find_leftovers
    from scrubber.retention.trash_crash import find_crashed_trash

    archives = policy.archive.destination_in(home) if policy is not None else None
    checks = []
    for item in find_leftovers(home, config=config, archives=archives):
        checks.append(
            Check(
                "leftovers",
                Level.WARN,
                f"{item.path}: {item.what}, left by a killed `scrub {item.command}`",
                f"the next `scrub {item.command}` removes it (or remove it yourself)",
            )
        )
    for path in find_crashed_trash(home):
        checks.append(
            Check(
                "leftovers",
                Level.WARN,
                f"{path}: a trash entry a killed retention run left half-written (no session "
                "file in it)",
                "the next `scrub retention --apply` removes it",
            )
        )
    return checks or [Check("leftovers", Level.OK, "nothing left behind by a killed command")]


def check_object_storage(home: Path, policy: Policy | None) -> list[Check]:
    """boto3 for an s3:// destination, and the archives waiting for their upload (issue 17)."""
    from scrubber.archive.s3 import INSTALL_HINT, boto3_missing
    from scrubber.usecases.archive_push import waiting_uploads

    destination = policy.archive.s3 if policy is not None else None
    missing = boto3_missing()
    checks: list[Check] = []
    if destination is not None:
        where = f"{destination.url} (host {destination.host_name()})"
        if missing:
            checks.append(Check("object storage", Level.FAIL, f"{where}: {missing}", INSTALL_HINT))
        else:
            checks.append(Check("object storage", Level.OK, f"archives are uploaded to {where}"))
    elif missing:
        checks.append(Check("object storage", Level.INFO, missing, INSTALL_HINT))
    waiting = waiting_uploads(home)
    if waiting:
        last = next((j.last_error for j in reversed(waiting) if j.last_error), None)
        told = f"; last error: {last}" if last else ""
        checks.append(
            Check(
                "uploads",
                Level.WARN,
                f"{len(waiting)} archive(s) wait for their upload in {paths.spool_dir(home)}/"
                f"uploads{told}",
                "`scrub archives push` uploads them now (the worker retries on its own)",
            )
        )
    elif destination is not None:
        checks.append(Check("uploads", Level.OK, "no archive waits for its upload"))
    return checks


def run_checks(env: Mapping[str, str], now: datetime) -> list[Check]:
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    policy_checks, policy = check_policy(env, home)
    checks = list(check_config_dir(config, _shown_paths(config, home, env, policy)))
    checks += check_hooks(config, home)
    checks += check_live_hooks(config)
    checks += check_launcher_homes(config, home)
    checks += check_home_folder(home)
    checks += policy_checks
    worker = check_worker(home, env)
    checks += check_spool(home, now.timestamp(), worker_can_run=worker.level is not Level.WARN)
    checks.append(worker)
    checks += check_leftovers(config, home, policy)
    checks += check_object_storage(home, policy)
    if config.is_dir():
        checks += check_cleanup(config, home, policy, now)
    record = install_record.read_record(home)
    schedule = record.get("schedule")
    if isinstance(schedule, dict):
        checks.append(Check("schedule", Level.OK, f"retention scheduled with {schedule['kind']}"))
    else:
        checks.append(
            Check(
                "schedule",
                Level.INFO,
                "retention is not scheduled",
                "`scrub install --schedule systemd` (or cron) runs it nightly",
            )
        )
    return checks


def _shown_paths(
    config: Path, home: Path, env: Mapping[str, str], policy: Policy | None
) -> Callable[[Path], str]:
    """Paths as every report shows them: each project folder's name cleaned of the secrets its
    sessions' cwds hold (usecases/shown_names.FolderNames), worked out on the first warning."""
    names: FolderNames | None = None

    def show(path: Path) -> str:
        nonlocal names
        if names is None:
            from scrubber.transcript.sessions import discover
            from scrubber.usecases.shown_names import folder_names

            infos = discover(config).sessions if paths.is_config_dir(config) else ()
            names = folder_names(policy or Policy(), home, env, infos)
        return names.text(str(path))

    return show


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor_command(
        output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    ) -> None:
        """Check the installation end to end and print what to fix.

        Hooks registered and pointing at existing files, the policy valid, recipients present,
        the archive folder writable, the spool empty or draining, the worker able to run, the
        config directory's permissions, and Claude Code's effective cleanupPeriodDays with the
        sessions its sweep would delete soon. Exit 0 when all is well, 1 otherwise.

        Examples:

          scrub doctor

          scrub doctor --format json
        """
        checks = run_checks(common.env(), datetime.now(UTC))
        problems = [c for c in checks if c.level in (Level.WARN, Level.FAIL)]
        if output_format == "json":
            typer.echo(
                json.dumps(
                    {"schema": "scrubber.doctor/1", "ok": not problems,
                     "checks": [asdict(c) for c in checks]},
                    indent=2,
                )
            )  # fmt: skip
        else:
            for check in checks:
                typer.echo(f"{check.level.value:<5} {check.name}: {check.message}")
                if check.fix and check.level is not Level.OK:
                    typer.echo(f"      fix: {check.fix}")
            typer.echo("all good" if not problems else f"{len(problems)} thing(s) to look at")
        if problems:
            raise typer.Exit(int(ExitCode.FINDINGS))
