"""`scrub archive` to an s3:// destination, against a real SeaweedFS on 127.0.0.1: the archive
is written locally, uploaded, read back, and the bucket holds exactly its bytes."""

from __future__ import annotations

import json

import pytest

from scrubber.archive.s3_queue import receipt_path
from tests.e2e.archive_kit import FULL, PROJECT, World, one_archive, world
from tests.e2e.s3.conftest import InProcess, Seaweed
from tests.e2e.s3.s3_kit import env_with, keys_under, object_bytes, s3_policy, sha256

__all__ = ["world"]

pytestmark = pytest.mark.slow


def test_archive_uploads_the_archive_and_its_sidecar_verified(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, prefix, _ = s3_policy(world, store)
    done = here.run("archive", FULL, "--policy", str(policy), env=env_with(world, store.read_write))
    assert done.returncode == 0, done.stderr
    local = one_archive(world)
    base = f"{prefix}/web1/{PROJECT}/{FULL}/{local.name}"
    assert f"-> {base}" in done.stdout
    assert "read back" in done.stdout
    assert keys_under(store, prefix) == {
        base: local.stat().st_size,
        base + ".json": (local.parent / (local.name + ".json")).stat().st_size,
    }
    assert object_bytes(store, base) == local.read_bytes()
    receipt = json.loads(receipt_path(local).read_text())
    assert receipt["key"] == base
    assert receipt["sha256"] == sha256(local)
    assert receipt["proven_by"] == "read back"
    assert oct(receipt_path(local).stat().st_mode & 0o777) == "0o600"
    # Nothing waits any more, and archiving the same version again uploads nothing new.
    assert not list((world.home / "spool" / "uploads").glob("*.json"))
    again = here.run(
        "archive", FULL, "--policy", str(policy), env=env_with(world, store.read_write)
    )
    assert again.returncode == 0, again.stderr
    assert "unchanged" in again.stdout
    assert len(keys_under(store, prefix)) == 2


def test_write_only_key_archives_and_says_what_verified_it(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, prefix, _ = s3_policy(world, store)
    done = here.run("archive", FULL, "--policy", str(policy), env=env_with(world, store.write_only))
    assert done.returncode == 0, done.stderr
    assert "write-only key: verified by the PUT response's SHA-256 only" in done.stdout
    local = one_archive(world)
    receipt = json.loads(receipt_path(local).read_text())
    assert receipt["proven_by"] == "put response"
    (key,) = [k for k in keys_under(store, prefix) if not k.endswith(".json")]
    assert object_bytes(store, key) == local.read_bytes()


def test_remove_local_after_upload_keeps_sidecar_and_receipt(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, prefix, _ = s3_policy(world, store, extra="    remove_local_after_upload: true\n")
    done = here.run("archive", FULL, "--policy", str(policy), env=env_with(world, store.read_write))
    assert done.returncode == 0, done.stderr
    assert "local copy removed" in done.stdout
    folder = world.archives / PROJECT / FULL
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2 and names[0].endswith(".tar.gz.age.json"), names
    assert names[1].endswith(".tar.gz.age.s3.json")
    assert len(keys_under(store, prefix)) == 2
    listed = here.run(
        "archives", "list", "--policy", str(policy), env=env_with(world, store.read_write)
    )
    assert "(local copy removed, uploaded to s3://scrub-archives/" in listed.stdout, listed.stdout
