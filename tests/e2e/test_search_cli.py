"""`scrub search` as a real process on the demo config dir, one of its sessions also archived
(encrypted to a key made here): text and JSON reports, archives searched with the key and listed
as skipped with another, usage errors; no planted secret in any output, in any mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.demo import build_demo_config, demo_manifest
from scrubber.policy.model import Policy
from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import archive_sessions, resolve_encryption
from tests.conftest import CliResult, Sandbox

PUBLIC_PREFIXES = ("sk-ant-api03-", "sk_live_", "ghp_", "npm_", "AKIA", "-----BEGIN ")


def _pieces(value: str, size: int = 12) -> list[str]:
    """The value and every 12-character piece of it past a vendor's public prefix: a context
    cut through a secret must not show half of it either."""
    start = next((len(p) for p in PUBLIC_PREFIXES if value.startswith(p)), 0)
    return [value] + [value[i : i + size] for i in range(start, len(value) - size + 1, 3)]


pytestmark = pytest.mark.slow  # real processes

NEEDLES = [p for s in demo_manifest().secrets for n in s.needles() for p in _pieces(n)]
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"


def _no_secret(done: CliResult) -> None:
    for needle in NEEDLES:
        assert needle not in done.output


@pytest.fixture(scope="module")
def world(sandbox_factory: Callable[[str], Sandbox]) -> tuple[Sandbox, Path, Path]:
    box = sandbox_factory("search-cli")
    build_demo_config(box.config.parent)
    key, other = box.root / "key.txt", box.root / "other.txt"
    identity = generate_identity()
    write_identity_file(key, identity, datetime(2026, 1, 1, tzinfo=UTC))
    write_identity_file(other, generate_identity(), datetime(2026, 1, 1, tzinfo=UTC))
    policy = Policy.default()
    shop = [s for s in discover(box.config).sessions if s.id == SHOP]
    encryption = resolve_encryption(policy, recipients=[identity.recipient().encode()])
    (outcome,) = archive_sessions(
        shop, policy=policy, home=box.scrub_home, encryption=encryption, now=datetime.now(UTC)
    )
    assert outcome.error is None
    return box, key, other


def test_text_report_names_session_place_context_and_resume(
    world: tuple[Sandbox, Path, Path],
) -> None:
    box, _, _ = world
    done = box.scrub("search", "password authentication failed", "--in", "tools")
    assert done.returncode == 0, done.stderr
    _no_secret(done)
    assert f"{SHOP} 'checkout-500' (-home-demo-work-shop-api)" in done.stdout
    assert f"resume: claude --resume {SHOP}" in done.stdout
    assert "output of Bash(alembic upgrade head)" in done.stdout
    assert "1 hit in 1 session (3 searched)." in done.stdout


def test_json_with_archives_and_a_key_that_opens_them(world: tuple[Sandbox, Path, Path]) -> None:
    box, key, other = world
    opened = box.scrub("search", "DB_PASSWORD", "--archives", "-i", key, "--format", "json")
    wrong = box.scrub("search", "DB_PASSWORD", "--archives", "-i", other)
    for done in (opened, wrong):
        assert done.returncode == 0, done.stderr
        _no_secret(done)
    report = json.loads(opened.stdout)
    assert report["schema"] == "scrubber.search/1"
    origins = {hit["origin"] for hit in report["hits"]}
    assert origins == {"live", "archive"}
    archived = next(hit for hit in report["hits"] if hit["origin"] == "archive")
    assert archived["resume"] == [f"scrub restore {SHOP} -i {key}", f"claude --resume {SHOP}"]
    assert "[REDACTED:dotenv-value:" in " ".join(hit["context"] for hit in report["hits"])
    assert report["skipped"] == []
    assert "the key given does not open it; needs key " in wrong.stderr


def test_usage_errors_and_help(world: tuple[Sandbox, Path, Path]) -> None:
    box, _, _ = world
    bad_regex = box.scrub("search", "(unclosed", "--regex")
    key_without_archives = box.scrub("search", "x-y-z", "-i", "k.txt")
    helped = box.scrub("search", "--help")
    assert bad_regex.returncode == 2 and "not a valid regular expression" in bad_regex.stderr
    assert "(unclosed" not in bad_regex.output
    assert key_without_archives.returncode == 2 and "add --archives" in key_without_archives.stderr
    assert helped.returncode == 0 and "scrub search 'connection refused'" in helped.stdout
