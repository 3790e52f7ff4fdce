"""What waits is shown: `scrub sessions` and `scrub doctor` name archives whose upload is still
queued, and `scrub doctor` says when boto3 is missing for an s3:// destination."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tests.e2e.archive_kit import FULL, World, world
from tests.e2e.s3.conftest import InProcess, Seaweed
from tests.e2e.s3.s3_kit import env_with, s3_policy

__all__ = ["world"]

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sessions_and_doctor_show_the_waiting_upload(
    world: World, store: Seaweed, here: InProcess
) -> None:
    down = f"http://127.0.0.1:{_closed_port()}"
    policy, _prefix, _ = s3_policy(world, store, endpoint=down)
    env = env_with(world, store.read_write, SCRUB_POLICY=str(policy))
    done = here.run("archive", FULL, env=env)
    assert done.returncode == 3, done.stderr
    assert "it stays queued" in done.stderr and "cannot reach the object store" in done.stderr
    listing = json.loads(here.run("sessions", "--format", "json", env=env).stdout)
    assert listing["uploads_waiting"] == 1
    waiting = {s["session_id"]: s["upload_waiting"] for s in listing["sessions"]}
    assert waiting[FULL] is True and sum(waiting.values()) == 1
    text = here.run("sessions", env=env).stdout
    assert "to upload" in text and "1 archive(s) wait for their upload" in text
    doctor = here.run("doctor", "--format", "json", env=env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["uploads"]["level"] == "warn"
    assert "cannot reach the object store" in checks["uploads"]["message"]
    assert checks["object storage"]["level"] == "ok"


def test_doctor_says_boto3_is_missing(world: World, store: Seaweed, here: InProcess) -> None:
    policy, _prefix, _ = s3_policy(world, store)
    env = env_with(world, store.read_write, SCRUB_POLICY=str(policy))
    # boto3 made unimportable in this process only (None in sys.modules blocks an import).
    code = (
        "import sys; sys.modules['boto3'] = None; from scrubber.cli.app import main; "
        "main(['doctor', '--format', 'json'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["object storage"]["level"] == "fail"
    assert "boto3 is not installed" in checks["object storage"]["message"]
    assert "scrubber[s3]" in checks["object storage"]["fix"]
