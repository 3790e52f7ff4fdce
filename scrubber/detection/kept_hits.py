"""Which hits a scan of one string reports: the last step both scanners share (scan.py's
SecretScanner and the live hooks' LiveScanner, which must give the same answers without
importing the rule catalog, so this module stays light).

Copies of a found value in the same string join the hits, overlaps are resolved, and a blank
value, a finding on a line that carries the allowlist pragma, or a value the allowlist allows
is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from scrubber.detection.finding import Hit, resolve_overlaps
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.string_copies import copies_in_same_string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.policy.model import Allowlist

# detect-secrets' inline marker for a known non-secret (a test value, a documented example):
# honoured on the line where a finding starts, as detect-secrets and its users expect.
ALLOWLIST_PRAGMA = "pragma: allowlist secret"


def kept_hits(
    text: str,
    hits: Sequence[Hit],
    fingerprinter: Fingerprinter,
    allowlist: Allowlist | None,
) -> Iterator[tuple[Hit, str, str]]:
    """Each reported hit of `text` with its value and keyed fingerprint, in order."""
    pragma = ALLOWLIST_PRAGMA in text
    for hit in resolve_overlaps([*hits, *copies_in_same_string(text, list(hits))]):
        value = text[hit.start : hit.end]
        if not value.strip():
            continue
        if pragma and ALLOWLIST_PRAGMA in _line_at(text, hit.start):
            continue
        fingerprint = fingerprinter.fingerprint(value)
        if allowlist is not None and allowlist.allows(value, fingerprint):
            continue
        yield hit, value, fingerprint


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : len(text) if end < 0 else end]
