"""export_target: the checks on `-o FILE` and the write, including what changes between them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scrubber.errors import UsageError
from scrubber.usecases.export_target import (
    ProtectedPlace,
    check_export_target,
    write_export,
)


def test_a_link_someone_else_planted_above_the_folder_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "sub"
    real.mkdir(parents=True)
    planted = tmp_path / "shared"
    planted.symlink_to(tmp_path / "elsewhere")
    try:
        os.lchown(planted, 12345, 12345)
    except PermissionError:
        pytest.skip("giving a link to another user needs root")
    with pytest.raises(UsageError, match="made by another user"):
        check_export_target(planted / "sub" / "out.md", force=False, protected=[])


def test_a_link_of_ones_own_above_the_folder_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "sub"
    real.mkdir(parents=True)
    (tmp_path / "mine").symlink_to(tmp_path / "elsewhere")
    target = check_export_target(tmp_path / "mine" / "sub" / "out.md", force=False, protected=[])
    assert target.path == real.resolve() / "out.md"
    write_export(target, b"shared\n")
    assert (real / "out.md").read_bytes() == b"shared\n"
    assert stat.S_IMODE((real / "out.md").stat().st_mode) == 0o600


def test_a_protected_place_is_refused_through_any_path(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (tmp_path / "alias").symlink_to(config)
    places = [ProtectedPlace(tmp_path / "alias", "Claude Code's config directory")]
    with pytest.raises(UsageError, match="config directory"):
        check_export_target(config / "history.jsonl", force=True, protected=places)


def test_a_file_that_appears_after_the_check_is_not_replaced(tmp_path: Path) -> None:
    target = check_export_target(tmp_path / "out.md", force=False, protected=[])
    (tmp_path / "out.md").write_bytes(b"someone else's\n")
    with pytest.raises(UsageError, match="appeared while exporting"):
        write_export(target, b"export\n")
    assert (tmp_path / "out.md").read_bytes() == b"someone else's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md"]


def test_a_file_swapped_for_a_link_after_the_check_is_not_replaced(tmp_path: Path) -> None:
    existing = tmp_path / "out.md"
    existing.write_bytes(b"old\n")
    target = check_export_target(existing, force=True, protected=[])
    existing.unlink()
    existing.symlink_to(tmp_path / "aim")
    with pytest.raises(UsageError, match="changed while exporting"):
        write_export(target, b"export\n")
    assert existing.is_symlink() and not (tmp_path / "aim").exists()
