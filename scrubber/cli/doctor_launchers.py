"""`scrub doctor`: whether the hooks registered in settings.json run scrub with the home doctor
is looking at.

A launcher `scrub install` writes pins the SCRUB_HOME it was installed for, when that is not
the default one (launchers.pinned_environment). A doctor run with another SCRUB_HOME (or none)
would otherwise check a home no hook uses and say all is well; a launcher from before homes
were pinned, in a home that is not the default, silently runs with whatever home Claude Code's
environment gives it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from scrubber import paths
from scrubber.cli.doctor_model import Check, Level
from scrubber.durable import UnsafeFolderError
from scrubber.errors import ScrubberError
from scrubber.install import launchers, settings, settings_file

NAME = "hook home"


def _our_commands(data: dict[str, object]) -> Iterator[str]:
    for event in ("SessionEnd", *launchers.LIVE_LAUNCHERS):
        yield from settings.event_hook_commands(data, event)
    status = data.get("statusLine")
    if isinstance(status, dict) and launchers.is_ours(status.get("command")):
        yield str(status["command"])


def _launcher(command: str) -> Path | None:
    """The launcher a command of ours runs (the word named like one of ours)."""
    names = {
        launchers.SESSION_END_LAUNCHER,
        launchers.STATUS_LINE_LAUNCHER,
        *(name for name, _, _ in launchers.LIVE_LAUNCHERS.values()),
    }
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return next((Path(w) for w in words[:3] if Path(w).name in names), None)


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def check_launcher_homes(config: Path, home: Path) -> list[Check]:
    """A warning per home the registered launchers run with that is not `home`."""
    try:
        data = settings_file.read_settings(settings_file.settings_file(config)).data
    except ScrubberError:
        return []  # check_hooks reported it
    checks: list[Check] = []
    seen: set[str] = set()
    for command in _our_commands(data):
        launcher = _launcher(command)
        pins = launchers.pinned_in(launcher) if launcher is not None else None
        if launcher is None or pins is None:
            continue  # missing or unreadable: check_hooks says so
        installed_for = launcher.parent.parent
        pinned = pins.get("SCRUB_HOME")
        key = f"{pinned}:{installed_for}"
        if key in seen:
            continue
        seen.add(key)
        if pinned is not None and not _same(Path(pinned), home):
            checks.append(_elsewhere(Path(pinned), home, pins))
        elif pinned is None and not _same(installed_for, home):
            checks.append(
                Check(
                    NAME,
                    Level.WARN,
                    f"the hooks' launchers were written for {installed_for} but do not record "
                    f"it: they run with the home of Claude Code's environment ({home} here), "
                    f"whose policy may not be the one installed",
                    f"run `SCRUB_HOME={shlex.quote(str(installed_for))} scrub install` again "
                    "(it records the home in the launchers)",
                )
            )
    return checks


def _elsewhere(pinned: Path, home: Path, pins: dict[str, str]) -> Check:
    missing = "" if pins.get("SCRUB_POLICY") or paths.policy_file(pinned).exists() else (
        f"; {paths.policy_file(pinned)} does not exist, so they run with the built-in policy"
    )  # fmt: skip
    return Check(
        NAME,
        Level.WARN,
        f"the hooks run scrub with SCRUB_HOME={pinned}, not {home} (the home this doctor "
        f"checks){missing}",
        f"`SCRUB_HOME={shlex.quote(str(pinned))} scrub doctor` checks the hooks' home; "
        "`scrub install` in this environment registers this one instead",
    )


def check_home_folder(home: Path) -> list[Check]:
    """Scrubber's own folder, judged as every command that writes in it judges it: one writable
    by group or others, owned by someone else, or a link inside it is refused there (a file
    planted in it is a cache, a job, a pins file). The SessionEnd hook then queues nothing, and
    cannot log why either: said here."""
    # The folder and the two the SessionEnd hook writes in (its jobs, its log).
    for folder in (home, paths.spool_dir(home), home / "log"):
        try:
            paths.check_private_dir(folder, home)
        except UnsafeFolderError as error:
            return [
                Check(
                    "scrubber folder",
                    Level.FAIL,
                    f"{error.filename} {error.strerror}: ended sessions are not queued "
                    "(nor logged)",
                    error.hint,
                )
            ]
        except OSError:
            return []  # missing or unreadable: the checks of what lives in it say so
    return []
