"""The upload queue: the server stopped in the middle of a multipart upload (the job stays, no
partial object is counted or visible, the next run completes it), the worker running what
waits, and wrong credentials (a clear error, the job kept)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scrubber.archive.s3 import MULTIPART_THRESHOLD, ObjectStore
from scrubber.archive.s3_queue import UploadQueue, read_receipt
from scrubber.hooks.worker import Worker, WorkerSettings
from scrubber.policy.load import parse_policy
from scrubber.policy.model import Policy
from scrubber.policy.object_store import S3Destination
from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import archive_sessions, resolve_encryption
from scrubber.usecases.archive_push import push_uploads
from scrubber.usecases.session_end import PipelineActions
from tests.e2e.archive_kit import World
from tests.e2e.s3.conftest import Key, Seaweed
from tests.e2e.s3.s3_kit import env_with, keys_under, s3_policy, sha256
from tests.unit.retention.sessions_writer import write_session

pytestmark = pytest.mark.slow


class FixedClock:
    def __init__(self, moment: float) -> None:
        self.moment = moment

    def time(self) -> float:
        return self.moment

    def monotonic(self) -> float:
        return self.moment

    def sleep(self, seconds: float) -> None:
        self.moment += seconds


def _world(tmp_path: Path, *, big: bool = False) -> World:
    config = tmp_path / "home" / ".claude"
    (config / "projects").mkdir(parents=True)
    session = write_session(
        config, cwd="/srv/app", last=datetime.now(UTC) - timedelta(days=3), seed=81
    )
    if big:
        # Incompressible content, so that the archive needs several parts.
        with (
            (session.transcript.parent / session.session_id / "tool-results")
            .joinpath("blob.txt")
            .open("wb") as out
        ):
            out.write(os.urandom(MULTIPART_THRESHOLD + 6 * 1024 * 1024))
    return World(root=tmp_path, config=config, home=tmp_path / "scrub-home")


def _policy(world: World, store: Seaweed, **kwargs: Any) -> tuple[Policy, str, Path]:
    path, prefix, _identity = s3_policy(world, store, **kwargs)
    policy = parse_policy(path.read_text(), origin="t", base_dir=world.root, env={})
    return policy, prefix, path


def _archive_locally(world: World, policy: Policy) -> Path:
    sessions = discover(world.config).sessions
    (outcome,) = archive_sessions(
        sessions,
        policy=policy,
        home=world.home,
        encryption=resolve_encryption(policy, encrypt=True),
        now=datetime.now(UTC),
    )
    assert outcome.written is not None and outcome.upload_queued
    return outcome.written.entry.path


def test_server_stopped_mid_upload_keeps_the_job_and_the_next_run_completes_it(
    tmp_path: Path, store: Seaweed
) -> None:
    world = _world(tmp_path, big=True)
    policy, prefix, _ = _policy(world, store)
    archive = _archive_locally(world, policy)
    assert archive.stat().st_size > MULTIPART_THRESHOLD
    env = env_with(world, store.read_write)

    def stopping_store(destination: S3Destination, env: Mapping[str, str]) -> ObjectStore:
        real = ObjectStore(destination, env)
        client = real._client
        upload_part = client.upload_part

        def part_then_stop(**kwargs: Any) -> Any:
            answer = upload_part(**kwargs)
            store.stop()  # the server goes away after the first part is in
            return answer

        client.upload_part = part_then_stop
        return real

    report = push_uploads(
        policy, world.home, env, now=datetime.now(UTC), store_factory=stopping_store
    )
    (outcome,) = report.outcomes
    assert outcome.error is not None and not outcome.uploaded
    assert report.waiting == 1
    assert read_receipt(archive) is None
    (job,) = UploadQueue(world.home).jobs()
    assert job.attempts == 1 and job.last_error
    store.ensure_running()
    assert keys_under(store, prefix) == {}  # no partial object
    again = push_uploads(policy, world.home, env, now=datetime.now(UTC))
    assert [o.error for o in again.outcomes] == [None] and again.waiting == 0
    receipt = read_receipt(archive)
    assert receipt is not None and receipt.sha256 == sha256(archive)
    assert receipt.checksum.endswith(f"-{receipt.size // (8 * 1024 * 1024) + 1}")
    assert keys_under(store, prefix)[receipt.key] == archive.stat().st_size


def test_the_worker_runs_what_waits_once_its_wait_is_over(tmp_path: Path, store: Seaweed) -> None:
    world = _world(tmp_path)
    policy, prefix, _ = _policy(world, store)
    archive = _archive_locally(world, policy)
    env = env_with(world, store.read_write)
    clock = FixedClock(datetime.now(UTC).timestamp())
    queue = UploadQueue(world.home)
    (job,) = queue.jobs()
    queue.failed_attempt(job, "earlier failure", now=clock.time())

    def worker() -> Worker:
        return Worker(
            world.home,
            world.config,
            env,
            PipelineActions(),
            settings=WorkerSettings(linger=0),
            clock=clock,
            policy_loader=lambda _env: policy,
        )

    worker().run(once=True)
    assert read_receipt(archive) is None  # its wait (30 s) is not over
    clock.moment += 31
    worker().run(once=True)
    assert read_receipt(archive) is not None
    assert queue.jobs() == []
    assert len(keys_under(store, prefix)) == 2


def test_wrong_credentials_are_a_clear_error_and_the_job_stays(
    tmp_path: Path, store: Seaweed
) -> None:
    world = _world(tmp_path)
    path_policy, prefix, _ = s3_policy(world, store)
    wrong = Key(store.read_write.access_key, "not-the-secret-" + "x" * 20)
    done = world.run("archive", "--all", "--policy", str(path_policy), env=env_with(world, wrong))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "the store refused the credentials (SignatureDoesNotMatch)" in done.stderr
    assert wrong.secret_key not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert len(UploadQueue(world.home).jobs()) == 1
    assert keys_under(store, prefix) == {}
    pushed = world.run(
        "archives", "push", "--policy", str(path_policy), env=env_with(world, store.read_write)
    )
    assert pushed.returncode == 0, pushed.stderr
    assert len(keys_under(store, prefix)) == 2
