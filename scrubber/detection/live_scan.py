"""The live hooks' scanner: the same answers as `SecretScanner.scan_text` on text of unknown
origin (scan.py), with only the detectors the prescan (live_prescan.py) could not rule out
imported and run.

Why not SecretScanner itself: importing scan.py imports the whole rule catalog and the
prefilter (about 150 ms in a fresh process, most of a hook call), and building its gate index
over the live set costs as much again; the prescan has already said which one or two detectors
can match. What SecretScanner does for a string of unknown origin is kept step for step:
placeholders masked first, detectors in the live set's order, copies of a found value in the
same string, overlaps resolved, the allowlist pragma, fingerprints and the allowlist.
tests/unit/detection/test_live_scan.py compares the two on every fake secret and decoy.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrubber.detection.detector import PLAIN, Detector
from scrubber.detection.finding import Hit
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.kept_hits import kept_hits
from scrubber.detection.live_prescan import Prescan
from scrubber.detection.placeholder import (
    PLACEHOLDER_PREFIX,
    make_placeholder,
    mask_spans,
    placeholder_spans,
)
from scrubber.detection.rules.base import PatternRule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.policy.model import Allowlist

_RULES_PACKAGE = "scrubber.detection.rules."
# As in scan.py: strings shorter than this hold no secret.
_MIN_SECRET_LEN = 6
# Texts up to this long are read whole (a region would save nothing).
_WHOLE_TEXT = 4096


class StalePrescan(Exception):
    """The compiled prescan names a detector the installed code does not have where it says."""


@dataclass(frozen=True, slots=True)
class LiveFound:
    """A hit with its keyed fingerprint; never the value."""

    hit: Hit
    fingerprint: str

    @property
    def placeholder(self) -> str:
        return make_placeholder(self.hit.kind, self.fingerprint)


def load_detector(prescan: Prescan, i: int) -> Detector:
    """Detector `i` of the prescan, from its own rule module only; StalePrescan when that
    module's RULES do not hold it there."""
    entry = prescan.entries[i]
    try:
        module = importlib.import_module(_RULES_PACKAGE + entry.module)
    except ImportError:
        raise StalePrescan(f"no rule module {entry.module!r}") from None
    rules = getattr(module, "RULES", ())
    if not isinstance(rules, tuple) or entry.index >= len(rules):
        raise StalePrescan(f"{entry.module}.RULES has no rule {entry.index}")
    detector: Detector = rules[entry.index]
    if getattr(detector, "name", None) != entry.name or detector.context_only:
        raise StalePrescan(f"{entry.module}.RULES[{entry.index}] is not {entry.name!r}")
    return detector


class LiveScanner:
    """Finds secrets in strings with the prescan's candidates only. Holds no secret values."""

    def __init__(
        self, prescan: Prescan, fingerprinter: Fingerprinter, allowlist: Allowlist | None = None
    ) -> None:
        self._prescan = prescan
        self._fingerprinter = fingerprinter
        self._allowlist = allowlist
        self._loaded: dict[int, Detector] = {}

    def detector(self, i: int) -> Detector:
        found = self._loaded.get(i)
        if found is None:
            found = self._loaded[i] = load_detector(self._prescan, i)
        return found

    def scan_text(self, text: str) -> tuple[LiveFound, ...]:
        """Secrets in one string, as exact non-overlapping spans with fingerprints."""
        if len(text) < _MIN_SECRET_LEN:
            return ()
        masked: list[tuple[int, int]] = []
        if PLACEHOLDER_PREFIX in text:
            masked = placeholder_spans(text)
            text = mask_spans(text, masked)
        hits: list[Hit] = []
        for i in sorted(self._prescan.candidates(text)):
            hits.extend(self._find(i, text))
        if masked:
            hits = [h for h in hits if not any(s < h.end and h.start < e for s, e in masked)]
        return self._finish(text, hits) if hits else ()

    def _find(self, i: int, text: str) -> Iterable[Hit]:
        """Detector `i`'s hits in `text`; a pattern rule reads only the region where its
        matches can be (Prescan.region: the same matches as in the whole text)."""
        detector = self.detector(i)
        region = self._prescan.region(text, i) if len(text) > _WHOLE_TEXT else None
        plain_rule = isinstance(detector, PatternRule) and type(detector).find is PatternRule.find
        if region is None or not plain_rule:
            return detector.find(text, PLAIN)
        start, end = region
        return (
            Hit(h.start + start, h.end + start, h.kind, h.detector)
            for h in detector.find(text[start:end], PLAIN)
        )

    def _finish(self, text: str, hits: Sequence[Hit]) -> tuple[LiveFound, ...]:
        kept = kept_hits(text, hits, self._fingerprinter, self._allowlist)
        return tuple(LiveFound(hit, fingerprint) for hit, _value, fingerprint in kept)
