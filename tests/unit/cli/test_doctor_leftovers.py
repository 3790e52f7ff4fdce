"""`scrub doctor` reports what killed commands left behind (issue 11), naming the command whose
next run removes it."""

from __future__ import annotations

from pathlib import Path

from scrubber.cli.doctor_cmd import Level, check_leftovers


def test_nothing_left_is_ok(tmp_path: Path) -> None:
    (check,) = check_leftovers(tmp_path / "config", tmp_path / "home", None)
    assert check.level is Level.OK


def test_each_kind_of_leftover_is_reported(tmp_path: Path) -> None:
    config, home = tmp_path / "config", tmp_path / "home"
    stale = home / "staging" / "restore-x1"
    stale.mkdir(parents=True)
    (stale / ".lock").write_bytes(b"")
    old = config / ".scrub-restore-abc"
    old.mkdir(parents=True)
    slot = home / "trash" / "0000aaaa-0000-4000-8000-000000000000"
    slot.mkdir(parents=True)
    (slot / ".manifest.json.zz.tmp").write_bytes(b"{")
    checks = check_leftovers(config, home, None)
    assert all(c.level is Level.WARN for c in checks)
    by_path = {c.message.split(":")[0]: c for c in checks}
    assert set(by_path) == {str(stale), str(old), str(slot)}
    assert "scrub restore" in (by_path[str(stale)].fix or "")
    assert "plaintext" in by_path[str(stale)].message
    assert "scrub restore" in (by_path[str(old)].fix or "")
    assert "retention --apply" in (by_path[str(slot)].fix or "")
    assert stale.exists() and old.exists() and slot.exists()  # doctor is read-only
