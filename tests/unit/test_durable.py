"""durable: atomic writes (mode, mtime, no temp left on failure, syncing as it goes), JSON
state files, publishing under a name nobody took."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrubber import durable
from scrubber.durable import atomic_write, publish_by_link, write_json_state


def test_atomic_write_replaces_with_mode_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"old\n")
    atomic_write(path, [b"new ", b"content\n"], mode=0o600, mtime_ns=1_700_000_000_000_000_000)
    assert path.read_bytes() == b"new content\n"
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_mtime_ns == 1_700_000_000_000_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_atomic_write_failure_leaves_the_target_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"original\n")

    def chunks() -> Iterator[bytes]:
        yield b"partial"
        raise RuntimeError("disk went away")

    with pytest.raises(RuntimeError):
        atomic_write(path, chunks())
    assert path.read_bytes() == b"original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_atomic_write_can_write_to_disk_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer whose chunks come with waits (a parallel redaction's parts) syncs the data it
    # has written every `sync_every` bytes, so that the final fsync has little left to do.
    synced_sizes: list[int] = []
    monkeypatch.setattr(durable, "_sync_data", lambda fd: synced_sizes.append(os.fstat(fd).st_size))
    path = tmp_path / "copy.jsonl"
    atomic_write(path, [b"a" * 600, b"b" * 500, b"c" * 300, b"d" * 900], sync_every=1000)
    assert path.read_bytes() == b"a" * 600 + b"b" * 500 + b"c" * 300 + b"d" * 900
    assert synced_sizes == [1100, 2300]  # everything written so far, each time
    synced_sizes.clear()
    atomic_write(path, [b"e" * 5000])
    assert synced_sizes == []  # not asked for: only the final fsync


def test_json_state_is_indented_utf8_and_private(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    write_json_state(path, {"name": "caf\u00e9", "n": 1})
    assert path.read_text(encoding="utf-8") == '{\n  "name": "caf\u00e9",\n  "n": 1\n}\n'
    assert json.loads(path.read_text(encoding="utf-8")) == {"name": "caf\u00e9", "n": 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_publish_by_link_never_replaces_a_name_taken(tmp_path: Path) -> None:
    tmp, final = tmp_path / ".tmp", tmp_path / "final"
    tmp.write_bytes(b"new")
    assert publish_by_link(tmp, final)
    assert final.read_bytes() == b"new" and tmp.exists()  # `tmp` remains: the caller removes it
    other = tmp_path / ".other"
    other.write_bytes(b"other")
    assert not publish_by_link(other, final)
    assert final.read_bytes() == b"new"
