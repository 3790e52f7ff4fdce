"""Project folder names as the reports show them, for commands that scan nothing themselves
(`scrub sessions`, listings of archives, pins and retention, the known-projects hint).

Claude Code names a folder after the session's cwd, and a cwd can hold a token
(redaction/project_name.py). The last audit knew the values of each session's side files too
and kept each folder as it showed it in `state/audit-cache.json`; these commands start from
that name and clean it again with the detectors and what they find in the session's cwds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.detection.placeholder import PLACEHOLDER_PREFIX, hides_only
from scrubber.redaction.project_name import ProjectNames
from scrubber.untrusted import MAX_STATE_BYTES, load_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.detection.scan import SecretScanner

AUDIT_CACHE_NAME = "audit-cache.json"  # state/ file read by `scrub sessions` (secrets column)


def audit_cache_file(home: Path) -> Path:
    return paths.state_dir(home) / AUDIT_CACHE_NAME


def read_audit_cache(home: Path) -> Mapping[str, Any]:
    """The sessions of the audit cache in `state/`: {"format": 1, "sessions": {id:
    {"transcript_size", "transcript_mtime_ns", "distinct", "project_shown", and with a title
    "title_fingerprint", "title_shown"}}}. Our own state,
    but possibly planted: a link, a FIFO, a huge or damaged file or anything not of that shape
    reads as empty (a cache: the next audit rebuilds it)."""
    try:
        value = load_json(audit_cache_file(home), MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict) or value.get("format") != 1:
        return {}
    sessions = value.get("sessions")
    return sessions if isinstance(sessions, dict) else {}


def audited_projects(cache: Mapping[str, Any]) -> dict[str, str]:
    """The project folder of each session as the last audit showed it, by session id (only
    printable names are taken)."""
    shown: dict[str, str] = {}
    for sid, item in cache.items():
        name = item.get("project_shown") if isinstance(item, dict) else None
        if isinstance(sid, str) and isinstance(name, str) and name and name.isprintable():
            shown[sid] = name
    return shown


def audited_titles(cache: Mapping[str, Any]) -> dict[str, str]:
    """Each title as the last audit showed it (with the values found anywhere in its session),
    by the keyed fingerprint of the title as it is: a title changed since reads as not known.
    Only printable forms that hold a placeholder are taken (planted text never shows more)."""
    shown: dict[str, str] = {}
    for item in cache.values():
        if not isinstance(item, dict):
            continue
        fingerprint, title = item.get("title_fingerprint"), item.get("title_shown")
        if (
            isinstance(fingerprint, str)
            and isinstance(title, str)
            and title.isprintable()
            and PLACEHOLDER_PREFIX in title
        ):
            shown[fingerprint] = title
    return shown


class ReportedNames:
    """Shows folder names as the last audit showed them, cleaned again (see the module)."""

    def __init__(self, scanner: SecretScanner, audited: Mapping[str, str]) -> None:
        self._names = ProjectNames(scanner)
        self._audited = audited

    @classmethod
    def of_home(cls, scanner: SecretScanner, home: Path) -> ReportedNames:
        return cls(scanner, audited_projects(read_audit_cache(home)))

    def __repr__(self) -> str:
        return f"ReportedNames({len(self._audited)} audited)"

    def shown(
        self, project: str, session_ids: Iterable[str | None] = (), cwds: Iterable[str] = ()
    ) -> str:
        """`project` as shown: `audited_name`, cleaned with the detectors and their finds in
        `cwds`."""
        return self._names.shown(self.audited_name(project, session_ids), None, cwds)

    def audited_name(self, project: str, session_ids: Iterable[str | None]) -> str:
        """The name the last audit showed for the last of `session_ids` it knows, else
        `project` (not cleaned again). Only a name that is `project` with parts hidden is
        taken: the cache may be planted, and what it says names folders of redacted copies."""
        name = project
        for session_id in session_ids:
            shown = self._audited.get(session_id) if session_id is not None else None
            if shown is not None and hides_only(shown, project):
                name = shown
        return name
