"""Issue 11: archives made by whoever knows the (public) recipient. `restore` writes only the
session bundle its manifest names, holds memory and disk to bounds whatever the headers say,
and refuses before anything reaches the config dir, naming the path, with no hint of --force.

Archives are built at run time (tests/e2e/hostile_kit.py) and encrypted with our own age
writer; most cases call `restore_archive` in this process, the CLI cases run `scrub restore` as
a real process (one under an address-space limit)."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.bundle import BundleError
from scrubber.archive.keys import X25519Identity, generate_identity, write_identity_file
from scrubber.archive.restore import restore_archive
from scrubber.errors import ScrubberError
from tests.conftest import Sandbox, make_sandbox
from tests.e2e.hostile_kit import (
    OTHER,
    PROJECT,
    SESSION,
    TRANSCRIPT,
    Hostile,
    Member,
    gzip_chunks,
    hostile_archive,
    legit,
    pax_header,
    seal,
    snapshot,
    tar_stream,
    transcript_bytes,
    zeros,
)

IDENTITY: X25519Identity = generate_identity()
RECIPIENT = IDENTITY.recipient()


@pytest.fixture
def world(tmp_path: Path) -> Sandbox:
    box = make_sandbox(tmp_path)
    (box.config / "projects" / PROJECT).mkdir(parents=True)
    (box.config / "settings.json").write_text('{"theme": "dark"}\n')
    return box


def _refused(box: Sandbox, hostile: Hostile, match: str) -> ScrubberError:
    before = snapshot(box.config)
    archive = hostile_archive(hostile, RECIPIENT, box.root / "hostile.tar.gz.age")
    with pytest.raises(ScrubberError, match=match) as caught:
        restore_archive(archive, [IDENTITY], box.config, home=box.scrub_home)
    assert snapshot(box.config) == before, "the config dir changed"
    assert "--force" not in (caught.value.hint or "") + caught.value.message
    staging = box.scrub_home / "staging"
    assert not staging.exists() or list(staging.iterdir()) == []
    return caught.value


def test_a_legit_bundle_restores(world: Sandbox) -> None:
    hostile = legit(
        Member(f"file-history/{SESSION}/abc@v1", b"old text\n"),
        Member(f"todos/{SESSION}-agent-{SESSION}.json", b"[]"),
        Member(f"debug/{SESSION}.txt", b"debug\n"),
    )
    archive = hostile_archive(hostile, RECIPIENT, world.root / "ok.tar.gz.age")
    result = restore_archive(archive, [IDENTITY], world.config, home=world.scrub_home)
    assert result.files == 4
    assert (world.config / TRANSCRIPT).read_bytes() == transcript_bytes()
    assert (world.config / f"file-history/{SESSION}/abc@v1").read_bytes() == b"old text\n"
    assert list((world.scrub_home / "staging").iterdir()) == []


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (Member("settings.json", b'{"hooks": {}}'), "settings.json"),
        (Member("CLAUDE.md", b"do evil"), "CLAUDE.md"),
        (Member(f"projects/{PROJECT}/{OTHER}.jsonl", transcript_bytes(OTHER)), OTHER),
        (Member(f"projects/other-project/{SESSION}.jsonl", b"{}\n"), "other-project"),
        (Member(f"file-history/{OTHER}/x@v1", b"x"), f"file-history/{OTHER}"),
        (Member(f"session-env/{OTHER}/env", b"x"), f"session-env/{OTHER}"),
        (Member(f"todos/{OTHER}-agent-{OTHER}.json", b"[]"), f"todos/{OTHER}"),
        (Member(f"debug/{OTHER}.txt", b"x"), f"debug/{OTHER}"),
        (Member("plugins/evil/hooks.json", b"{}"), "plugins/evil"),
        (Member(f"projects/{PROJECT}/agent-1234.jsonl", transcript_bytes(OTHER)), "agent-1234"),
    ],
    ids=[
        "settings",
        "claude-md",
        "other-session",
        "other-project",
        "other-file-history",
        "other-session-env",
        "other-todos",
        "other-debug",
        "plugin",
        "legacy-agent-of-another-session",
    ],
)
def test_paths_outside_the_bundle_fail_the_whole_restore(
    world: Sandbox, extra: Member, named: str
) -> None:
    error = _refused(world, legit(extra), "not part of session")
    assert named in error.message


def test_a_legacy_agent_file_of_the_session_is_restored(world: Sandbox) -> None:
    agent = Member(f"projects/{PROJECT}/agent-1234.jsonl", transcript_bytes(SESSION))
    archive = hostile_archive(legit(agent), RECIPIENT, world.root / "ok.tar.gz.age")
    restore_archive(archive, [IDENTITY], world.config, home=world.scrub_home)
    assert (world.config / agent.path).read_bytes() == agent.data


@pytest.mark.parametrize(
    ("member", "match"),
    [
        (Member(f"projects/{PROJECT}/{SESSION}/x", kind=tarfile.SYMTYPE, linkname="/etc"), "link"),
        (
            Member(f"projects/{PROJECT}/{SESSION}/x", kind=tarfile.LNKTYPE, linkname=TRANSCRIPT),
            "link",
        ),
        (Member(f"projects/{PROJECT}/{SESSION}/x", kind=tarfile.CHRTYPE), "device"),
        (Member(f"projects/{PROJECT}/{SESSION}/x", kind=tarfile.FIFOTYPE), "FIFO"),
    ],
    ids=["symlink", "hardlink", "device", "fifo"],
)
def test_links_and_devices_are_refused(world: Sandbox, member: Member, match: str) -> None:
    _refused(world, legit(member), match)


def test_a_member_bigger_than_declared_stops_at_its_header(world: Sandbox) -> None:
    big = Member(f"debug/{SESSION}.txt", b"x" * 5000, declared=10)
    _refused(world, legit(big), "size other than its manifest")


def test_a_huge_pax_header_is_refused_before_it_is_read(world: Sandbox) -> None:
    hostile = legit()
    hostile.raw_after_manifest = pax_header({"path": b"a" * 100}, declared=100 * 1024 * 1024)
    _refused(world, hostile, "pax header of 104857600 bytes")


def test_a_gnu_long_name_is_refused(world: Sandbox) -> None:
    info = tarfile.TarInfo("././@LongLink")
    info.type = tarfile.GNUTYPE_LONGNAME
    info.size = 1 << 30
    hostile = legit()
    hostile.raw_after_manifest = info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
    _refused(world, hostile, "GNU long-name")


def test_a_declared_size_that_cannot_fit_is_refused_before_writing(world: Sandbox) -> None:
    # A gzip bomb: the manifest declares a file far larger than the disk; nothing is written.
    bomb = Member(f"debug/{SESSION}.txt", b"", declared=1 << 50, tar_size=1 << 50)
    error = _refused(world, legit(bomb), "declares")
    assert "free" in error.message


def test_a_gzip_bomb_stops_at_the_first_byte_past_its_declared_size(world: Sandbox) -> None:
    # 64 MiB of zeros (a few KB compressed) behind a member declared 1 KiB: the data past the
    # declared size is never decompressed into a file, the restore fails on the next header.
    hostile = legit(Member(f"debug/{SESSION}.txt", bytes(1024)))
    chunks = list(tar_stream(hostile))
    payload = gzip_chunks([*chunks[:-1], *zeros(64 << 20)])
    before = snapshot(world.config)
    archive = seal(payload, RECIPIENT, world.root / "bomb.tar.gz.age")
    assert archive.stat().st_size < 1 << 20
    # The zeros read as the end of the tar: the bundle is complete and restores; nothing past
    # the zero block is written anywhere.
    restore_archive(archive, [IDENTITY], world.config, home=world.scrub_home)
    after = snapshot(world.config)
    assert set(after) - set(before) <= {
        "projects/" + PROJECT + "/" + SESSION + ".jsonl",
        "debug",
        f"debug/{SESSION}.txt",
    }
    assert (world.config / f"debug/{SESSION}.txt").stat().st_size == 1024


def test_a_path_below_a_listed_file_is_refused(world: Sandbox) -> None:
    _refused(world, legit(Member(f"{TRANSCRIPT}/x", b"x")), "below the file")


# ------------------------------------------------------------------------------------ the CLI


def _key(box: Sandbox) -> Path:
    key = box.root / "key.txt"
    if not key.exists():
        write_identity_file(key, IDENTITY, datetime.now(UTC))
    return key


def test_cli_refuses_a_settings_json_archive_naming_it_without_force(world: Sandbox) -> None:
    hook = b'{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}'
    archive = hostile_archive(
        legit(Member("settings.json", hook)), RECIPIENT, world.root / "h.tar.gz.age"
    )
    before = snapshot(world.config)
    done = world.scrub("restore", archive, "-i", _key(world))
    assert done.returncode == 3, done.output
    assert "settings.json" in done.stderr and "not part of session" in done.stderr
    assert "--force" not in done.stderr and "Traceback" not in done.stderr
    assert snapshot(world.config) == before
    again = world.scrub("restore", archive, "-i", _key(world), "--force")
    assert again.returncode == 3 and snapshot(world.config) == before


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize(
    ("kind", "command"), [("pax", "restore"), ("gnu", "restore"), ("pax", "verify")]
)
def test_memory_stays_bounded_on_a_huge_header(world: Sandbox, kind: str, command: str) -> None:
    # The header claims (and carries) 300 MB: tarfile read it whole before any check.
    size = 300 * 1024 * 1024
    if kind == "pax":
        head = pax_header({"path": b"a"}, declared=size)[:512]
    else:
        info = tarfile.TarInfo("././@LongLink")
        info.type = tarfile.GNUTYPE_LONGNAME
        info.size = size
        head = info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
    chunks = list(tar_stream(legit()))
    payload = gzip_chunks([chunks[0], head, *(b"a" * (1 << 20) for _ in range(size >> 20))])
    archive = seal(payload, RECIPIENT, world.root / "huge.tar.gz.age")
    assert archive.stat().st_size < 5 << 20
    verb = ["restore"] if command == "restore" else ["archives", "verify"]
    done = subprocess.run(
        [sys.executable, "-m", "scrubber.cli", *verb, str(archive), "-i", str(_key(world))],
        env=world.environ(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limited(400 * 1024 * 1024),
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    named = "pax header of" if kind == "pax" else "GNU long-name header"
    assert named in done.stdout + done.stderr


def test_a_full_disk_in_restore_is_a_plain_io_error_with_the_path(world: Sandbox) -> None:
    # Issue 11 (from part 5): was "internal error (OSError)".
    data = b"x" * (4 << 20)
    archive = hostile_archive(
        legit(Member(f"debug/{SESSION}.txt", data)), RECIPIENT, world.root / "a.tar.gz.age"
    )
    before = snapshot(world.config)

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    done = subprocess.run(
        [sys.executable, "-m", "scrubber.cli", "restore", str(archive), "-i", str(_key(world))],
        env=world.environ(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=small_disk,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "File too large" in done.stderr and str(world.scrub_home / "staging") in done.stderr
    assert snapshot(world.config) == before
    assert list((world.scrub_home / "staging").iterdir()) == []


def test_bundle_error_is_the_base(world: Sandbox) -> None:
    assert issubclass(BundleError, ScrubberError)


def test_restore_across_file_systems_copies_and_leaves_no_temp(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no second file system at /dev/shm")
    with tempfile.TemporaryDirectory(dir=shm) as other:
        home = Path(other) / "scrub-home"
        config = tmp_path / "config"
        config.mkdir()
        if Path(other).stat().st_dev == config.stat().st_dev:
            pytest.skip("/dev/shm is on the same file system")
        hostile = legit(Member(f"debug/{SESSION}.txt", b"debug\n"))
        archive = hostile_archive(hostile, RECIPIENT, tmp_path / "ok.tar.gz.age")
        restore_archive(archive, [IDENTITY], config, home=home)
        assert (config / TRANSCRIPT).read_bytes() == transcript_bytes()
        for path in (config / TRANSCRIPT, config / f"debug/{SESSION}.txt"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in config.rglob("*") if p.name.endswith(".tmp")] == []
        assert list((home / "staging").iterdir()) == []
        # An existing, different file is not replaced without --force, across file systems too.
        (config / f"debug/{SESSION}.txt").write_bytes(b"changed\n")
        with pytest.raises(ScrubberError, match="already in"):
            restore_archive(archive, [IDENTITY], config, home=home)
        restore_archive(archive, [IDENTITY], config, home=home, force=True)
        assert (config / f"debug/{SESSION}.txt").read_bytes() == b"debug\n"
        assert [p.name for p in config.rglob("*") if p.name.endswith(".tmp")] == []
