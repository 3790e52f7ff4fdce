"""A session's free text and paths as an archive shows them where they are in clear.

Two places hold them in clear: the manifest of a redacted archive (a `.tar.gz` anyone can
open) and the sidecar beside every archive (the fields the policy's `clear_manifest_fields`
allows). In both, the title, the tags, the cwd and the project folder's name show what the
redaction of the session shows: what the detectors find in them, and every value found
elsewhere in the session (by value, issue 12), the project folder also in its folder form
(redaction/project_name.py). An encrypted archive's own manifest keeps them as they are: it
restores the session exactly.

The values come from the redaction of the bundle when the archive is redacted (`redact_bundle`:
one `redact_copies` run over every file of the bundle, so a value found in one file is
redacted in all of them, as `scrub redact` does), else from a scan of the session (its bundle
and its history lines, `session_values.py`), made only when the policy puts such a field in
clear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from scrubber.archive.manifest import SessionFacts
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.placeholder import make_placeholder
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.project_name import ProjectNames

if TYPE_CHECKING:
    from scrubber.detection.scan import SecretScanner
    from scrubber.transcript.sessions import SessionInfo

__all__ = ["TEXT_FIELDS", "SessionShown", "redact_bundle", "session_values"]

# The manifest fields that hold free text or a path (policy `clear_manifest_fields` values).
TEXT_FIELDS = frozenset({"title", "tags", "cwd", "project"})


class SessionShown:
    """Shows one session's texts with the detectors of `scanner` and the values of `known`
    (every value in it counts: it holds the values of this session only)."""

    def __init__(
        self, scanner: SecretScanner, known: KnownValues | None = None, engine: str = "auto"
    ) -> None:
        self._scanner = scanner
        self._known = known if known is not None else KnownValues()
        self._engine = engine
        self._index: ValueIndex | None = None  # of `known`, made on first use (compiled once)

    def __repr__(self) -> str:
        return f"SessionShown({self._known!r})"

    def text(self, text: str) -> str:
        """A title or a tag: what the detectors find in it and every copy of a known value,
        replaced at once (where two overlap, the wider one's placeholder stands for both, so
        no part of either stays in clear)."""
        return self._replaced(text, self._detected(text) + self._copies(text))

    def path(self, path: str) -> str:
        """A cwd: what the detectors find in it part by part, then in the whole path where no
        part's find is (as a project folder's name is read: a detector may take all of
        `/home/u/ghp_…` for one value, and the readable parts would go with it; a value that
        holds a `/` is found whole), and every copy of a known value."""
        parts = self._detected(path.replace("/", " "))
        wholes = [
            (start, end, placeholder)
            for start, end, placeholder in self._detected(path)
            if not any(start < high and low < end for low, high, _ in parts)
        ]
        return self._replaced(path, parts + wholes + self._copies(path))

    def _detected(self, text: str) -> list[tuple[int, int, str]]:
        return [(f.hit.start, f.hit.end, f.placeholder) for f in self._scanner.scan_text(text)]

    def _copies(self, text: str) -> list[tuple[int, int, str]]:
        if not len(self._known):
            return []
        if self._index is None:
            self._index = self._known.index(self._engine)
        index = self._index
        found = []
        for start, end, number in index.text_copies(text):
            info = index.info(number)
            found.append((start, end, make_placeholder(info.kind, info.fingerprint)))
        return found

    @staticmethod
    def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
        merged: list[tuple[int, int, str]] = []
        for start, end, placeholder in sorted(spans):
            if merged and start < merged[-1][1]:
                low, high, kept = merged[-1]
                if end - start > high - low:
                    kept = placeholder
                merged[-1] = (low, max(high, end), kept)
            else:
                merged.append((start, end, placeholder))
        for start, end, placeholder in reversed(merged):
            text = text[:start] + placeholder + text[end:]
        return text

    def project(self, project: str, cwd: str | None) -> str:
        """A project folder's name: its detectors' finds, the known values as themselves and
        in their folder form, and what the detectors find in the session's cwd."""
        names = ProjectNames(self._scanner, self._known)
        return names.shown(project, None, (cwd,) if cwd else ())

    def facts(self, facts: SessionFacts) -> SessionFacts:
        """`facts` with their title, tags, cwd and project as shown."""
        return replace(
            facts,
            project=self.project(facts.project, facts.cwd),
            cwd=None if facts.cwd is None else self.path(facts.cwd),
            title=None if facts.title is None else self.text(facts.title),
            tags=tuple(self.text(tag) for tag in facts.tags),
        )


def redact_bundle(
    pairs: Sequence[tuple[Path, Path]], scanner: SecretScanner, thinking: ThinkingMode
) -> KnownValues:
    """Redacted copies of a bundle's files, (source, target) pairs, in one run: a value found
    in any of them is redacted in all. Binary files are left out (their target is not
    written). Returns the values found."""
    from scrubber.usecases.redact import redact_copies

    known = KnownValues()
    redact_copies(pairs, scanner, thinking=thinking, known=known)
    return known


def session_values(session: SessionInfo, scanner: SecretScanner) -> KnownValues:
    """The values found in a session: its transcripts, side files and history lines."""
    from scrubber.usecases.session_values import gather_session_values, history_file

    known = KnownValues()
    gather_session_values(
        known,
        scanner,
        root=session.config_dir,
        project=session.project,
        session_id=session.id,
        history=history_file(session.config_dir),
    )
    return known
