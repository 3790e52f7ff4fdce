"""Scheduling, tested as generated text: `systemd-analyze verify` on the units, crontab syntax
and a real `sh` run of the cron command (these machines run neither systemd nor cron)."""

from __future__ import annotations

import os
import random
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from scrubber.retention.schedule import (
    CRON_MARKER,
    SERVICE_NAME,
    TIMER_NAME,
    add_cron_line,
    cron_line,
    cron_skip_reason,
    install_cron,
    install_cron_file,
    install_systemd,
    remove_cron,
    remove_cron_file,
    remove_cron_line,
    remove_systemd,
    schedule_environment,
    systemd_service,
    systemd_timer,
    user_unit_dir,
)
from tests.skips import INSTALL_FLOCK_SHUF, INSTALL_SYSTEMD_ANALYZE


def fake_scrub(folder: Path) -> Path:
    """An executable standing in for `scrub`: records its arguments and environment."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "scrub"
    script.write_text(
        "#!/bin/sh\n"
        'printf "%s\\n" "$@" > "$(dirname "$0")/args"\n'
        'printf "%s\\n" "$CLAUDE_CONFIG_DIR" "$SCRUB_HOME" > "$(dirname "$0")/env"\n'
    )
    script.chmod(0o755)
    return script


@pytest.fixture
def scrub_with_space(tmp_path: Path) -> Path:
    return fake_scrub(tmp_path / "my tools")


# --- systemd --------------------------------------------------------------------------------


def test_units_say_what_the_issue_asks(scrub_with_space: Path) -> None:
    service = systemd_service([str(scrub_with_space)], {"CLAUDE_CONFIG_DIR": "/home/me/.claude"})
    timer = systemd_timer(randomized_delay="45m")
    for line in ("Type=oneshot", "StandardOutput=journal", "StandardError=journal"):
        assert line in service.splitlines()
    assert f'ExecStart="{scrub_with_space}" retention --apply' in service
    assert "Environment=CLAUDE_CONFIG_DIR=/home/me/.claude" in service
    for line in (
        "OnCalendar=daily",
        "Persistent=true",
        "RandomizedDelaySec=45m",
        "WantedBy=timers.target",
    ):
        assert line in timer.splitlines()


def test_specifiers_dollars_and_quotes_are_escaped(tmp_path: Path) -> None:
    service = systemd_service(["/opt/scrub"], {"SCRUB_HOME": '/srv/100% "x" $HOME'})
    assert 'Environment="SCRUB_HOME=/srv/100%% \\"x\\" $HOME"' in service
    assert systemd_service(["/opt/$weird/scrub"]).count("/opt/$$weird/scrub") == 1
    with pytest.raises(ValueError, match="absolute"):
        systemd_service(["scrub"])
    with pytest.raises(ValueError, match="newline"):
        systemd_service(["/opt/scrub"], {"SCRUB_HOME": "a\n[Service]\nExecStart=/bin/evil"})


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason=INSTALL_SYSTEMD_ANALYZE)
def test_systemd_analyze_verifies_the_units(tmp_path: Path, scrub_with_space: Path) -> None:
    units = tmp_path / "units"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "my claude"), "SCRUB_HOME": str(tmp_path / "100%")}
    install_systemd(units, systemd_service([str(scrub_with_space)], env), systemd_timer())
    done = subprocess.run(
        ["systemd-analyze", "verify", str(units / SERVICE_NAME), str(units / TIMER_NAME)],
        capture_output=True,
        text=True,
        check=False,
        cwd=units,
    )
    assert done.returncode == 0, done.stderr
    # verify exits 0 on unknown keys and bad values, only warning about them.
    assert not re.search(r"Unknown|ignoring|Failed|bad unit", done.stderr), done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason=INSTALL_SYSTEMD_ANALYZE)
def test_the_check_itself_catches_a_broken_unit(tmp_path: Path, scrub_with_space: Path) -> None:
    units = tmp_path / "units"
    units.mkdir()
    (units / SERVICE_NAME).write_text(
        systemd_service([str(scrub_with_space)]).replace("Type=", "Tpye=")
    )
    done = subprocess.run(
        ["systemd-analyze", "verify", str(units / SERVICE_NAME)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Unknown key" in done.stderr


def test_install_and_remove_only_our_units(tmp_path: Path) -> None:
    units = user_unit_dir({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert units == tmp_path / "xdg" / "systemd" / "user"
    assert user_unit_dir({"HOME": "/home/me"}) == Path("/home/me/.config/systemd/user")
    service, timer = install_systemd(units, systemd_service(["/opt/scrub"]), systemd_timer())
    assert stat.S_IMODE(service.stat().st_mode) == 0o644
    install_systemd(units, systemd_service(["/opt/other"]), systemd_timer())  # ours: replaced
    assert "/opt/other" in service.read_text()
    assert remove_systemd(units) == (timer, service)
    assert remove_systemd(units) == ()
    (units / SERVICE_NAME).write_text("[Service]\nExecStart=/usr/bin/true\n")  # the user's own
    with pytest.raises(FileExistsError):
        install_systemd(units, systemd_service(["/opt/scrub"]), systemd_timer())
    assert remove_systemd(units) == ()
    assert (units / SERVICE_NAME).exists()


def test_schedule_environment_keeps_only_what_a_run_needs() -> None:
    env = {"CLAUDE_CONFIG_DIR": "/c", "SCRUB_HOME": "", "PATH": "/bin", "AWS_SECRET": "x"}
    assert schedule_environment(env) == {"CLAUDE_CONFIG_DIR": "/c"}


# --- cron -----------------------------------------------------------------------------------

_FIELD_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


def check_crontab_line(line: str) -> str:
    """crontab(5) syntax of a user crontab line; returns the command as cron hands it to sh."""
    fields = line.split(" ", 5)
    assert len(fields) == 6, line
    for value, (low, high) in zip(fields[:5], _FIELD_RANGES, strict=True):
        if value != "*":
            assert value.isdigit() and low <= int(value) <= high, value
    command = fields[5]
    assert "\n" not in command
    # An unescaped % would end the command; cron turns \% into %.
    assert not re.search(r"(?<!\\)%", command), command
    return command.replace("\\%", "%")


def test_cron_line_syntax_and_shape(tmp_path: Path) -> None:
    line = cron_line(
        ["/opt/scrub"],
        {"SCRUB_HOME": str(tmp_path / "100% home")},
        lock=tmp_path / "state" / "retention.cron.lock",
        log=tmp_path / "log" / "retention.log",
        rng=random.Random(7),
    )
    command = check_crontab_line(line)
    assert "flock -n" in command and "sleep $(shuf -i 0-1800 -n 1)" in command
    assert command.endswith(CRON_MARKER)
    assert 1 <= int(line.split()[1]) <= 5  # at night
    lines = {
        cron_line(["/opt/scrub"], lock=tmp_path / "l", rng=random.Random(i)).split(" ", 2)[0]
        for i in range(20)
    }
    assert len(lines) > 1  # spread over the hour


@pytest.mark.skipif(
    shutil.which("flock") is None or shutil.which("shuf") is None,
    reason=INSTALL_FLOCK_SHUF,
)
def test_cron_command_runs_under_sh(tmp_path: Path, scrub_with_space: Path) -> None:
    home = tmp_path / "home 100%"
    lock = tmp_path / "retention.cron.lock"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "my claude"), "SCRUB_HOME": str(home)}
    line = cron_line(
        [str(scrub_with_space)], env, lock=lock, log=tmp_path / "cron.log", max_sleep=0
    )
    command = check_crontab_line(line)
    done = subprocess.run(
        ["/bin/sh", "-c", command], env={"PATH": os.environ["PATH"]}, check=False, timeout=30
    )
    assert done.returncode == 0
    folder = scrub_with_space.parent
    assert (folder / "args").read_text().split("\n")[:2] == ["retention", "--apply"]
    assert (folder / "env").read_text().split("\n")[:2] == [str(tmp_path / "my claude"), str(home)]
    # While another run holds the lock, flock -n skips this one instead of queueing.
    (folder / "args").unlink()
    with subprocess.Popen(["flock", str(lock), "sleep", "5"]) as holder:
        try:
            for _ in range(50):
                probe = subprocess.run(["flock", "-n", str(lock), "true"], check=False)
                if probe.returncode != 0:
                    break
                subprocess.run(["sleep", "0.1"], check=False)
            done = subprocess.run(
                ["/bin/sh", "-c", command],
                env={"PATH": os.environ["PATH"]},
                check=False,
                timeout=30,
            )
            assert done.returncode != 0 and not (folder / "args").exists()
        finally:
            holder.kill()


def test_cron_lines_are_added_once_and_removed_alone() -> None:
    mine = "5 3 * * * /opt/scrub retention --apply " + CRON_MARKER
    theirs = "0 * * * * /usr/bin/backup\nMAILTO=me@example.org\n"
    once = add_cron_line(theirs, mine)
    twice = add_cron_line(once, mine.replace("5 3", "9 4"))
    assert twice.count(CRON_MARKER) == 1 and "9 4 * * *" in twice
    assert twice.startswith("0 * * * * /usr/bin/backup\nMAILTO=me@example.org\n")
    assert remove_cron_line(twice) == theirs
    assert remove_cron_line(mine + "\n") == ""


class FakeCrontab:
    def __init__(self, text: str | None) -> None:
        self.text = text

    def __call__(self, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if argv == ["crontab", "-l"]:
            if self.text is None:
                return subprocess.CompletedProcess(argv, 1, "", "no crontab for me\n")
            return subprocess.CompletedProcess(argv, 0, self.text, "")
        assert argv == ["crontab", "-"]
        self.text = str(kwargs["input"])
        return subprocess.CompletedProcess(argv, 0, "", "")


def test_install_and_remove_through_crontab() -> None:
    fake = FakeCrontab(None)
    line = "5 3 * * * /opt/scrub retention --apply " + CRON_MARKER
    install_cron(line, run=fake)
    assert fake.text == line + "\n"
    assert remove_cron(run=fake) and fake.text == ""
    assert not remove_cron(run=fake)
    fake.text = "0 1 * * * other\n"
    assert not remove_cron(run=fake) and fake.text == "0 1 * * * other\n"


def test_cron_is_skipped_where_systemd_runs(tmp_path: Path) -> None:
    assert cron_skip_reason(tmp_path / "absent") is None
    reason = cron_skip_reason(tmp_path)
    assert reason is not None and "--schedule systemd" in reason


def test_cron_d_file(tmp_path: Path) -> None:
    line = cron_line(["/opt/scrub"], lock=tmp_path / "l", rng=random.Random(1))
    path = install_cron_file(tmp_path / "cron.d", line, user="claude")
    text = path.read_text().splitlines()
    assert text[1].split(" ")[5] == "claude" and text[1].endswith(CRON_MARKER)
    assert remove_cron_file(tmp_path / "cron.d") and not path.exists()
