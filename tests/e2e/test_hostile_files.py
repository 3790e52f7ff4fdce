"""Files and folders an attacker (or an accident) put where scrubber looks (issue 11, 4-5).

- scrubber's own folders under $SCRUB_HOME that are symbolic links, owned by another user or
  writable by group or others are refused with a clear error, never followed or used;
- a FIFO as a transcript, a policy, a settings file, a pins file or a status-line transcript
  never blocks: each is refused or skipped, and every test here has a timeout so that a
  regression fails instead of hanging;
- huge counts of days are a clear error, never an OverflowError.

Real processes (`scrub` in a session of its own) where a hang would show; in-process runs for
the rest.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scrubber import paths
from scrubber.durable import UnsafeFolderError
from tests.skips import INSTALL_HYPERSCAN

FOREIGN_UID = 12345
HANG = 20  # seconds: far more than any of these runs needs, far less than forever

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")


def session_file(config: Path, builder: type, *, secret: bool = True) -> Path:
    import random

    from scrubber.demo import fake_github_token

    transcript = builder()
    transcript.prompt("hello")
    if secret:
        transcript.bash("env", f"GITHUB_TOKEN={fake_github_token(random.Random(3))}\n")
    else:
        transcript.say("nothing to see")
    return transcript.write(
        config / "projects" / "-home-u-work-app" / f"{transcript.session_id}.jsonl"
    )


# -- our own folders ---------------------------------------------------------------------------


def test_a_symlinked_state_folder_is_refused_and_not_followed(sandbox, transcript_builder) -> None:
    elsewhere = sandbox.root / "elsewhere"
    elsewhere.mkdir()
    sandbox.scrub_home.mkdir(mode=0o700)
    (sandbox.scrub_home / "state").symlink_to(elsewhere)
    transcript = session_file(sandbox.config, transcript_builder)
    session = transcript.stem

    done = sandbox.scrub("pin", session, timeout=HANG)

    assert done.returncode == 3, done.output
    assert "is a symbolic link inside scrubber's folder; not followed" in done.stderr
    assert "hint: remove the link" in done.stderr
    assert "internal error" not in done.output
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_ensure_private_dir_refuses_links_foreign_and_writable_folders(sandbox) -> None:
    home = sandbox.scrub_home
    paths.ensure_private_dir(home / "state")
    assert (home / "state").stat().st_mode & 0o777 == 0o700

    target = sandbox.root / "target"
    target.mkdir()
    (home / "spool").symlink_to(target)
    with pytest.raises(UnsafeFolderError, match="symbolic link"):
        paths.ensure_private_dir(home / "spool" / "failed")
    assert not (target / "failed").exists()

    (home / "trash").mkdir(mode=0o700)
    (home / "trash").chmod(0o770)
    with pytest.raises(UnsafeFolderError, match="writable by group or others"):
        paths.ensure_private_dir(home / "trash" / "slot")
    (home / "trash").chmod(0o703)
    with pytest.raises(UnsafeFolderError, match="writable by group or others"):
        paths.ensure_private_dir(home / "trash")
    assert not (home / "trash" / "slot").exists()

    # Readable by others only: nothing could have been planted; tightened, as before.
    (home / "log").mkdir(mode=0o755)
    (home / "log").chmod(0o755)
    paths.ensure_private_dir(home / "log")
    assert (home / "log").stat().st_mode & 0o777 == 0o700

    # Outside scrubber's folder (an --output folder): a shared sticky folder is left alone.
    shared = sandbox.root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    paths.ensure_private_dir(shared)
    assert shared.stat().st_mode & 0o7777 == 0o1777


@needs_root
def test_a_folder_owned_by_another_user_is_refused(sandbox, transcript_builder) -> None:
    sandbox.scrub_home.mkdir(mode=0o700)
    state = sandbox.scrub_home / "state"
    state.mkdir(mode=0o700)
    os.chown(state, FOREIGN_UID, FOREIGN_UID)
    with pytest.raises(UnsafeFolderError, match=f"owned by uid {FOREIGN_UID}"):
        paths.ensure_private_dir(state / "locks")
    with pytest.raises(UnsafeFolderError, match=f"owned by uid {FOREIGN_UID}"):
        paths.check_private_dir(state)

    transcript = session_file(sandbox.config, transcript_builder)
    done = sandbox.scrub("pin", transcript.stem, timeout=HANG)
    assert done.returncode == 3, done.output
    assert f"owned by uid {FOREIGN_UID}" in done.stderr
    assert "chown" in done.stderr  # the hint says what to fix
    assert not (state / "pins.json").exists()


def test_a_group_writable_scrub_home_is_refused(sandbox, transcript_builder) -> None:
    sandbox.scrub_home.mkdir()
    sandbox.scrub_home.chmod(0o777)
    transcript = session_file(sandbox.config, transcript_builder)
    done = sandbox.scrub("pin", transcript.stem, timeout=HANG)
    assert done.returncode == 3, done.output
    assert "writable by group or others" in done.stderr
    assert not (sandbox.scrub_home / "state").exists()


# -- FIFOs -------------------------------------------------------------------------------------


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path, 0o600)
    return path


@pytest.mark.parametrize("command", ["audit", "redact", "verify"])
def test_a_fifo_named_as_a_transcript_is_refused_at_once(sandbox, command: str) -> None:
    pipe = fifo(sandbox.root / "session.jsonl")
    extra = ["--output", str(sandbox.root / "out.jsonl")] if command == "redact" else []

    done = sandbox.scrub(command, pipe, *extra, timeout=HANG)

    assert done.returncode == 2, done.output
    assert f"{pipe}: is a FIFO, not a regular file" in done.stderr
    assert not (sandbox.root / "out.jsonl").exists()


def test_redact_of_a_folder_without_files_says_so_and_exits_2(sandbox) -> None:
    folder = sandbox.root / "inbox"
    fifo(folder / "live.jsonl")

    done = sandbox.scrub("redact", folder, "--output", sandbox.root / "out", timeout=HANG)

    assert done.returncode == 2, done.output
    assert f"skipped {folder / 'live.jsonl'}: is a FIFO, not a regular file" in done.stderr
    assert "holds no regular file to redact" in done.stderr
    assert "0 files" not in done.output


def test_a_fifo_beside_transcripts_is_skipped_and_the_rest_redacted(
    sandbox, transcript_builder
) -> None:
    folder = sandbox.root / "inbox"
    session_file(folder, transcript_builder)
    fifo(folder / "projects" / "-home-u-work-app" / "live.jsonl")

    done = sandbox.scrub("redact", folder, "--output", sandbox.root / "out", timeout=HANG)

    assert done.returncode == 0, done.output
    assert "live.jsonl: is a FIFO, not a regular file" in done.stderr
    assert len(list((sandbox.root / "out").rglob("*.jsonl"))) == 1


@pytest.mark.parametrize("where", ["SCRUB_POLICY", "policy.yaml"])
def test_a_fifo_as_the_policy_is_a_policy_error(sandbox, where: str) -> None:
    sandbox.scrub_home.mkdir(mode=0o700)
    if where == "SCRUB_POLICY":
        pipe = fifo(sandbox.root / "policy.yaml")
        env = {"SCRUB_POLICY": str(pipe)}
    else:
        pipe = fifo(sandbox.scrub_home / "policy.yaml")
        env = {}
    sandbox.config.mkdir(parents=True)

    done = sandbox.scrub("audit", env=env, timeout=HANG)

    assert done.returncode == 2, done.output
    assert f"{pipe}: is a FIFO, expected a policy file; not read" in done.stderr


def test_a_fifo_as_claude_settings_pauses_retention(sandbox, transcript_builder) -> None:
    session_file(sandbox.config, transcript_builder)
    fifo(sandbox.config / "settings.json")

    done = sandbox.scrub("retention", timeout=HANG)

    assert done.returncode == 2, done.output
    assert "is a FIFO, not a Claude Code settings file; retention paused" in done.stderr


def test_a_fifo_as_the_pins_file_is_a_clear_error(sandbox, transcript_builder) -> None:
    transcript = session_file(sandbox.config, transcript_builder)
    fifo(sandbox.scrub_home / "state" / "pins.json")

    done = sandbox.scrub("pin", transcript.stem, timeout=HANG)

    assert done.returncode == 2, done.output
    assert "pins.json" in done.stderr and "FIFO" in done.stderr


def test_a_fifo_in_projects_is_left_out_of_audit(sandbox, transcript_builder) -> None:
    session_file(sandbox.config, transcript_builder)
    fifo(sandbox.config / "projects" / "-home-u-work-app" / "0000aaaa-live.jsonl")

    done = sandbox.scrub("audit", "--format", "json", timeout=HANG)

    assert done.returncode == 1, done.output
    report = json.loads(done.stdout)
    assert {Path(f["file"]).name for f in report["findings"]} == {
        p.name for p in (sandbox.config / "projects").rglob("*.jsonl") if p.is_file()
    }


def _lock_is_free(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_the_status_line_never_blocks_on_a_fifo_transcript(sandbox) -> None:
    from scrubber.hooks import status_scan

    sandbox.config.mkdir(parents=True)
    pipe = fifo(sandbox.config / "projects" / "-home-u-work-app" / "feed0001.jsonl")
    payload = json.dumps({"session_id": "feed0001", "transcript_path": str(pipe)})

    call = subprocess.run(
        [sys.executable, "-m", "scrubber.hooks.status_line"],
        input=payload.encode(),
        env=sandbox.environ(),
        capture_output=True,
        timeout=HANG,
        check=False,
    )
    assert call.returncode == 0
    assert call.stdout == b""

    # The detached scan, as the status line starts it: it used to block in open() for as long
    # as nobody wrote to the FIFO, holding the transcript's lock all that time.
    scan = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrubber.hooks.status_line",
            "--scan",
            str(pipe),
            "--session",
            "feed0001",
        ],
        env=sandbox.environ(SCRUB_STATUS_LINE_LINGER="0"),
        capture_output=True,
        timeout=HANG,
        check=False,
    )
    assert scan.returncode == 0
    where = status_scan.state_file(sandbox.scrub_home, "feed0001", pipe)
    assert _lock_is_free(status_scan._lock_path(where))


# -- huge numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "policy", "settings", "expected"),
    [
        (["retention", "--days", "800000"], None, None, "800000 days is too large"),
        (["retention"], "retention:\n  days: 1000000\n", None, "retention.days"),
        (["retention"], "retention:\n  trash_days: 1000000\n", None, "retention.trash_days"),
        (["retention"], "retention:\n  archive_days: 1000000\n", None, "retention.archive_days"),
        (["sessions"], "retention:\n  days: 1000000\n", None, "retention.days"),
        (["archive", "--all", "--older-than", "800000", "--redact"], None, None, "too large"),
    ],
)
def test_huge_counts_of_days_are_clear_errors(
    sandbox, transcript_builder, args: list[str], policy, settings, expected: str
) -> None:
    session_file(sandbox.config, transcript_builder, secret=False)
    env = {}
    if policy is not None:
        (sandbox.root / "policy.yaml").write_text("version: 1\n" + policy)
        env["SCRUB_POLICY"] = str(sandbox.root / "policy.yaml")

    done = sandbox.scrub(*args, env=env, timeout=HANG)

    assert done.returncode == 2, done.output
    assert expected in done.stderr
    assert "internal error" not in done.output


@pytest.mark.parametrize("value", ["1e300", "99999999999999999999999", "100001"])
def test_a_huge_cleanup_period_counts_as_never(sandbox, transcript_builder, value: str) -> None:
    # Claude Code's own setting is the user's to make: 99999 and more is the usual way to say
    # "never". Beyond MAX_DAYS it is read as MAX_DAYS (274 years), which deletes nothing.
    session_file(sandbox.config, transcript_builder, secret=False)
    (sandbox.config / "settings.json").write_text(f'{{"cleanupPeriodDays": {value}}}')

    done = sandbox.scrub("retention", "--format", "json", timeout=HANG)

    assert done.returncode == 0, done.output
    report = json.loads(done.stdout)
    assert report["period"]["days"] == 100_000
    assert {s["action"] for s in report["sessions"]} == {"keep"}


# -- a full disk -------------------------------------------------------------------------------


@pytest.fixture
def full_disk(tmp_path: Path):
    """A 64 KB tmpfs filled up: writes fail with ENOSPC, as on a real full disk."""
    mount = tmp_path / "full"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
        timeout=HANG,
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        (mount / "home").mkdir(mode=0o700)
        with (mount / "filler").open("wb", buffering=0) as filler, pytest.raises(OSError):
            while True:
                filler.write(b"\0" * 4096)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, timeout=HANG)


def test_pin_on_a_full_disk_says_so_with_the_path(sandbox, transcript_builder, full_disk) -> None:
    transcript = session_file(sandbox.config, transcript_builder, secret=False)
    home = full_disk / "home"

    done = sandbox.scrub("pin", transcript.stem, env={"SCRUB_HOME": str(home)}, timeout=HANG)

    assert done.returncode == 3, done.output
    pins = home / "state" / "pins.json"
    assert f"cannot write {pins}: No space left on device" in done.stderr
    assert "internal error" not in done.output
    assert not pins.exists()
    assert [p.name for p in pins.parent.iterdir()] == ["pins.lock"]  # no temp file left


# -- a planted prefilter cache -----------------------------------------------------------------


def _plant_matching_nothing(cache: Path) -> None:
    """Replace the databases in a cache file with ones that match nothing, keeping whatever
    header the file has (a tamper with the payload) or, for a file with none, in the plain
    layout scrubber reads (how many databases, their sizes, the databases)."""
    import struct

    import hyperscan

    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=[rb"\x00never\x00matches\x00"], ids=[0], flags=[0])
    from scrubber.detection.prefilter_cache import CacheFile

    dumped = hyperscan.dumpb(db)
    data = cache.read_bytes()
    magic = CacheFile.MAGIC
    header = data[: len(magic) + 32] if data.startswith(magic) else b""
    (count,) = struct.unpack_from(">I", data, len(header)) if header else (2,)
    sizes = struct.pack(f">I{count}Q", count, *[len(dumped)] * count)
    cache.write_bytes(header + sizes + dumped * count)


def test_a_planted_prefilter_cache_is_not_trusted(sandbox, transcript_builder) -> None:
    pytest.importorskip("hyperscan", reason=INSTALL_HYPERSCAN)
    transcript = session_file(sandbox.root / "in", transcript_builder)
    first = sandbox.scrub("audit", transcript, "--format", "json", timeout=60)
    assert first.returncode == 1, first.output
    found = len(json.loads(first.stdout)["findings"])
    caches = sorted(paths.prefilter_cache_dir(sandbox.scrub_home).glob("*.hsdb"))
    assert caches  # the first run kept its compiled databases

    for cache in caches:
        _plant_matching_nothing(cache)
    again = sandbox.scrub("audit", transcript, "--format", "json", timeout=60)
    assert again.returncode == 1, again.output
    assert len(json.loads(again.stdout)["findings"]) == found

    out = sandbox.root / "out.jsonl"
    assert sandbox.scrub("redact", transcript, "--output", out, timeout=60).returncode == 0
    assert b"GITHUB_TOKEN=[REDACTED:" in out.read_bytes()


def test_the_status_line_never_blocks_on_a_fifo_planted_as_its_state(
    sandbox, transcript_builder
) -> None:
    from scrubber.hooks import status_scan

    transcript = session_file(sandbox.config, transcript_builder)
    session = transcript.stem
    where = status_scan.state_file(sandbox.scrub_home, session, transcript)
    fifo(where)
    fifo(status_scan.allowlist_state_file(sandbox.scrub_home))
    payload = json.dumps({"session_id": session, "transcript_path": str(transcript)})

    for extra in ([], ["--inline"]):
        call = subprocess.run(
            [sys.executable, "-m", "scrubber.hooks.status_line", *extra],
            input=payload.encode(),
            env=sandbox.environ(SCRUB_STATUS_LINE_LINGER="0"),
            capture_output=True,
            timeout=HANG,
            check=False,
        )
        assert call.returncode == 0
    # The first call started the detached scan (the state could not be read, so it is
    # behind): it must finish, not sit on the FIFO holding the lock.
    lock = status_scan._lock_path(where)
    deadline = time.monotonic() + HANG
    while not _lock_is_free(lock):
        assert time.monotonic() < deadline, "the detached scan still holds the lock"
        time.sleep(0.05)
