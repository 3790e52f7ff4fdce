"""`scrub archives list|verify|restore` against the bucket: per host and across hosts, keyless
and with a key; a write-only key gets a clear refusal."""

from __future__ import annotations

import json

import pytest

from tests.e2e.archive_kit import FULL, PROJECT, World, one_archive, one_line_error, world
from tests.e2e.s3.conftest import BUCKET, InProcess, Seaweed
from tests.e2e.s3.s3_kit import client, env_with, keys_under, s3_policy

__all__ = ["world"]

pytestmark = pytest.mark.slow


def _archived(world: World, store: Seaweed, here: InProcess) -> tuple[str, str, object]:
    policy, prefix, identity = s3_policy(world, store)
    env = env_with(world, store.read_write)
    done = here.run("archive", FULL, "--policy", str(policy), env=env)
    assert done.returncode == 0, done.stderr
    return str(policy), prefix, identity


def test_list_and_verify_the_bucket_per_host_and_across_hosts(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, prefix, identity = _archived(world, store, here)
    env = env_with(world, store.read_write)
    listed = here.run(
        "archives", "list", "--remote", "--format", "json", "--policy", policy, env=env
    )
    assert listed.returncode == 0, listed.stderr
    payload = json.loads(listed.stdout)
    (item,) = payload["archives"]
    assert (item["host"], item["project"], item["session_id"]) == ("web1", PROJECT, FULL)
    assert item["size"] == one_archive(world).stat().st_size
    other = here.run("archives", "list", "--host", "web2", "--policy", policy, env=env)
    assert other.returncode == 0 and "0 archive(s)" in other.stdout, other.stderr
    every = here.run("archives", "list", "--all-hosts", "--policy", policy, env=env)
    assert "1 archive(s)" in every.stdout, every.stderr
    # --session is repeatable: each names an id prefix; one that matches nothing adds nothing.
    chosen = here.run(
        "archives", "list", "--remote", "--session", FULL[:8], "--session", "0000dead",
        "--policy", policy, env=env,
    )  # fmt: skip
    assert "1 archive(s)" in chosen.stdout, chosen.stderr
    none = here.run(
        "archives", "list", "--remote", "--session", "0000dead", "--policy", policy, env=env
    )
    assert "0 archive(s)" in none.stdout, none.stderr
    keyless = here.run("archives", "verify", "--remote", "--policy", policy, env=env)
    assert keyless.returncode == 0, keyless.stderr
    assert "keyless: size and store checksum match the sidecar" in keyless.stdout
    full = here.run(
        "archives", "verify", "--remote", "-i", str(identity), "--policy", policy, env=env
    )
    assert full.returncode == 0, full.stderr
    assert "full: downloaded, decrypted" in full.stdout
    # Damage the object in the bucket (as another writer could): both checks say so.
    key = next(k for k in keys_under(store, prefix) if not k.endswith(".json"))
    client(store).put_object(Bucket=BUCKET, Key=key, Body=b"not the archive")
    broken = here.run("archives", "verify", "--remote", "--policy", policy, env=env)
    assert broken.returncode == 3 and "FAILED" in broken.stdout, broken.stdout


def test_restore_from_the_bucket_into_a_new_config_dir(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, _prefix, identity = _archived(world, store, here)
    target = world.root / "rebuilt-claude"
    done = here.run(
        "archives", "restore", FULL[:8], "-i", str(identity), "--to", str(target), "--create",
        "--policy", policy, env=env_with(world, store.read_write),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "from the bucket" in done.stdout
    original = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    restored = target / "projects" / PROJECT / f"{FULL}.jsonl"
    assert restored.read_bytes() == original.read_bytes()
    # The downloaded copies were temporary.
    assert not [p for p in (world.home / "cache").rglob("*") if p.is_file() and "s3-" in str(p)]


def test_write_only_key_cannot_list_and_says_why(
    world: World, store: Seaweed, here: InProcess
) -> None:
    policy, _prefix, _identity = _archived(world, store, here)
    done = here.run(
        "archives", "list", "--remote", "--policy", policy, env=env_with(world, store.write_only)
    )
    one_line_error(done, 2, "access denied")
