"""The pins file: `$SCRUB_HOME/state/pins.json`, atomic, locked, never silently empty."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from scrubber.errors import ConfigError
from scrubber.policy.model import Pins
from scrubber.retention.pins import (
    PinRecord,
    add_pin,
    cli_pins,
    effective_pins,
    match_pins,
    pins_file,
    read_pins,
    remove_pins,
)


def test_round_trip(tmp_path: Path) -> None:
    assert read_pins(tmp_path) == ()
    assert add_pin(tmp_path, PinRecord("s1", "proj", "release notes", "keep for audit"))
    assert not add_pin(tmp_path, PinRecord("s1", "proj"))  # already pinned
    assert add_pin(tmp_path, PinRecord("s2"))
    records = read_pins(tmp_path)
    assert [r.session_id for r in records] == ["s1", "s2"]
    assert records[0].name == "release notes" and records[0].reason == "keep for audit"
    assert records[0].pinned_at is not None
    path = pins_file(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text())["format"] == 1
    assert not list(path.parent.glob(".pins.json.*"))  # no temp files left


def test_reason_update_and_removal(tmp_path: Path) -> None:
    add_pin(tmp_path, PinRecord("s1", reason="a"))
    add_pin(tmp_path, PinRecord("s1", reason="b"))
    assert read_pins(tmp_path)[0].reason == "b"
    assert [r.session_id for r in remove_pins(tmp_path, frozenset({"s1", "nope"}))] == ["s1"]
    assert read_pins(tmp_path) == ()
    assert remove_pins(tmp_path, frozenset({"s1"})) == ()


def test_merged_with_the_policy(tmp_path: Path) -> None:
    add_pin(tmp_path, PinRecord("cli-1"))
    merged = effective_pins(Pins(sessions=("pol-1",), tags=("keep",)), tmp_path)
    assert merged.sessions == ("pol-1", "cli-1") and merged.tags == ("keep",)
    assert cli_pins(tmp_path) == Pins(sessions=("cli-1",))


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"format": 1}',
        b'{"format": 2, "pins": []}',
        b'{"format": 1, "pins": [{"project": "x"}]}',
        b'{"format": 1, "pins": [{"session_id": "a", "reason": 3}]}',
        b'{"format": 1, "pins": ["a"]}',
    ],
)
def test_a_damaged_file_is_an_error_not_no_pins(tmp_path: Path, content: bytes) -> None:
    path = pins_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(ConfigError, match="retention paused"):
        read_pins(tmp_path)
    with pytest.raises(ConfigError):
        add_pin(tmp_path, PinRecord("s9"))  # and nothing overwrites it
    assert path.read_bytes() == content


def test_concurrent_pins_are_all_kept(tmp_path: Path) -> None:
    threads = [
        threading.Thread(target=add_pin, args=(tmp_path, PinRecord(f"s{i}"))) for i in range(12)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.session_id for r in read_pins(tmp_path)) == sorted(f"s{i}" for i in range(12))


def test_match_pins() -> None:
    records = (
        PinRecord("3f9a0000-1111", name="Release"),
        PinRecord("3f9b0000-2222", name="notes"),
    )
    assert [r.session_id for r in match_pins(records, "3f9a0000-1111")] == ["3f9a0000-1111"]
    assert [r.session_id for r in match_pins(records, "3f9b")] == ["3f9b0000-2222"]
    assert len(match_pins(records, "3f9")) == 0  # prefixes need 4 characters
    assert [r.session_id for r in match_pins(records, "release")] == ["3f9a0000-1111"]
    assert match_pins(records, "nothing") == ()
