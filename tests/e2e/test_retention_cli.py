"""`scrub retention`, `sessions`, `pin`/`unpin`/`pins` and `undelete` through the CLI's entry
point (in this process; a child process where a test needs one), on a temp config dir with
real-format sessions spread over 120 days (timestamps inside and mtimes backdated), pins, tags,
side folders, file-history and symlinks, with real encrypted archives.

Fault tests: a crash between archive and delete, an archive that fails verification, a full
disk; and a test that runs every destructive entry point against pinned sessions.
"""

from __future__ import annotations

import http.server
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest

from scrubber.archive.keys import generate_identity
from scrubber.archive.layout import list_archives
from scrubber.archive.verify import verify_archive
from scrubber.retention.trash_manifest import read_trash_manifest
from scrubber.transcript.sessions import discover
from tests.conftest import run_in_process
from tests.unit.retention.sessions_writer import WrittenSession, tree, write_session

NOW = datetime.now(UTC)
SCRUB = [sys.executable, "-c", "from scrubber.cli.app import main; main()"]


@dataclass
class Env:
    root: Path
    config: Path
    home: Path
    recipient: str

    def vars(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "SCRUB_HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.root / "xdg-config"),
            "XDG_DATA_HOME": str(self.root / "xdg-data"),
            "XDG_STATE_HOME": str(self.root / "xdg-state"),
            # Never read this machine's /etc/claude-code.
            "SCRUB_CLAUDE_MANAGED_SETTINGS": str(self.root / "etc" / "managed-settings.json"),
        }

    def _in_process(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        """`scrub ARGS` through the real entry point in this process, with exactly this
        environment's variables: the same code, exit codes and output as a child process,
        without the ~0.3 s of interpreter start and imports each of this file's 40 runs paid
        (the tests that need a process of their own, a lock holder and a file-size limit,
        still start one)."""
        with pytest.MonkeyPatch.context() as patch:
            for name in list(os.environ):
                if name.startswith(("CLAUDE_", "SCRUB_", "XDG_")):
                    patch.delenv(name)
            for name, value in self.vars().items():
                patch.setenv(name, value)
            done = run_in_process(args)
        return subprocess.CompletedProcess(args, done.returncode, done.stdout, done.stderr)

    def policy(self, retention: str, *, pins: str = "", recipients: bool = True) -> None:
        archive = f"archive:\n  recipients: [{self.recipient}]\n" if recipients else ""
        text = f"version: 1\n{archive}retention:\n{retention}\n{pins}"
        (self.home / "policy.yaml").write_text(text)

    def run(
        self,
        *args: str,
        code: int | None = 0,
        preexec: Callable[[], None] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        if preexec is None:
            done = self._in_process(list(args))
        else:  # a resource limit needs a process of its own
            done = subprocess.run(
                [*SCRUB, *args],
                env=self.vars(),
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
                preexec_fn=preexec,
            )
        if code is not None:
            assert done.returncode == code, (
                args,
                done.returncode,
                done.stdout[-3000:],
                done.stderr[-3000:],
            )
        return done

    def json(self, *args: str, code: int | None = 0) -> dict[str, object]:
        return json.loads(self.run(*args, "--format", "json", code=code).stdout)

    def ids(self) -> set[str]:
        return {s.id for s in discover(self.config).sessions}

    def local_tree(self) -> dict[str, str]:
        return {k: v for k, v in tree(self.config).items() if not k.startswith("scrubber/")}


@pytest.fixture
def env(tmp_path: Path) -> Env:
    config = tmp_path / "claude"
    home = config / "scrubber"
    home.mkdir(parents=True)
    return Env(tmp_path, config, home, generate_identity().recipient().encode())


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


STANDARD = """  days: 30
  keep_newest_per_project: 1
  min_idle_minutes: 60
  require_archive: true
  archive_days: 365"""
STANDARD_PINS = """pins:
  tags: [keep]
  projects: ["*pinned-proj"]
"""


def build_120_days(env: Env) -> dict[str, WrittenSession]:
    config = env.config
    web, api, held = "/home/dev/web", "/home/dev/api", "/home/dev/pinned-proj"
    made = {
        "web-3": write_session(config, cwd=web, last=ago(3), seed=1),
        "web-31": write_session(config, cwd=web, last=ago(31), seed=2),
        "web-45": write_session(config, cwd=web, last=ago(45), seed=3, title="refactor"),
        "web-60": write_session(config, cwd=web, last=ago(60), seed=4, title="release notes"),
        "web-90": write_session(config, cwd=web, last=ago(90), seed=5, tags=("keep", "ops")),
        "web-119": write_session(config, cwd=web, last=ago(119), seed=6),
        # A clock that ran ahead: records from the future, an old mtime.
        "web-future": write_session(
            config, cwd=web, last=NOW + timedelta(days=2), mtime=ago(40), seed=7
        ),
        # A release rewrote its mtime ten minutes ago: old inside, possibly active.
        "web-bulk": write_session(
            config, cwd=web, last=ago(70), mtime=NOW - timedelta(minutes=10), seed=8
        ),
        "api-10": write_session(config, cwd=api, last=ago(10), seed=9),
        "api-40": write_session(config, cwd=api, last=ago(40), seed=10, tags=("billing",)),
        "api-75": write_session(config, cwd=api, last=ago(75), seed=11),
        "api-100": write_session(config, cwd=api, last=ago(100), seed=12),
        "held-50": write_session(config, cwd=held, last=ago(50), seed=13),
        "held-80": write_session(config, cwd=held, last=ago(80), seed=14),
    }
    # A symlink inside the bundle pointing elsewhere: moved as a link, never followed.
    outside = env.root / "outside-history"
    outside.mkdir()
    (outside / "keep.txt").write_text("not scrubber's to delete")
    link = config / "session-env" / made["web-119"].session_id
    if link.exists():
        for child in sorted(link.rglob("*"), reverse=True):
            child.unlink() if not child.is_dir() else child.rmdir()
        link.rmdir()
    link.symlink_to(outside)
    # A project folder that is a symlink out of the config dir: discovery never follows it.
    foreign = env.root / "foreign-project"
    foreign.mkdir()
    stale = foreign / "11111111-2222-4333-8444-555555555555.jsonl"
    stale.write_text(
        json.dumps({"type": "user", "sessionId": "x", "timestamp": "2026-01-01T00:00:00.000Z"})
        + "\n"
    )
    os.utime(stale, (ago(200).timestamp(), ago(200).timestamp()))
    (config / "projects" / "-home-dev-foreign").symlink_to(foreign)
    return made


EXPECTED_TRASH = {"web-31", "web-45", "web-119", "api-40", "api-75", "api-100"}


def test_dry_run_apply_and_undelete(env: Env) -> None:
    made = build_120_days(env)
    env.policy(STANDARD, pins=STANDARD_PINS)
    by_id = {s.session_id: name for name, s in made.items()}
    pinned = env.run("pin", "release notes", "--reason", "the audit")
    assert "pinned" in pinned.stdout and made["web-60"].session_id in pinned.stdout
    assert env.run("pins").stdout.count(made["web-60"].session_id) == 1
    before = env.local_tree()

    # Dry run, text: every session, with what would happen and why; nothing changes.
    text = env.run("retention").stdout
    lines = {by_id[sid]: line for line in text.splitlines() for sid in by_id if sid in line}
    assert set(lines) == set(made)
    for name in EXPECTED_TRASH:
        assert lines[name].startswith("archive-then-trash") and "expired" in lines[name], lines[
            name
        ]
    assert lines["web-60"].startswith("keep") and "pinned" in lines["web-60"]
    assert "pinned" in lines["web-90"] and "pinned" in lines["held-80"]
    assert "possibly active" in lines["web-bulk"] and "possibly active" in lines["web-future"]
    assert "too young" in lines["web-3"]
    assert "dry run" in text and "foreign" not in text
    assert env.local_tree() == before

    # Dry run, JSON: the same decisions for machines.
    report = env.json("retention")
    decided = {by_id[s["session_id"]]: (s["action"], s["reason"]) for s in report["sessions"]}  # type: ignore[index, union-attr]
    assert {n for n, (a, _) in decided.items() if a != "keep"} == EXPECTED_TRASH
    assert decided["web-future"] == ("keep", "possibly-active")
    assert decided["api-10"] == ("keep", "too-young")
    assert decided["held-50"] == ("keep", "pinned")
    assert report["mode"] == "dry-run" and report["exit_code"] == 0
    assert env.local_tree() == before

    # The overview: Claude Code's sweep ignores pins and goes by mtime.
    rows = {by_id[r["session_id"]]: r for r in env.json("sessions")["sessions"]}  # type: ignore[index, union-attr]
    assert rows["web-60"]["pinned"] and rows["web-60"]["retention_at"] is None
    assert rows["web-60"]["claude_first"]  # Claude Code would delete a pinned session
    assert rows["web-bulk"]["claude_sweep_at"] > NOW.isoformat()  # type: ignore[operator]
    assert rows["web-45"]["archived"] == "none" and rows["web-45"]["secrets"] is None

    # Apply: archives, verifies, then trashes exactly the expected sessions.
    applied = env.run("retention", "--apply")
    assert "foreign" in applied.stderr  # the symlinked project is reported, not followed
    remaining = env.ids()
    assert {by_id[i] for i in set(by_id) - remaining} == EXPECTED_TRASH
    assert (env.root / "outside-history" / "keep.txt").read_text() == "not scrubber's to delete"
    assert (env.root / "foreign-project").is_dir() and len(
        list((env.root / "foreign-project").iterdir())
    ) == 1
    archives = {e.session_id: e for e in list_archives(env.home / "archives")}
    assert {by_id[i] for i in archives} == EXPECTED_TRASH
    for name in EXPECTED_TRASH:
        session = made[name]
        slot = env.home / "trash" / session.session_id
        manifest = read_trash_manifest(slot)
        assert manifest.complete and sorted(e.path for e in manifest.entries) == session.relative(
            env.config
        )
        assert manifest.archive_ref == str(archives[session.session_id].path)
        verify_archive(archives[session.session_id].path)
        for path in session.paths:
            assert not os.path.lexists(path)
    assert (
        env.home / "trash" / made["web-119"].session_id / "session-env" / made["web-119"].session_id
    ).is_symlink()
    untouched = {
        k: v for k, v in before.items() if not any(made[n].session_id in k for n in EXPECTED_TRASH)
    }
    assert {k: v for k, v in env.local_tree().items() if k in untouched} == untouched

    # Undelete: the session comes back where Claude Code finds it, layout intact, mtime now.
    target = made["web-45"]
    back = env.run("undelete", "refactor")
    assert target.session_id in back.stdout and "scrub pin" in back.stdout
    assert target.session_id in env.ids()
    restored = {k: v for k, v in env.local_tree().items() if target.session_id in k}
    assert restored == {k: v for k, v in before.items() if target.session_id in k}
    assert target.transcript.stat().st_mtime == pytest.approx(time.time(), abs=30)
    assert not (env.home / "trash" / target.session_id).exists()
    env.run("undelete", target.session_id, code=2)  # no longer in the trash

    log = [
        json.loads(line) for line in (env.home / "log" / "activity.jsonl").read_text().splitlines()
    ]
    assert [(r["event"], r["mode"], r["exit"]) for r in log] == [
        ("retention", "dry-run", 0),
        ("retention", "dry-run", 0),
        ("retention", "apply", 0),
        ("undelete", "apply", 0),
        ("undelete", "apply", 2),  # failed runs are logged too
    ]
    assert len(log[2]["trashed"]) == 6 and len(log[2]["archived"]) == 6


def test_a_second_concurrent_run_is_refused(env: Env) -> None:
    made = build_120_days(env)
    env.policy(STANDARD, pins=STANDARD_PINS)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from scrubber.retention.apply import retention_lock\n"
            f"with retention_lock(Path({str(env.home)!r})):\n"
            "    print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = env.local_tree()
        started = time.monotonic()
        busy = env.run("retention", "--apply", code=4)
        assert time.monotonic() - started < 20  # at once, not after the holder
        assert "in progress" in busy.stderr
        assert env.local_tree() == before
        env.run("undelete", made["web-45"].session_id, code=4)
        env.run("retention")  # a dry run changes nothing and needs no lock
    finally:
        holder.kill()
        holder.wait()
    log = [
        json.loads(line) for line in (env.home / "log" / "activity.jsonl").read_text().splitlines()
    ]
    assert log[0]["exit"] == 4 and "in progress" in log[0]["error"]


def test_no_command_deletes_a_pinned_session(env: Env) -> None:
    """Every destructive entry point, run against pinned sessions: retention --apply (with and
    without --force and --days 1), trash purges (a session pinned while in the trash) and
    archive purges (an archive whose session is gone, pinned by id)."""
    config = env.config
    cli_pinned = write_session(config, cwd="/w/a", last=ago(100), seed=21)
    by_name = write_session(config, cwd="/w/a", last=ago(100), seed=22, title="contract draft")
    by_tag = write_session(config, cwd="/w/a", last=ago(100), seed=23, tags=("legal",))
    by_project = write_session(config, cwd="/w/vault", last=ago(100), seed=24)
    later_pinned = write_session(
        config, cwd="/w/b", last=ago(100), seed=25, title="trashed then pinned"
    )
    gone_pinned = write_session(config, cwd="/w/c", last=ago(100), seed=26)
    gone_free = write_session(config, cwd="/w/c", last=ago(101), seed=27)
    write_session(config, cwd="/w/a", last=ago(1), seed=28)  # newest of each project: young
    write_session(config, cwd="/w/b", last=ago(1), seed=29)
    write_session(config, cwd="/w/c", last=ago(1), seed=30)
    pins = f"""pins:
  sessions: [{gone_pinned.session_id}]
  names: [contract draft]
  tags: [legal]
  projects: ["/w/vault"]
"""
    env.policy(
        "  days: 30\n  trash_days: 0\n  archive_days: 30\n  require_archive: true", pins=pins
    )
    env.run("pin", cli_pinned.session_id[:8])
    # Two sessions are archived, then vanish locally (as Claude Code's sweep would do).
    env.run("archive", gone_pinned.session_id, gone_free.session_id)
    for session in (gone_pinned, gone_free):
        for path in session.paths:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    pinned = (cli_pinned, by_name, by_tag, by_project)
    before = {
        s.session_id: {k: v for k, v in tree(config).items() if s.session_id in k} for s in pinned
    }

    env.run("retention", "--apply")  # trashes `later_pinned`, the only unpinned old one
    assert (env.home / "trash" / later_pinned.session_id).is_dir()
    env.run("pin", "trashed then pinned")  # found in the trash, pinned there
    env.run("retention", "--apply", "--force", "--days", "1")
    env.run("retention", "--apply", "--days", "1")
    env.run("retention", "--apply", "--force")

    for session in pinned:
        assert session.session_id in env.ids()
        assert {k: v for k, v in tree(config).items() if session.session_id in k} == before[
            session.session_id
        ]
    # Pinned while in the trash: never purged, though trash_days is 0.
    assert read_trash_manifest(env.home / "trash" / later_pinned.session_id).complete
    listing = env.json("retention")
    trash = {t["session_id"]: t["reason"] for t in listing["trash"]}  # type: ignore[index, union-attr]
    assert trash[later_pinned.session_id] == "pinned"
    # Expired archives of vanished sessions: the sidecars keep titles, tags and cwds encrypted,
    # so while pins by name, tag or path exist nobody can tell whether they match: both stay.
    remaining = {e.session_id for e in list_archives(env.home / "archives") if e.path.exists()}
    assert {gone_pinned.session_id, gone_free.session_id} <= remaining
    reasons = {a["session_id"]: a["reason"] for a in listing["archives"]}  # type: ignore[index, union-attr]
    assert reasons[gone_pinned.session_id] == "pinned"
    assert reasons[gone_free.session_id] == "pin-status-unknown"
    assert reasons[later_pinned.session_id] == "pinned"  # archived before it went to the trash
    # With pins by id only, the unpinned archive goes and the pinned one stays.
    env.policy(
        "  days: 30\n  trash_days: 0\n  archive_days: 30\n  require_archive: true",
        pins=f"pins:\n  sessions: [{gone_pinned.session_id}]\n",
    )
    env.run("retention", "--apply", "--force")
    remaining = {e.session_id for e in list_archives(env.home / "archives") if e.path.exists()}
    assert gone_pinned.session_id in remaining and gone_free.session_id not in remaining


# --- faults ---------------------------------------------------------------------------------


def two_old_sessions(env: Env) -> tuple[WrittenSession, WrittenSession]:
    old = write_session(env.config, cwd="/w/x", last=ago(60), seed=41)
    write_session(env.config, cwd="/w/x", last=ago(2), seed=42)
    return old, write_session(env.config, cwd="/w/y", last=ago(70), seed=43)


def archives_of(env: Env, session_id: str) -> list[Path]:
    return sorted(
        e.path for e in list_archives(env.home / "archives") if e.session_id == session_id
    )


def test_crash_between_archive_and_delete(env: Env) -> None:
    """The state such a crash leaves: a verified archive, the session still here. The next
    run trashes it on the strength of that archive, without writing another."""
    old, _ = two_old_sessions(env)
    env.policy("  days: 30\n  require_archive: true\n  keep_newest_per_project: 0")
    env.run("archive", old.session_id)
    (written,) = archives_of(env, old.session_id)
    planned = env.json("retention")
    assert {s["session_id"]: (s["action"], s["archive"]) for s in planned["sessions"]}[
        old.session_id
    ] == ("trash", "verified")  # type: ignore[index, union-attr]
    env.run("retention", "--apply")
    assert archives_of(env, old.session_id) == [written]
    assert read_trash_manifest(env.home / "trash" / old.session_id).archive_ref == str(written)


def test_an_archive_for_another_key_is_no_archive(env: Env) -> None:
    """The only archive was made for a key that is not the policy's (an old key, a colleague's,
    one planted in the folder): the session is archived again, for the policy's key, before
    it goes; and a trashed session whose archive the policy's keys cannot open stays."""
    old, _ = two_old_sessions(env)
    stranger = generate_identity().recipient().encode()
    env.run("archive", old.session_id, "-r", stranger)
    (foreign,) = archives_of(env, old.session_id)
    env.policy("  days: 30\n  require_archive: true\n  keep_newest_per_project: 0")
    planned = env.json("retention")
    statuses = {s["session_id"]: s["archive"] for s in planned["sessions"]}  # type: ignore[index, union-attr]
    assert statuses[old.session_id] == "stale"
    env.run("retention", "--apply")
    ref = read_trash_manifest(env.home / "trash" / old.session_id).archive_ref
    assert ref is not None and Path(ref) != foreign
    assert list_archives(env.home / "archives")[-1].sidecar is not None
    # The policy's key is replaced by yet another: the archive in the trash manifest no
    # longer counts, and the trashed session is kept past its trash days.
    env.recipient = generate_identity().recipient().encode()
    env.policy("  days: 30\n  trash_days: 0\n  require_archive: true")
    env.run("retention", "--apply", "--force", code=None)
    assert read_trash_manifest(env.home / "trash" / old.session_id).complete


def test_archive_that_fails_verification(env: Env) -> None:
    old, other = two_old_sessions(env)
    env.policy("  days: 30\n  require_archive: true\n  keep_newest_per_project: 0")
    env.run("archive", old.session_id)
    (damaged,) = archives_of(env, old.session_id)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged.write_bytes(bytes(data))
    # Without a way to write a new archive, the session stays, and the run says so (exit 1).
    env.policy(
        "  days: 30\n  require_archive: true\n  keep_newest_per_project: 0", recipients=False
    )
    before = env.local_tree()
    kept = env.json("retention", "--apply", code=1)
    by_id = {s["session_id"]: s for s in kept["sessions"]}  # type: ignore[index, union-attr]
    assert by_id[old.session_id]["reason"] == "no-verified-archive"
    assert by_id[old.session_id]["archive"] == "unverified"
    assert env.local_tree() == before
    # With recipients the store keeps the archive it has for this content rather than write a
    # second one; that one is damaged, so the session still stays, and the run says where.
    env.policy("  days: 30\n  require_archive: true\n  keep_newest_per_project: 0")
    again = env.json("retention", "--apply", code=1)
    by_id = {s["session_id"]: s for s in again["sessions"]}  # type: ignore[index, union-attr]
    assert by_id[old.session_id]["done"] == "keep"
    assert "scrub archives verify" in by_id[old.session_id]["detail"]  # type: ignore[operator]
    assert {k: v for k, v in env.local_tree().items() if old.session_id in k} == {
        k: v for k, v in before.items() if old.session_id in k
    }
    assert other.session_id not in env.ids()  # the healthy one went, archived first
    # Once the damaged archive is removed, the next run archives afresh and trashes it.
    damaged.unlink()
    damaged.with_name(damaged.name + ".json").unlink()
    env.run("retention", "--apply")
    (fresh,) = archives_of(env, old.session_id)
    verify_archive(fresh)
    assert read_trash_manifest(env.home / "trash" / old.session_id).archive_ref == str(fresh)
    assert old.session_id not in env.ids()


def _small_disk() -> None:
    # A file-size limit makes writes past 64 KiB fail with EFBIG, like a full disk.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_full_disk_while_archiving(env: Env) -> None:
    old, other = two_old_sessions(env)
    # A large, incompressible tool result makes this session's archive outgrow the "disk".
    big = env.config / "projects" / old.project / old.session_id / "tool-results" / "toolu_big.txt"
    big.write_bytes(os.urandom(300_000).hex().encode())
    os.utime(big, (ago(60).timestamp(), ago(60).timestamp()))
    env.policy("  days: 30\n  require_archive: true\n  keep_newest_per_project: 0")
    before = env.local_tree()
    done = env.run("retention", "--apply", code=3, preexec=_small_disk)
    assert old.session_id in done.stderr
    # The big session is all still there; nothing half-written is left as an archive.
    assert {k: v for k, v in env.local_tree().items() if old.session_id in k} == {
        k: v for k, v in before.items() if old.session_id in k
    }
    assert archives_of(env, old.session_id) == []
    assert not (env.home / "trash" / old.session_id).exists()
    # The small one fitted: archived, verified, trashed.
    assert other.session_id not in env.ids() and len(archives_of(env, other.session_id)) == 1


# --- bad input ------------------------------------------------------------------------------


def test_bad_input(env: Env) -> None:
    two_old_sessions(env)
    before = env.local_tree()
    assert "minimum is 1" in env.run("retention", "--days", "0", code=2).stderr
    env.run("pin", "no-such-session", code=2)
    env.run("unpin", "no-such-session", code=2)
    env.policy("  days: 30", pins="pins:\n  names: [from the policy]\n")
    assert "policy" in env.run("unpin", "from the policy", code=2).stderr
    # No retention.days: Claude Code's settings decide, and an unreadable one pauses everything.
    env.policy("  keep_newest_per_project: 0")
    (env.config / "settings.json").write_text('{"cleanupPeriodDays": 30,')
    paused = env.run("retention", "--apply", code=2)
    assert "settings.json" in paused.stderr and "paused" in paused.stderr
    (env.config / "settings.json").write_text('{"cleanupPeriodDays": 0}')
    env.run("retention", "--apply", code=2)
    assert env.local_tree() == {**before, "settings.json": '{"cleanupPeriodDays": 0}'}
    # A valid value is used, and says where it came from.
    (env.config / "settings.json").write_text('{"cleanupPeriodDays": 365}')
    report = env.json("retention")
    assert report["period"] == {
        "days": 365,
        "source": f"Claude Code's cleanupPeriodDays in {env.config / 'settings.json'}",
        "by_project_settings": 0,
    }  # type: ignore[comparison-overlap]
    # archive_days shorter than the period makes no sense: refused, nothing done.
    env.policy("  days: 60\n  archive_days: 30")
    assert "archive_days" in env.run("retention", "--apply", code=2).stderr


def test_cap_needs_force(env: Env) -> None:
    for seed in range(5):
        write_session(env.config, cwd="/w/z", last=ago(40 + seed), seed=60 + seed)
    env.policy("  days: 30\n  keep_newest_per_project: 0\n  max_deletions_per_run: 2")
    capped = env.json("retention", "--apply", code=1)
    assert capped["summary"]["trashed"] == 2  # type: ignore[index]
    assert sum(1 for s in capped["sessions"] if s["reason"] == "over-cap") == 3  # type: ignore[union-attr, index]
    forced = env.json("retention", "--apply", "--force")
    assert forced["summary"]["trashed"] == 3  # type: ignore[index]
    assert not env.ids()


# --- monitoring and the overview ------------------------------------------------------------


class _Ping(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        self.send_response(500 if "/down" in self.path else 200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_healthcheck_ping_and_log(env: Env) -> None:
    two_old_sessions(env)
    server = http.server.HTTPServer(("127.0.0.1", 0), _Ping)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token = "hc-" + os.urandom(6).hex()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        env.policy(f"  days: 30\n  healthcheck_url: {base}/{token}")
        env.run("retention")  # a dry run never pings
        assert _Ping.seen == []
        env.run("retention", "--apply")
        assert _Ping.seen == [f"/{token}"]
        env.policy(f"  days: 30\n  healthcheck_url: {base}/down/{token}")
        failed = env.run("retention", "--apply")  # a failed ping is logged, never fatal
        assert "healthcheck ping failed (HTTP 500)" in failed.stderr
    finally:
        server.shutdown()
    log = (env.home / "log" / "activity.jsonl").read_text()
    assert token not in log  # the URL is a credential: never logged
    records = [json.loads(line) for line in log.splitlines()]
    assert [r.get("healthcheck") for r in records] == [None, "ok", "failed: HTTP 500"]


def test_sessions_overview_uses_a_fresh_audit_cache(env: Env) -> None:
    old, other = two_old_sessions(env)
    env.policy("  days: 30")
    stat = old.transcript.stat()
    cache = {
        "format": 1,
        "sessions": {
            old.session_id: {
                "transcript_size": stat.st_size,
                "transcript_mtime_ns": stat.st_mtime_ns,
                "distinct": 3,
            },
            other.session_id: {
                "transcript_size": 1,
                "transcript_mtime_ns": 1,
                "distinct": 9,
            },  # stale
        },
    }
    (env.home / "state").mkdir(parents=True, exist_ok=True)
    (env.home / "state" / "audit-cache.json").write_text(json.dumps(cache))
    rows = {r["session_id"]: r for r in env.json("sessions")["sessions"]}  # type: ignore[index, union-attr]
    assert rows[old.session_id]["secrets"] == 3 and rows[other.session_id]["secrets"] is None
    ordered = [r["session_id"] for r in env.json("sessions")["sessions"]]  # type: ignore[index, union-attr]
    assert ordered[:2] == [other.session_id, old.session_id]  # the most urgent first (70 > 60 days)
    text = env.run("sessions", "--sort", "recent").stdout.splitlines()
    assert old.session_id in text[2] and other.session_id in text[3]  # 2 days, 60, 70
    assert "Claude Code's own sweep first" in env.run("sessions").stdout
    env.run("sessions", "--project", "no-such-project", code=2)


def test_pins_listing_and_unpin(env: Env) -> None:
    old, _ = two_old_sessions(env)
    env.policy("  days: 30", pins='pins:\n  tags: [legal]\n  projects: ["/srv/*"]\n')
    env.run("pin", old.session_id, "--reason", "evidence")
    listed = env.json("pins")
    assert [p["session_id"] for p in listed["cli"]] == [old.session_id]  # type: ignore[index, union-attr]
    assert listed["policy"]["tags"] == ["legal"]  # type: ignore[index]
    assert "evidence" in env.run("pins").stdout
    assert old.session_id in env.run("unpin", old.session_id[:6]).stdout
    assert env.json("pins")["cli"] == []
