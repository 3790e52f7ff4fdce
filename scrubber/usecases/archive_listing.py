"""What `scrub archives list` shows: the archives under a folder, each named by its project
folder and session, the project folder as every report shows it.

An archive sits at `<archives>/<project>/<session-id>/…`: the project folder is named after
the session's cwd, and a cwd can hold a token (redaction/project_name.py). Nothing is
decrypted here, so what the detectors find in the cwd stands for the values known: the cwd of
the live session when it is still in the config dir, and the one the sidecar keeps in clear
when the policy lets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scrubber.archive.layout import ArchiveEntry, list_archives
from scrubber.detection.placeholder import PLACEHOLDER_PREFIX, hides_only
from scrubber.detection.scan import SecretScanner
from scrubber.redaction.project_name import path_shown
from scrubber.usecases.reported_projects import ReportedNames
from scrubber.usecases.shown_names import live_cwds


@dataclass(frozen=True, slots=True)
class ArchiveListing:
    root: Path
    entries: tuple[ArchiveEntry, ...]
    # Each archive's project folder name as shown, by its (project, session id).
    projects_shown: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def project(self, entry: ArchiveEntry) -> str:
        return self.projects_shown.get((entry.project, entry.session_id), entry.project)

    def path(self, entry: ArchiveEntry) -> str:
        return path_shown(entry.path, {entry.project: self.project(entry)})


def list_archives_shown(
    root: Path,
    *,
    config_dir: Path,
    home: Path,
    scanner: SecretScanner,
    sessions: Sequence[str] = (),
) -> ArchiveListing:
    """The archives under `root` (of the sessions whose ids start with one of `sessions`,
    when given), with their project folders shown: as the last audit showed the session's
    (it knew the values of its side files), cleaned again with what the detectors find."""
    entries = list_archives(root)
    if sessions:
        entries = [e for e in entries if e.session_id.startswith(tuple(sessions))]
    cwds = live_cwds(config_dir, {e.project for e in entries})
    for entry in entries:
        kept = entry.sidecar.manifest.get("cwd") if entry.sidecar is not None else None
        if isinstance(kept, str) and kept:
            cwds.setdefault(entry.project, []).append(kept)
    names = ReportedNames.of_home(scanner, home)
    shown = {
        (e.project, e.session_id): names.shown(e.project, (e.session_id,), cwds.get(e.project, ()))
        for e in entries
    }
    return ArchiveListing(root, tuple(entries), shown)


def archive_at_shown_path(given: Path) -> Path | None:
    """The archive that `given`, a path as reports print it, names: `archives list` and
    `scrub archive` show `<archives>/<project>/<session>/<file>` with the project folder
    redacted (its name can hold a token), so a user who pastes that path names a folder that
    is not on disk. The real folder is the one whose name the shown one hides parts of and
    only that, holding that session's file; None when there is no such single archive (or the
    path shows nothing redacted)."""
    if PLACEHOLDER_PREFIX not in given.name and PLACEHOLDER_PREFIX in str(given.parent.parent):
        session = given.parent
        shown_project, root = session.parent.name, session.parent.parent
        try:
            folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
        except OSError:
            return None
        found = [
            folder / session.name / given.name
            for folder in folders
            if hides_only(shown_project, folder.name)
            and (folder / session.name / given.name).is_file()
        ]
        if len(found) == 1:
            return found[0]
    return None
