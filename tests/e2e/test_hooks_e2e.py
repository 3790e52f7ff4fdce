"""The hooks as Claude Code runs them: real processes, JSON on stdin, no terminal, a new
session, temp CLAUDE_CONFIG_DIR / SCRUB_HOME / HOME with real-format transcripts (the demo
config). `scrub install` registers them; the commands it wrote into settings.json are run
through a shell exactly as Claude Code does; the detached worker's results are checked on disk:
archives decrypt, redacted copies hold no planted secret, logs hold no secret, and a worker
killed mid-job is completed by the next run without doing anything twice.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyrage
import pytest

from scrubber.archive.keys import generate_identity
from scrubber.demo import build_demo_config, demo_manifest, write_large_transcript
from scrubber.hooks.spool import Job, Spool, SpoolState
from scrubber.hooks.worker import lock_file as worker_lock_file

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "hooks" / "session-end"
STATUS_SHIM = ROOT / "hooks" / "status-line"
FULL = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
PROJECT = "-home-demo-work-shop-api"
SECRETS = tuple(n for s in demo_manifest().secrets for n in s.needles())


@dataclass
class World:
    root: Path
    config: Path
    identity: Any

    @property
    def home(self) -> Path:
        return self.config / "scrubber"

    @property
    def transcript(self) -> Path:
        return self.config / "projects" / PROJECT / f"{FULL}.jsonl"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_", "SCRUB_", "XDG_")) and k != "HOME"
        }
        env.update(
            CLAUDE_CONFIG_DIR=str(self.config),
            HOME=str(self.root / "home"),
            XDG_CONFIG_HOME=str(self.root / "xdg"),
            XDG_DATA_HOME=str(self.root / "xdg-data"),
            # The status line's detached scan leaves a second after the transcript went quiet
            # (default: minutes), so no test leaves a process behind for long.
            SCRUB_STATUS_LINE_LINGER="1",
        )
        env.update(extra)
        return env

    def scrub(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "scrubber.cli", *args],
            env=self.env(**extra),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def settings(self) -> dict[str, Any]:
        return dict(json.loads((self.config / "settings.json").read_text()))

    def hook_command(self) -> str:
        [group] = self.settings()["hooks"]["SessionEnd"]
        return str(group["hooks"][0]["command"])

    def run_as_claude(
        self, command: str, stdin: bytes, **extra: str
    ) -> subprocess.CompletedProcess[bytes]:
        """How Claude Code runs a hook: `sh -c`, JSON on a pipe, no terminal, its own process
        group, cwd = the project."""
        return subprocess.run(  # noqa: S602 - hook commands are shell commands
            command,
            shell=True,
            input=stdin,
            capture_output=True,
            env=self.env(**extra),
            cwd=self.root,
            start_new_session=True,
            timeout=60,
            check=False,
        )

    def payload(self, session: str = FULL, transcript: Path | None = None, **fields: Any) -> bytes:
        data = {
            "session_id": session,
            "transcript_path": str(transcript or self.transcript),
            "cwd": "/home/demo/work/shop-api",
            "hook_event_name": "SessionEnd",
            "reason": "other",
            "prompt_id": "p-1",
            **fields,
        }
        return json.dumps(data).encode()

    def activity(self) -> list[dict[str, Any]]:
        path = self.home / "log" / "activity.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def wait_for(self, condition: Callable[[], bool], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                logs = {p.name: p.read_text()[-2000:] for p in (self.home / "log").glob("*")}
                raise AssertionError(f"timed out; logs: {logs}")
            time.sleep(0.05)

    def done(self, session: str = FULL) -> bool:
        return any(
            r.get("event") == "done" and r.get("session_id") == session for r in self.activity()
        )

    def archives(self) -> list[Path]:
        return sorted((self.home / "archives").rglob("*.tar.gz.age"))

    def logs_text(self) -> str:
        return "".join(p.read_text(errors="replace") for p in (self.home / "log").glob("*"))


@pytest.fixture
def world(tmp_path: Path, warm_prefilter: Any) -> Iterator[World]:
    config = build_demo_config(tmp_path)
    (tmp_path / "home").mkdir()
    made = World(tmp_path, config, generate_identity())
    # Scrubber's folder holds a key and the prefilter databases compiled under it, as after a
    # first scan (tests/conftest.py): each hook and worker process would compile them again.
    warm_prefilter.seed(made.home)
    yield made
    warm_prefilter.keep(made.home)


def installed(world: World, *actions: str) -> World:
    done = world.scrub(
        "install",
        "--recipient",
        world.identity.recipient().encode(),
        "--on-session-end",
        ",".join(actions),
        "--status-line",
    )
    assert done.returncode == 0, done.stderr
    return world


def decrypt(world: World, archive: Path) -> dict[str, bytes]:
    identity = pyrage.x25519.Identity.from_str(world.identity.encode())
    data = pyrage.decrypt(archive.read_bytes(), [identity])
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def assert_no_secret(text: str) -> None:
    leaked = [needle[:4] for needle in SECRETS if needle in text]
    assert not leaked, f"planted secrets found (prefixes): {leaked}"


@pytest.mark.slow
def test_session_end_archives_and_redacts_in_the_background(world: World) -> None:
    installed(world, "archive", "redact-copy")
    started = time.monotonic()
    done = world.run_as_claude(world.hook_command(), world.payload())
    elapsed = time.monotonic() - started
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert elapsed < 1.5  # Claude Code's budget for all SessionEnd hooks together
    world.wait_for(world.done)
    # The job is gone only after full success.
    spool = Spool(world.home)
    assert spool.jobs() == [] and spool.jobs(SpoolState.ACTIVE) == []
    # The archive decrypts and holds the session bundle, paths relative to the config dir.
    [archive] = world.archives()
    assert archive.parent.name == FULL and archive.parent.parent.name == PROJECT
    files = decrypt(world, archive)
    assert files[f"projects/{PROJECT}/{FULL}.jsonl"] == world.transcript.read_bytes()
    assert any(name.startswith(f"file-history/{FULL}/") for name in files)
    # The redacted copy is outside projects/ (Claude Code's sweep) and clean.
    copy = world.home / "redacted" / "projects" / PROJECT / f"{FULL}.jsonl"
    assert copy.stat().st_mode & 0o777 == 0o600
    text = copy.read_text()
    assert "[REDACTED:" in text
    assert_no_secret(text)
    assert len(text.splitlines()) == len(world.transcript.read_text().splitlines())
    for side in (world.home / "redacted").rglob("*"):
        if side.is_file():
            assert_no_secret(side.read_text(errors="replace"))
    # Every action logged as one JSON line, and no log holds a secret.
    events = [r["event"] for r in world.activity() if r.get("session_id") == FULL]
    assert events == ["archive", "redact-copy", "done"]
    assert_no_secret(world.logs_text())
    assert "queued (reason other" in (world.home / "log" / "hook.log").read_text()


def _worker_lock_held(home: Path) -> bool:
    try:
        fd = os.open(worker_lock_file(home), os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the lock if we took it
    return False


@pytest.mark.slow
def test_two_hooks_for_one_session_make_one_job_and_one_archive(world: World) -> None:
    installed(world, "archive")
    # The first hook only queues: a worker it started could finish the job before the second
    # hook runs (a warm machine does it in well under a second), and then there is nothing
    # left for the second to find a duplicate of.
    world.run_as_claude(world.hook_command(), world.payload(), SCRUB_NO_WORKER="1")
    # The plugin's shim, registered too, fires for the same session.
    world.run_as_claude(str(SHIM), world.payload())
    world.wait_for(world.done)
    # Each hook may have started a detached worker: the second can take the lock just after
    # the first lets go of it. This run drains whatever is still queued once no worker holds
    # the lock (exit 4 says one still does), and must find nothing more to archive.
    runs: list[subprocess.CompletedProcess[str]] = []

    def drained_alone() -> bool:
        if _worker_lock_held(world.home):
            return False
        runs.append(world.scrub("worker"))
        return runs[-1].returncode != 4

    world.wait_for(drained_alone)
    assert runs[-1].returncode == 0, runs[-1].stderr
    assert len(world.archives()) == 1
    # The first job was still queued when the second hook came (no worker ran before it).
    assert "duplicate" in (world.home / "log" / "hook.log").read_text()


@pytest.mark.slow
def test_a_worker_killed_mid_job_is_completed_by_the_next_run(world: World) -> None:
    installed(world, "archive", "redact-copy")
    big = write_large_transcript(world.transcript, 10 << 20, seed=3)
    os.utime(world.transcript, (time.time() - 60, time.time() - 60))
    spool = Spool(world.home)
    spool.enqueue(Job(FULL, str(world.transcript), ended_at=time.time(), transcript_size=big.size))
    worker = subprocess.Popen(
        [sys.executable, "-m", "scrubber.hooks.worker"],
        env=world.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    active = spool.active_path(FULL)

    def archived_not_finished() -> bool:
        job = json.loads(active.read_text()) if active.exists() else {}
        return "archive" in job.get("done", [])

    try:
        world.wait_for(archived_not_finished)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert not world.done()
    [archive] = world.archives()
    first_bytes = archive.read_bytes()
    # The next run (the cron job, `scrub worker`, or the next hook) finishes it.
    done = world.scrub("worker")
    assert done.returncode == 0, done.stderr
    assert world.done()
    assert world.archives() == [archive] and archive.read_bytes() == first_bytes
    copy = world.home / "redacted" / "projects" / PROJECT / f"{FULL}.jsonl"
    text = copy.read_text()
    for secret in big.secrets:
        for needle in secret.needles():
            assert needle not in text
    events = [r["event"] for r in world.activity()]
    assert "recovered" in events
    assert events.count("archive") == 1 and events.count("redact-copy") == 1


@pytest.mark.slow
def test_a_job_impossible_by_configuration_is_parked_then_retried(world: World) -> None:
    installed(world, "archive")
    policy = world.home / "policy.yaml"
    good = policy.read_text()
    recipient = world.identity.recipient().encode()
    policy.write_text(
        good.replace(f"    - {recipient}\n", "").replace("  recipients:\n", "  recipients: []\n")
    )
    world.run_as_claude(world.hook_command(), world.payload(), SCRUB_NO_WORKER="1")
    done = world.scrub("worker")
    assert done.returncode == 0 and "1 failed" in done.stdout
    [failed] = Spool(world.home).jobs(SpoolState.FAILED)
    assert "recipients" in (failed.job.last_error or "")
    doctor = world.scrub("doctor")
    assert doctor.returncode == 1
    assert "failed" in doctor.stdout and "--retry-failed" in doctor.stdout
    policy.write_text(good)
    done = world.scrub("worker", "--retry-failed")
    assert done.returncode == 0, done.stderr
    assert world.done() and len(world.archives()) == 1


@pytest.mark.slow
def test_no_actions_records_an_audit_summary(world: World) -> None:
    assert world.scrub("install").returncode == 0
    world.run_as_claude(world.hook_command(), world.payload())
    world.wait_for(world.done)
    [summary] = [r for r in world.activity() if r["event"] == "audit-summary"]
    assert summary["distinct"] >= 5 and "github-token" in summary["by_kind"]
    assert world.archives() == []
    # `scrub sessions` shows the count while the transcript is still the audited one.
    cache = json.loads((world.home / "state" / "audit-cache.json").read_text())
    entry = cache["sessions"][FULL]
    assert entry["distinct"] == summary["distinct"]
    assert entry["transcript_size"] == world.transcript.stat().st_size
    assert_no_secret(world.logs_text())


@pytest.mark.parametrize(
    ("stdin", "logged"),
    [
        (b"", "ignored: empty input"),
        (b"{not json", "ignored: input is not JSON"),
        (b'{"session_id": "s", "transcript_path": "/etc/passwd.jsonl"}', "outside"),
        (b'{"session_id": "s", "transcript_path": "/tmp/x.txt"}', "not a .jsonl"),
    ],
)
def test_bad_input_exits_0_silently_and_logs_why(world: World, stdin: bytes, logged: str) -> None:
    done = world.run_as_claude(str(SHIM), stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert logged in (world.home / "log" / "hook.log").read_text()
    assert Spool(world.home).jobs() == []


def test_a_session_that_never_wrote_a_transcript(world: World) -> None:
    missing = world.config / "projects" / PROJECT / "0f0f0f0f-aaaa-bbbb-cccc-000000000000.jsonl"
    payload = world.payload("0f0f0f0f-aaaa-bbbb-cccc-000000000000", missing, reason="resume")
    done = world.run_as_claude(str(SHIM), payload, SCRUB_NO_WORKER="1")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert "transcript not there (yet)" in (world.home / "log" / "hook.log").read_text()


def _shim_copy(tmp_path: Path) -> Path:
    """The plugin's SessionEnd shim, copied where no `scrubber` package is beside it."""
    plugin = tmp_path / "plugin" / "hooks"
    plugin.mkdir(parents=True)
    shutil.copy(SHIM, plugin / "session-end")
    return plugin / "session-end"


def _run_shim(shim: Path, world: World, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    # -I -S: no site-packages and no PYTHONPATH, so `scrubber` cannot be imported at all.
    return subprocess.run(
        [sys.executable, "-I", "-S", str(shim)],
        input=payload,
        capture_output=True,
        env=world.env(),
        start_new_session=True,
        timeout=30,
        check=False,
    )


def test_the_plugin_shim_records_the_job_even_without_the_package(
    world: World, tmp_path: Path
) -> None:
    shim = _shim_copy(tmp_path)
    done = _run_shim(shim, world, world.payload())
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [spooled] = Spool(world.home).jobs()
    assert spooled.job.session_id == FULL and spooled.job.transcript_size is not None
    assert spooled.job.transcript_size == world.transcript.stat().st_size
    log = (world.home / "log" / "hook.log").read_text()
    assert "fallback" in log and "install.sh" in log
    outside = _run_shim(shim, world, world.payload(transcript=tmp_path / "x.jsonl"))
    assert outside.returncode == 0
    assert len(Spool(world.home).jobs()) == 1


def test_the_plugin_shims_fallback_follows_no_link_and_keeps_only_plain_reasons(
    world: World, tmp_path: Path
) -> None:
    shim = _shim_copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "log").symlink_to(elsewhere)  # planted: the log would land there
    token = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    odd = f"x\n2026-01-01T00:00:00Z session-end: forged \u001b[31m {token}"
    done = _run_shim(shim, world, world.payload(reason=odd))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    [spooled] = Spool(world.home).jobs()
    assert spooled.job.reason == "other"
    assert token not in (world.home / "spool" / f"{FULL}.json").read_text()
    # `$` matches before a final line break: an id or reason ending in one is refused too.
    for fields in ({"reason": "clear\n"}, {"session_id": "abc\n"}):
        assert _run_shim(shim, world, world.payload(**fields)).returncode == 0
    names = sorted(p.name for p in (world.home / "spool").iterdir())
    assert names == [f"{FULL}.json"]
    assert json.loads((world.home / "spool" / f"{FULL}.json").read_text())["reason"] == "other"


@pytest.mark.slow
def test_the_status_line_shows_secrets_after_its_background_scan(world: World) -> None:
    installed(world, "archive")
    command = world.settings()["statusLine"]["command"]
    stdin = json.dumps(
        {"session_id": FULL, "transcript_path": str(world.transcript), "model": {"id": "m"}}
    ).encode()
    first = world.run_as_claude(command, stdin)
    assert first.returncode == 0 and first.stderr == b""
    state = world.home / "state" / "status-line" / f"{FULL}.json"

    def caught_up() -> bool:
        if not state.exists():
            return False
        data = json.loads(state.read_text())
        return data["offset"] == world.transcript.stat().st_size

    world.wait_for(caught_up, timeout=60)
    second = world.run_as_claude(command, stdin)
    line = second.stdout.decode()
    assert line.startswith("\x1b[31msecrets: ") and line.count("\n") == 1
    assert_no_secret(state.read_text())
    assert_no_secret(world.logs_text())


def test_the_status_line_keeps_the_users_own_status_line(world: World) -> None:
    (world.config / "settings.json").write_text(
        json.dumps({"statusLine": {"type": "command", "command": "printf 'mine|'; head -c 14"}})
    )
    assert world.scrub("install", "--status-line").returncode == 0
    command = world.settings()["statusLine"]["command"]
    stdin = json.dumps({"session_id": "x", "transcript_path": "/nope.jsonl"}).encode()
    done = world.run_as_claude(command, stdin)
    assert done.stdout.decode() == "mine|" + stdin[:14].decode() + "\n"
    assert world.scrub("uninstall").returncode == 0
    assert world.settings() == {
        "statusLine": {"type": "command", "command": "printf 'mine|'; head -c 14"}
    }


def test_the_status_line_shim_runs_the_previous_command_without_the_package(
    world: World, tmp_path: Path
) -> None:
    plugin = tmp_path / "p" / "hooks"
    plugin.mkdir(parents=True)
    shutil.copy(STATUS_SHIM, plugin / "status-line")
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(plugin / "status-line"), "--wrap", "cat"],
        input=b'{"a": 1}', capture_output=True, env=world.env(), timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b'{"a": 1}')


def doctor_checks(world: World) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    done = world.scrub("doctor", "--format", "json")
    report = json.loads(done.stdout)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for check in report["checks"]:
        by_name.setdefault(check["name"], []).append(check)
    return done.returncode, by_name


def test_doctor_checks_the_installation_end_to_end(world: World) -> None:
    code, checks = doctor_checks(world)
    assert code == 1
    assert checks["SessionEnd hook"][0]["level"] == "warn"  # nothing installed yet
    # No recipient yet: the fix says what makes `scrub archive` work (bare, it is refused).
    [sweep] = checks["cleanup sweep"]
    assert "--older-than" in sweep["fix"] and "-r age1…" in sweep["fix"]
    assert "--redact" in sweep["fix"]
    installed(world, "archive")
    world.config.chmod(0o700)
    for folder in (world.config / "projects").iterdir():
        folder.chmod(0o700)
    code, checks = doctor_checks(world)
    assert [c["level"] for c in checks["SessionEnd hook"]] == ["ok"]
    assert [c["level"] for c in checks["recipients"]] == ["ok"]
    assert [c["level"] for c in checks["status line"]] == ["ok"]
    assert checks["spool"][0]["level"] == "ok" and checks["worker"][0]["level"] == "ok"
    assert checks["config dir"][0]["level"] == "ok" and "permissions" not in checks
    # The demo's sessions are months old: Claude Code's sweep (30 days) takes them, unarchived.
    [sweep] = checks["cleanup sweep"]
    assert sweep["level"] == "warn" and "no archive" in sweep["message"]
    assert "`scrub archive --all --older-than" in sweep["fix"] and "-r age1" not in sweep["fix"]
    assert code == 1
    done = world.scrub("install", "--take-over-cleanup")
    assert done.returncode == 0, done.stderr
    code, checks = doctor_checks(world)
    assert "cleanup sweep" not in checks
    assert checks["cleanupPeriodDays"][0]["message"].startswith("99999 days")
    # A launcher that went missing is a failure with the fix.
    (world.home / "bin" / "scrubber-session-end").unlink()
    code, checks = doctor_checks(world)
    [hook] = checks["SessionEnd hook"]
    assert code == 1 and hook["level"] == "fail" and "scrub install" in hook["fix"]
