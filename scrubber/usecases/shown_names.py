"""Session titles and project folder names as every report shows them.

A title is text from a transcript, and Claude Code names a project folder after the session's
cwd: either may hold a token. Every command that shows one (sessions, retention, pin, redact,
doctor, the SessionEnd worker) shows it through these, which only display: the paths acted on
stay the real ones. Kept apart from the retention use case so that a command which only shows
names (`scrub redact`) does not import the retention and archive machinery.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from scrubber.detection.placeholder import hides_only
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.sessions import SessionInfo, discover
from scrubber.usecases.reported_projects import ReportedNames, audited_titles, read_audit_cache

TITLE_WIDTH = 40


class Titles:
    """Titles pass through the secret scanner before they are shown (Contracts), and lose any
    control characters (a title is text an attacker may have put in a transcript)."""

    def __init__(self, policy: Policy, home: Path) -> None:
        self._policy = policy
        self._home = home
        self._scanner: SecretScanner | None = None
        self._audited: dict[str, str] = {}

    def show(self, title: str | None, width: int | None = TITLE_WIDTH) -> str:
        """`title` cleaned with the detectors, starting from the form the last audit showed
        when it audited that very title: the audit also knew the values found anywhere in the
        session (a password read from a `.env` and typed again as the title), which no
        detector sees in the title alone."""
        if not title:
            return ""
        scanner = self._scanner_built()
        shown = self._audited.get(scanner.fingerprint(title)) if self._audited else None
        text = scanner.redact_text(shown if shown and hides_only(shown, title) else title)
        text = "".join(c if c.isprintable() else " " for c in text)
        if width is not None and len(text) > width:
            text = text[: width - 1] + "…"
        return text

    def _scanner_built(self) -> SecretScanner:
        if self._scanner is None:
            from scrubber.detection.registry import build_scanner

            self._scanner = build_scanner(self._policy, self._home)
            self._audited = audited_titles(read_audit_cache(self._home))
        return self._scanner


class FolderNames:
    """Project folder names as every report shows them (redaction/project_name.py): Claude
    Code names a folder after the session's cwd, and a cwd may hold a token. Built from the
    sessions (under the config dir and in the trash) whose folders a command may name; a name
    is worked out with the detectors, what they find in those sessions' cwds, and the name the
    last audit showed. Display only: the paths acted on stay the real ones."""

    def __init__(
        self,
        policy: Policy,
        home: Path,
        env: Mapping[str, str],
        scanner: SecretScanner | None = None,
    ) -> None:
        self._policy, self._home, self._env = policy, home, env
        self._scanner = scanner  # None: built from the policy when first needed
        self._cwds: dict[str, list[str]] = {}
        self._audited_by_project: dict[str, str] = {}
        self._shown: dict[str, str] | None = None
        self._names_made: ReportedNames | None = None

    def __repr__(self) -> str:
        return f"FolderNames({len(self._cwds)} folders)"

    def add(self, project: str | None, session_id: str, cwd: str | None) -> None:
        if not project:
            return
        self._shown = None
        cwds = self._cwds.setdefault(project, [])
        if cwd and cwd not in cwds:
            cwds.append(cwd)
        self._audited_by_project.setdefault(project, session_id)

    def _names(self) -> ReportedNames:
        if self._names_made is None:
            from scrubber.detection.registry import build_scanner

            scanner = self._scanner or build_scanner(self._policy, self._home, self._env)
            self._names_made = ReportedNames.of_home(scanner, self._home)
        return self._names_made

    def _table(self) -> dict[str, str]:
        """Each folder name that shows otherwise, raw -> shown (longest first, so that a name
        holding another is replaced whole)."""
        if self._shown is None:
            names = self._names()
            table: dict[str, str] = {}
            for project, cwds in self._cwds.items():
                shown = names.shown(project, (self._audited_by_project[project],), cwds)
                if shown != project:
                    table[project] = shown
            self._shown = dict(sorted(table.items(), key=lambda kv: -len(kv[0])))
        return self._shown

    def project(self, project: str | None, session_id: str | None = None) -> str | None:
        """A project folder's name as shown; one of no session known here (a pin of a gone
        session) with the detectors and the name the last audit showed for `session_id`."""
        if project is None:
            return None
        if project in self._cwds:
            return self._table().get(project, project)
        names = self._names()
        return names.shown(self.text(names.audited_name(project, (session_id,))))

    def text(self, text: str) -> str:
        """`text` (a subject `project/id`, a path, a message) with every known folder name in it
        as shown."""
        for raw, shown in self._table().items():
            text = text.replace(raw, shown)
        return text


def folder_names(
    policy: Policy, home: Path, env: Mapping[str, str], sessions: Iterable[SessionInfo] = ()
) -> FolderNames:
    """FolderNames for `sessions` and every session in the trash."""
    # Here, not at the top: the trash module brings the retention rules with it, which a
    # command that only shows names (scrub redact) does not need.
    from scrubber.retention.trash import list_trash

    names = FolderNames(policy, home, env)
    for info in sessions:
        names.add(info.project, info.id, info.cwd)
    trash = list_trash(home)
    for _slot, manifest in (*trash.complete, *trash.incomplete):
        names.add(manifest.project, manifest.session_id, manifest.cwd)
    return names


def live_cwds(config_dir: Path, projects: Iterable[str]) -> dict[str, list[str]]:
    """The cwds of the config dir's sessions in `projects`, read from their transcripts."""
    wanted = set(projects)
    cwds: dict[str, list[str]] = {}
    if not wanted or not config_dir.is_dir():
        return cwds
    for info in discover(config_dir, metadata=False).sessions:
        if info.project in wanted:
            with contextlib.suppress(OSError):
                cwd = read_metadata(info.transcript).cwd
                if cwd:
                    cwds.setdefault(info.project, []).append(cwd)
    return cwds
