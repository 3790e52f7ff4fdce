"""What an audit is of and what it found: the files to scan, each file's findings, the report.
Nothing here holds a secret's value (see detection/finding.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scrubber.detection.finding import Finding

FINGERPRINT_SHOWN = 16  # hex characters of the keyed fingerprint shown in reports


@dataclass(frozen=True, slots=True)
class ScanTarget:
    """One file to scan, and what we know of it."""

    path: Path
    is_transcript: bool
    session_id: str | None = None
    project: str | None = None
    title: str | None = None  # raw; redacted before display
    role: str = "transcript"  # transcript, subagent, tool-result, file-history, history, …
    # The title is not read yet: the audit reads it when it scans the transcript, and takes
    # the one the scan cache has when it answers for it (audit_resume.py).
    title_pending: bool = False
    # history.jsonl in an audit of some sessions: only the lines of these sessions are its
    # findings and values (the others' lines are not what was asked for).
    only_sessions: frozenset[str] | None = None


@dataclass(slots=True)
class FileAudit:
    target: ScanTarget
    findings: list[Finding] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, why it is not JSON)
    size: int = 0
    mtime_ns: int = 0  # as the file was when the scan began (the audit cache is keyed on it)
    error: str | None = None  # set when the file could not be read at all
    title: str | None = None  # redacted
    # Line number by byte offset, of the lines with findings: where counting lines starts
    # when a copy of a found value is placed (audit_copies.LineNumbers).
    line_starts: dict[int, int] = field(default_factory=dict, repr=False)
    # The file's path and project folder as reports show them: redacted (a project folder is
    # named after the cwd, and a cwd may hold a token). None: not made yet (then: as they are).
    shown_path: str | None = None
    shown_project: str | None = None

    @property
    def path_shown(self) -> str:
        return str(self.target.path) if self.shown_path is None else self.shown_path

    @property
    def project_shown(self) -> str | None:
        return self.target.project if self.shown_project is None else self.shown_project


@dataclass(slots=True)
class AuditReport:
    files: list[FileAudit]
    warnings: list[str]

    @property
    def findings(self) -> Iterator[Finding]:
        for audit in self.files:
            yield from audit.findings

    @property
    def bytes_scanned(self) -> int:
        return sum(f.size for f in self.files)

    def totals(self) -> dict[str, object]:
        by_kind: dict[str, Counter[str]] = {}
        occurrences = 0
        distinct: set[str] = set()
        in_thinking = 0
        for finding in self.findings:
            occurrences += 1
            distinct.add(finding.fingerprint)
            by_kind.setdefault(finding.kind, Counter())[finding.fingerprint] += 1
            in_thinking += finding.in_thinking
        return {
            "occurrences": occurrences,
            "distinct": len(distinct),
            "in_thinking": in_thinking,
            "files_with_findings": sum(1 for f in self.files if f.findings),
            "by_kind": {
                kind: {"occurrences": sum(c.values()), "distinct": len(c)}
                for kind, c in sorted(by_kind.items())
            },
        }

    @property
    def has_findings(self) -> bool:
        return any(f.findings for f in self.files)


def project_name_shown(name: str, redact: Callable[[str], str]) -> str:
    """A project folder's name, redacted by `redact` but for its readable parts: the name is
    its cwd with every character but letters and digits made `-` (so it holds no space), and
    a detector may take a whole word for a token (`-home-u-ghp_…` is one word). Read word by
    word first (`-home-u-[REDACTED:…]`), then whole, for a token that holds dashes."""
    by_words = redact(name.replace("-", " ")).replace(" ", "-")
    return redact(by_words)
