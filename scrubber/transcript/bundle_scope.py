"""Whether the paths an archive (or a trash entry) names all belong to the one session it names.

The archive recipient is public by design (a server encrypts to a laptop's key), so anyone can
make an archive `scrub restore` decrypts. Issue 11: an archive carrying `settings.json` with a
SessionStart hook was restored, and Claude Code then ran the attacker's command. So restore and
undelete write only the session bundle of the session their manifest names (Contracts, "The
session bundle"), and refuse the whole archive, before writing anything, naming the first path
outside it.

There is one list of what a bundle holds: `transcript.sessions.session_bundle`, which lists the
bundle paths that exist under a config dir. It is asked here too, on a scratch tree that holds
only the tops of the paths named (empty files and folders, no content), so that the list used
to archive, delete and restore a session stays the same list. A path is accepted when it is one
of the bundle paths found there or lies below one. Legacy agent files
(`projects/<p>/agent-*.jsonl`) belong to a session by the `sessionId` inside them, so their
names are accepted here and their content is checked once it is staged (`check_legacy_agents`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from scrubber.errors import ScrubberError
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.sessions import session_bundle

__all__ = ["NotInBundleError", "check_in_bundle", "check_legacy_agents"]

_LEGACY_AGENT = "agent-"


class NotInBundleError(ScrubberError):
    """A path named by an archive or a trash entry is not part of its session's bundle (exit 3:
    the archive or trash entry is not one scrubber made)."""


def _refuse(path: str, session_id: str) -> NotInBundleError:
    return NotInBundleError(
        f"refusing {path[:200]!r}: not part of session {session_id}'s bundle; nothing was written",
        hint="an archive or trash entry holds only one session's files (its transcript, side "
        "folder, file-history, session-env, debug, todos and tasks); this one was not made by "
        "scrubber from that session",
    )


def _top(path: str) -> str | None:
    """The part of `path` that can be a bundle path: `projects/<p>/<name>` or `<folder>/<name>`."""
    parts = path.split("/")
    depth = 3 if parts[0] == "projects" else 2
    return "/".join(parts[:depth]) if len(parts) >= depth else None


def _is_legacy_agent(top: str, project: str) -> bool:
    folder, _, name = top.rpartition("/")
    return (
        folder == f"projects/{project}"
        and name.startswith(_LEGACY_AGENT)
        and (name.endswith(".jsonl"))
    )


def check_in_bundle(
    project: str,
    session_id: str,
    files: Collection[str],
    dirs: Collection[str],
    scratch: Path,
) -> list[str]:
    """Raise NotInBundleError for the first of `files` / `dirs` (relative POSIX paths, already
    checked safe) outside the session's bundle. `scratch` is an empty private folder this may
    fill with empty entries. Returns the legacy agent files among `files`, to be checked with
    `check_legacy_agents` once their content is at hand."""
    tops: dict[str, bool] = {}  # top -> is a folder
    for path in sorted({*files, *dirs}):
        top = _top(path)
        if top is None:
            raise _refuse(path, session_id)
        tops[top] = tops.get(top, False) or top != path or path in dirs
    legacy = [t for t, folder in tops.items() if not folder and _is_legacy_agent(t, project)]
    for top, folder in tops.items():
        if top in legacy:
            continue
        target = scratch / top
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if folder:
                target.mkdir(mode=0o700)
            else:
                target.touch(mode=0o600, exist_ok=False)
        except OSError:  # a name no file system takes (too long): not a bundle path either
            raise _refuse(top, session_id) from None
    found = {
        p.relative_to(scratch).as_posix() for p in session_bundle(scratch, project, session_id)
    }
    for path in sorted({*files, *dirs}):
        top = _top(path)
        if top not in found and top not in legacy:
            raise _refuse(path, session_id)
    return legacy


def check_legacy_agents(root: Path, session_id: str, legacy: Iterable[str]) -> None:
    """Each legacy agent file under `root` must name `session_id` as its session, as discovery
    requires before it counts the file as the session's."""
    for rel in legacy:
        try:
            owner = read_metadata(root / rel).session_id
        except OSError:
            owner = None
        if owner != session_id:
            raise _refuse(rel, session_id)
