"""Applying a plan: the lock, the trash, undelete, archive-first, faults, purges, the log."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scrubber.errors import BusyError, ExitCode, ScrubberError, UsageError
from scrubber.policy.model import Pins
from scrubber.retention import apply as apply_module
from scrubber.retention import trash as trash_module
from scrubber.retention.apply import ArchiveCheck, apply_plan, recover_incomplete, retention_lock
from scrubber.retention.plan import (
    Action,
    ArchiveFacts,
    Periods,
    RetentionPlan,
    RetentionRules,
    SessionKey,
    needs_archive_status,
    plan_retention,
)
from scrubber.retention.rules import ArchiveStatus, Reason
from scrubber.retention.trash import (
    BundleSession,
    list_trash,
    read_trash_manifest,
    trash_session,
)
from scrubber.retention.trash_versions import undelete
from scrubber.transcript.sessions import SessionInfo, discover
from tests.unit.retention.sessions_writer import WrittenSession, tree, write_session

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "claude"
    home = config / "scrubber"
    config.mkdir()
    return config, home


def one(config: Path, session_id: str) -> SessionInfo:
    (found,) = discover(config).by_id(session_id)
    return found


class FakeIndex:
    """An archive store in memory: an archive is the transcript's hash at archive time."""

    def __init__(self, *, can_archive: bool = True, verifies: bool = True) -> None:
        self._can = can_archive
        self.verifies = verifies
        self.archived: dict[str, str] = {}
        self.fail: BaseException | None = None
        self.fail_after_write: BaseException | None = None
        self.removed: list[str] = []
        self.facts: tuple[ArchiveFacts, ...] = ()

    @property
    def can_archive(self) -> bool:
        return self._can

    @staticmethod
    def _digest(session: BundleSession) -> str:
        return hashlib.sha256(session.transcript.read_bytes()).hexdigest()

    def newest(self, session: BundleSession) -> ArchiveCheck:
        if session.id not in self.archived:
            return ArchiveCheck(ArchiveStatus.NONE)
        ref = f"archives/{session.id}"
        if not self.verifies:
            return ArchiveCheck(ArchiveStatus.UNVERIFIED, ref)
        same = self.archived[session.id] == self._digest(session)
        return ArchiveCheck(ArchiveStatus.VERIFIED if same else ArchiveStatus.STALE, ref)

    def archive(self, session: BundleSession) -> ArchiveCheck:
        if self.fail is not None:
            raise self.fail
        self.archived[session.id] = self._digest(session)
        if self.fail_after_write is not None:
            raise self.fail_after_write
        return self.newest(session)

    def verify(self, ref: str) -> bool:
        return self.verifies and ref.removeprefix("archives/") in self.archived

    def files(self) -> tuple[ArchiveFacts, ...]:
        return self.facts

    def remove(self, ref: str) -> None:
        self.removed.append(ref)


def make_plan(
    config: Path, home: Path, rules: RetentionRules, index: FakeIndex, now: datetime = NOW
) -> tuple[RetentionPlan, dict[SessionKey, SessionInfo]]:
    sessions = {SessionKey(s.project, s.id): s for s in discover(config).sessions}
    statuses = {
        k: index.newest(sessions[k]).status
        for k in needs_archive_status(sessions.values(), rules, now)
    }
    plan = plan_retention(
        sessions.values(),
        rules,
        now,
        archives=statuses,
        trashed=list_trash(home).trashed(),
        archive_files=index.files(),
    )
    return plan, sessions


def run(
    config: Path,
    home: Path,
    rules: RetentionRules,
    index: FakeIndex,
    *,
    pins: Pins | None = None,
    now: datetime = NOW,
) -> apply_module.ApplyReport:
    plan, sessions = make_plan(config, home, rules, index, now)
    return apply_plan(
        plan,
        sessions,
        config_dir=config,
        home=home,
        index=index,
        pins_now=lambda: pins if pins is not None else rules.pins,
        clock=lambda: now,
    )


RULES = RetentionRules(periods=Periods(30), keep_newest_per_project=0)


def old_and_young(config: Path) -> tuple[WrittenSession, WrittenSession]:
    old = write_session(
        config,
        cwd="/home/me/web",
        last=NOW - timedelta(days=45),
        seed=1,
        title="old one",
        tags=("x",),
    )
    young = write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=3), seed=2)
    return old, young


# --- the lock -------------------------------------------------------------------------------


def test_second_holder_is_refused_at_once(dirs: tuple[Path, Path]) -> None:
    _, home = dirs
    with retention_lock(home):
        started = time.monotonic()
        with pytest.raises(BusyError) as caught, retention_lock(home):
            pass
        assert time.monotonic() - started < 1
        assert caught.value.exit_code is ExitCode.BUSY
    with retention_lock(home):  # released
        pass
    assert (home / "state" / "retention.lock").stat().st_mode & 0o777 == 0o600


# --- trash and undelete ---------------------------------------------------------------------


def test_trash_moves_the_whole_bundle_and_undelete_brings_it_back(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, young = old_and_young(config)
    before = tree(config)
    old_mtime = old.transcript.stat().st_mtime
    report = run(config, home, RULES, FakeIndex())
    assert [(o.subject, o.done) for o in report.sessions if o.done is not Action.KEEP] == [
        (f"{old.project}/{old.session_id}", Action.TRASH)
    ]
    # Nothing of the old session is left where Claude Code looks; the young one is untouched.
    assert not discover(config).by_id(old.session_id)
    assert all(not p.exists() for p in old.paths)
    assert all(p.exists() for p in young.paths)
    slot = home / "trash" / old.session_id
    manifest = read_trash_manifest(slot)
    assert manifest.complete and manifest.trashed_at == NOW
    assert sorted(e.path for e in manifest.entries) == old.relative(config)
    assert manifest.custom_title == "old one" and manifest.tags == ("x",)
    for entry in manifest.entries:
        assert (slot / entry.path).exists()
    assert (
        slot / "projects" / old.project / f"{old.session_id}.jsonl"
    ).stat().st_mtime == old_mtime
    assert slot.stat().st_mode & 0o777 == 0o700

    result = undelete(home, config, old.session_id[:8], now=NOW)
    assert tree(config) == before  # the layout, byte for byte
    restored = one(config, old.session_id)
    assert restored.transcript.stat().st_mtime == pytest.approx(NOW.timestamp(), abs=1)
    history = config / "file-history" / old.session_id / "3f2a9c@v1"
    assert history.stat().st_mtime == pytest.approx(NOW.timestamp(), abs=1)
    assert result.transcript == old.transcript and not slot.exists()


def test_undelete_keep_mtime_and_by_title(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    mtime = old.transcript.stat().st_mtime
    run(config, home, RULES, FakeIndex())
    undelete(home, config, "OLD ONE", now=NOW, keep_mtime=True)
    assert old.transcript.stat().st_mtime == mtime


def test_undelete_refuses_when_something_is_in_the_way(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    run(config, home, RULES, FakeIndex())
    trashed = tree(home / "trash")
    blocker = config / "file-history" / old.session_id
    blocker.mkdir(parents=True)
    with pytest.raises(UsageError, match="in the way"):
        undelete(home, config, old.session_id, now=NOW)
    assert tree(home / "trash") == trashed  # nothing moved
    assert not old.transcript.exists()
    with pytest.raises(UsageError, match="no session in the trash"):
        undelete(home, config, "unknown-session", now=NOW)


def test_a_session_trashed_again_gets_a_folder_of_its_own(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    run(config, home, RULES, FakeIndex())
    first = tree(home / "trash" / old.session_id)
    # The same id appears again (restored from an archive, say) while the old copy waits: it
    # goes to the trash too, beside the first version, which stays as it was.
    again = write_session(
        config, cwd="/home/me/web", last=NOW - timedelta(days=45), session_id=old.session_id
    )
    report = run(config, home, RULES, FakeIndex())
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.TRASH and not outcome.error
    assert not again.transcript.exists()
    assert tree(home / "trash" / old.session_id) == first
    second = read_trash_manifest(home / "trash" / f"{old.session_id}.2")
    assert second.complete and second.session_id == old.session_id


def test_symlinks_are_moved_as_links_never_followed(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    config, home = dirs
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("not ours")
    old = write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=45), side=False)
    link = config / "session-env" / old.session_id
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    run(config, home, RULES, FakeIndex())
    moved = home / "trash" / old.session_id / "session-env" / old.session_id
    assert moved.is_symlink() and moved.readlink() == outside
    assert (outside / "precious.txt").read_text() == "not ours"
    # Purging the trash removes the link, not what it points to.
    run(config, home, replace(RULES, trash_days=0), FakeIndex(), now=NOW + timedelta(days=1))
    assert not (home / "trash" / old.session_id).exists()
    assert (outside / "precious.txt").read_text() == "not ours"


def test_a_bundle_below_a_symlinked_folder_is_refused(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    config, home = dirs
    elsewhere = tmp_path / "elsewhere-history"
    old = write_session(config, cwd="/home/me/web", last=NOW - timedelta(days=45), side=False)
    (elsewhere / old.session_id).mkdir(parents=True)
    (elsewhere / old.session_id / "f@v1").write_text("x")
    (config / "file-history").symlink_to(elsewhere)
    before = tree(config)
    report = run(config, home, RULES, FakeIndex())
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and "symbolic link" in (outcome.detail or "")
    assert tree(config) == before and (elsewhere / old.session_id / "f@v1").exists()
    assert not (home / "trash" / old.session_id).exists()


def test_across_filesystems_files_are_copied_then_removed(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    before = {
        p: p.read_bytes()
        for p in old.transcript.parent.rglob("*")
        if p.is_file() and old.session_id in str(p)
    }
    real_rename = Path.rename

    def exdev(self: Path, target: Path) -> Path:  # type: ignore[override]
        if ".scrub-moving" not in self.name:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", exdev)
    report = run(config, home, RULES, FakeIndex())
    assert any(o.done is Action.TRASH for o in report.sessions)
    slot = home / "trash" / old.session_id
    for path, data in before.items():
        assert not path.exists()
        assert (slot / path.relative_to(config)).read_bytes() == data
    assert not list(slot.rglob("*.scrub-moving"))


def test_a_full_disk_while_copying_leaves_the_original(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    before = tree(config)

    def exdev(self: Path, target: Path) -> Path:  # type: ignore[override]
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "rename", exdev)
    monkeypatch.setattr(shutil, "copy2", full)
    monkeypatch.setattr(shutil, "copytree", full)
    report = run(config, home, RULES, FakeIndex())
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and outcome.error and "No space" in (outcome.detail or "")
    assert report.errors
    monkeypatch.undo()
    # Everything is still where Claude Code finds it; the next run finishes the job.
    assert {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")} == before
    assert one(config, old.session_id).readable
    report = run(config, home, RULES, FakeIndex())
    assert any(o.done is Action.TRASH for o in report.sessions)
    undelete(home, config, old.session_id, now=NOW, keep_mtime=True)
    assert {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")} == before


def test_a_crash_mid_move_is_finished_or_rolled_back(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    before = tree(config)
    real_move = trash_module._move
    calls = {"n": 0}

    def crash_after_two(src: Path, dst: Path, *, private: bool) -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt  # the process dies here
        real_move(src, dst, private=private)

    monkeypatch.setattr(trash_module, "_move", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        run(config, home, RULES, FakeIndex())
    monkeypatch.undo()
    listing = list_trash(home)
    assert len(listing.incomplete) == 1 and not listing.complete
    assert old.transcript.exists()  # the transcript moves last: Claude Code still finds it

    # The session is pinned meanwhile: the half-moved part goes back.
    outcomes = recover_incomplete(home, config, set(), now=NOW)
    assert outcomes and not list_trash(home).incomplete
    assert {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")} == before

    # Crash again, then a normal run completes the move.
    calls["n"] = 0
    monkeypatch.setattr(trash_module, "_move", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        run(config, home, RULES, FakeIndex())
    monkeypatch.undo()
    report = run(config, home, RULES, FakeIndex())
    assert any(o.done is Action.TRASH for o in report.sessions)
    listing = list_trash(home)
    assert len(listing.complete) == 1 and not listing.incomplete
    assert sorted(e.path for e in listing.complete[0][1].entries) == old.relative(config)


def test_a_crash_after_the_transcript_moved_counts_as_complete(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    real_write = trash_module.write_trash_manifest

    def die_on_completion(slot: Path, manifest: trash_module.TrashManifest) -> None:
        if manifest.complete:
            raise KeyboardInterrupt
        real_write(slot, manifest)

    monkeypatch.setattr(trash_module, "write_trash_manifest", die_on_completion)
    with pytest.raises(KeyboardInterrupt):
        run(config, home, RULES, FakeIndex())
    monkeypatch.undo()
    assert not old.transcript.exists()
    run(config, home, RULES, FakeIndex())
    assert [m.session_id for _, m in list_trash(home).complete] == [old.session_id]


# --- archive first --------------------------------------------------------------------------

ARCHIVING = replace(RULES, require_archive=True, can_archive=True)


def test_archive_then_trash(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _young = old_and_young(config)
    index = FakeIndex()
    report = run(config, home, ARCHIVING, index)
    done = {o.subject: o for o in report.sessions}
    assert done[f"{old.project}/{old.session_id}"].done is Action.ARCHIVE_THEN_TRASH
    assert done[f"{old.project}/{old.session_id}"].reason is Reason.ARCHIVED
    assert set(index.archived) == {old.session_id}
    assert (
        read_trash_manifest(home / "trash" / old.session_id).archive_ref
        == f"archives/{old.session_id}"
    )


def test_an_archive_that_fails_verification_keeps_the_session(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    _old, _ = old_and_young(config)
    before = tree(config)
    index = FakeIndex(verifies=False)
    report = run(config, home, ARCHIVING, index)
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and outcome.reason is Reason.NO_VERIFIED_ARCHIVE
    assert {k: v for k, v in tree(config).items() if not k.startswith("scrubber/")} == before
    assert not list_trash(home).complete


def test_a_crash_between_archive_and_delete(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    index = FakeIndex()
    index.fail_after_write = KeyboardInterrupt()  # the archive is written, then the process dies
    with pytest.raises(KeyboardInterrupt):
        run(config, home, ARCHIVING, index)
    assert old.transcript.exists() and old.session_id in index.archived
    assert not (home / "trash").exists() or not any((home / "trash").iterdir())
    # The next run finds the archive verified and matching: it trashes without archiving again.
    index.fail_after_write = None
    index.fail = AssertionError("must not archive again")
    report = run(config, home, ARCHIVING, index)
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.planned is Action.TRASH and outcome.done is Action.TRASH


def test_a_full_disk_while_archiving(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    index = FakeIndex()
    index.fail = OSError(errno.ENOSPC, "No space left on device")
    report = run(config, home, ARCHIVING, index)
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and outcome.reason is Reason.NO_VERIFIED_ARCHIVE
    assert outcome.error and report.errors
    assert old.transcript.exists() and one(config, old.session_id)


def test_a_session_that_changes_while_archived_is_kept(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    index = FakeIndex()
    plan, sessions = make_plan(config, home, ARCHIVING, index)
    with old.transcript.open("a") as handle:  # Claude Code resumes it right now
        handle.write('{"type":"user","timestamp":"' + NOW.isoformat() + '"}\n')
    report = apply_plan(plan, sessions, config_dir=config, home=home, index=index, pins_now=Pins)
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and outcome.reason is Reason.ACTIVE
    assert old.transcript.exists()


def test_a_pin_made_after_planning_is_honoured(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    report = run(config, home, RULES, FakeIndex(), pins=Pins(names=("old one",)))
    (outcome,) = [o for o in report.sessions if o.planned is not Action.KEEP]
    assert outcome.done is Action.KEEP and outcome.reason is Reason.PINNED
    assert old.transcript.exists()


def test_trash_session_itself_never_overwrites(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    info = one(config, old.session_id)
    slot = home / "trash" / old.session_id
    slot.mkdir(parents=True)
    (slot / "something").write_text("not ours")
    # A folder in the way is never written into: the session takes the next free name.
    taken = trash_session(info, config_dir=config, home=home, now=NOW)
    assert taken == home / "trash" / f"{old.session_id}.2"
    assert not old.transcript.exists() and read_trash_manifest(taken).complete
    assert sorted(p.name for p in slot.iterdir()) == ["something"]
    assert (slot / "something").read_text() == "not ours"


# --- purges ---------------------------------------------------------------------------------


def test_expired_trash_is_purged_unless_pinned_or_unarchived(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    a = write_session(config, cwd="/w", last=NOW - timedelta(days=45), seed=1, title="keep me")
    b = write_session(config, cwd="/w", last=NOW - timedelta(days=50), seed=2)
    run(config, home, RULES, FakeIndex())
    later = NOW + timedelta(days=8)
    report = run(config, home, RULES, FakeIndex(), pins=Pins(names=("keep me",)), now=later)
    by_id = {o.subject: o for o in report.trash}
    assert by_id[a.session_id].done is Action.KEEP and by_id[a.session_id].reason is Reason.PINNED
    assert by_id[b.session_id].done is Action.PURGE
    assert (home / "trash" / a.session_id).exists() and not (home / "trash" / b.session_id).exists()


def test_trash_is_purged_only_while_its_archive_verifies(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    index = FakeIndex()
    run(config, home, ARCHIVING, index)
    index.verifies = False  # the archive got corrupted meanwhile
    later = NOW + timedelta(days=8)
    report = run(config, home, ARCHIVING, index, now=later)
    (outcome,) = report.trash
    assert outcome.done is Action.KEEP and outcome.reason is Reason.NO_VERIFIED_ARCHIVE
    assert (home / "trash" / old.session_id).exists()
    index.verifies = True
    report = run(config, home, ARCHIVING, index, now=later)
    assert [o.done for o in report.trash] == [Action.PURGE]


def test_expired_archives_are_purged_through_the_selector(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    from scrubber.retention.rules import Subject

    index = FakeIndex()
    index.facts = (
        ArchiveFacts(
            "a/1",
            "gone",
            "p",
            NOW - timedelta(days=400),
            NOW - timedelta(days=400),
            Subject("gone", "p"),
        ),
        ArchiveFacts(
            "b/1",
            "pinned",
            "p",
            NOW - timedelta(days=400),
            NOW - timedelta(days=400),
            Subject("pinned", "p"),
        ),
    )
    rules = replace(RULES, archive_days=365)
    report = run(config, home, rules, index, pins=Pins(sessions=("pinned",)))
    assert index.removed == ["a/1"]
    # The plan did not know the pin; the selector, asked again right before, did.
    assert {o.subject: (o.done, o.reason) for o in report.archives} == {
        "a/1": (Action.PURGE, Reason.EXPIRED),
        "b/1": (Action.KEEP, Reason.PINNED),
    }
    # pinned in the plan too
    report = run(config, home, replace(rules, pins=Pins(sessions=("pinned",))), index)
    assert index.removed == ["a/1", "a/1"] and all(o.subject == "a/1" for o in report.archives)


# --- issue 11: crash leftovers and a planted trash ------------------------------------------


def test_a_slot_left_with_only_the_manifest_temp_is_removed_by_the_next_run(
    dirs: tuple[Path, Path],
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    # kill -9 between the slot's mkdir and the manifest's rename: only the temp file is there.
    slot = home / "trash" / old.session_id
    slot.mkdir(parents=True, mode=0o700)
    (slot / ".manifest.json.k1ll3d.tmp").write_bytes(b'{"format": 1, "sta')
    report = run(config, home, RULES, FakeIndex())
    assert not report.errors
    assert any(o.done is Action.TRASH for o in report.sessions)
    assert read_trash_manifest(slot).complete
    assert not (slot / ".manifest.json.k1ll3d.tmp").exists()
    undelete(home, config, old.session_id, now=NOW)
    assert old.transcript.exists()


def test_an_empty_slot_is_removed_and_a_stray_manifest_temp_goes(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    run(config, home, RULES, FakeIndex())
    slot = home / "trash" / old.session_id
    stray = slot / ".manifest.json.abc.tmp"
    stray.write_bytes(b"{}")
    empty = home / "trash" / "0000aaaa-0000-4000-8000-000000000000"
    empty.mkdir()
    busy = home / "trash" / "0000bbbb-0000-4000-8000-000000000000"
    busy.mkdir()
    (busy / "unknown.txt").write_bytes(b"not ours")
    recover_incomplete(home, config, set(), now=NOW)
    assert not stray.exists() and not empty.exists()
    assert (busy / "unknown.txt").exists()  # not what a crash of ours leaves: left alone
    assert read_trash_manifest(slot).complete


def test_undelete_from_a_planted_trash_writes_nothing_outside_the_bundle(
    dirs: tuple[Path, Path],
) -> None:
    config, home = dirs
    old, _ = old_and_young(config)
    run(config, home, RULES, FakeIndex())
    slot = home / "trash" / old.session_id
    manifest = read_trash_manifest(slot)
    (slot / "settings.json").write_text('{"hooks": {"SessionStart": []}}')
    planted = replace(
        manifest,
        entries=(*manifest.entries, trash_module.TrashEntry("settings.json", "file", 0)),
    )
    trash_module.write_trash_manifest(slot, planted)
    before_trash, before_config = tree(home / "trash"), tree(config)
    with pytest.raises(ScrubberError, match=r"settings\.json") as caught:
        undelete(home, config, old.session_id, now=NOW)
    assert "not part of session" in caught.value.message
    assert not (config / "settings.json").exists()
    assert tree(home / "trash") == before_trash
    assert tree(config) == before_config


def _folders(root: Path, *, leaving_out: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_dir() and leaving_out not in (p, *p.parents)}


def test_undelete_under_umask_002_makes_its_folders_0700(dirs: tuple[Path, Path]) -> None:
    config, home = dirs
    lone = write_session(config, cwd="/home/me/lone", last=NOW - timedelta(days=45), seed=7)
    trash_session(one(config, lone.session_id), config_dir=config, home=home, now=NOW)
    # What the bundle left behind empty goes too, so undelete has folders to create.
    for folder in sorted(_folders(config, leaving_out=home), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            folder.rmdir()
    before = _folders(config, leaving_out=home)
    previous = os.umask(0o002)
    try:
        result = undelete(home, config, lone.session_id, now=NOW)
    finally:
        os.umask(previous)
    # Folders moved back keep their own mode; those made to hold them are new, and private.
    moved = set(result.restored)
    created = {
        p for p in _folders(config, leaving_out=home) - before if not moved & {p, *p.parents}
    }
    assert lone.transcript.exists() and created
    assert {p: stat.S_IMODE(p.stat().st_mode) for p in created} == dict.fromkeys(created, 0o700)
