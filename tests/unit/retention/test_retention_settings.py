"""Claude Code's effective cleanupPeriodDays: precedence, defaults, and the pause."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scrubber.errors import ConfigError, ExitCode
from scrubber.policy.model import MAX_DAYS
from scrubber.retention.settings import (
    DEFAULT_DAYS,
    effective_cleanup_periods,
    read_cleanup_setting,
)


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return path


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    config = tmp_path / "claude"
    config.mkdir()
    managed = tmp_path / "etc" / "managed-settings.json"  # absent unless a test writes it
    project = tmp_path / "work" / "web"
    project.mkdir(parents=True)
    return config, managed, project


def test_default_is_30(layout: tuple[Path, Path, Path]) -> None:
    config, managed, project = layout
    found = effective_cleanup_periods(config, [str(project), None], managed=managed)
    assert found.default.days == DEFAULT_DAYS == 30 and found.default.source is None
    assert found.periods().days_for(str(project)) == 30


def test_precedence_managed_local_project_user(layout: tuple[Path, Path, Path]) -> None:
    config, managed, project = layout
    other = project.parent / "api"
    other.mkdir()
    cwds = [str(project), str(other)]
    write(config / "settings.json", {"cleanupPeriodDays": 60, "model": "x"})
    found = effective_cleanup_periods(config, cwds, managed=managed)
    assert found.default.days == 60 and found.default.source == config / "settings.json"

    write(project / ".claude" / "settings.json", {"cleanupPeriodDays": 14})
    found = effective_cleanup_periods(config, cwds, managed=managed)
    assert found.periods().days_for(str(project)) == 14
    assert found.periods().days_for(str(other)) == 60  # other projects keep the user value

    write(project / ".claude" / "settings.local.json", {"cleanupPeriodDays": 7})
    found = effective_cleanup_periods(config, cwds, managed=managed)
    assert found.for_cwd(str(project)).days == 7
    assert found.for_cwd(str(project)).source == project / ".claude" / "settings.local.json"

    write(managed, {"cleanupPeriodDays": 90})
    found = effective_cleanup_periods(config, cwds, managed=managed)
    assert found.periods().days_for(str(project)) == 90  # a managed value always wins
    assert found.default.source == managed


def test_files_without_the_key_fall_through(layout: tuple[Path, Path, Path]) -> None:
    config, managed, project = layout
    write(managed, {"permissions": {}})
    write(project / ".claude" / "settings.local.json", {"hooks": {}})
    write(project / ".claude" / "settings.json", {"cleanupPeriodDays": 12})
    found = effective_cleanup_periods(config, [str(project)], managed=managed)
    assert found.for_cwd(str(project)).days == 12


def test_missing_project_folders_and_relative_cwds_are_skipped(
    layout: tuple[Path, Path, Path],
) -> None:
    config, managed, project = layout
    found = effective_cleanup_periods(
        config, [str(project.parent / "deleted-checkout"), "relative/path", ""], managed=managed
    )
    assert found.by_cwd == {} and found.default.days == 30


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"cleanupPeriodDays": 1}, 1),
        ({"cleanupPeriodDays": 45.0}, 45),
        ({"cleanupPeriodDays": 10**12}, MAX_DAYS),
        ({}, None),
        ('\ufeff{"cleanupPeriodDays": 5}', 5),  # a BOM some editors write
    ],
)
def test_values(tmp_path: Path, content: object, expected: int | None) -> None:
    assert read_cleanup_setting(write(tmp_path / "s.json", content)) == expected


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ({"cleanupPeriodDays": 0}, "rejects 0"),
        ({"cleanupPeriodDays": -3}, "-3"),
        ({"cleanupPeriodDays": 2.5}, "2.5"),
        ({"cleanupPeriodDays": "30"}, "a str value"),
        ({"cleanupPeriodDays": True}, "a bool value"),
        ('{"cleanupPeriodDays": 30,}', "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_bad_files_pause_retention(tmp_path: Path, content: object, words: str) -> None:
    path = tmp_path / "settings.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write(path, content)
    with pytest.raises(ConfigError) as caught:
        read_cleanup_setting(path)
    assert caught.value.exit_code is ExitCode.USAGE
    assert words in caught.value.message and "retention paused" in caught.value.message
    assert str(path) in caught.value.message
    assert caught.value.hint and "--days" in caught.value.hint


def test_a_malformed_file_never_quotes_its_content(tmp_path: Path) -> None:
    token = "tok" + "en-" + os.urandom(8).hex()
    path = write(tmp_path / "settings.json", '{"env": {"API": "' + token + '"}, oops}')
    with pytest.raises(ConfigError) as caught:
        read_cleanup_setting(path)
    assert token not in caught.value.message and token not in (caught.value.hint or "")


def test_unreadable_files_pause_never_guess(layout: tuple[Path, Path, Path]) -> None:
    config, managed, _project = layout
    if os.geteuid() == 0:
        # root reads through permissions; a folder in place of the file is unreadable for all.
        (config / "settings.json").mkdir()
    else:
        write(config / "settings.json", {"cleanupPeriodDays": 5}).chmod(0)
    with pytest.raises(ConfigError, match="retention paused"):
        effective_cleanup_periods(config, [], managed=managed)


def test_a_broken_project_file_pauses_too(layout: tuple[Path, Path, Path]) -> None:
    config, managed, project = layout
    write(project / ".claude" / "settings.local.json", "{")
    with pytest.raises(ConfigError, match=r"settings\.local\.json"):
        effective_cleanup_periods(config, [str(project)], managed=managed)
    # ...unless a managed value decides everything anyway.
    write(managed, {"cleanupPeriodDays": 30})
    assert effective_cleanup_periods(config, [str(project)], managed=managed).default.days == 30
