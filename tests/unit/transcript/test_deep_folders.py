"""A folder nested deeper than Python's recursion limit (planted, or made by a runaway tool)
is walked like any other: the file at its bottom is found, nothing raises."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrubber.archive.bundle import walk_bundle
from scrubber.transcript.sessions import regular_files_at
from scrubber.usecases.redact_targets import _files_under

DEPTH = sys.getrecursionlimit() + 100


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """`tmp_path/top/d/d/…/d/bottom.txt`, DEPTH folders down; removed by hand afterwards
    (shutil.rmtree recurses too)."""
    top = tmp_path / "top"
    top.mkdir()
    fds = [os.open(top, os.O_RDONLY)]
    for _ in range(DEPTH):
        os.mkdir("d", dir_fd=fds[-1])
        fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    fd = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fds[-1])
    os.write(fd, b"x")
    os.close(fd)
    try:
        yield top
    finally:
        os.unlink("bottom.txt", dir_fd=fds[-1])
        for parent, child in zip(reversed(fds[:-1]), reversed(fds[1:]), strict=True):
            os.close(child)
            os.rmdir("d", dir_fd=parent)
        os.close(fds[0])


def _bottom(found: list[Path]) -> list[str]:
    return [p.name for p in found if p.name == "bottom.txt"]


def test_session_files_reach_the_bottom(deep: Path) -> None:
    assert _bottom(list(regular_files_at(deep))) == ["bottom.txt"]


def test_redact_targets_reach_the_bottom(deep: Path) -> None:
    assert _bottom(_files_under(deep, lambda _note: None)) == ["bottom.txt"]


def test_an_archive_bundle_reaches_the_bottom(deep: Path) -> None:
    walked = list(walk_bundle(deep.parent, [deep]))
    assert len(walked) == DEPTH + 2  # top, every folder, the file
    assert walked[-1][1].endswith("/bottom.txt")
