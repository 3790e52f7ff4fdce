"""Paths the system refuses (issue 14, item 8): `keygen -o /missing/dir/key` ended in "internal
error (FileNotFoundError)". Every such error of keygen -o, archive -o/--output, decrypt -o and
restore --to is one plain line, a hint, an exit code, and nothing left behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.archive_kit import FULL, World, keygen, one_archive, one_line_error, world

__all__ = ["world"]  # the fixture, used by name

pytestmark = pytest.mark.slow


def _places(root: Path) -> dict[str, Path]:
    a_file = root / "a-file"
    a_file.write_text("a file, not a folder\n")
    folder = root / "a-folder"
    folder.mkdir()
    return {
        "missing": root / "missing" / "dir" / "out",
        "under-a-file": a_file / "out",
        "folder": folder,
        "a-file": a_file,
    }


# (place, command builder, exit code, words in the error, words in the hint)
Case = tuple[str, Callable[[Path, Path, Path], tuple[str, ...]], int, str, str]

CASES: list[Case] = [
    ("missing", lambda p, _a, _k: ("keygen", "-o", str(p)), 3, "No such file", "mkdir -p"),
    ("under-a-file", lambda p, _a, _k: ("keygen", "-o", str(p)), 3, "Not a directory", "a file"),
    ("folder", lambda p, _a, _k: ("keygen", "-o", str(p)), 2, "is a folder", "scrub-key.txt"),
    (
        "missing",
        lambda p, a, k: ("decrypt", str(a), "-i", str(k), "-o", str(p)),
        3,
        "No such file",
        "mkdir -p",
    ),
    (
        "under-a-file",
        lambda p, a, k: ("decrypt", str(a), "-i", str(k), "-o", str(p)),
        3,
        "Not a directory",
        "a file, not a folder",
    ),
    (
        "folder",
        lambda p, a, k: ("decrypt", str(a), "-i", str(k), "-o", str(p)),
        2,
        "is a folder",
        "name a file",
    ),
    (
        "folder",
        lambda p, _a, k: ("decrypt", str(p), "-i", str(k), "-o", str(p.parent / "x")),
        3,
        "is a folder, not an age file",
        "age file",
    ),
    (
        "missing",
        lambda p, _a, k: ("decrypt", str(p), "-i", str(k), "-o", str(p.parent / "x")),
        3,
        "file not found",
        "check the path",
    ),
    (
        "a-file",
        lambda p, _a, k: ("archive", FULL, "-r", _recipient(k), "-o", str(p)),
        3,
        "is a file, not a folder",
        "--output",
    ),
    (
        "under-a-file",
        lambda p, _a, k: ("archive", FULL, "-r", _recipient(k), "--output", str(p)),
        3,
        "is a file, not a folder",
        "--output",
    ),
    (
        "a-file",
        lambda p, a, k: ("restore", str(a), "-i", str(k), "--to", str(p), "--create"),
        2,
        "is not a folder",
        "config directory",
    ),
    (
        "under-a-file",
        lambda p, a, k: ("restore", str(a), "-i", str(k), "--to", str(p), "--create"),
        2,
        "Not a directory",
        "check the path",
    ),
]


def _recipient(key: Path) -> str:
    line = next(x for x in key.read_text().splitlines() if x.startswith("# public key: "))
    return line.removeprefix("# public key: ")


def test_refused_paths_are_one_line_errors_with_a_hint(world: World) -> None:
    key, recipient = keygen(world)
    assert world.run("archive", FULL, "-r", recipient).returncode == 0
    archive = one_archive(world)
    places = _places(world.root)
    before = sorted(p.relative_to(world.root) for p in world.root.rglob("*"))
    commands = [build(places[place], archive, key) for place, build, *_ in CASES]

    results = world.run_many(*commands)

    for (place, _build, code, words, hint), done in zip(CASES, results, strict=True):
        told = f"{place}: {done.args}"
        one_line_error(done, code, words)
        assert "internal error" not in done.stderr, told
        hints = [line for line in done.stderr.splitlines() if line.startswith("hint: ")]
        assert len(hints) == 1 and hint in hints[0], (told, done.stderr)
    # Nothing was created or left behind anywhere (the archive folder holds only what it had).
    assert sorted(p.relative_to(world.root) for p in world.root.rglob("*")) == before
    assert places["a-file"].read_text() == "a file, not a folder\n"


def test_a_key_that_cannot_be_written_whole_leaves_no_file(world: World) -> None:
    key = world.root / "key.txt"
    done = world.run("keygen", "-o", str(key), fsize=64)  # the identity file is ~190 bytes
    one_line_error(done, 3, "cannot write the identity")
    assert "hint: " in done.stderr and "AGE-SECRET-KEY" not in done.stderr + done.stdout
    assert not key.exists()
