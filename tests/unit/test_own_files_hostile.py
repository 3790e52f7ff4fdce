"""Scrubber's own lock and log files, planted as links (or FIFOs) by someone else.

Everything under $SCRUB_HOME may have been planted. A link at `state/worker.lock` made the
SessionEnd worker truncate its target (~/.bashrc); links at the other locks made files where
they pointed, links at the logs had hook lines appended to their targets. Each test here
plants one, runs what opens that file, and checks the target kept its bytes and its mtime.
"""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scrubber import durable, paths
from scrubber.errors import ExitCode, ScrubberError
from scrubber.hooks import detach, live_common, post_tool_use, session_end, status_scan
from scrubber.hooks import worker as worker_module
from scrubber.hooks.files import append_log_line
from scrubber.usecases.redact_in_place import file_lock
from tests.conftest import CliResult, Sandbox

VICTIM_TEXT = b'export PATH=$PATH:/opt/bin\nalias ll="ls -l"\n'


class Victim:
    """A file of the user's outside $SCRUB_HOME that a planted link points at."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_bytes(VICTIM_TEXT)
        old = time.time() - 3600
        os.utime(path, (old, old))
        self.mtime_ns = path.stat().st_mtime_ns

    def plant_link(self, at: Path) -> Path:
        at.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        at.symlink_to(self.path)
        return at

    def assert_untouched(self) -> None:
        assert self.path.read_bytes() == VICTIM_TEXT
        assert self.path.stat().st_mtime_ns == self.mtime_ns


@pytest.fixture
def victim(sandbox: Sandbox) -> Victim:
    return Victim(sandbox.home / ".bashrc")


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail instead of hanging when an open() waits on a FIFO."""

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError("blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# --- the helper -----------------------------------------------------------------------------


def test_open_own_file_creates_a_private_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    old_umask = os.umask(0)
    try:
        fd = durable.open_own_file(path, os.O_RDWR)
    finally:
        os.umask(old_umask)
    try:
        st = os.fstat(fd)
        assert stat.S_IMODE(st.st_mode) == 0o600
        assert os.get_blocking(fd)  # O_NONBLOCK was only for the open
        assert not os.get_inheritable(fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("plant", "problem"),
    [
        (lambda p, t: p.symlink_to(t), "is a symbolic link; not followed"),
        (lambda p, t: os.link(t, p), "has 2 names (a hard link to another file)"),
        (lambda p, t: p.mkdir(), "is a folder, not a regular file"),
        (lambda p, t: os.mkfifo(p), "is a FIFO, not a regular file"),
    ],
)
@pytest.mark.parametrize("flags", [os.O_RDWR, os.O_WRONLY | os.O_APPEND])
def test_open_own_file_refuses_what_is_not_a_file_of_ours(
    tmp_path: Path,
    plant: Callable[[Path, Path], None],
    problem: str,
    flags: int,
    no_hang: None,
) -> None:
    victim = Victim(tmp_path / "victim")
    path = tmp_path / "own.log"
    plant(path, victim.path)
    with pytest.raises(durable.UnsafeFileError) as refused:
        durable.open_own_file(path, flags)
    assert problem in refused.value.message
    assert f"remove {path}" in refused.value.hint
    victim.assert_untouched()


# --- the worker's lock ----------------------------------------------------------------------


def test_a_link_at_the_worker_lock_is_never_truncated(
    sandbox: Sandbox, victim: Victim, capsys: pytest.CaptureFixture[str]
) -> None:
    victim.plant_link(sandbox.scrub_home / "state" / worker_module.LOCK_NAME)
    assert worker_module.main(["--once"]) == ExitCode.RUNTIME
    victim.assert_untouched()
    assert "worker.lock: is a symbolic link; not followed" in capsys.readouterr().err
    log = paths.activity_log(sandbox.scrub_home).read_text().splitlines()
    assert json.loads(log[-1])["event"] == "refused"


def test_scrub_worker_says_what_to_do_about_a_planted_lock(
    sandbox: Sandbox, victim: Victim, scrub_cli: Callable[..., CliResult]
) -> None:
    lock = victim.plant_link(sandbox.scrub_home / "state" / worker_module.LOCK_NAME)
    result = scrub_cli("worker", "--once")
    assert result.returncode == ExitCode.RUNTIME
    assert f"{lock}: is a symbolic link; not followed" in result.stderr
    assert f"hint: check who put it there, then remove {lock}" in result.stderr
    victim.assert_untouched()


# --- a command's lock -----------------------------------------------------------------------


def test_a_link_at_the_retention_lock_stops_retention(
    sandbox: Sandbox, demo_config: Path, victim: Victim, scrub_cli: Callable[..., CliResult]
) -> None:
    lock = victim.plant_link(sandbox.scrub_home / "state" / "retention.lock")
    result = scrub_cli("retention", "--apply")
    assert result.returncode == ExitCode.RUNTIME
    assert f"{lock}: is a symbolic link; not followed" in result.stderr
    assert "hint: check who put it there" in result.stderr
    victim.assert_untouched()


def test_a_fifo_at_the_retention_lock_is_refused_at_once(
    sandbox: Sandbox, demo_config: Path, scrub_cli: Callable[..., CliResult], no_hang: None
) -> None:
    lock = sandbox.scrub_home / "state" / "retention.lock"
    lock.parent.mkdir(parents=True, mode=0o700)
    os.mkfifo(lock)
    result = scrub_cli("retention", "--apply")
    assert result.returncode == ExitCode.RUNTIME
    assert f"{lock}: is a FIFO, not a regular file; not used" in result.stderr


def test_a_link_at_an_in_place_lock_is_refused(sandbox: Sandbox, victim: Victim) -> None:
    lock_dir = sandbox.scrub_home / "state" / "locks"
    target = sandbox.root / "t.jsonl"
    target.write_text("{}\n")
    with file_lock(lock_dir, target):  # makes the lock, to learn its name
        pass
    (lock,) = lock_dir.iterdir()
    lock.unlink()
    victim.plant_link(lock)
    with (
        pytest.raises(ScrubberError, match="is a symbolic link; not followed"),
        file_lock(lock_dir, target),
    ):
        pytest.fail("locked through a link")
    victim.assert_untouched()


def test_a_link_at_a_status_scan_lock_means_no_scan(sandbox: Sandbox, victim: Victim) -> None:
    lock = victim.plant_link(sandbox.scrub_home / "state" / "status" / "x.lock")
    assert status_scan._try_lock(lock) is None
    victim.assert_untouched()


# --- appended logs --------------------------------------------------------------------------


def test_the_session_end_hook_appends_nothing_through_a_planted_log(
    sandbox: Sandbox, victim: Victim
) -> None:
    victim.plant_link(session_end.hook_log(sandbox.scrub_home))
    env = sandbox.variables()
    assert session_end.main([], stdin=io.BytesIO(b"not json"), env=env) == 0
    victim.assert_untouched()


def test_live_masking_goes_on_with_its_logs_planted(sandbox: Sandbox, tmp_path: Path) -> None:
    logs = sandbox.scrub_home / "log"
    victims = [Victim(tmp_path / name) for name in ("activity", "live")]
    victims[0].plant_link(logs / "activity.jsonl")
    victims[1].plant_link(logs / live_common.LIVE_LOG)
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
    payload = {"tool_name": "Bash", "tool_response": {"stdout": f"token={token}\n"}}
    out = io.StringIO()
    stdin = io.BytesIO(json.dumps(payload).encode())
    assert post_tool_use.main([], stdin=stdin, stdout=out, env=sandbox.variables()) == 0
    assert token not in out.getvalue() and "REDACTED" in out.getvalue()
    for each in victims:
        each.assert_untouched()


def test_a_log_folder_planted_as_a_link_is_never_written_through(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """`$SCRUB_HOME/log` a link to a folder someone else chose: the hooks' log lines and a
    detached child's stderr go nowhere, never into that folder; the child still runs."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = sandbox.scrub_home
    home.mkdir(parents=True, exist_ok=True)
    (home / "log").symlink_to(elsewhere)
    with pytest.raises(durable.UnsafeFolderError):
        append_log_line(home / "log" / "hook.log", "a line", home=home)
    marker = sandbox.root / "ran"
    code = f"import sys; open({str(marker)!r}, 'w').write('ran'); print('noise', file=sys.stderr)"
    detach.spawn_detached(
        [sys.executable, "-c", code], dict(os.environ), home / "log" / "worker.log", sandbox.root,
        home=home,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text() == "ran"
    # The SessionEnd hook on a payload it logs about: exit 0, nothing written there either.
    assert session_end.main([], stdin=io.BytesIO(b"not json"), env=sandbox.variables()) == 0
    time.sleep(0.2)  # the child's stderr line, had it gone to the log
    assert list(elsewhere.iterdir()) == []


def test_append_log_line_refuses_a_fifo_without_waiting(tmp_path: Path, no_hang: None) -> None:
    log = tmp_path / "hook.log"
    os.mkfifo(log)
    with pytest.raises(durable.UnsafeFileError):
        append_log_line(log, "a line", home=tmp_path)


def test_a_detached_child_runs_with_its_log_planted(sandbox: Sandbox, victim: Victim) -> None:
    log = victim.plant_link(sandbox.scrub_home / "log" / "worker.log")
    marker = sandbox.root / "ran"
    code = f"import sys; open({str(marker)!r}, 'w').write('ran'); print('noise', file=sys.stderr)"
    detach.spawn_detached(
        [sys.executable, "-c", code], dict(os.environ), log, sandbox.root, home=sandbox.scrub_home
    )
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text() == "ran"
    time.sleep(0.2)  # its stderr line, had it gone to the log
    victim.assert_untouched()
