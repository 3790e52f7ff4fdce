"""Session discovery on config dirs built with scrubber.demo (Claude Code's real layout), plus
the awkward cases: symlinks out of the config dir, legacy agent files, empty, garbage and
unreadable transcripts, lookups by id, prefix and title (metadata itself: test_metadata.py)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import build_demo_config, demo_manifest
from scrubber.errors import UsageError
from scrubber.transcript.folder_listing import FolderListing
from scrubber.transcript.records import read_records
from scrubber.transcript.sessions import (
    SideFileKind,
    discover,
    find_session,
    session_bundle,
)

SEED = 11


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return build_demo_config(tmp_path, seed=SEED, sessions=5)


def ids() -> tuple[str, ...]:
    return demo_manifest(seed=SEED, sessions=5).sessions


def full_scan(path: Path) -> tuple[datetime | None, datetime | None, str | None]:
    """First/last top-level timestamp and first cwd, the slow and obvious way."""
    stamps = [r.timestamp for r in read_records(path) if r.timestamp is not None]
    cwd = next((r.cwd for r in read_records(path) if r.cwd), None)
    return (stamps[0] if stamps else None, stamps[-1] if stamps else None, cwd)


def test_discovers_every_demo_session(config: Path) -> None:
    found = discover(config)
    assert sorted(s.id for s in found.sessions) == sorted(ids())
    assert found.problems == ()
    for session in found.sessions:
        assert session.transcript == config / "projects" / session.project / f"{session.id}.jsonl"
        assert session.size == session.transcript.stat().st_size
        assert session.mtime == session.transcript.stat().st_mtime
        assert session.readable
        first, last, cwd = full_scan(session.transcript)
        assert (session.first_timestamp, session.last_timestamp, session.cwd) == (first, last, cwd)
        assert session.first_timestamp is not None and session.last_timestamp is not None
        assert session.first_timestamp <= session.last_timestamp
        assert session.last_activity == session.last_timestamp
        assert session.project == "".join(c if c.isalnum() else "-" for c in session.cwd or "")


def test_titles_and_tags(config: Path) -> None:
    by_id = {s.id: s for s in discover(config).sessions}
    first, second, third, *_ = ids()
    assert by_id[first].custom_title == "checkout-500"
    assert by_id[first].title == "checkout-500"  # custom title beats the summary
    assert by_id[first].tags == ("billing",)
    assert by_id[second].custom_title is None
    assert by_id[second].title == "Rotate deploy key"  # ai-title when nothing else
    assert by_id[second].tags == ("ops",)
    assert by_id[third].title == "Anthropic client 401"


def test_legacy_agent_file_belongs_to_its_session(config: Path) -> None:
    found = discover(config)
    third = ids()[2]
    assert not any(s.id.startswith("agent-") for s in found.sessions)
    (session,) = found.by_id(third)
    (legacy,) = session.legacy_agent_files
    assert legacy.name.startswith("agent-") and legacy.parent == session.transcript.parent
    assert legacy in session.subagent_transcripts()
    assert legacy in session.bundle_paths()


def test_orphan_agent_file_is_a_session_of_its_own(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-w"
    project.mkdir(parents=True)
    (project / "agent-1234.jsonl").write_text(
        json.dumps({"type": "user", "sessionId": "gone", "cwd": "/w"}) + "\n"
    )
    (session,) = discover(tmp_path).sessions
    assert session.id == "agent-1234"
    assert session.cwd == "/w"


def test_bundle_paths_follow_the_contract(config: Path) -> None:
    found = discover(config)
    first = ids()[0]
    (session,) = found.by_id(first)
    bundle = session.bundle_paths()
    relative = {p.relative_to(config).as_posix() for p in bundle}
    project = f"projects/{session.project}"
    assert relative == {
        f"{project}/{first}.jsonl",
        f"{project}/{first}",
        f"file-history/{first}",
        f"session-env/{first}",
        f"debug/{first}.txt",
        f"todos/{first}-agent-{first}.json",
    }
    assert bundle == session_bundle(config, session.project, first)
    files = session.side_files()
    assert any(p.parent.name == "tool-results" for p in files)
    # The second session: transcript + side folder (its subagent), nothing global.
    (second,) = found.by_id(ids()[1])
    assert {p.relative_to(config).as_posix() for p in second.bundle_paths()} == {
        f"projects/{second.project}/{second.id}.jsonl",
        f"projects/{second.project}/{second.id}",
    }
    (agent,) = second.subagent_transcripts()
    assert agent.parent.name == "subagents" and agent.suffix == ".jsonl"


def test_a_bundle_from_folders_listed_once_is_the_one_tried_path_by_path(config: Path) -> None:
    found = discover(config)
    first, second = ids()[0], ids()[1]
    (session,) = found.by_id(first)
    # A link as a side entry (kept as the link), a dangling one, and a missing folder.
    (config / "session-env" / first).rename(config / "session-env" / f"{first}.moved")
    (config / "session-env" / first).symlink_to(config / "session-env" / f"{first}.moved")
    (config / "debug" / f"{second}.txt").symlink_to(config / "nowhere.txt")
    shutil.rmtree(config / "file-history")
    listing = FolderListing()
    for info in found.sessions:
        assert info.bundle_paths(listing) == info.bundle_paths()
    assert config / "session-env" / first in session.bundle_paths(listing)
    assert config / "debug" / f"{second}.txt" in found.by_id(second)[0].bundle_paths(listing)
    # What the listing says is what the folder held when first asked.
    (config / "debug" / f"{first}.txt").unlink()
    assert config / "debug" / f"{first}.txt" in session.bundle_paths(listing)
    assert config / "debug" / f"{first}.txt" not in session.bundle_paths(FolderListing())


def test_a_folder_that_cannot_be_listed_is_tried_path_by_path(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (session,) = discover(config).by_id(ids()[0])
    debug = os.fspath(config / "debug")
    real_scandir = os.scandir

    def refusing(path: Any = ".") -> Any:
        if os.fspath(path) == debug:  # as for a folder one may enter but not read (0311)
            raise PermissionError(13, "Permission denied", debug)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert session.bundle_paths(FolderListing()) == session.bundle_paths()
    assert config / "debug" / f"{session.id}.txt" in session.bundle_paths(FolderListing())


def test_a_folder_that_can_be_read_but_not_entered_is_tried_path_by_path(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of mode 0644 lists its names, but `lexists` of its entries says no (their
    paths cannot be looked at): the bundle is what it is without a listing."""
    (session,) = discover(config).by_id(ids()[0])
    inside = os.fspath(config / "session-env") + "/"
    real_lstat = os.lstat

    def refusing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).startswith(inside):  # as for a folder without search permission
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", refusing)
    assert config / "session-env" / session.id not in session.bundle_paths()
    assert session.bundle_paths(FolderListing()) == session.bundle_paths()


def test_global_side_files(config: Path) -> None:
    found = discover(config)
    kinds = {(f.kind, f.path.relative_to(config).parts[0]) for f in found.side_files}
    assert kinds == {
        (SideFileKind.HISTORY, "history.jsonl"),
        (SideFileKind.SHELL_SNAPSHOT, "shell-snapshots"),
        (SideFileKind.PASTE_CACHE, "paste-cache"),
        (SideFileKind.DEBUG, "debug"),
    }
    debug = [f for f in found.side_files if f.kind is SideFileKind.DEBUG]
    assert [f.session_id for f in debug] == [ids()[0]]
    # debug/latest is a symlink inside the config dir: not listed twice, not a problem.
    assert all(f.path.name != "latest" for f in found.side_files)


def test_metadata_off_is_names_sizes_and_mtimes_only(config: Path) -> None:
    found = discover(config, metadata=False)
    assert sorted(s.id for s in found.sessions) == sorted(ids())
    for session in found.sessions:
        assert session.title is None and session.cwd is None and session.tags == ()
        assert session.last_timestamp is None
        assert session.last_activity == datetime.fromtimestamp(session.mtime, tz=UTC)
    (third,) = found.by_id(ids()[2])
    assert len(third.legacy_agent_files) == 1  # still attached: it is read for its sessionId


def test_symlinks_out_of_the_config_dir_are_reported_not_followed(
    config: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "proj").mkdir(parents=True)
    (outside / "proj" / "s-out.jsonl").write_text('{"type":"user","cwd":"/x"}\n')
    (outside / "history.jsonl").write_text("{}\n")
    projects = config / "projects"
    (projects / "-linked").symlink_to(outside / "proj")
    some_project = next(p for p in projects.iterdir() if p.is_dir() and not p.is_symlink())
    (some_project / "s-link.jsonl").symlink_to(outside / "proj" / "s-out.jsonl")
    (config / "shell-snapshots" / "snap.sh").symlink_to(outside / "history.jsonl")
    inside_target = next(some_project.glob("*.jsonl"))
    (some_project / "s-inside.jsonl").symlink_to(inside_target)

    found = discover(config)
    names = {s.id for s in found.sessions}
    assert "s-out" not in names and "s-link" not in names
    assert "s-inside" in names  # a link that stays inside may be followed
    reported = {p.path.name for p in found.problems}
    assert {"-linked", "s-link.jsonl", "snap.sh"} <= reported
    assert all("outside" in p.reason for p in found.problems)
    assert all(f.path.name != "snap.sh" for f in found.side_files)


def test_history_symlinked_outside_is_skipped(config: Path, tmp_path: Path) -> None:
    target = tmp_path / "other-history.jsonl"
    target.write_text("{}\n")
    (config / "history.jsonl").unlink()
    (config / "history.jsonl").symlink_to(target)
    found = discover(config)
    assert all(f.kind is not SideFileKind.HISTORY for f in found.side_files)
    assert [p.path.name for p in found.problems] == ["history.jsonl"]


def test_missing_or_empty_config_dir(tmp_path: Path) -> None:
    found = discover(tmp_path / "nope")
    assert found.sessions == () and found.side_files == () and found.problems == ()
    (tmp_path / "projects" / "empty").mkdir(parents=True)
    (tmp_path / "projects" / "stray.jsonl").write_text("{}\n")  # not inside a project folder
    assert discover(tmp_path).sessions == ()


def test_empty_and_garbage_transcripts(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    (project / "empty.jsonl").write_bytes(b"")
    (project / "garbage.jsonl").write_bytes(b"\xff\xfe not json\n\n[1,2]\n")
    sessions = {s.id: s for s in discover(tmp_path).sessions}
    assert set(sessions) == {"empty", "garbage"}
    for session in sessions.values():
        assert session.title is None and session.first_timestamp is None and session.readable


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_transcript_is_listed_and_reported(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    path = project / "locked.jsonl"
    path.write_text('{"type":"user"}\n')
    path.chmod(0)
    found = discover(tmp_path)
    (session,) = found.sessions
    assert not session.readable
    assert [p.path for p in found.problems] == [path]


def write_lines(path: Path, *records: object, tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def test_find_session_by_id_prefix_and_title(config: Path) -> None:
    first, second, *_ = ids()
    assert find_session(config, first).id == first
    assert find_session(config, first[:8]).id == first
    assert find_session(config, "checkout-500").id == first
    assert find_session(config, "CHECKOUT-500").id == first
    assert find_session(config, "Rotate deploy key").id == second
    found = discover(config)
    assert find_session(config, "checkout-500", discovery=found).id == first
    with pytest.raises(UsageError, match="no session matches"):
        find_session(config, "nothing-like-this")
    with pytest.raises(UsageError):
        find_session(config, "  ")
    with pytest.raises(UsageError, match="an id prefix needs at least 4 characters"):
        find_session(config, first[:3])  # too short to be a prefix: said so


def test_find_session_ambiguous(tmp_path: Path) -> None:
    for name in ("aaaa1111", "aaaa2222"):
        project = tmp_path / "projects" / f"-{name}"
        project.mkdir(parents=True)
        write_lines(project / f"{name}.jsonl", {"type": "custom-title", "customTitle": "same"})
    with pytest.raises(UsageError) as prefix:
        find_session(tmp_path, "aaaa")
    assert prefix.value.hint is not None and "aaaa1111" in prefix.value.hint
    with pytest.raises(UsageError, match="2 sessions match title"):
        find_session(tmp_path, "same")


def test_repr_does_not_show_titles(config: Path) -> None:
    for session in discover(config).sessions:
        if session.title:
            assert session.title not in repr(session)


def test_unreadable_transcript_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    path = write_lines(project / "s.jsonl", {"type": "user"})

    def refuse(target: Path) -> None:
        raise PermissionError(13, "Permission denied", str(target))

    monkeypatch.setattr("scrubber.transcript.sessions.read_metadata", refuse)
    found = discover(tmp_path)
    (session,) = found.sessions
    assert not session.readable and session.size == path.stat().st_size
    (problem,) = found.problems
    assert problem.path == path and "Permission denied" in problem.reason


def test_bundles_read_the_todos_folder_once_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing many sessions' bundles lists todos/ and tasks/ once each, not once per session
    (20,000 sessions and 5,000 todo files made a warm audit take ten minutes), and a todo file
    added, removed or replaced afterwards is seen at once."""
    from scrubber.transcript import sessions as module

    config = tmp_path / "config"
    project = config / "projects" / "-p"
    project.mkdir(parents=True)
    (config / "todos").mkdir()
    (config / "tasks").mkdir()
    ids = [f"{n:08x}-0000-4000-8000-{n:012x}" for n in range(200)]
    for sid in ids:
        (project / f"{sid}.jsonl").write_text("{}\n")
        (config / "todos" / f"{sid}-agent-{sid}.json").write_text("[]")
    # A prefix of another id, and names that only start alike: none is the session's.
    (config / "todos" / f"{ids[3]}x.json").write_text("[]")
    (config / "tasks" / ids[5]).mkdir()
    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(path: Any) -> Any:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(module.os, "scandir", counting_scandir)
    # The folders were just written: a listing is kept only once they have settled.
    module._LISTINGS.clear()
    session_bundle(config, "-p", ids[0])
    session_bundle(config, "-p", ids[1])
    assert len(listed) == 4 and not module._LISTINGS
    monkeypatch.setattr(module, "_SETTLED_NS", -(10**12))
    listed.clear()
    bundles = {sid: session_bundle(config, "-p", sid) for sid in ids}
    assert sorted(listed) == sorted([str(config / "todos"), str(config / "tasks")])
    assert bundles[ids[3]] == (
        project / f"{ids[3]}.jsonl",
        config / "todos" / f"{ids[3]}-agent-{ids[3]}.json",
    )
    assert config / "tasks" / ids[5] in bundles[ids[5]]
    added = config / "todos" / f"{ids[7]}.json"
    before = (config / "todos").stat()
    added.write_text("[]")
    # A tool that sets the folder's mtime back (rsync -a, touch -r) changes its ctime.
    os.utime(config / "todos", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert added in session_bundle(config, "-p", ids[7])
    (config / "todos" / f"{ids[7]}-agent-{ids[7]}.json").unlink()
    assert all("agent" not in p.name for p in session_bundle(config, "-p", ids[7]))
