"""A session forced back from its archive twice (QA's repro): the second `restore --force` used
to stop at "the trash already holds a session with this id", with no way out but waiting for
the trash to expire. Each replaced version now has a trash folder of its own; `undelete` brings
them back newest first (or the one `--version` names) and says which remain."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scrubber.transcript.sessions import discover
from tests.e2e.archive_kit import FULL, PROJECT, World, keygen, world

__all__ = ["world"]  # the fixture, used by name

pytestmark = pytest.mark.slow


def _append(world: World, line: bytes) -> bytes:
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    with live.open("ab") as handle:
        handle.write(line)
    return live.read_bytes()


def _move_aside(world: World, name: str) -> None:
    """What the restore message asks for: the restored session moved out of the way, whole."""
    aside = world.root / "aside" / name
    aside.mkdir(parents=True)
    (session,) = [s for s in discover(world.config).sessions if s.id == FULL]
    for number, path in enumerate(session.bundle_paths()):
        shutil.move(path, aside / str(number))


def _forced_twice(world: World) -> tuple[Path, bytes, bytes]:
    key, recipient = keygen(world)
    assert world.run("archive", FULL[:8], "-r", recipient).returncode == 0
    first = _append(world, b'{"type":"user","x":1}\n')
    done = world.run("restore", FULL[:8], "-i", str(key), "--force")
    assert done.returncode == 0, done.stderr
    assert f"in the trash ({world.home / 'trash' / FULL})" in done.stdout
    second = _append(world, b'{"type":"user","x":2}\n')
    again = world.run("restore", FULL[:8], "-i", str(key), "--force")
    assert again.returncode == 0, again.stderr  # it used to stop here, exit 3
    slot = world.home / "trash" / f"{FULL}.2"
    assert f"the version that was there is in the trash ({slot})" in again.stdout
    assert f"then run: scrub undelete {FULL}" in again.stdout
    return key, first, second


def test_two_forced_restores_then_undelete_twice_newest_first(world: World) -> None:
    _key, first, second = _forced_twice(world)
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    archived = live.read_bytes()
    assert archived not in (first, second)

    listed = world.run("retention", "--format", "json")
    assert listed.returncode in (0, 1), listed.stderr
    versions = [t for t in json.loads(listed.stdout)["trash"] if t["session_id"] == FULL]
    assert sorted(t["version"] for t in versions) == [1, 2]
    shown = world.run("retention")
    assert f"{FULL} (version 1)" in shown.stdout and f"{FULL} (version 2)" in shown.stdout

    # The message's promise: move the restored one aside, undelete brings back what it replaced.
    _move_aside(world, "archived")
    newest = world.run("undelete", FULL)
    assert newest.returncode == 0, newest.stderr
    assert live.read_bytes() == second
    (warning,) = [line for line in newest.stderr.splitlines() if "warning:" in line]
    assert "an older version of this session remains in the trash (version 1 (trashed" in warning
    assert f"scrub undelete {FULL} --version 1" in warning

    _move_aside(world, "second")
    older = world.run("undelete", FULL)
    assert older.returncode == 0, older.stderr
    assert live.read_bytes() == first
    assert "warning:" not in older.stderr
    assert not any((world.home / "trash").iterdir())


def test_undelete_version_brings_back_the_one_named(world: World) -> None:
    _key, first, second = _forced_twice(world)
    live = world.config / "projects" / PROJECT / f"{FULL}.jsonl"
    _move_aside(world, "archived")

    missing = world.run("undelete", FULL, "--version", "3")
    assert missing.returncode == 2
    assert "has no version 3 in the trash" in missing.stderr and "2 (trashed" in missing.stderr
    assert not live.exists()  # nothing moved

    named = world.run("undelete", FULL[:8], "--version", "1")
    assert named.returncode == 0, named.stderr
    assert live.read_bytes() == first
    (warning,) = [line for line in named.stderr.splitlines() if "warning:" in line]
    assert "another version of this session remains" in warning
    assert "--version 2" in warning
    assert (world.home / "trash" / f"{FULL}.2").is_dir()
    assert not (world.home / "trash" / FULL).exists()
    assert second != first


def test_undelete_help_documents_the_version_option(world: World) -> None:
    shown = world.run("undelete", "--help")
    assert shown.returncode == 0
    assert "--version" in shown.stdout and "scrub undelete 3f9a2c1e --version 1" in shown.stdout


def test_search_in_the_trash_names_the_version_that_holds_the_hit(world: World) -> None:
    """`scrub search --trash` said `scrub undelete ID` for a hit in version 1, which brings
    back the newest: it names the version now."""
    key, recipient = keygen(world)
    assert world.run("archive", FULL[:8], "-r", recipient).returncode == 0
    for word in ("marker-one", "marker-two"):  # each in one replaced version only
        said = {"type": "user", "sessionId": FULL, "message": {"role": "user", "content": word}}
        _append(world, json.dumps(said).encode() + b"\n")
        done = world.run("restore", FULL[:8], "-i", str(key), "--force")
        assert done.returncode == 0, done.stderr
    one = world.run("search", "marker-one", "--trash")
    assert one.returncode == 0, one.stderr
    assert f"scrub undelete {FULL} --version 1" in one.stdout and "--version 2" not in one.stdout
    two = world.run("search", "marker-two", "--trash")
    assert f"scrub undelete {FULL} --version 2" in two.stdout and "--version 1" not in two.stdout
