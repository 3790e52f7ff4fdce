"""Running retention unattended: a systemd user timer, or a cron line where there is no systemd.

Text generators plus small install/remove helpers that take the target folder (or the crontab
runner) as a parameter; `scrub install --schedule systemd|cron` and `scrub uninstall` call them.
The generated text is what is tested (`systemd-analyze verify`, crontab syntax): the machines
this is developed on run neither systemd nor cron.

- systemd: a oneshot service running `scrub retention --apply` with its output in the journal,
  and a timer (`OnCalendar=daily`, `Persistent=true` so a run missed while the machine was off
  happens at the next boot, `RandomizedDelaySec=` so a fleet of VPSes does not run at once).
  User timers run only while the user is logged in unless lingering is enabled
  (`loginctl enable-linger`), which is what a VPS needs: see `LINGER_HINT`.
- cron: one line with a random minute and hour, a random sleep, and `flock -n` so that two runs
  never overlap (retention itself also refuses a second run, with exit 4). It carries a marker
  comment so that removal touches only our line. When systemd is present the installer uses the
  timer instead (`cron_skip_reason`).

Exit codes a monitor sees (Contracts): 0 done, 1 kept sessions it was asked to remove, 2 policy
or settings error (retention paused), 3 I/O error, 4 another run holds the lock.
"""

from __future__ import annotations

import random
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from scrubber.durable import atomic_write

SERVICE_NAME = "scrub-retention.service"
TIMER_NAME = "scrub-retention.timer"
MARKER = "Written by scrubber (scrub install --schedule); scrub uninstall removes it."
CRON_MARKER = "# scrubber-retention"
CRON_LOCK_NAME = "retention.cron.lock"  # not retention.lock: see cron_line
DEFAULT_RANDOM_DELAY = "1h"
DEFAULT_CRON_SLEEP = 1800  # seconds
SYSTEMD_RUN_DIR = Path("/run/systemd/system")  # exists exactly when systemd is PID 1
# Variables a scheduled run needs to find the same files as the user's shell.
SCHEDULE_ENV_KEYS = ("CLAUDE_CONFIG_DIR", "SCRUB_HOME", "SCRUB_POLICY")
LINGER_HINT = (
    "systemd user timers run only while you are logged in; on a server run "
    "`loginctl enable-linger $USER` once so that retention runs unattended"
)

RETENTION_ARGS = ("retention", "--apply")


def _no_newline(value: str) -> str:
    if "\n" in value or "\r" in value or "\0" in value:
        raise ValueError("a scheduled command cannot hold a newline or NUL")
    return value


def _systemd_quoted(value: str, *, dollar: bool) -> str:
    """One word as systemd reads it: specifiers (`%`) doubled, and `$` doubled in ExecStart=
    where it would otherwise expand a variable (systemd.service(5), "Command lines")."""
    text = _no_newline(value).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if dollar:
        text = text.replace("$", "$$")
    needs_quotes = not text or any(c.isspace() or c in "'\";" for c in value)
    return f'"{text}"' if needs_quotes else text


def schedule_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of `env` a scheduled run must see, as set now."""
    return {k: env[k] for k in SCHEDULE_ENV_KEYS if env.get(k)}


def systemd_service(command: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """The oneshot service. `command` is the scrub executable (absolute path) and any leading
    arguments; `env` the variables to pass (see `schedule_environment`)."""
    if not command or not Path(command[0]).is_absolute():
        raise ValueError("systemd needs the absolute path of the scrub executable")
    exec_start = " ".join(_systemd_quoted(w, dollar=True) for w in (*command, *RETENTION_ARGS))
    lines = [
        f"# {MARKER}",
        "[Unit]",
        "Description=scrubber retention: archive, trash and purge Claude Code sessions by policy",
        "Documentation=man:systemd.timer(5)",
        "",
        "[Service]",
        "Type=oneshot",
        f"ExecStart={exec_start}",
    ]
    for key, value in sorted((env or {}).items()):
        lines.append(f"Environment={_systemd_quoted(f'{key}={value}', dollar=False)}")
    lines += [
        # Output goes to the journal: `journalctl --user -u scrub-retention`.
        "StandardOutput=journal",
        "StandardError=journal",
        "SyslogIdentifier=scrub-retention",
        "Nice=10",
        "IOSchedulingClass=idle",
        # Exit 1 (sessions kept that were due) is left a failure on purpose: it needs a look.
        "",
    ]
    return "\n".join(lines)


def systemd_timer(
    *, randomized_delay: str = DEFAULT_RANDOM_DELAY, on_calendar: str = "daily"
) -> str:
    _no_newline(randomized_delay)
    _no_newline(on_calendar)
    return "\n".join(
        [
            f"# {MARKER}",
            "[Unit]",
            "Description=Run scrubber retention daily",
            "",
            "[Timer]",
            f"OnCalendar={on_calendar}",
            "Persistent=true",
            f"RandomizedDelaySec={randomized_delay}",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ]
    )


def user_unit_dir(env: Mapping[str, str]) -> Path:
    """Where systemd looks for user units: `$XDG_CONFIG_HOME/systemd/user`."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "systemd" / "user"


def install_systemd(unit_dir: Path, service: str, timer: str) -> tuple[Path, Path]:
    """Write both units into `unit_dir` (atomically, 0644). Refuses to overwrite a unit of the
    same name that scrubber did not write."""
    unit_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in ((SERVICE_NAME, service), (TIMER_NAME, timer)):
        path = unit_dir / name
        if path.exists() and not _ours(path):
            raise FileExistsError(f"{path}: exists and was not written by scrubber; not replaced")
        atomic_write(path, [text.encode()], mode=0o644)
        written.append(path)
    return written[0], written[1]


def _ours(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return MARKER in handle.readline()
    except OSError:
        return False


def remove_systemd(unit_dir: Path) -> tuple[Path, ...]:
    """Remove the units scrubber wrote from `unit_dir`; others of the same name stay."""
    removed = []
    for name in (TIMER_NAME, SERVICE_NAME):
        path = unit_dir / name
        if path.is_file() and not path.is_symlink() and _ours(path):
            path.unlink()
            removed.append(path)
    return tuple(removed)


def systemd_activation_commands() -> tuple[tuple[str, ...], ...]:
    return (
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "enable", "--now", TIMER_NAME),
    )


def systemd_deactivation_commands() -> tuple[tuple[str, ...], ...]:
    return (
        ("systemctl", "--user", "disable", "--now", TIMER_NAME),
        ("systemctl", "--user", "daemon-reload"),
    )


def systemd_present(run_dir: Path = SYSTEMD_RUN_DIR) -> bool:
    """systemd is the init system (the test sd_booted(3) makes)."""
    return run_dir.is_dir()


def cron_skip_reason(run_dir: Path = SYSTEMD_RUN_DIR) -> str | None:
    """Why a cron line should not be installed, or None."""
    if systemd_present(run_dir):
        return (
            "systemd is running here: use `scrub install --schedule systemd` (a timer catches "
            "up on missed runs and logs to the journal); no cron line was written"
        )
    return None


# --- cron -----------------------------------------------------------------------------------


def _cron_word(value: str) -> str:
    # In a crontab an unescaped % ends the command (crontab(5)); shlex makes it shell-safe.
    return shlex.quote(_no_newline(value)).replace("%", "\\%")


def cron_line(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    lock: Path,
    log: Path | None = None,
    rng: random.Random | None = None,
    max_sleep: int = DEFAULT_CRON_SLEEP,
) -> str:
    """One crontab line: at a random minute of a random night hour, sleep a random while, then
    run retention under `flock -n LOCK` (skipped, not queued, while a run is in progress).

    The lock is not `state/retention.lock`: flock(1) keeps its own descriptor on the file while
    the command runs, and retention's own lock on the same file would then see itself as busy.
    """
    if not command:
        raise ValueError("no command")
    rng = rng or random.SystemRandom()
    minute, hour = rng.randrange(60), rng.randrange(1, 6)
    for key in env or {}:
        if not key.isidentifier():
            raise ValueError("an environment variable name must be an identifier")
    # Only the value is quoted: a quoted `'KEY=value'` would be a command, not an assignment.
    assignments = " ".join(f"{k}={_cron_word(v)}" for k, v in sorted((env or {}).items()))
    run = " ".join(_cron_word(w) for w in (*command, *RETENTION_ARGS))
    # POSIX sh has no $RANDOM; shuf is in coreutils. No % anywhere (see _cron_word).
    sleep = f"sleep $(shuf -i 0-{int(max_sleep)} -n 1)"
    body = f"{sleep} && {assignments + ' ' if assignments else ''}flock -n {_cron_word(str(lock))} {run}"
    if log is not None:
        body += f" >> {_cron_word(str(log))} 2>&1"
    return f"{minute} {hour} * * * {body} {CRON_MARKER}"


def add_cron_line(crontab: str, line: str) -> str:
    """The crontab with our line in it, replacing any earlier line of ours (idempotent)."""
    kept = [item for item in crontab.splitlines() if not item.rstrip().endswith(CRON_MARKER)]
    return "\n".join([*kept, line]) + "\n"


def remove_cron_line(crontab: str) -> str:
    kept = [item for item in crontab.splitlines() if not item.rstrip().endswith(CRON_MARKER)]
    return "\n".join(kept) + "\n" if kept else ""


Runner = Callable[..., subprocess.CompletedProcess[str]]


def _read_crontab(run: Runner) -> str:
    done = run(["crontab", "-l"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if "no crontab" in (done.stderr or "").lower():
            return ""
        raise OSError(f"crontab -l failed (exit {done.returncode})")
    return str(done.stdout)


def _write_crontab(run: Runner, text: str) -> None:
    done = run(["crontab", "-"], input=text, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(f"crontab - failed (exit {done.returncode})")


def install_cron(line: str, *, run: Runner = subprocess.run) -> str:
    """Put our line into the user's crontab (replacing an older one); returns the new text."""
    text = add_cron_line(_read_crontab(run), line)
    _write_crontab(run, text)
    return text


def remove_cron(*, run: Runner = subprocess.run) -> bool:
    """Remove our line from the user's crontab; False when there was none."""
    current = _read_crontab(run)
    if not any(item.rstrip().endswith(CRON_MARKER) for item in current.splitlines()):
        return False
    _write_crontab(run, remove_cron_line(current))
    return True


def install_cron_file(folder: Path, line: str, *, user: str) -> Path:
    """The same line as an `/etc/cron.d`-style file in `folder` (these name the user)."""
    minute, hour, dom, month, dow, rest = line.split(" ", 5)
    path = folder / "scrubber-retention"
    text = f"# {MARKER}\n{minute} {hour} {dom} {month} {dow} {_no_newline(user)} {rest}\n"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, [text.encode()], mode=0o644)
    return path


def remove_cron_file(folder: Path) -> bool:
    path = folder / "scrubber-retention"
    if path.is_file() and not path.is_symlink() and _ours(path):
        path.unlink()
        return True
    return False
