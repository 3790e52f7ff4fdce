"""`scrub restore` as a real process (issue 14): what it does to the session already there, where
it restores to, and which of a session's archives it opens."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scrubber.transcript.sessions import discover
from tests.e2e.archive_kit import (
    FULL,
    PROJECT,
    World,
    keygen,
    one_archive,
    one_line_error,
    world,
)

__all__ = ["world"]  # the fixture, used by name

pytestmark = pytest.mark.slow


def _activity(world: World) -> list[dict[str, object]]:
    log = world.home / "log" / "activity.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ------------------------------------------------------------------------ --force and the trash


def test_force_moves_the_newer_session_to_the_trash_before_replacing_it(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    archived = (world.config / "projects" / PROJECT / f"{FULL}.jsonl").read_bytes()
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    with live.open("ab") as handle:
        handle.write(b'{"type":"user","note":"work done since the archive"}\n')
    newer = live.read_bytes()
    history = world.config / "file-history" / FULL / "added-since@v1"
    history.write_bytes(b"a file Claude edited after the archive\n")

    forced = world.run("restore", str(archive), "-i", str(key), "--force")

    assert forced.returncode == 0, forced.stderr
    assert live.read_bytes() == archived
    assert not history.exists()  # the restored session is the archived one, whole
    slot = world.home / "trash" / FULL
    assert (slot / "projects" / PROJECT / f"{FULL}.jsonl").read_bytes() == newer
    assert (slot / "file-history" / FULL / "added-since@v1").exists()
    assert oct(slot.stat().st_mode & 0o777) == "0o700"
    assert f"scrub undelete {FULL}" in forced.stdout and str(slot) in forced.stdout
    (line,) = [r for r in _activity(world) if r["event"] == "restore"]
    assert line["exit"] == 0 and line["trashed"] == str(slot) and line["replaced"] == 1
    assert line["session"] == f"{PROJECT}/{FULL}"

    # The newer version comes back with `scrub undelete`, once the restored one is moved aside.
    aside = world.root / "aside"
    aside.mkdir()
    restored = next(s for s in discover(world.config).sessions if s.id == FULL)
    for number, path in enumerate(restored.bundle_paths()):
        shutil.move(path, aside / str(number))
    back = world.run("undelete", FULL)
    assert back.returncode == 0, back.stderr
    assert live.read_bytes() == newer and history.exists()


def test_force_changes_nothing_when_the_trash_cannot_take_the_session(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    with live.open("ab") as handle:
        handle.write(b'{"type":"user","note":"newer"}\n')
    newer = live.read_bytes()
    # The trash is a link planted in scrubber's folder: never followed, so nothing can move.
    elsewhere = world.home.parent / "elsewhere"
    elsewhere.mkdir()
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "trash").symlink_to(elsewhere)

    refused = world.run("restore", str(archive), "-i", str(key), "--force")

    one_line_error(refused, 3, "cannot move the session there to the trash first")
    assert "nothing was replaced" in refused.stderr
    assert live.read_bytes() == newer
    assert not any(elsewhere.iterdir())


def test_force_keeps_side_files_whose_transcript_is_gone(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    (world.config / "projects" / PROJECT / f"{FULL}.jsonl").unlink()
    edited = world.config / "file-history" / FULL / "12678d79af2cc777@v1"
    edited.write_bytes(b"changed since the archive\n")
    done = world.run("restore", str(one_archive(world)), "-i", str(key), "--force")
    assert done.returncode == 0, done.stderr
    kept = world.home / "trash" / FULL / "file-history" / FULL / "12678d79af2cc777@v1"
    assert kept.read_bytes() == b"changed since the archive\n"
    assert edited.read_bytes() != kept.read_bytes()


def test_force_with_nothing_different_trashes_nothing(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    done = world.run("restore", str(one_archive(world)), "-i", str(key), "--force")
    assert done.returncode == 0, done.stderr
    assert "trash" not in done.stdout and not (world.home / "trash" / FULL).exists()


# --------------------------------------------------------------------------------- --to


def test_to_must_name_a_config_dir_unless_create(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = str(one_archive(world))
    typo = world.root / "typo" / "path"
    empty = world.root / "empty"
    empty.mkdir()
    a_file = world.root / "a-file"
    a_file.write_text("not a folder")
    missing, not_config, file_to, file_created = world.run_many(
        ("restore", archive, "-i", str(key), "--to", str(typo)),
        ("restore", archive, "-i", str(key), "--to", str(empty)),
        ("restore", archive, "-i", str(key), "--to", str(a_file)),
        ("restore", archive, "-i", str(key), "--to", str(a_file), "--create"),
    )
    one_line_error(missing, 2, "does not exist")
    assert "--create" in missing.stderr and not (world.root / "typo").exists()
    one_line_error(not_config, 2, "is not a Claude Code config directory")
    assert list(empty.iterdir()) == []
    one_line_error(file_to, 2, "is not a folder")
    one_line_error(file_created, 2, "is not a folder")
    assert a_file.read_text() == "not a folder"

    # An existing config dir needs no --create; a new one is made with it.
    other = world.root / "other"
    (other / "projects").mkdir(parents=True)
    into_other, created = world.run_many(
        ("restore", archive, "-i", str(key), "--to", str(other)),
        ("restore", archive, "-i", str(key), "--to", str(typo), "--create"),
    )
    assert into_other.returncode == 0, into_other.stderr
    assert f"CLAUDE_CONFIG_DIR={other} claude --resume {FULL}" in into_other.stdout
    assert created.returncode == 0, created.stderr
    assert [s.id for s in discover(typo).sessions] == [FULL]


def test_to_may_not_be_scrubbers_own_folder(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = str(one_archive(world))
    before = sorted(p.relative_to(world.home) for p in world.home.rglob("*"))
    for inside in (world.home, world.home / "restored"):
        done = world.run("restore", archive, "-i", str(key), "--to", str(inside), "--create")
        one_line_error(done, 2, "inside scrubber's own folder")
    assert sorted(p.relative_to(world.home) for p in world.home.rglob("*")) == before


# ----------------------------------------------------------------- which archive, which key


def _fingerprint(world: World, key: Path) -> str:
    shown = world.run("keygen", "-y", str(key))
    assert shown.returncode == 0, shown.stderr
    return shown.stderr.strip().removeprefix("Fingerprint: ")


def test_a_session_id_restores_the_newest_archive_the_key_opens(world: World) -> None:
    key_a, recipient_a = keygen(world, "a.txt")
    key_b, recipient_b = keygen(world, "b.txt")
    key_c, _ = keygen(world, "c.txt")
    assert world.run("archive", FULL, "-r", recipient_a).returncode == 0
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    older = live.read_bytes()
    with live.open("ab") as handle:
        handle.write(b'{"type":"user","note":"a later version, for another key"}\n')
    assert world.run("archive", FULL, "-r", recipient_b).returncode == 0
    versions = sorted((world.archives / PROJECT / FULL).glob("*.tar.gz.age"))
    assert len(versions) == 2
    fp_a, fp_b = _fingerprint(world, key_a), _fingerprint(world, key_b)

    with_a, with_b, with_c, without = world.run_many(
        ("restore", FULL[:8], "-i", str(key_a), "--to", str(world.root / "a"), "--create"),
        ("restore", FULL[:8], "-i", str(key_b), "--to", str(world.root / "b"), "--create"),
        ("restore", FULL[:8], "-i", str(key_c), "--to", str(world.root / "c"), "--create"),
        ("restore", FULL[:8], "--to", str(world.root / "n"), "--create"),
    )

    # Key A opens only the older version: it is restored, with a word about the newer one.
    assert with_a.returncode == 0, with_a.stderr
    assert (world.root / "a" / "projects" / PROJECT / f"{FULL}.jsonl").read_bytes() == older
    assert "warning: restoring" in with_a.stderr and f"key {fp_b}" in with_a.stderr
    assert with_b.returncode == 0, with_b.stderr
    restored_b = world.root / "b" / "projects" / PROJECT / f"{FULL}.jsonl"
    assert restored_b.read_bytes() == live.read_bytes() and "warning" not in with_b.stderr
    # No version opens with key C: the error says what each one needs.
    one_line_error(with_c, 2, "none of the 2 archive(s)")
    assert f"key {fp_a}" in with_c.stderr and f"key {fp_b}" in with_c.stderr
    assert "scrub keygen -y" in with_c.stderr
    assert not (world.root / "c" / "projects").exists()
    one_line_error(without, 2, "no key given")
    assert f"key {fp_b}" in without.stderr

    # `archives list` says the same in its text output; age-keygen agrees on the recipient.
    listed = world.run("archives", "list")
    assert listed.returncode == 0
    assert f"opens with key {fp_a}" in listed.stdout and f"opens with key {fp_b}" in listed.stdout
    shown = world.run("keygen", "-y", str(key_a))
    assert (
        shown.stdout == f"{recipient_a}\n" and "AGE-SECRET-KEY" not in shown.stdout + shown.stderr
    )
    if AGE_KEYGEN := shutil.which("age-keygen"):
        derived = subprocess.run([AGE_KEYGEN, "-y", str(key_a)], capture_output=True, text=True)
        assert derived.stdout == shown.stdout


def test_a_damaged_newest_archive_names_the_older_one_the_key_opens(world: World) -> None:
    key, recipient = keygen(world, "k.txt")
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    for day in ("", "2026-03-09", "2026-03-10"):  # three versions, oldest first
        if day:
            with live.open("ab") as handle:
                handle.write(
                    b'{"type":"user","note":"later","timestamp":"%sT00:00:00.000Z"}\n'
                    % day.encode()
                )
        assert world.run("archive", FULL, "-r", recipient).returncode == 0
    oldest, middle, newest = sorted((world.archives / PROJECT / FULL).glob("*.tar.gz.age"))
    damaged = bytearray(newest.read_bytes())
    damaged[-40] ^= 0xFF  # inside the last payload chunk: its authentication fails
    newest.write_bytes(bytes(damaged))
    # The middle one is damaged too (its header): it opens with the key, yet no hint names it.
    header = bytearray(middle.read_bytes())
    header[header.index(b"\n---") - 3] ^= 0x01
    middle.write_bytes(bytes(header))
    done = world.run("restore", FULL[:8], "-i", str(key), "--to", str(world.root / "r"), "--create")
    one_line_error(done, 3, "failed authentication")
    # Never taken in its place without a word (it lacks the later lines): named, by version.
    version = oldest.name.removesuffix(".tar.gz.age")
    assert f"older archive of this session opens with the key given: {version}" in done.stderr
    assert f"archives list --session {FULL}" in done.stderr
    assert not (world.root / "r" / "projects" / PROJECT).exists()
    # And that one restores, as the hint says.
    again = world.run(
        "restore", str(oldest), "-i", str(key), "--to", str(world.root / "r"), "--create"
    )
    assert again.returncode == 0, again.stderr
    # A newest file that is no archive at all (emptied): the same hint.
    newest.write_bytes(b"")
    empty = world.run(
        "restore", FULL[:8], "-i", str(key), "--to", str(world.root / "e"), "--create"
    )
    assert empty.returncode == 3 and f"opens with the key given: {version}" in empty.stderr


def test_keygen_y_refuses_what_is_not_an_identity_file(world: World) -> None:
    garbage = world.root / "garbage.txt"
    garbage.write_text("not a key\n")
    bad, both = world.run_many(
        ("keygen", "-y", str(garbage)),
        ("keygen", "-y", str(garbage), "-o", str(world.root / "new.txt")),
    )
    one_line_error(bad, 2, "line 1")
    one_line_error(both, 2, "-y prints a recipient")
    assert not (world.root / "new.txt").exists()


def test_archives_list_names_a_passphrase(world: World) -> None:
    secret_file = world.root / "pass.txt"
    secret_file.write_text("correct horse battery staple\n")
    secret_file.chmod(0o600)
    done = world.run("archive", FULL, "--passphrase-file", str(secret_file))
    assert done.returncode == 0, done.stderr
    listed = world.run("archives", "list")
    assert "(opens with a passphrase)" in listed.stdout


# ------------------------------------------------------------------------- decrypt to stdout


def test_decrypt_without_o_writes_to_stdout_for_a_pipe(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    by_file = world.root / "by-file.tar.gz"
    assert world.run("decrypt", str(archive), "-i", str(key), "-o", str(by_file)).returncode == 0
    # As the user ran it: `scrub decrypt F -i K | tar xz`, two processes on a pipe.
    unpacked = world.root / "unpacked"
    unpacked.mkdir()
    decrypting = subprocess.Popen(
        [sys.executable, "-m", "scrubber.cli", "decrypt", str(archive), "-i", str(key)],
        env=world.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert decrypting.stdout is not None
    tar = subprocess.run(["tar", "xz"], stdin=decrypting.stdout, cwd=unpacked, check=False)
    decrypting.stdout.close()
    assert decrypting.wait(timeout=60) == 0 and tar.returncode == 0
    assert decrypting.stderr is not None and decrypting.stderr.read() == b""
    transcript = f"projects/{PROJECT}/{FULL}.jsonl"
    assert (unpacked / transcript).read_bytes() == (world.config / transcript).read_bytes()
    dash = subprocess.run(
        [sys.executable, "-m", "scrubber.cli", "decrypt", str(archive), "-i", str(key), "-o", "-"],
        env=world.env(),
        capture_output=True,
        check=False,
    )
    assert dash.returncode == 0 and dash.stdout == by_file.read_bytes()
    assert not (world.root / "-").exists()


def test_decrypt_to_stdout_stops_at_damage_and_never_writes_to_a_terminal(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    truncated = world.root / "truncated.age"
    truncated.write_bytes(archive.read_bytes()[:-100])
    damaged = world.run("decrypt", str(truncated), "-i", str(key))
    one_line_error(damaged, 3, "truncated")

    primary, replica = pty.openpty()
    try:
        on_tty = subprocess.run(
            [sys.executable, "-m", "scrubber.cli", "decrypt", str(archive), "-i", str(key)],
            env=world.env(),
            stdout=replica,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
        )
        os.set_blocking(primary, False)
        try:
            shown = os.read(primary, 1 << 16)
        except BlockingIOError:
            shown = b""
    finally:
        os.close(primary)
        os.close(replica)
    assert on_tty.returncode == 2 and "to a terminal" in on_tty.stderr
    assert "| tar xz" in on_tty.stderr and "Traceback" not in on_tty.stderr
    assert shown == b""
