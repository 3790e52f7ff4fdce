"""Find Claude Code sessions and their side files under a config directory.

Layout (../shared/reference/claude-code.md): every top-level `projects/<project>/<id>.jsonl` is
a transcript (Claude Code's own sweep treats every one of them as such, whatever its name); its
side folder `projects/<project>/<id>/` holds `subagents/`, `tool-results/` and `workflows/`;
`file-history/<id>/`, `session-env/<id>/`, `debug/<id>.txt`, `todos/<id>-agent-<agent>.json`
and `tasks/<id>/` belong to it too. Older releases wrote subagent transcripts as
`projects/<project>/agent-<agent>.jsonl`; such a file whose records name another session in
the same folder is listed with that session instead of as a session of its own. Global files:
`history.jsonl`, `shell-snapshots/`, `paste-cache/`, `debug/`.

What a transcript says about itself (cwd, titles, tags, timestamps) is read by `metadata.py`.

Symlinks are never followed out of the config directory: such a link is reported in
`Discovery.problems` and left alone. Paths are never resolved: a symlink inside a bundle is
listed as the link itself, so whoever deletes or archives the bundle acts on the link.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from scrubber.errors import UsageError
from scrubber.paths import file_history_dir, projects_dir
from scrubber.transcript.folder_listing import FolderListing
from scrubber.transcript.metadata import TranscriptMetadata, read_metadata

_LEGACY_AGENT_PREFIX = "agent-"
_MIN_PREFIX = 4


class SideFileKind(StrEnum):
    HISTORY = "history"
    SHELL_SNAPSHOT = "shell-snapshot"
    PASTE_CACHE = "paste-cache"
    DEBUG = "debug"


_SIDE_FOLDERS = (
    ("shell-snapshots", SideFileKind.SHELL_SNAPSHOT),
    ("paste-cache", SideFileKind.PASTE_CACHE),
    ("debug", SideFileKind.DEBUG),
)


@dataclass(frozen=True, slots=True)
class SideFile:
    """A file outside any transcript that can hold session data (prompts, env dumps)."""

    kind: SideFileKind
    path: Path
    session_id: str | None = None  # for `debug/<id>.txt` of a known session


@dataclass(frozen=True, slots=True)
class Problem:
    """Something discovery skipped and why: a symlink out of the config dir, an unreadable
    folder or file."""

    path: Path
    reason: str


def _names_session(name: str, session_id: str) -> bool:
    """Whether a todos/tasks entry belongs to the session: `<id>`, `<id>.json`,
    `<id>-agent-<agent>.json`."""
    return name == session_id or name.startswith((session_id + "-", session_id + "."))


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def session_bundle(
    config_dir: Path,
    project: str,
    session_id: str,
    *,
    extra: tuple[Path, ...] = (),
    listing: FolderListing | None = None,
) -> tuple[Path, ...]:
    """THE list of paths that make up a session (the Contracts' "session bundle"), for
    archive, restore, retention and trash alike: the transcript, its side folder,
    `file-history/<id>/`, `session-env/<id>/`, `debug/<id>.txt`, its todos and tasks, plus
    `extra` (legacy `agent-*.jsonl` files of the session). Only paths that exist are listed;
    none is resolved (a symlink is listed as the link). `listing`: the folders as listed once
    for many sessions (else each path is tried)."""
    # Tried as strings, made paths only when they exist: most sessions have few of these, and
    # with 20,000 sessions building every candidate as a Path took most of a warm audit.
    project_dir = f"{projects_dir(config_dir)}/{project}"
    root = os.fspath(config_dir)
    candidates = [
        (project_dir, f"{session_id}.jsonl"),
        (project_dir, session_id),
        (os.fspath(file_history_dir(config_dir)), session_id),
        (f"{root}/session-env", session_id),
        (f"{root}/debug", f"{session_id}.txt"),
    ]
    if listing is None:
        found = [Path(f"{d}/{n}") for d, n in candidates if os.path.lexists(f"{d}/{n}")]
    else:
        found = [Path(f"{d}/{n}") for d, n in candidates if listing.holds(d, n)]
    for folder in ("todos", "tasks"):
        # None (no listing, or a folder not to be listed and entered): asked on its own.
        names = listing.starting_with(f"{root}/{folder}", session_id) if listing else None
        if names is None:
            found.extend(_entries_naming(config_dir / folder, session_id))
        else:
            found.extend(
                Path(f"{root}/{folder}/{n}") for n in names if _names_session(n, session_id)
            )
    found.extend(path for path in extra if _lexists(path))
    return tuple(found)


# The sorted entry names of the todos/ and tasks/ folders, by folder, with the folder's state
# when listed: listed again once that changed. Every command that lists many sessions' bundles
# asked for them once per session; with 20,000 sessions and 5,000 todo files a warm audit took
# ten minutes listing and sorting the same folder. The state is the folder's mtime and ctime
# (a tool that sets the mtime back, `rsync -a`, `touch -r`, changes the ctime; so does a chmod),
# inode and device; a listing made within `_SETTLED_NS` of the folder's last change is not
# kept (a file added in the same clock tick would not change them: git's "racy" rule).
_LISTINGS: dict[Path, tuple[tuple[int, int, int, int], list[str]]] = {}
_LISTINGS_KEPT = 16
_SETTLED_NS = 2_000_000_000  # FAT's timestamps are 2 s apart, ext4's before Linux 6.13 ~4 ms


def _entries_naming(folder: Path, session_id: str) -> list[Path]:
    """The entries of `folder` that name the session (`_names_session`), in name order."""
    try:
        st = folder.stat()
    except OSError:
        return []
    state = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    listed = _LISTINGS.get(folder)
    if listed is None or listed[0] != state:
        try:
            names = sorted(e.name for e in os.scandir(folder))
        except OSError:
            return []
        listed = (state, names)
        _LISTINGS.pop(folder, None)
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _SETTLED_NS:
            if len(_LISTINGS) >= _LISTINGS_KEPT:
                _LISTINGS.clear()
            _LISTINGS[folder] = listed
    names = listed[1]
    found = []
    # Every name that names the session starts with its id: they sort together.
    for name in names[bisect.bisect_left(names, session_id) :]:
        if not name.startswith(session_id):
            break
        if _names_session(name, session_id):
            found.append(folder / name)
    return found


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session as found on disk. `config_dir` is kept so that `bundle_paths()` can list
    the session's files where they are now."""

    id: str
    project: str
    transcript: Path
    config_dir: Path = field(repr=False)
    size: int
    mtime: float
    cwd: str | None = None
    title: str | None = field(default=None, repr=False)  # may hold a secret: never print it raw
    custom_title: str | None = field(default=None, repr=False)
    tags: tuple[str, ...] = field(default=(), repr=False)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None
    legacy_agent_files: tuple[Path, ...] = ()
    readable: bool = True  # False when the transcript could not be read (metadata unknown)

    @property
    def side_dir(self) -> Path:
        return self.transcript.parent / self.id

    @property
    def last_activity(self) -> datetime:
        """The newest timestamp inside, else the file's mtime (not clamped to now)."""
        return self.last_timestamp or datetime.fromtimestamp(self.mtime, tz=UTC)

    def subagent_transcripts(self) -> tuple[Path, ...]:
        """Subagent transcripts: `<side dir>/subagents/*.jsonl`, then legacy agent files."""
        folder = self.side_dir / "subagents"
        try:
            found = sorted(
                folder / e.name
                for e in os.scandir(folder)
                if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)
            )
        except OSError:
            found = []
        return (*found, *self.legacy_agent_files)

    def side_files(self) -> tuple[Path, ...]:
        """Every regular file under the side folder (subagents, .meta.json, tool-results,
        workflows), symlinks not followed."""
        return tuple(sorted(regular_files_at(self.side_dir)))

    def bundle_paths(self, listing: FolderListing | None = None) -> tuple[Path, ...]:
        return session_bundle(
            self.config_dir, self.project, self.id, extra=self.legacy_agent_files, listing=listing
        )


@dataclass(frozen=True, slots=True)
class Discovery:
    config_dir: Path
    sessions: tuple[SessionInfo, ...]
    side_files: tuple[SideFile, ...]
    problems: tuple[Problem, ...] = ()

    def by_id(self, session_id: str) -> tuple[SessionInfo, ...]:
        return tuple(s for s in self.sessions if s.id == session_id)


def regular_files_at(path: Path) -> Iterator[Path]:
    """`path` itself when it is a regular file, else the regular files below it (folders and
    files in sorted order); never a symlink, never through one (a planted link must not pull
    another folder's files into a session)."""
    if path.is_symlink():
        return
    if path.is_file():
        yield path
        return
    if not path.is_dir():
        return
    # By hand rather than os.walk, which recurses: a planted folder a thousand levels deep
    # must not end the run in a RecursionError. Same order: a folder's files, then its
    # subfolders one by one, each in name order.
    pending: list[Iterator[Path]] = [iter([path])]
    while pending:
        folder = next(pending[-1], None)
        if folder is None:
            pending.pop()
            continue
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)
            except OSError:
                continue
        pending.append(iter(subfolders))


class _Guard:
    """Decides whether a path may be followed: not a symlink, or one that stays inside."""

    def __init__(self, config_dir: Path) -> None:
        self.root = config_dir.resolve()
        self.problems: list[Problem] = []

    def allows(self, path: Path, *, is_link: bool | None = None) -> bool:
        """`is_link`: whether it is a link, when a folder listing already told."""
        if not (path.is_symlink() if is_link is None else is_link):
            return True
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            self.problems.append(Problem(path, "broken or looping symlink, not followed"))
            return False
        if target == self.root or target.is_relative_to(self.root):
            return True
        self.problems.append(Problem(path, "symlink pointing outside the config dir, not followed"))
        return False


def _session_info(
    config_dir: Path,
    project: str,
    path: Path,
    meta: TranscriptMetadata | None,
    *,
    readable: bool,
    legacy: tuple[Path, ...] = (),
) -> SessionInfo | None:
    try:
        st = path.stat()
    except OSError:
        return None
    meta = meta or TranscriptMetadata()
    return SessionInfo(
        id=path.stem,
        project=project,
        transcript=path,
        config_dir=config_dir,
        size=st.st_size,
        mtime=st.st_mtime,
        **meta.session_fields(),
        legacy_agent_files=legacy,
        readable=readable,
    )


def _discover_project(
    config_dir: Path, project_dir: Path, guard: _Guard, *, metadata: bool
) -> list[SessionInfo]:
    try:
        entries = sorted(os.scandir(project_dir), key=lambda e: e.name)
    except OSError as exc:
        guard.problems.append(Problem(project_dir, f"cannot list: {exc.strerror}"))
        return []
    files: list[tuple[Path, TranscriptMetadata | None, bool]] = []
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        path = project_dir / entry.name
        try:
            is_link = entry.is_symlink()  # told by the listing: no system call of its own
        except OSError:
            is_link = None
        if not guard.allows(path, is_link=is_link):
            continue
        try:
            if not entry.is_file():
                continue
        except OSError:
            continue
        meta: TranscriptMetadata | None = None
        readable = True
        # Legacy agent files are read even without `metadata`: only the sessionId inside says
        # which session they belong to.
        if metadata or entry.name.startswith(_LEGACY_AGENT_PREFIX):
            try:
                meta = read_metadata(path)
            except OSError as exc:
                readable = False
                guard.problems.append(Problem(path, f"cannot read: {exc.strerror}"))
        files.append((path, meta, readable))

    stems = {path.stem for path, _, _ in files}
    legacy: dict[str, list[Path]] = {}
    own: list[tuple[Path, TranscriptMetadata | None, bool]] = []
    for path, meta, readable in files:
        parent = meta.session_id if meta is not None else None
        if (
            path.name.startswith(_LEGACY_AGENT_PREFIX)
            and parent is not None
            and parent != path.stem
            and parent in stems
        ):
            legacy.setdefault(parent, []).append(path)
        else:
            own.append((path, meta if metadata else None, readable))

    sessions: list[SessionInfo] = []
    for path, meta, readable in own:
        info = _session_info(
            config_dir,
            project_dir.name,
            path,
            meta,
            readable=readable,
            legacy=tuple(legacy.get(path.stem, ())),
        )
        if info is not None:
            sessions.append(info)
    return sessions


def _discover_side_files(config_dir: Path, guard: _Guard, session_ids: set[str]) -> list[SideFile]:
    found: list[SideFile] = []
    history = config_dir / "history.jsonl"
    if _lexists(history) and guard.allows(history) and history.is_file():
        found.append(SideFile(SideFileKind.HISTORY, history))
    for folder_name, kind in _SIDE_FOLDERS:
        folder = config_dir / folder_name
        if not _lexists(folder) or not guard.allows(folder) or not folder.is_dir():
            continue
        for path in sorted(regular_files_at(folder)):
            owner = None
            if kind is SideFileKind.DEBUG and path.parent == folder:
                stem = path.name.removesuffix(".txt")
                owner = stem if stem in session_ids else None
            found.append(SideFile(kind, path, owner))
        # Links inside these folders (debug/latest) are not walked; report those leaving.
        for dirpath, dirs, files in os.walk(folder, followlinks=False):
            for name in (*dirs, *files):
                link = Path(dirpath) / name
                if link.is_symlink():
                    guard.allows(link)
    return found


def discover(config_dir: Path, *, metadata: bool = True) -> Discovery:
    """Every session and global side file under a config directory.

    With `metadata=False` only names, sizes and mtimes are read (cwd, titles, tags and
    timestamps are left empty), for callers that need speed over 20,000 sessions.
    """
    guard = _Guard(config_dir)
    sessions: list[SessionInfo] = []
    root = projects_dir(config_dir)
    try:
        projects = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        projects = []
    except OSError as exc:
        guard.problems.append(Problem(root, f"cannot list: {exc.strerror}"))
        projects = []
    for entry in projects:
        project_dir = root / entry.name
        if not guard.allows(project_dir) or not project_dir.is_dir():
            continue
        sessions.extend(_discover_project(config_dir, project_dir, guard, metadata=metadata))
    side_files = _discover_side_files(config_dir, guard, {s.id for s in sessions})
    return Discovery(
        config_dir=config_dir,
        sessions=tuple(sessions),
        side_files=tuple(side_files),
        problems=tuple(guard.problems),
    )


def _one(matches: list[SessionInfo], query: str, what: str) -> SessionInfo | None:
    if not matches:
        return None
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(f"{s.project}/{s.id}" for s in matches[:5])
    more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
    raise UsageError(
        f"{len(matches)} sessions match {what} {query!r}",
        hint=f"name one by its full id: {listed}{more}",
    )


def find_session(
    config_dir: Path, query: str, *, discovery: Discovery | None = None
) -> SessionInfo:
    """The session a user named: by full id, by an id prefix (at least 4 characters), or by
    its title (the custom title first, exact, then ignoring case). A `discovery` passed in
    must have been made with metadata for titles to match.

    Raises UsageError when nothing or more than one session matches.
    """
    query = query.strip()
    if not query:
        raise UsageError("empty session name", hint="give a session id, id prefix or title")
    found = discovery or discover(config_dir, metadata=False)
    by_id = _one([s for s in found.sessions if s.id == query], query, "id")
    if by_id is not None:
        return by_id
    if len(query) >= _MIN_PREFIX:
        by_prefix = _one([s for s in found.sessions if s.id.startswith(query)], query, "prefix")
        if by_prefix is not None:
            return by_prefix
    if discovery is None:
        found = discover(config_dir, metadata=True)
    folded = query.casefold()
    for fold in (False, True):
        for custom_only in (True, False):
            matches = []
            for session in found.sessions:
                title = session.custom_title if custom_only else session.title
                if title is not None and (title.casefold() == folded if fold else title == query):
                    matches.append(session)
            hit = _one(matches, query, "title")
            if hit is not None:
                return hit
    if len(query) < _MIN_PREFIX and any(s.id.startswith(query) for s in found.sessions):
        raise UsageError(
            f"no session matches {query!r}: an id prefix needs at least {_MIN_PREFIX} characters",
            hint="`scrub sessions` lists sessions with their ids and titles",
        )
    raise UsageError(
        f"no session matches {query!r}",
        hint="`scrub sessions` lists sessions with their ids and titles",
    )
