"""`scrub retention` with `require_archive` and an s3:// destination: a session goes to the
trash only once the store confirmed its archive; while the upload waits, it stays."""

from __future__ import annotations

import json
import shutil
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e.archive_kit import World
from tests.e2e.s3.conftest import InProcess, Seaweed
from tests.e2e.s3.s3_kit import env_with, keys_under, s3_policy
from tests.unit.retention.sessions_writer import WrittenSession, write_session

pytestmark = pytest.mark.slow

RETENTION = "retention:\n  days: 30\n  require_archive: true\n  min_idle_minutes: 60\n"


@pytest.fixture
def old_world(tmp_path: Path) -> tuple[World, WrittenSession]:
    config = tmp_path / "home" / ".claude"
    (config / "projects").mkdir(parents=True)
    now = datetime.now(UTC)
    old = write_session(config, cwd="/srv/app", last=now - timedelta(days=60), seed=71)
    write_session(config, cwd="/srv/app", last=now - timedelta(days=2), seed=72)
    return World(root=tmp_path, config=config, home=tmp_path / "scrub-home"), old


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_write_only_key_upload_lets_retention_trash_the_session(
    old_world: tuple[World, WrittenSession], store: Seaweed, here: InProcess
) -> None:
    world, old = old_world
    policy, prefix, _ = s3_policy(world, store, retention=RETENTION)
    env = env_with(world, store.write_only)
    done = here.run("retention", "--apply", "--policy", str(policy), env=env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert not old.transcript.exists()
    assert (world.home / "trash" / old.session_id).is_dir()
    names = keys_under(store, prefix)
    assert any(old.session_id in k and k.endswith(".tar.gz.age") for k in names), names


def test_a_waiting_upload_keeps_the_session_until_push_completes_it(
    old_world: tuple[World, WrittenSession], store: Seaweed, here: InProcess
) -> None:
    world, old = old_world
    down = f"http://127.0.0.1:{_closed_port()}"
    policy, prefix, _ = s3_policy(world, store, retention=RETENTION, endpoint=down)
    env = env_with(world, store.read_write)
    kept = here.run("retention", "--apply", "--format", "json", "--policy", str(policy), env=env)
    # Kept; the store being down is a runtime error (exit 3), said without a traceback.
    assert kept.returncode == 3, (kept.stdout, kept.stderr)
    assert "cannot reach the object store" in kept.stderr
    assert old.transcript.exists()
    assert "Traceback" not in kept.stderr
    jobs = list((world.home / "spool" / "uploads").glob("*.json"))
    assert len(jobs) == 1
    assert "cannot reach the object store" in json.loads(jobs[0].read_text())["last_error"]
    # The local archive exists but is not "archived" yet: the dry run says unverified.
    dry = here.run("retention", "--format", "json", "--policy", str(policy), env=env)
    plan = json.loads(dry.stdout)
    (entry,) = [s for s in plan["sessions"] if s["session_id"] == old.session_id]
    assert entry["archive"] == "unverified", entry
    # The store is back (the policy names the real endpoint): push, then retention acts.
    policy.write_text(policy.read_text().replace(down, store.endpoint))
    pushed = here.run("archives", "push", "--policy", str(policy), env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert "0 waiting" in pushed.stdout
    assert len(keys_under(store, prefix)) == 2
    done = here.run("retention", "--apply", "--policy", str(policy), env=env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert not old.transcript.exists()


def test_a_rebuilt_host_finds_the_archive_in_the_bucket_under_its_old_name(
    old_world: tuple[World, WrittenSession], store: Seaweed, here: InProcess
) -> None:
    world, old = old_world
    policy, _prefix, _ = s3_policy(world, store, retention=RETENTION)
    env = env_with(world, store.read_write)
    done = here.run("archive", old.session_id, "--policy", str(policy), env=env)
    assert done.returncode == 0, done.stderr
    # The local archives are lost and the host has a new name: only the bucket knows.
    shutil.rmtree(world.home / "archives")
    policy.write_text(policy.read_text().replace("host: web1", "host: web2"))
    dry = here.run("retention", "--format", "json", "--policy", str(policy), env=env)
    (entry,) = [s for s in json.loads(dry.stdout)["sessions"] if s["session_id"] == old.session_id]
    assert entry["archive"] == "verified", entry
    applied = here.run("retention", "--apply", "--policy", str(policy), env=env)
    assert applied.returncode == 0, (applied.stdout, applied.stderr)
    assert not old.transcript.exists()
    # Into the trash, whole, like any session retention removes.
    assert (world.home / "trash" / old.session_id).is_dir()
