"""Issue 11: what a killed command leaves (staging, temp files) is found and removed by the
next run, never what a live one holds."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from scrubber.archive.leftovers import (
    find_leftovers,
    journal_outside,
    locked_temp,
    remove_leftovers,
    staging_folder,
)


def test_a_live_staging_folder_is_kept_a_dead_one_removed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with staging_folder(home, "restore") as live:
        assert stat.S_IMODE(live.stat().st_mode) == 0o700
        assert stat.S_IMODE((home / "staging").stat().st_mode) == 0o700
        (live / "secret.jsonl").write_bytes(b"plaintext")
        # A dead one: its lock file is there and nobody holds it.
        dead = home / "staging" / "restore-dead"
        dead.mkdir()
        (dead / ".lock").write_bytes(b"")
        (dead / "tree").mkdir()
        (dead / "tree" / "x.jsonl").write_bytes(b"plaintext")
        assert [f.path for f in find_leftovers(home)] == [dead]
        assert [f.path for f in remove_leftovers(home)] == [dead]
        assert not dead.exists() and (live / "secret.jsonl").exists()
    assert list((home / "staging").iterdir()) == []


def test_a_staging_folder_without_its_lock_is_kept_for_a_grace_period(tmp_path: Path) -> None:
    home = tmp_path / "home"
    young = home / "staging" / "restore-young"
    young.mkdir(parents=True)
    old = home / "staging" / "restore-old"
    old.mkdir()
    past = time.time() - 3600
    os.utime(old, (past, past))
    assert [f.path for f in remove_leftovers(home)] == [old]
    assert young.exists()


def test_archive_temp_files_of_a_dead_writer_go_a_live_ones_stay(tmp_path: Path) -> None:
    home = tmp_path / "home"
    archives = tmp_path / "archives"
    folder = archives / "proj" / "sid"
    folder.mkdir(parents=True)
    dead = folder / ".2026-03-02T09-01-30.948Z.abc.tmp"
    dead.write_bytes(b"ciphertext")
    kept = folder / "2026-03-02T09-01-30.948Z.tar.gz.age"
    kept.write_bytes(b"an archive")
    with locked_temp(folder, ".2026-03-02T09-01-30.948Z.") as (fd, live):
        os.close(fd)
        found = find_leftovers(home, archives=archives)
        assert [f.path for f in found] == [dead]
        remove_leftovers(home, archives=archives)
        assert not dead.exists() and live.exists() and kept.exists()
    assert [f.path for f in remove_leftovers(home, archives=archives)] == [live]


def test_a_journaled_temp_beside_a_target_goes_with_its_staging(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "config"
    config.mkdir()
    dead = home / "staging" / "restore-dead"
    dead.mkdir(parents=True)
    (dead / ".lock").write_bytes(b"")
    temp = config / ".s.jsonl.scrub-restore-restore-dead.tmp"
    journal_outside(dead, temp)
    temp.write_bytes(b"plaintext")
    unrelated = config / "notes.tmp"
    journal_outside(dead, unrelated)  # not a name of ours: never removed
    unrelated.write_bytes(b"the user's")
    old = config / ".scrub-restore-x1"  # an older scrubber's staging in the config dir
    old.mkdir()
    removed = {f.path for f in remove_leftovers(home, config=config)}
    assert removed == {temp, dead, old}
    assert unrelated.exists()
