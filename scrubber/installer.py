"""Registering scrubber with Claude Code: settings merges, launchers, the install record.

The settings functions are pure (a dict in, a new dict out) and never lose a key: Claude Code's
user `settings.json` holds much more than hooks. Ours are recognised by the launcher names in
their commands, so running the installer twice registers once, and uninstalling removes exactly
our entries, keeping whatever the user added since. The status line is a single value per
settings file (reference note, "Status line"): an existing one is wrapped (our command runs it
with the same stdin and prints its output first) and restored on uninstall.

A settings file that is not valid JSON is refused with the position of the error and never
overwritten. Every write keeps a backup of the previous file under `$SCRUB_HOME/backups/`
(outside the folders Claude Code's sweep deletes), goes through a temp file and a rename, keeps
the file's mode and writes through a symlink to its target (dotfile managers link these files).
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrubber import __version__, paths
from scrubber.durable import atomic_write
from scrubber.errors import ConfigError, ScrubberError, UsageError

if TYPE_CHECKING:
    from scrubber.policy.model import Policy

SESSION_END_LAUNCHER = "scrubber-session-end"
STATUS_LINE_LAUNCHER = "scrubber-status-line"
SETTINGS_NAME = "settings.json"
RECORD_NAME = "install.json"
RECORD_FORMAT = 1
# Claude Code caps a hook's timeout at 60 s (reference note, "Hooks").
MAX_SESSION_END_TIMEOUT = 60
# What --take-over-cleanup writes: observed to delete nothing (reference note, "Cleanup sweep").
TAKE_OVER_DAYS = 99999
_MAX_SETTINGS_BYTES = 4 << 20

Settings = dict[str, Any]


def settings_file(config: Path) -> Path:
    return config / SETTINGS_NAME


def launcher_dir(home: Path) -> Path:
    return home / "bin"


def backups_dir(home: Path) -> Path:
    return home / "backups"


def record_file(home: Path) -> Path:
    return paths.state_dir(home) / RECORD_NAME


def is_ours(command: object) -> bool:
    """A hook or status-line command that runs one of our launchers."""
    return isinstance(command, str) and (
        SESSION_END_LAUNCHER in command or STATUS_LINE_LAUNCHER in command
    )


# -- commands and launchers ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Launchers:
    """The two small scripts `scrub install` writes into `$SCRUB_HOME/bin/`.

    They run under this environment's interpreter with `-S` (no site-packages: start-up is most
    of a hook's time) and put this package's folder on sys.path themselves. The SessionEnd
    launcher tells the hook which interpreter runs the worker (this one, with site-packages).
    """

    python: str
    package_root: str
    session_end: Path
    status_line: Path

    @classmethod
    def for_home(cls, home: Path, python: str | None = None) -> Launchers:
        import scrubber

        folder = launcher_dir(home)
        return cls(
            python=python or sys.executable,
            package_root=str(Path(scrubber.__file__).resolve().parents[1]),
            session_end=folder / SESSION_END_LAUNCHER,
            status_line=folder / STATUS_LINE_LAUNCHER,
        )

    def session_end_text(self) -> str:
        return _launcher_text(
            self.python,
            self.package_root,
            "SessionEnd hook",
            "from scrubber.hooks import session_end\n"
            f"raise SystemExit(session_end.main(worker_python={self.python!r}))\n",
        )

    def status_line_text(self) -> str:
        return _launcher_text(
            self.python,
            self.package_root,
            "status line",
            "from scrubber.hooks import fastpath\nraise SystemExit(fastpath.main())\n",
        )

    def session_end_command(self) -> str:
        return shlex.join([self.python, "-S", str(self.session_end)])

    def status_line_command(self, previous: str | None = None) -> str:
        words = [self.python, "-S", str(self.status_line)]
        if previous:
            words += ["--wrap", previous]
        return shlex.join(words)

    def write(self) -> tuple[Path, Path]:
        paths.ensure_private_dir(self.session_end.parent)
        for path, text in (
            (self.session_end, self.session_end_text()),
            (self.status_line, self.status_line_text()),
        ):
            atomic_write(path, [text.encode()], mode=0o700)
        return self.session_end, self.status_line


def _launcher_text(python: str, root: str, what: str, body: str) -> str:
    return (
        f"#!{python} -S\n"
        f"# scrubber's {what}, written by `scrub install` (`scrub uninstall` removes it).\n"
        "# Runs without site-packages (-S) for a fast start; the package is found here:\n"
        "import sys\n\n"
        f"sys.path.insert(0, {root!r})\n"
        f"{body}"
    )


def wrapped_command(command: str) -> str | None:
    """The previous status-line command our command wraps (`--wrap CMD`), if any."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "--wrap" in words:
        at = words.index("--wrap")
        if at + 1 < len(words):
            return words[at + 1]
    return None


# -- settings files ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SettingsText:
    path: Path
    text: str | None  # None: the file does not exist
    data: Settings


def read_settings(path: Path) -> SettingsText:
    """A settings file as text and data. Raises ConfigError for a file we must not touch."""
    hint = (
        "fix the file (or move it away) and run the command again; scrubber never rewrites a "
        "settings file it cannot read"
    )
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return SettingsText(path, None, {})
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})", hint) from None
    if len(raw) > _MAX_SETTINGS_BYTES:
        raise ConfigError(f"{path}: too large for a settings file", hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text", hint) from None
    if not text.strip():
        return SettingsText(path, text, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        # The decoder names a position and what it expected, never the content.
        raise ConfigError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})",
            hint,
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level", hint)
    return SettingsText(path, text, data)


def render_settings(data: Settings) -> str:
    """JSON as Claude Code writes its settings: two-space indent, keys in their order."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def settings_diff(path: Path, old: str | None, new: str | None) -> str:
    before = [] if old is None else old.splitlines(keepends=True)
    after = [] if new is None else new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, fromfile=f"{path} (now)", tofile=f"{path} (after)", lineterm="\n"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def backup_settings(current: SettingsText, home: Path, *, now: datetime) -> Path | None:
    """Copy the current file into `$SCRUB_HOME/backups/` (0600); None when there is no file."""
    if current.text is None:
        return None
    folder = paths.ensure_private_dir(backups_dir(home))
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{current.path.name}.{stamp}.bak"
    atomic_write(target, [current.text.encode("utf-8")], mode=paths.PRIVATE_FILE_MODE)
    return target


def write_settings(path: Path, text: str) -> None:
    """Atomically replace the file (through a symlink, to its target), keeping its mode."""
    target = path.resolve() if path.is_symlink() else path
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = paths.PRIVATE_FILE_MODE
        target.parent.mkdir(parents=True, exist_ok=True, mode=paths.PRIVATE_DIR_MODE)
    atomic_write(target, [text.encode("utf-8")], mode=mode)


# -- pure merges ------------------------------------------------------------------------------


def _object(data: Settings, key: str, where: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: `{key}` is not a JSON object; scrubber does not change it",
            "fix the settings file (Claude Code's settings reference shows its shape)",
        )
    return value


def _list(data: dict[str, Any], key: str, where: str) -> list[Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise ConfigError(
            f"{where}: `hooks.{key}` is not a list; scrubber does not change it",
            "fix the settings file (Claude Code's settings reference shows its shape)",
        )
    return value


def _our_handler(command: str, timeout: int | None) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    return handler


def add_session_end_hook(
    settings: Settings, command: str, timeout: int | None = None, *, where: str = "settings"
) -> Settings:
    """`settings` with our SessionEnd handler registered once (updated in place if present)."""
    result = copy.deepcopy(settings)
    hooks = _object(result, "hooks", where)
    if hooks is None:
        hooks = result["hooks"] = {}
    groups = _list(hooks, "SessionEnd", where)
    if groups is None:
        groups = hooks["SessionEnd"] = []
    wanted = _our_handler(command, timeout)
    found = False
    emptied = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        before = len(handlers)
        for index, handler in enumerate(handlers):
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                if found:
                    handlers[index] = None  # a second handler of ours: dropped below
                else:
                    handlers[index] = {**handler, **wanted}
                    if timeout is None:
                        handlers[index].pop("timeout", None)
                    found = True
        handlers[:] = [h for h in handlers if h is not None]
        if before and not handlers:
            emptied.append(group)
    groups[:] = [g for g in groups if not any(g is e for e in emptied)]
    if not found:
        groups.append({"hooks": [wanted]})
    return result


def remove_session_end_hook(
    settings: Settings,
    *,
    drop_empty_event: bool = True,
    drop_empty_hooks: bool = True,
    where: str = "settings",
) -> Settings:
    """`settings` without our SessionEnd handlers; groups we emptied go too. An event list or
    `hooks` object left empty is removed when the flags say we created it."""
    result = copy.deepcopy(settings)
    hooks = _object(result, "hooks", where)
    if hooks is None:
        return result
    groups = _list(hooks, "SessionEnd", where)
    if groups is None:
        return result
    kept_groups = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept_groups.append(group)
            continue
        remaining = [h for h in handlers if not (isinstance(h, dict) and is_ours(h.get("command")))]
        if len(remaining) == len(handlers):
            kept_groups.append(group)
        elif remaining:
            kept_groups.append({**group, "hooks": remaining})
    hooks["SessionEnd"] = kept_groups
    if not kept_groups and drop_empty_event:
        del hooks["SessionEnd"]
    if not hooks and drop_empty_hooks:
        del result["hooks"]
    return result


def has_session_end_hook(settings: Mapping[str, Any]) -> list[str]:
    """The commands of our SessionEnd handlers in `settings`."""
    found = []
    hooks = settings.get("hooks")
    groups = hooks.get("SessionEnd") if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                found.append(str(handler["command"]))
    return found


def install_status_line(
    settings: Settings, make_command: Callable[[str | None], str]
) -> tuple[Settings, dict[str, Any] | None]:
    """`settings` with our status line, wrapping the user's; returns the previous value (None
    when there was none, or when ours was already there)."""
    result = copy.deepcopy(settings)
    current = result.get("statusLine")
    if isinstance(current, dict) and is_ours(current.get("command")):
        previous_command = wrapped_command(str(current["command"]))
        result["statusLine"] = {**current, "command": make_command(previous_command)}
        return result, None
    previous_command = None
    if isinstance(current, dict) and current.get("type", "command") == "command":
        command = current.get("command")
        previous_command = command if isinstance(command, str) and command.strip() else None
    elif current is not None:
        raise ConfigError(
            "settings: `statusLine` has a shape scrubber does not know; it is left alone",
            'remove it or make it {"type": "command", "command": …}, then run again',
        )
    ours: dict[str, Any] = {"type": "command", "command": make_command(previous_command)}
    if isinstance(current, dict):
        # Keep the user's padding, refreshInterval and whatever else the object holds.
        ours = {**current, **ours}
    else:
        ours["padding"] = 0
    result["statusLine"] = ours
    return result, copy.deepcopy(current) if isinstance(current, dict) else None


def remove_status_line(
    settings: Settings, previous: Mapping[str, Any] | None, *, known: bool = True
) -> Settings:
    """`settings` with our status line replaced by what it wrapped, or removed.

    `previous` is the value the install record kept (None: there was none); with `known`
    False (no record) the wrapped command is read back from ours.
    """
    result = copy.deepcopy(settings)
    current = result.get("statusLine")
    if not (isinstance(current, dict) and is_ours(current.get("command"))):
        return result  # the user replaced it since: theirs stays
    if known:
        if previous is None:
            del result["statusLine"]
        else:
            result["statusLine"] = copy.deepcopy(dict(previous))
        return result
    wrapped = wrapped_command(str(current["command"]))
    if wrapped:
        restored = {k: v for k, v in current.items() if k != "command"}
        result["statusLine"] = {**restored, "command": wrapped}
    else:
        del result["statusLine"]
    return result


def set_cleanup_days(settings: Settings, days: int) -> Settings:
    result = copy.deepcopy(settings)
    result["cleanupPeriodDays"] = days
    return result


def restore_cleanup_days(settings: Settings, record: Mapping[str, Any]) -> Settings:
    """Undo `set_cleanup_days` when the value is still the one we wrote."""
    result = copy.deepcopy(settings)
    if result.get("cleanupPeriodDays") != record.get("set"):
        return result
    if record.get("had_key"):
        result["cleanupPeriodDays"] = record.get("previous")
    else:
        result.pop("cleanupPeriodDays", None)
    return result


# -- the install record -----------------------------------------------------------------------


def read_record(home: Path) -> dict[str, Any]:
    try:
        data = json.loads(record_file(home).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == RECORD_FORMAT else {}


def write_record(home: Path, record: Mapping[str, Any]) -> Path:
    target = record_file(home)
    paths.ensure_private_dir(target.parent)
    body = {"format": RECORD_FORMAT, "version": __version__, **record}
    atomic_write(target, [(json.dumps(body, indent=2) + "\n").encode()], mode=0o600)
    return target


def remove_record(home: Path) -> None:
    record_file(home).unlink(missing_ok=True)


def command_program_exists(command: str) -> bool:
    """Whether the interpreter and the script a registered command names both exist."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    targets = [w for w in words[:3] if not w.startswith("-")]
    return bool(targets) and all(Path(w).exists() for w in targets[:2])


# -- install and uninstall: the use cases ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InstallOptions:
    recipients: tuple[str, ...] = ()
    recipients_file: Path | None = None
    on_session_end: tuple[str, ...] | None = None
    status_line: bool = False
    session_end_timeout: int | None = None
    schedule: str | None = None  # "systemd" or "cron"
    take_over_cleanup: bool = False
    dry_run: bool = False


@dataclass(slots=True)
class InstallReport:
    """What an install or uninstall did (or, in a dry run, would do). No secret in any field."""

    dry_run: bool
    settings_path: Path
    diff: str = ""
    done: list[str] = field(default_factory=list)  # one line per step
    notes: list[str] = field(default_factory=list)  # things the user should know or do
    backup: Path | None = None
    previews: list[tuple[str, str]] = field(default_factory=list)  # (title, text) in dry runs

    def step(self, text: str) -> None:
        self.done.append(text)


Runner = Callable[..., Any]  # subprocess.run's shape: crontab and systemctl go through it


def _run_default(*args: Any, **kwargs: Any) -> Any:
    import subprocess

    return subprocess.run(*args, **kwargs)  # noqa: PLW1510 - callers pass check=


def scrub_command() -> list[str]:
    """The absolute command that runs `scrub` from this environment (for schedules)."""
    script = Path(sys.executable).parent / "scrub"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "scrubber.cli"]


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
    run: Runner = _run_default,
) -> InstallReport:
    """Write the policy (if none), the launchers and the compiled allowlist, register the hooks
    in the user settings file, and set up the schedule; or, with `dry_run`, say what would be
    done and change nothing. Raises ConfigError/UsageError before writing anything when an input
    is wrong (a malformed settings file, a bad recipient)."""
    from scrubber.hooks.status_line import write_allowlist_state
    from scrubber.policy.load import load_policy, parse_policy, render_default_policy

    now = now or datetime.now(UTC)
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    settings_path = settings_file(config)
    report = InstallReport(options.dry_run, settings_path)
    timeout = options.session_end_timeout
    if timeout is not None and not 1 <= timeout <= MAX_SESSION_END_TIMEOUT:
        raise UsageError(
            f"--session-end-timeout {timeout}: expected 1 to {MAX_SESSION_END_TIMEOUT} seconds",
            "Claude Code caps a hook's timeout at 60 seconds",
        )
    if options.schedule not in (None, "systemd", "cron"):
        raise UsageError(f"--schedule {options.schedule!r}: expected systemd or cron")
    current = read_settings(settings_path)  # refuses a malformed file before anything is written
    record = read_record(home)

    # The policy: written from the commented template when there is none.
    policy_path = paths.policy_file(home)
    policy_text: str | None = None
    asked = bool(options.recipients or options.recipients_file or options.on_session_end)
    if policy_path.exists() or env.get("SCRUB_POLICY"):
        loaded = load_policy(None, env)
        policy = loaded.policy
        if asked:
            report.notes.append(
                f"the policy {loaded.describe()} exists and was not changed: --recipient, "
                "-R and --on-session-end only shape a new policy; edit the file instead"
            )
    else:
        policy_text = render_default_policy(
            recipients=list(options.recipients) or None,
            on_session_end=list(options.on_session_end)
            if options.on_session_end is not None
            else None,
            recipients_file=options.recipients_file,
        )
        policy = parse_policy(policy_text, origin=str(policy_path), base_dir=home, env=env)

    # Claude Code's own sweep: scrubber's policy becomes the one clock.
    new = current.data
    cleanup_record = record.get("cleanup")
    if options.take_over_cleanup:
        new, policy_text, cleanup_record = _take_over_cleanup(
            new, config, policy_path, policy_text, policy, record, report
        )

    launchers = Launchers.for_home(home, python)
    new = add_session_end_hook(
        new, launchers.session_end_command(), timeout, where=str(settings_path)
    )
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
        if policy_text is not None:
            report.step(f"would write the policy {policy_path} (the commented template)")
        report.step(f"would write the launchers {launchers.session_end}, {launchers.status_line}")
        if options.schedule:
            report.previews.append(_schedule_preview(options.schedule, env, home))
        report.notes.append("dry run: nothing was written")
        return report

    if options.schedule == "cron":
        _check_cron_available(env, home)  # before anything is written
    paths.ensure_private_dir(home)
    if new_text != current.text:
        report.backup = backup_settings(current, home, now=now)
    # What the settings looked like before the first install, kept from that install on. The
    # record is written before the settings, so an install interrupted later can be undone.
    original = {
        "original_backup": str(report.backup or ""),
        "had_settings_file": current.text is not None,
        "created_hooks": "hooks" not in current.data,
        "created_event": _no_session_end(current.data),
    }
    original.update({k: record[k] for k in original if k in record})
    new_record: dict[str, Any] = {
        "settings": str(settings_path),
        **original,
        "status_line": status_record,
        "cleanup": cleanup_record,
        "schedule": record.get("schedule"),
        "launchers": [str(launchers.session_end), str(launchers.status_line)],
        "python": launchers.python,
    }
    write_record(home, new_record)
    if policy_text is not None:
        existed = policy_path.exists()
        atomic_write(policy_path, [policy_text.encode()], mode=paths.PRIVATE_FILE_MODE)
        report.step(
            f"policy: retention.days written into {policy_path}"
            if existed
            else f"policy: wrote {policy_path} (every key commented)"
        )
    launchers.write()
    report.step(f"launchers: {launchers.session_end} and {launchers.status_line}")
    write_allowlist_state(policy, home)
    if new_text != current.text:
        write_settings(settings_path, new_text or "{}\n")
        report.step(
            f"settings: updated {settings_path}"
            + (f" (backup: {report.backup})" if report.backup else " (new file)")
        )
    else:
        report.step(f"settings: {settings_path} already up to date")
    if options.schedule:
        new_record["schedule"] = _install_schedule(options.schedule, env, home, report, run)
        write_record(home, new_record)
    if not policy.session_end_actions:
        report.notes.append(
            "sessions are only audited when they end: add your age recipient under "
            "archive.recipients in the policy to archive them (`scrub keygen` makes a key pair)"
        )
    status = new.get("statusLine")
    if not (isinstance(status, dict) and is_ours(status.get("command"))):
        report.notes.append(
            "no status line installed: `scrub install --status-line` adds one (a plugin "
            "cannot); an existing status line is kept and shown first"
        )
    return report


def _check_cron_available(env: Mapping[str, str], home: Path) -> None:
    import shutil

    from scrubber.retention import schedule

    if (
        schedule.cron_skip_reason() is None
        and shutil.which("crontab", path=env.get("PATH")) is None
    ):
        _, line = _schedule_preview("cron", env, home)
        raise UsageError(
            "--schedule cron: there is no `crontab` command here",
            "install cron, use --schedule systemd, or add this line to your crontab: "
            + line.strip(),
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


def _schedule_preview(kind: str, env: Mapping[str, str], home: Path) -> tuple[str, str]:
    from scrubber.retention import schedule

    command = scrub_command()
    variables = schedule.schedule_environment(env)
    if kind == "systemd":
        unit_dir = schedule.user_unit_dir(env)
        text = schedule.systemd_service(command, variables) + "\n" + schedule.systemd_timer()
        return (f"systemd units to write in {unit_dir}", text)
    line = schedule.cron_line(
        command,
        variables,
        lock=paths.state_dir(home) / schedule.CRON_LOCK_NAME,
        log=home / "log" / "retention.log",
    )
    return ("crontab line to add", line + "\n")


def _install_schedule(
    kind: str, env: Mapping[str, str], home: Path, report: InstallReport, run: Runner
) -> dict[str, Any] | None:
    import shutil

    from scrubber.retention import schedule

    command = scrub_command()
    variables = schedule.schedule_environment(env)
    if kind == "systemd":
        unit_dir = schedule.user_unit_dir(env)
        try:
            service, timer = schedule.install_systemd(
                unit_dir,
                schedule.systemd_service(command, variables),
                schedule.systemd_timer(),
            )
        except FileExistsError as error:
            raise ConfigError(str(error), "rename or remove that unit, then run again") from None
        report.step(f"schedule: systemd user units {service.name} and {timer.name} in {unit_dir}")
        if schedule.systemd_present() and shutil.which("systemctl"):
            for argv in schedule.systemd_activation_commands():
                done = run(list(argv), capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    report.notes.append(f"`{shlex.join(argv)}` failed; run it yourself")
                    break
            else:
                report.step("schedule: timer enabled")
        else:
            report.notes.append(
                "systemd is not running here: enable the timer where it is, with "
                + " && ".join(shlex.join(a) for a in schedule.systemd_activation_commands())
            )
        report.notes.append(schedule.LINGER_HINT)
        return {"kind": "systemd", "unit_dir": str(unit_dir)}
    reason = schedule.cron_skip_reason()
    if reason is not None:
        report.notes.append(reason)
        return None
    line = schedule.cron_line(
        command,
        variables,
        lock=paths.state_dir(home) / schedule.CRON_LOCK_NAME,
        log=home / "log" / "retention.log",
    )
    try:
        schedule.install_cron(line, run=run)
    except (OSError, FileNotFoundError) as error:
        raise ScrubberError(
            f"cannot install the crontab line ({describe(error)})",
            "add this line with `crontab -e` yourself: " + line,
        ) from None
    report.step("schedule: crontab line added (retention runs nightly)")
    return {"kind": "cron"}


def describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__


def uninstall(
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    run: Runner = _run_default,
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
    ):
        if launcher.exists():
            launcher.unlink()
            report.step(f"removed {launcher}")
    with contextlib.suppress(OSError):
        launcher_dir(home).rmdir()  # only when empty
    schedule_record = record.get("schedule")
    if isinstance(schedule_record, dict):
        _remove_schedule(schedule_record, env, report, run)
    remove_record(home)
    report.notes.append(
        f"kept: the policy, spool, archives, redacted copies and backups under {home}"
    )
    return report


def _restored_text(data: Settings, record: Mapping[str, Any]) -> str | None:
    """The file as it was before the first install when the data is back to that state (so
    its formatting comes back too); else the data rendered."""
    original = record.get("original_backup")
    if original:
        try:
            text = Path(original).read_text("utf-8")
            if json.loads(text) == data:
                return text
        except (OSError, ValueError):
            pass
    elif record.get("had_settings_file") is False and not data:
        return None  # we created the file, and nothing else is in it
    return render_settings(data)


def _remove_schedule(
    schedule_record: Mapping[str, Any], env: Mapping[str, str], report: InstallReport, run: Runner
) -> None:
    from scrubber.retention import schedule

    if schedule_record.get("kind") == "systemd":
        unit_dir = Path(str(schedule_record.get("unit_dir") or schedule.user_unit_dir(env)))
        import shutil

        if schedule.systemd_present() and shutil.which("systemctl"):
            for argv in schedule.systemd_deactivation_commands():
                run(list(argv), capture_output=True, text=True, check=False)
        for path in schedule.remove_systemd(unit_dir):
            report.step(f"schedule: removed {path}")
    elif schedule_record.get("kind") == "cron":
        try:
            if schedule.remove_cron(run=run):
                report.step("schedule: crontab line removed")
        except OSError as error:
            report.notes.append(
                f"could not edit the crontab ({describe(error)}): remove the line ending in "
                f"{schedule.CRON_MARKER} with `crontab -e`"
            )
