"""Several trashed versions of one session: each in a folder of its own, the newest undeleted
first, each purged by its own trashed_at, and the folders' names checked like their manifests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from scrubber.errors import UsageError
from scrubber.retention import trash as trash_module
from scrubber.retention.apply import Action, recover_incomplete
from scrubber.retention.plan import TrashedSession, plan_retention
from scrubber.retention.rules import Reason, Subject
from scrubber.retention.trash import list_trash, trash_session
from scrubber.retention.trash_manifest import TrashError, read_trash_manifest
from scrubber.retention.trash_names import claim_slot, slot_name, version_of
from scrubber.retention.trash_versions import find_in_trash, find_versions, undelete
from tests.unit.retention.sessions_writer import WrittenSession, tree, write_session
from tests.unit.retention.test_retention_apply import NOW, RULES, FakeIndex, one, run

SID = "5a1c9e0f-0000-4000-8000-00000000cafe"
PROJECT = "-home-me-web"  # the folder Claude Code names after the cwd /home/me/web


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "claude"
    config.mkdir()
    return config, config / "scrubber"


def _version(config: Path, seed: int, *, days: int = 45) -> WrittenSession:
    """The session SID as it is now: each seed writes different lines under the same id."""
    return write_session(
        config, cwd="/home/me/web", last=NOW - timedelta(days=days), session_id=SID, seed=seed
    )


def _trash_two(config: Path, home: Path) -> tuple[bytes, bytes]:
    """Trash two versions of SID, an hour apart; returns their transcripts' bytes."""
    first = _version(config, seed=1)
    one_bytes = first.transcript.read_bytes()
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(hours=1))
    second = _version(config, seed=2, days=44)
    two_bytes = second.transcript.read_bytes()
    assert two_bytes != one_bytes
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    return one_bytes, two_bytes


def _killed_while_trashing(
    config: Path,
    home: Path,
    session_id: str,
    monkeypatch: pytest.MonkeyPatch,
    dies: Callable[[int, Path], bool],
) -> None:
    """Trash `session_id` and die (a KeyboardInterrupt: kill -9 as far as the trash can tell)
    at the first move `dies` picks, given how many moved before it and what moves now."""
    real_move = trash_module._move
    moved = {"n": 0}

    def move(src: Path, dst: Path, *, private: bool) -> None:
        if dies(moved["n"], src):
            raise KeyboardInterrupt
        real_move(src, dst, private=private)
        moved["n"] += 1

    monkeypatch.setattr(trash_module, "_move", move)
    with pytest.raises(KeyboardInterrupt):
        trash_session(one(config, session_id), config_dir=config, home=home, now=NOW)
    monkeypatch.undo()


# --- names ----------------------------------------------------------------------------------


def test_slot_names_and_the_versions_they_hold() -> None:
    assert slot_name(SID, 1) == SID and slot_name(SID, 12) == f"{SID}.12"
    assert version_of(SID, SID) == 1 and version_of(f"{SID}.12", SID) == 12
    for name in (f"{SID}.1", f"{SID}.02", f"{SID}.x", f"{SID}.", f"{SID}.-3", f"{SID}.²", "x"):
        assert version_of(name, SID) is None, name
    with pytest.raises(ValueError):
        slot_name(SID, 0)


def test_a_new_slot_never_reuses_a_name_something_holds(tmp_path: Path) -> None:
    root = tmp_path / "trash"
    root.mkdir()
    (root / SID).mkdir()
    (root / SID / "planted").write_text("not ours")
    (root / f"{SID}.2").symlink_to(tmp_path / "nowhere")  # dangling: still taken
    slot, version = claim_slot(root, SID)
    assert (slot, version) == (root / f"{SID}.3", 3) and slot.is_dir()
    assert (root / SID / "planted").read_text() == "not ours"
    assert (root / f"{SID}.2").is_symlink() and not (tmp_path / "nowhere").exists()
    assert claim_slot(root, SID)[1] == 4  # one above the highest, whatever is below


# --- trash_session and undelete -------------------------------------------------------------


def test_a_session_trashed_twice_keeps_both_versions(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    one_bytes, two_bytes = _trash_two(config, home)
    listing = list_trash(home)
    assert [s.name for s, _ in listing.complete] == [SID, f"{SID}.2"] and not listing.problems
    transcript = f"projects/{PROJECT}/{SID}.jsonl"
    assert (home / "trash" / SID / transcript).read_bytes() == one_bytes
    assert (home / "trash" / f"{SID}.2" / transcript).read_bytes() == two_bytes
    trashed = {t.version: t.trashed_at for t in listing.trashed()}
    assert trashed == {1: NOW - timedelta(hours=1), 2: NOW}


def test_undelete_brings_back_the_newest_first_then_the_older(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    one_bytes, two_bytes = _trash_two(config, home)
    assert find_in_trash(home, SID[:8])[0].name == f"{SID}.2"

    newest = undelete(home, config, SID[:8], now=NOW)
    assert newest.version == 2 and newest.remaining == ((1, NOW - timedelta(hours=1)),)
    assert newest.transcript.read_bytes() == two_bytes
    assert not (home / "trash" / f"{SID}.2").exists() and (home / "trash" / SID).is_dir()

    with pytest.raises(UsageError, match="in the way"):  # the newest is back in place
        undelete(home, config, SID, now=NOW)
    for path in one(config, SID).bundle_paths():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    older = undelete(home, config, SID, now=NOW)
    assert older.version == 1 and older.remaining == ()
    assert older.transcript.read_bytes() == one_bytes
    assert not list_trash(home).complete


def test_undelete_a_version_by_number(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    one_bytes, _ = _trash_two(config, home)
    trashed = tree(home / "trash")
    with pytest.raises(UsageError, match="no version 3") as caught:
        undelete(home, config, SID, now=NOW, version=3)
    assert "2 (trashed" in (caught.value.hint or "") and "1 (trashed" in (caught.value.hint or "")
    assert tree(home / "trash") == trashed  # nothing moved
    result = undelete(home, config, SID, now=NOW, version=1)
    assert result.transcript.read_bytes() == one_bytes
    assert result.version == 1 and result.remaining == ((2, NOW),)
    assert (home / "trash" / f"{SID}.2").is_dir() and not (home / "trash" / SID).exists()


def test_versions_of_one_session_are_not_an_ambiguous_name(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    _trash_two(config, home)
    matched, every = find_versions(home, SID[:6])
    assert [s.name for s, _ in matched] == [f"{SID}.2", SID] == [s.name for s, _ in every]


def test_a_folder_named_for_another_version_is_not_ours(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    _version(config, seed=1)
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    for name in (f"{SID}.1", f"{SID}.02", f"{SID[:-1]}0.2"):
        copy = home / "trash" / name
        shutil.copytree(slot, copy)
        with pytest.raises(TrashError, match="outside its session"):
            read_trash_manifest(copy)
    listing = list_trash(home)
    assert [s.name for s, _ in listing.complete] == [SID]
    assert len(listing.problems) == 3
    assert find_versions(home, SID)[1] == [(slot, read_trash_manifest(slot))]


def test_a_half_filled_version_is_completed_not_split(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    _version(config, seed=1)
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(hours=1))
    second = _version(config, seed=2, days=44)
    _killed_while_trashing(config, home, SID, monkeypatch, lambda moved, _src: moved >= 1)
    assert [s.name for s, _ in list_trash(home).incomplete] == [f"{SID}.2"]
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    assert slot.name == f"{SID}.2" and not (home / "trash" / f"{SID}.3").exists()
    manifest = read_trash_manifest(slot)
    assert manifest.complete and not second.transcript.exists()
    assert sorted(e.path for e in manifest.entries) == second.relative(config)


def test_recovery_puts_back_only_the_half_moved_version(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    _version(config, seed=1)
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(hours=1))
    first = tree(home / "trash" / SID)
    _version(config, seed=2, days=44)
    before = {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")}

    def on_the_transcript(_moved: int, src: Path) -> bool:
        return src.suffix == ".jsonl" and src.parent.parent.name == "projects"

    _killed_while_trashing(config, home, SID, monkeypatch, on_the_transcript)
    outcomes = recover_incomplete(home, config, set(), now=NOW)
    assert [o.subject for o in outcomes] == [f"{SID}.2"]
    assert {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")} == before
    assert tree(home / "trash" / SID) == first and not (home / "trash" / f"{SID}.2").exists()


# --- retention: each version by its own trashed_at ------------------------------------------


def test_the_plan_judges_each_version_by_its_own_trashed_at() -> None:
    subject = Subject(SID, "p")
    trashed = [
        TrashedSession(SID, "p", NOW - timedelta(days=8), subject),
        TrashedSession(SID, "p", NOW - timedelta(days=1), subject, version=2),
    ]
    plan = plan_retention([], RULES, NOW, trashed=trashed)
    assert [(t.version, t.action, t.reason) for t in plan.trash] == [
        (1, Action.PURGE, Reason.EXPIRED),
        (2, Action.KEEP, Reason.IN_GRACE),
    ]
    assert [t.slot for t in plan.trash_purges] == [SID]
    with pytest.raises(ValueError, match="listed twice"):
        plan_retention([], RULES, NOW, trashed=[*trashed, trashed[1]])


def test_retention_purges_the_expired_version_only(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    _version(config, seed=1)
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(days=8))
    _version(config, seed=2, days=44)
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(days=1))
    newer = tree(home / "trash" / f"{SID}.2")
    report = run(config, home, RULES, FakeIndex())
    assert [(o.subject, o.done) for o in report.trash] == [
        (SID, Action.PURGE),
    ]
    assert not (home / "trash" / SID).exists()
    assert tree(home / "trash" / f"{SID}.2") == newer
    # The version left is still found by the session's id, and then the next one is version 3.
    assert find_in_trash(home, SID)[0].name == f"{SID}.2"
    _version(config, seed=3, days=43)
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    assert slot.name == f"{SID}.3"


def _crash_before_the_last_manifest(
    config: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trash SID and die after every file moved, before the manifest says "complete"."""
    real_write = trash_module.write_trash_manifest
    calls = {"n": 0}

    def crash_on_the_second(slot: Path, manifest: object) -> None:
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        real_write(slot, manifest)  # type: ignore[arg-type]

    monkeypatch.setattr(trash_module, "write_trash_manifest", crash_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    monkeypatch.undo()


def test_a_whole_version_whose_place_was_refilled_is_complete_not_put_back(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of 5740913: a `restore --force` killed after the transcript moved, then run
    again, put the archived version back in place. Recovery tried to put the trashed one back
    over it (exit 3 on every retention run after), and the next trash reused its folder (a
    file 'already exists'). It is a whole version: completed, and the next one gets its own."""
    config, home = dirs
    _trash_two(config, home)
    _version(config, seed=3, days=43)
    _crash_before_the_last_manifest(config, home, monkeypatch)
    third = {k: v for k, v in tree(home / "trash" / f"{SID}.3").items() if k != "manifest.json"}
    _version(config, seed=4, days=42)  # the archived copy, written back in place
    outcomes = recover_incomplete(home, config, set(), now=NOW)
    assert [(o.subject, o.error) for o in outcomes] == [(f"{SID}.3", False)]
    assert read_trash_manifest(home / "trash" / f"{SID}.3").complete
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    kept = {k: v for k, v in tree(home / "trash" / f"{SID}.3").items() if k != "manifest.json"}
    assert slot.name == f"{SID}.4" and kept == third


def test_a_half_filled_folder_of_another_session_is_never_filled(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids `abc` and `abc.2` (discovery takes any file stem): trashing `abc` must not complete
    the half-filled folder of session `abc.2`."""
    config, home = dirs
    other = f"{SID}.2"
    write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=45), session_id=other)
    _killed_while_trashing(config, home, other, monkeypatch, lambda _moved, _src: True)
    _version(config, seed=1)
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    assert slot.name == SID
    assert read_trash_manifest(home / "trash" / other).session_id == other


def test_a_planted_high_number_does_not_use_up_the_versions(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    _version(config, seed=1)
    (home / "trash" / f"{SID}.10000").mkdir(parents=True)  # not ours: no manifest
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    assert slot.name == SID
    _version(config, seed=2, days=44)
    slot = trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    assert slot.name == f"{SID}.2" and list((home / "trash" / f"{SID}.10000").iterdir()) == []


def test_undelete_brings_back_a_whole_version_before_a_half_moved_one(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    _version(config, seed=1)
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW - timedelta(hours=1))
    whole = _version(config, seed=2, days=44).transcript.read_bytes()
    trash_session(one(config, SID), config_dir=config, home=home, now=NOW)
    _version(config, seed=3, days=43)
    _crash_before_the_last_manifest(config, home, monkeypatch)
    result = undelete(home, config, SID, now=NOW)
    assert (config / "projects" / PROJECT / f"{SID}.jsonl").read_bytes() == whole
    assert result is not None
