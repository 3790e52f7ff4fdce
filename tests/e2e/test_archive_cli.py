"""`scrub keygen / archive / archives / restore / decrypt` as real processes, on real files.

Every run gets its own CLAUDE_CONFIG_DIR, HOME and SCRUB_HOME under tmp_path (a demo config dir
in Claude Code's layout) and runs in a new session, without a controlling terminal, as a hook
or a cron job would. Assertions are on the files written: archives opened with Debian's `age`
and `tar` and with pyrage, sidecars read as JSON, restored sessions found by discovery.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import stat
import subprocess
import tarfile
import time
from pathlib import Path

import pyrage
import pytest

from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import bundle_digest
from tests.e2e.archive_kit import (
    AGE,
    FULL,
    PROJECT,
    SECRETS,
    World,
    archive_files,
    keygen,
    one_archive,
    one_line_error,
    world,
)

__all__ = ["world"]  # the fixture, used by name

pytestmark = pytest.mark.slow  # about 40 real processes

# ---------------------------------------------------------------------------------- keygen


def test_keygen_writes_a_private_identity_that_age_understands(world: World) -> None:
    key = world.root / "key.txt"
    done = world.run("keygen", "-o", str(key))
    assert done.returncode == 0, done.stderr
    recipient = done.stderr.strip().removeprefix("Public key: ")
    assert recipient.startswith("age1") and "\n" not in recipient
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    lines = key.read_text().splitlines()
    assert lines[0].startswith("# created: ")
    assert lines[1] == f"# public key: {recipient}"
    assert lines[2].startswith("AGE-SECRET-KEY-1")
    again = world.run("keygen", "-o", str(key))
    one_line_error(again, 2, "already exists")
    assert key.read_text().splitlines() == lines
    to_stdout = world.run("keygen")
    assert to_stdout.returncode == 0
    assert "AGE-SECRET-KEY-1" in to_stdout.stdout and "AGE-SECRET-KEY" not in to_stdout.stderr
    if AGE_KEYGEN := shutil.which("age-keygen"):
        derived = subprocess.run([AGE_KEYGEN, "-y", str(key)], capture_output=True, text=True)
        assert derived.stdout.strip() == recipient


# --------------------------------------------------------------------------------- archive


def test_archive_opens_with_age_and_tar_and_pyrage(world: World) -> None:
    key, recipient = keygen(world)
    done = world.run("archive", "--all", "--encrypt", "-r", recipient)
    assert done.returncode == 0, done.stderr
    sessions = {s.id: s for s in discover(world.config).sessions}
    for session_id, session in sessions.items():
        assert session_id in done.stdout
        assert len(list((world.archives / session.project / session_id).glob("*.age"))) == 1
    archive = one_archive(world)
    assert archive.name == "2026-03-02T09-01-30.948Z.tar.gz.age"
    data = archive.read_bytes()
    assert data.startswith(b"age-encryption.org/v1\n")
    assert not any(secret.encode() in data for secret in SECRETS)
    for path in archive_files(world.archives):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for path in world.archives.rglob("*"):
        if path.is_dir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o700

    # pyrage (rage): the manifest is the first member and describes the bundle.
    plain = pyrage.decrypt(data, [pyrage.x25519.Identity.from_str(key.read_text().split()[-1])])
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r:gz") as tar:
        first = tar.next()
        assert first is not None and first.name == "manifest.json"
        member = tar.extractfile(first)
        assert member is not None
        manifest = json.loads(member.read())
    session = sessions[FULL]
    assert manifest["session_id"] == FULL and manifest["project"] == PROJECT
    assert manifest["cwd"] == session.cwd and manifest["title"] == session.title
    assert manifest["last_timestamp"] == session.last_timestamp.isoformat()  # type: ignore[union-attr]
    assert manifest["encrypted"] is True and manifest["redacted"] is False
    assert len(manifest["recipients"]) == 1
    assert {f["path"] for f in manifest["files"]} == {
        f"projects/{PROJECT}/{FULL}.jsonl",
        f"projects/{PROJECT}/{FULL}/tool-results/toolu_01ZT6xXheEd64qbJXZg196kT.txt",
        f"file-history/{FULL}/12678d79af2cc777@v1",
        f"session-env/{FULL}/sessionstart-hook-0.sh",
        f"debug/{FULL}.txt",
        f"todos/{FULL}-agent-{FULL}.json",
    }

    # Debian's age and tar, by hand, as the README tells a user without scrubber.
    if AGE is not None:
        by_hand = world.root / "by-hand"
        by_hand.mkdir()
        plain_tar = subprocess.run(
            [AGE, "-d", "-i", str(key), str(archive)], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "xz"], input=plain_tar, cwd=by_hand, check=True)
        for item in manifest["files"]:
            assert (by_hand / item["path"]).read_bytes() == (
                world.config / item["path"]
            ).read_bytes()
        assert json.loads((by_hand / "manifest.json").read_text()) == manifest


def test_sidecar_holds_only_allowed_fields_and_no_secret(world: World) -> None:
    _, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    sidecar_file = archive.with_name(archive.name + ".json")
    sidecar = json.loads(sidecar_file.read_text())
    assert set(sidecar["manifest"]) == {"session_id", "first_timestamp", "last_timestamp", "sizes"}
    assert sidecar["size"] == archive.stat().st_size
    assert sidecar["stanza_types"] == ["X25519"]
    text = sidecar_file.read_text()
    session = next(s for s in discover(world.config).sessions if s.id == FULL)
    for hidden in (*SECRETS, session.cwd or "", session.title or "", recipient):
        assert hidden not in text
    listed = world.run("archives", "list", "--format", "json")
    assert listed.returncode == 0
    (entry,) = json.loads(listed.stdout)["archives"]
    assert entry["path"] == str(archive) and entry["session_id"] == FULL
    assert entry["manifest"] == sidecar["manifest"]
    assert entry["ciphertext_sha256"] == sidecar["ciphertext_sha256"]


def test_clear_archives_need_redact_and_hold_no_planted_secret(world: World) -> None:
    refused = world.run("archive", "--all")
    one_line_error(refused, 2, "refusing to archive unredacted sessions in clear")
    no_key = world.run("archive", "--all", "--encrypt")
    one_line_error(no_key, 2, "no recipient")
    assert not world.archives.exists()
    done = world.run("archive", FULL, "--redact")
    assert done.returncode == 0, done.stderr
    (archive,) = (world.archives / PROJECT / FULL).glob("*.tar.gz")
    assert "redacted" in done.stdout
    raw = gzip.decompress(archive.read_bytes())
    assert not any(secret.encode() in raw for secret in SECRETS)
    assert b"[REDACTED:" in raw
    verified = world.run("archives", "verify", str(archive))
    assert verified.returncode == 0 and "full" in verified.stdout


def test_passphrase_comes_from_a_file_or_a_terminal_never_argv(world: World) -> None:
    missing_tty = world.run("archive", FULL, "--passphrase")
    one_line_error(missing_tty, 2, "needs a terminal")
    secret_file = world.root / "pass.txt"
    secret_file.write_text("correct horse battery staple\n")
    secret_file.chmod(0o600)
    done = world.run(
        "archive", FULL, "--passphrase", env=world.env(SCRUB_PASSPHRASE_FILE=str(secret_file))
    )
    assert done.returncode == 0, done.stderr
    archive = one_archive(world)
    assert pyrage.passphrase.decrypt(archive.read_bytes(), "correct horse battery staple")
    verified = world.run("archives", "verify", str(archive), "--passphrase-file", str(secret_file))
    assert verified.returncode == 0 and "full" in verified.stdout, verified.stderr


# ------------------------------------------------------------------------ verify (tamper)


def test_verify_catches_a_flipped_byte_keyless_and_with_the_key(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", "--all", "-r", recipient).returncode == 0
    good = world.run("archives", "verify")
    assert good.returncode == 0 and "3 of 3" in good.stdout
    archive = one_archive(world)
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0x04
    archive.write_bytes(bytes(data))
    keyless = world.run("archives", "verify")
    assert keyless.returncode == 3
    assert f"FAILED  {archive}: " in keyless.stdout and "SHA-256 mismatch" in keyless.stdout
    assert "2 of 3" in keyless.stdout
    with_key = world.run("archives", "verify", str(archive), "-i", str(key))
    assert with_key.returncode == 3
    assert "failed authentication" in with_key.stdout and "SHA-256" not in with_key.stdout
    other, _ = keygen(world, "other.txt")
    untouched = next((world.archives / "-home-demo-work-infra").rglob("*.tar.gz.age"))
    wrong = world.run("archives", "verify", str(untouched), "-i", str(other))
    assert wrong.returncode == 2 and "no identity matched" in wrong.stdout


# -------------------------------------------------------------------------------- restore


def test_restore_brings_the_session_back_and_refuses_to_overwrite(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    original = {
        p.relative_to(world.config).as_posix(): p.read_bytes()
        for top in next(s for s in discover(world.config).sessions if s.id == FULL).bundle_paths()
        for p in ([top] if top.is_file() else top.rglob("*"))
        if p.is_file()
    }
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    with live.open("ab") as handle:
        handle.write(b'{"type":"user","note":"work done since the archive"}\n')
    local = live.read_bytes()
    refused = world.run("restore", str(archive), "-i", str(key))
    one_line_error(refused, 2, "already in")
    assert live.read_bytes() == local

    fresh = world.root / "fresh-config"
    started = time.time()
    done = world.run(
        "restore", FULL[:8], "-i", str(key), env=world.env(CLAUDE_CONFIG_DIR=str(fresh))
    )
    assert done.returncode == 0, done.stderr
    assert f"claude --resume {FULL}" in done.stdout
    (found,) = discover(fresh).sessions
    assert (found.id, found.project) == (FULL, PROJECT)
    assert abs(found.mtime - started) < 60
    for rel, data in original.items():
        assert (fresh / rel).read_bytes() == data
        assert stat.S_IMODE((fresh / rel).stat().st_mode) == 0o600

    # Local changes are kept unless --force; with it the archived version comes back.
    transcript = fresh / "projects" / PROJECT / f"{FULL}.jsonl"
    transcript.write_bytes(b'{"type":"user"}\n')
    again = world.run("restore", str(archive), "-i", str(key), "--to", str(fresh))
    assert again.returncode == 2 and transcript.read_bytes() == b'{"type":"user"}\n'
    forced = world.run("restore", str(archive), "-i", str(key), "--to", str(fresh), "--force")
    assert forced.returncode == 0, forced.stderr
    assert transcript.read_bytes() == original[f"projects/{PROJECT}/{FULL}.jsonl"]
    kept = world.root / "kept"
    assert (
        world.run(
            "restore", str(archive), "-i", str(key), "--to", str(kept), "--create", "--keep-mtime"
        ).returncode
        == 0
    )
    assert (kept / "projects" / PROJECT / f"{FULL}.jsonl").stat().st_mtime < started - 86400


# ---------------------------------------------------------------------- failures, bad keys


def test_a_full_disk_leaves_nothing_half_written(world: World) -> None:
    _, recipient = keygen(world)
    done = world.run("archive", FULL, "-r", recipient, fsize=16_000)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "cannot write the archive" in done.stderr and "Traceback" not in done.stderr
    assert archive_files(world.archives) == []
    blocked = world.root / "blocked"
    blocked.write_text("a file, not a folder")
    unwritable = world.run("archive", FULL, "-r", recipient, "--output", str(blocked / "sub"))
    assert unwritable.returncode == 3 and "cannot write the archive" in unwritable.stderr
    assert blocked.read_text() == "a file, not a folder"


def test_decrypt_writes_out_or_nothing(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    out = world.root / "out.tar.gz"
    done = world.run("decrypt", str(archive), "-i", str(key), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:2] == b"\x1f\x8b" and stat.S_IMODE(out.stat().st_mode) == 0o600
    truncated = world.root / "truncated.age"
    truncated.write_bytes(archive.read_bytes()[:-100])
    failed = world.run("decrypt", str(truncated), "-i", str(key), "-o", str(world.root / "x"))
    assert failed.returncode == 3 and "truncated" in failed.stderr
    assert not [p for p in world.root.iterdir() if p.name.startswith((".x", "x"))]


def test_bad_recipients_and_identities_are_one_line_errors_exit_2(world: World) -> None:
    key, recipient = keygen(world)
    garbage = world.root / "keys.txt"
    garbage.write_text("# mine\nnot-a-key\n")
    bad_r, bad_big_r = world.run_many(
        ("archive", FULL, "-r", "age1notarealkey"), ("archive", FULL, "-R", str(garbage))
    )
    one_line_error(bad_r, 2, "-r #1: malformed recipient")
    one_line_error(bad_big_r, 2, "line 2")
    assert not world.archives.exists()
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    other, _ = keygen(world, "other.txt")
    target = world.root / "never"
    key.chmod(0o644)
    bad_i, wrong, missing, absent, loose = world.run_many(
        ("restore", str(archive), "-i", str(garbage)),
        ("restore", str(archive), "-i", str(other), "--to", str(target), "--create"),
        ("restore", str(archive), "--to", str(target), "--create"),
        ("decrypt", str(archive), "-i", str(world.root / "absent.txt"), "-o", "x"),
        ("decrypt", str(archive), "-i", str(key), "-o", str(world.root / "y")),
    )
    one_line_error(bad_i, 2, "line 2")
    one_line_error(wrong, 2, "no identity matched")
    one_line_error(missing, 2, "no identity given")
    one_line_error(absent, 2, "absent.txt")
    assert archive_files(target) == []
    assert loose.returncode == 0
    assert "warning" in loose.stderr and "chmod 600" in loose.stderr


def test_selection_by_project_and_age_and_its_usage_errors(world: World) -> None:
    _, recipient = keygen(world)
    by_project, too_young, contradictory, nothing, unknown, bad_age = world.run_many(
        ("archive", "--project", "infra", "-r", recipient, "--format", "json"),
        ("archive", "--older-than", "100000", "-r", recipient),
        ("archive", FULL, "--all", "-r", recipient),
        ("archive", "-r", recipient),
        ("archive", "no-such-session", "-r", recipient),
        ("archive", "--older-than", "a week", "-r", recipient),
    )
    assert by_project.returncode == 0, by_project.stderr
    (item,) = json.loads(by_project.stdout)["archives"]
    assert item["project"] == "-home-demo-work-infra" and item["status"] == "archived"
    assert [p.parent.parent.name for p in world.archives.rglob("*.age")] == [item["project"]]
    session = next(s for s in discover(world.config).sessions if s.id == item["session_id"])
    sidecar = json.loads(Path(item["path"] + ".json").read_text())
    assert sidecar["content_sha256"] == bundle_digest(session)
    assert too_young.returncode == 0 and "nothing archived" in too_young.stderr
    one_line_error(contradictory, 2, "not both")
    one_line_error(nothing, 2, "no session selected")
    one_line_error(unknown, 2, "no session matches")
    one_line_error(bad_age, 2, "--older-than 'a week'")
    assert len(list(world.archives.rglob("*.age"))) == 1


def test_older_than_takes_the_duration_syntax_of_since(world: World) -> None:
    # Issue 14: `audit --since 7d` worked while `archive --older-than 7d` was refused. The demo
    # sessions end in March 2026, so a week ago (and 2026-06-01) picks all three of them, and
    # four weeks before the newest of them picks none.
    _, recipient = keygen(world)
    week, date, never = world.run_many(
        ("archive", "--older-than", "7d", "-r", recipient, "--format", "json", "--output", "w"),
        ("archive", "--older-than", "2026-06-01", "-r", recipient, "--output", "d"),
        ("archive", "--older-than", "2026-02-01", "-r", recipient, "--output", "n"),
    )
    assert week.returncode == 0, week.stderr
    assert len(json.loads(week.stdout)["archives"]) == 3
    assert date.returncode == 0, date.stderr
    assert len(list((world.root / "d").rglob("*.tar.gz.age"))) == 3
    assert never.returncode == 0 and "nothing archived" in never.stderr
    assert not (world.root / "n").exists()


def test_recipients_destination_and_clear_fields_come_from_the_policy(world: World) -> None:
    key, recipient = keygen(world)
    volume = world.root / "volume"
    world.home.mkdir(parents=True)
    (world.home / "policy.yaml").write_text(
        "version: 1\n"
        "archive:\n"
        f"  recipients: [{recipient}]\n"
        f"  destination: {volume}\n"
        "  clear_manifest_fields: [session_id, title, last_timestamp]\n"
    )
    done = world.run("archive", "--all")  # no flags: everything from the policy
    assert done.returncode == 0, done.stderr
    assert not world.archives.exists()
    archives = sorted(volume.rglob("*.tar.gz.age"))
    assert len(archives) == 3
    titles = {s.id: s.title for s in discover(world.config).sessions}
    for archive in archives:
        clear = json.loads(archive.with_name(archive.name + ".json").read_text())["manifest"]
        assert set(clear) == {"session_id", "title", "last_timestamp"}
        assert clear["title"] == titles[clear["session_id"]]
    listed = world.run("archives", "list")
    assert listed.returncode == 0 and str(volume) in listed.stdout
    assert all(title and title[:60] in listed.stdout for title in titles.values())
    verified = world.run("archives", "verify", "-i", str(key))
    assert verified.returncode == 0 and "3 of 3" in verified.stdout


def test_remote_reads_without_a_bucket_say_so_not_push(world: World) -> None:
    """`archives list/verify --remote` with a local destination: the error says there is no
    bucket to read from (it said "there is nothing to push", which no one had asked for)."""
    for verb in ("list", "verify"):
        done = world.run("archives", verb, "--remote")
        one_line_error(done, 2, "there is no bucket to read archives from")
        assert "push" not in done.stderr
