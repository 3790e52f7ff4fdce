"""What an audit scans: the sessions and side files under a config dir, or the files and
folders named on the command line, each as a ScanTarget with its session and role; and only
those changed since a time, when asked."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from scrubber.errors import InputError, UsageError
from scrubber.transcript import sessions as session_discovery
from scrubber.transcript.folder_listing import FolderListing
from scrubber.usecases.audit_report import ScanTarget
from scrubber.usecases.durations import parse_moment


def targets_in_config(
    config: Path,
    *,
    sessions: Sequence[str] = (),
    projects: Sequence[str] = (),
    include_side_files: bool = True,
    titles: bool = True,
    skipped: list[session_discovery.Problem] | None = None,
) -> list[ScanTarget]:
    """Every session (and its side files) and the global side files under a config dir; with
    `sessions` (ids, prefixes or titles) or `projects`, only the sessions named and in one of
    those projects, without global side files. A project that holds no session is refused.
    `titles=False` leaves the transcripts' titles to be read when they are scanned (the
    scan cache has the titles of those it answers for: reading every transcript's metadata
    cost more than the rest of an audit that changed nothing). `skipped` learns what discovery
    left alone (a symlink out of the config dir, a folder it cannot list)."""
    titles = titles or bool(sessions) or bool(projects)  # they match on metadata
    discovery = session_discovery.discover(config, metadata=titles)
    if skipped is not None:
        skipped.extend(discovery.problems)
    wanted = {session_discovery.find_session(config, s, discovery=discovery).id for s in sessions}
    for project in projects:
        if not any(in_project(info, project) for info in discovery.sessions):
            raise UsageError(f"no session matches --project {project}")
    targets: list[ScanTarget] = []
    listing = FolderListing()  # the side folders, listed once for all
    for info in discovery.sessions:
        if wanted and info.id not in wanted:
            continue
        if projects and not any(in_project(info, project) for project in projects):
            continue
        targets.append(
            ScanTarget(
                info.transcript,
                True,
                info.id,
                info.project,
                info.title,
                "transcript",
                title_pending=not titles,
            )
        )
        if include_side_files:
            targets.extend(_side_targets(info, listing))
    if include_side_files and (sessions or projects):
        # The chosen sessions' lines of history.jsonl (their prompts): only theirs.
        chosen = frozenset(t.session_id for t in targets if t.session_id is not None)
        for side in discovery.side_files:
            if side.kind is session_discovery.SideFileKind.HISTORY and chosen:
                history = _file_target(side.path, None, None, "history")
                targets.append(replace(history, only_sessions=chosen))
    if include_side_files and not sessions and not projects:
        # `debug/<id>.txt` is both a global side file and part of its session's bundle: scan
        # it once, or its findings count twice.
        seen = {target.path for target in targets}
        for side in discovery.side_files:
            if side.path not in seen:
                targets.append(_file_target(side.path, side.session_id, None, side.kind.value))
    return targets


def in_project(info: session_discovery.SessionInfo, project: str) -> bool:
    """A part of the project folder's name, or the session's exact working directory."""
    # An empty part would be in every name: it matches nothing (the CLI refuses it first).
    return bool(project.strip()) and (project in info.project or project == str(info.cwd or ""))


def _side_targets(
    info: session_discovery.SessionInfo, listing: FolderListing
) -> Iterator[ScanTarget]:
    for path in info.bundle_paths(listing):
        if path == info.transcript:
            continue
        for file in session_discovery.regular_files_at(path):
            yield _file_target(file, info.id, info.project, _role_of(file))


def _role_of(path: Path) -> str:
    parts = path.parts
    for role in ("subagents", "tool-results", "file-history", "shell-snapshots", "paste-cache",
                 "debug", "session-env", "todos", "tasks"):  # fmt: skip
        if role in parts:
            return "subagent" if role == "subagents" else role
    if path.name == "history.jsonl":
        return "history"
    if path.suffix == ".jsonl":
        # A transcript named on the command line, or a legacy `agent-*.jsonl` beside one.
        return "subagent" if path.name.startswith("agent-") else "transcript"
    return "side-file"


def _file_target(path: Path, session: str | None, project: str | None, role: str) -> ScanTarget:
    return ScanTarget(path, path.suffix == ".jsonl", session, project, None, role)


def targets_from_paths(given: Sequence[Path]) -> list[ScanTarget]:
    """Files and folders named on the command line."""
    targets: list[ScanTarget] = []
    for path in given:
        if not path.exists() and not path.is_symlink():
            raise InputError(f"{path}: no such file or folder")
        if path.is_dir():
            found = list(session_discovery.regular_files_at(path))
            targets.extend(_file_target(f, _session_of(f), None, _role_of(f)) for f in found)
        elif path.is_symlink():
            raise InputError(f"{path}: is a symbolic link; name the file it points to")
        else:
            targets.append(_file_target(path, _session_of(path), None, _role_of(path)))
    return targets


def _session_of(path: Path) -> str | None:
    return path.stem if path.suffix == ".jsonl" and path.name != "history.jsonl" else None


def parse_since(value: str, now: datetime) -> datetime:
    """`--since`, in the one duration syntax of every command (usecases/durations.py)."""
    return parse_moment(value, "--since", now)


def modified_since(target: ScanTarget, since: datetime) -> bool:
    """Whether the target's file changed at or after `since` (True when it cannot be told)."""
    try:
        return datetime.fromtimestamp(target.path.stat().st_mtime, UTC) >= since
    except OSError:
        return True
