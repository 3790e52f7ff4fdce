"""The nightly `scrub retention --apply`: systemd user units or a crontab line, written by
install and removed by uninstall (the texts themselves come from `retention.schedule`)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.errors import ConfigError, ScrubberError, UsageError
from scrubber.install.launchers import pinned_environment, scrub_command
from scrubber.install.report import InstallReport

Runner = Callable[..., Any]  # subprocess.run's shape: crontab and systemctl go through it


def run_command(*args: Any, **kwargs: Any) -> Any:
    import subprocess

    return subprocess.run(*args, **kwargs)  # noqa: PLW1510 - callers pass check=


def check_cron_available(env: Mapping[str, str], home: Path) -> None:
    import shutil

    from scrubber.retention import schedule

    if (
        schedule.cron_skip_reason() is None
        and shutil.which("crontab", path=env.get("PATH")) is None
    ):
        _, line = schedule_preview("cron", env, home)
        raise UsageError(
            "--schedule cron: there is no `crontab` command here",
            "install cron, use --schedule systemd, or add this line to your crontab: "
            + line.strip(),
        )


def _variables(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of a scheduled run: the variables set now, with the ones launchers pin
    made absolute (cron starts in $HOME, systemd in /) and the home pinned when it is not the
    default one, as the hooks get them (launchers.pinned_environment)."""
    from scrubber.retention import schedule

    return {**schedule.schedule_environment(env), **pinned_environment(env)}


def schedule_preview(kind: str, env: Mapping[str, str], home: Path) -> tuple[str, str]:
    from scrubber.retention import schedule

    command = scrub_command()
    variables = _variables(env)
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


def install_schedule(
    kind: str, env: Mapping[str, str], home: Path, report: InstallReport, run: Runner
) -> dict[str, Any] | None:
    import shutil

    from scrubber.retention import schedule

    command = scrub_command()
    variables = _variables(env)
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


def remove_schedule(
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
