"""Issue 11, part 3: kill -9 at seeded random points of `scrub restore`, `scrub archive` and
`scrub retention --apply` (real processes, on sessions big enough to be mid-work), then check
what is left: never plaintext outside $SCRUB_HOME, `doctor` reporting what is there, and the
next run of the same command cleaning it up and succeeding."""

from __future__ import annotations

import hashlib
import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.archive.layout import list_archives
from scrubber.archive.verify import verify_archive
from scrubber.retention.trash import list_trash
from scrubber.transcript.sessions import discover
from tests import warm_home
from tests.conftest import Sandbox, make_sandbox
from tests.e2e.hostile_kit import TRANSCRIPT, Member, hostile_archive, legit
from tests.unit.retention.sessions_writer import write_session

pytestmark = pytest.mark.slow

IDENTITY = generate_identity()
RECIPIENT = IDENTITY.recipient()
BIG = 48 * 1024 * 1024


def _big_transcript(session_id: str, size: int = BIG) -> bytes:
    line = json.dumps(
        {
            "type": "user",
            "sessionId": session_id,
            "uuid": "00000000-0000-4000-8000-0000000000aa",
            "timestamp": "2026-03-02T09:01:30.948Z",
            "cwd": "/home/u/work/app",
            "message": {"role": "user", "content": "lorem ipsum " * 80},
        }
    ).encode()
    count = size // (len(line) + 1)
    return (line + b"\n") * count


def _environ(box: Sandbox) -> dict[str, str]:
    # Never this machine's /etc/claude-code.
    managed = str(box.root / "etc" / "managed-settings.json")
    return box.environ(SCRUB_CLAUDE_MANAGED_SETTINGS=managed)


def _start(box: Sandbox, *args: str | Path) -> subprocess.Popen[bytes]:
    warm_home.seed(box.scrub_home)
    return subprocess.Popen(
        [sys.executable, "-m", "scrubber.cli", *map(str, args)],
        env=_environ(box),
        cwd=box.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _run(box: Sandbox, *args: str | Path) -> subprocess.CompletedProcess[str]:
    warm_home.seed(box.scrub_home)
    return subprocess.run(
        [sys.executable, "-m", "scrubber.cli", *map(str, args)],
        env=_environ(box),
        cwd=box.root,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        check=False,
    )


def _kill_when(
    proc: subprocess.Popen[bytes], ready: Callable[[], bool], delay: float, timeout: float = 60
) -> bool:
    """kill -9 `proc` `delay` seconds after `ready()` first holds; False when it ended first."""
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the command never got to work"
        time.sleep(0.002)
    time.sleep(delay)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def _leftover_checks(box: Sandbox) -> list[dict[str, Any]]:
    done = _run(box, "doctor", "--format", "json")
    checks = json.loads(done.stdout)["checks"]
    return [c for c in checks if c["name"] == "leftovers"]


def _key(box: Sandbox) -> Path:
    key = box.root / "key.txt"
    if not key.exists():
        write_identity_file(key, IDENTITY, datetime.now(UTC))
    return key


def _outside_plaintext(box: Sandbox) -> list[Path]:
    """Staging or temp files of ours anywhere but $SCRUB_HOME."""
    return [
        p
        for p in box.root.rglob("*")
        if (".scrub-restore" in p.name or p.name.endswith(".tmp"))
        and not p.is_relative_to(box.scrub_home)
        and not p.is_relative_to(box.xdg)
    ]


# ------------------------------------------------------------------------------------ restore


def _staged(box: Sandbox) -> bool:
    """A restore has started staging (here, or where older versions staged: the config dir)."""
    return any((box.scrub_home / "staging").glob("restore-*")) or any(
        box.config.glob(".scrub-restore-*")
    )


def test_restore_killed_at_random_points(tmp_path: Path) -> None:
    box = make_sandbox(tmp_path / "box")
    data = _big_transcript("0f0e0d0c-0b0a-4000-8000-000000000001")
    big = legit()
    big.members[0] = Member(TRANSCRIPT, data)
    archive = hostile_archive(big, RECIPIENT, box.root / "big.tar.gz.age")
    digest = hashlib.sha256(data).hexdigest()
    staging = box.scrub_home / "staging"
    rng = random.Random(20261201)
    killed = 0
    for _ in range(3):
        proc = _start(box, "restore", archive, "-i", _key(box))
        killed += _kill_when(proc, lambda: _staged(box), rng.uniform(0, 0.25))
        assert _outside_plaintext(box) == []
        target = box.config / TRANSCRIPT
        # A file is moved into place whole (rename or link), or not at all.
        if target.exists():
            assert hashlib.sha256(target.read_bytes()).hexdigest() == digest
            target.unlink()
        left = list(staging.iterdir()) if staging.exists() else []
        checks = _leftover_checks(box)
        if left:
            assert all(c["level"] == "warn" for c in checks), checks
            assert {str(p) for p in left} <= {c["message"].split(":")[0] for c in checks}
            assert "scrub restore" in checks[0]["fix"]
    assert killed, "no run was killed mid-work: the session is too small for this machine"
    done = _run(box, "restore", archive, "-i", _key(box))
    assert done.returncode == 0, done.stderr
    assert hashlib.sha256((box.config / TRANSCRIPT).read_bytes()).hexdigest() == digest
    assert list(staging.iterdir()) == []
    assert [c["level"] for c in _leftover_checks(box)] == ["ok"]


# ------------------------------------------------------------------------------------ archive


def test_archive_killed_at_random_points(tmp_path: Path) -> None:
    box = make_sandbox(tmp_path / "box")
    session = write_session(
        box.config, cwd="/home/u/app", last=datetime.now(UTC) - timedelta(days=1), seed=7
    )
    with session.transcript.open("ab") as out:
        out.write(_big_transcript(session.session_id))
    folder = box.scrub_home / "archives" / session.project / session.session_id
    rng = random.Random(7)
    killed = 0
    for _ in range(2):
        proc = _start(box, "archive", session.session_id, "-r", RECIPIENT.encode())
        killed += _kill_when(proc, lambda: any(folder.glob(".*.tmp")), rng.uniform(0, 0.2))
        temps = list(folder.glob(".*.tmp"))
        if temps:
            checks = _leftover_checks(box)
            assert {str(t) for t in temps} <= {c["message"].split(":")[0] for c in checks}
            assert all("scrub archive" in c["fix"] for c in checks)
        for made in folder.glob("*.tar.gz.age"):  # a run that finished: start over
            made.unlink()
            (folder / (made.name + ".json")).unlink()
    assert killed, "no run was killed mid-work"
    done = _run(box, "archive", session.session_id, "-r", RECIPIENT.encode())
    assert done.returncode == 0, done.stderr
    assert list(folder.glob(".*")) == []
    (entry,) = list_archives(box.scrub_home / "archives")
    verify_archive(entry.path)
    assert [c["level"] for c in _leftover_checks(box)] == ["ok"]


# ---------------------------------------------------------------------------------- retention


def _expired_world(root: Path, count: int) -> tuple[Sandbox, set[str]]:
    box = make_sandbox(root)
    box.scrub_home.mkdir(mode=0o700)
    policy = (
        f"version: 1\narchive:\n  recipients: [{RECIPIENT.encode()}]\nretention:\n  days: 30\n"
        "  require_archive: true\n  keep_newest_per_project: 0\n  max_deletions_per_run: 100\n"
    )
    (box.scrub_home / "policy.yaml").write_text(policy)
    ids = set()
    for seed in range(count):
        cwd = f"/home/u/p{seed % 3}"
        last = datetime.now(UTC) - timedelta(days=40 + seed)
        ids.add(write_session(box.config, cwd=cwd, last=last, seed=seed, turns=30).session_id)
    return box, ids


@pytest.mark.parametrize("seed", [3, 5])
def test_retention_killed_at_a_random_point(tmp_path: Path, seed: int) -> None:
    box, ids = _expired_world(tmp_path / "box", 16)
    rng = random.Random(seed)
    proc = _start(box, "retention", "--apply")
    archives = box.scrub_home / "archives"
    _kill_when(proc, archives.exists, rng.uniform(0, 0.4))
    # Every session is whole somewhere: where Claude Code finds it, or in the trash (complete
    # or half-moved, which the next run finishes or puts back).
    done = _run(box, "retention", "--apply")
    assert done.returncode in (0, 1), done.stderr
    here = {s.id for s in discover(box.config).sessions}
    listing = list_trash(box.scrub_home)
    trashed = {m.session_id for _, m in listing.complete}
    assert not listing.incomplete and not listing.problems
    assert here | trashed == ids and not here & trashed
    assert not here, "the second run finishes the job"
    assert [c["level"] for c in _leftover_checks(box)] == ["ok"]
    assert _outside_plaintext(box) == []
