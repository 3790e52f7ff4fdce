"""Copies of a found secret inside the same string: `token = 'V' | 'V'`, a key echoed back by
the command that printed it, a value quoted twice in one log line.

A detector reports the place where the label or the format vouches for a value; the same
value a few characters later stands there with nothing to vouch for it, and is the same secret
whatever its shape (a hex key under a `token` label stays a key where it is repeated). The
session-wide search (known_values.py) spreads values across strings and files and keeps out
the shapes whose far copies may be unrelated (hex digests, uuids); within one string no such
doubt arises, so every copy of 8 or more characters that stands as a token of its own (no
letter, digit or token character glued to it) is taken. An `=` just before a copy is the
assignment that names it (an environment variable set to it, a `?key=` query parameter, a
`--token=` flag), not part of a longer token: base64 pads only at the end, so `=` is glued to
a token on its right side only.
"""

from __future__ import annotations

from scrubber.detection.finding import Hit

_MIN_COPY = 8
# Distinct values looked for in one string: each is one `str.find` pass over it, so a string
# holding thousands of found values costs no more than this many passes (the session-wide
# search, one pass for all values, still finds the copies of the rest).
_MAX_VALUES = 64
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_GLUED_BEFORE = _TOKEN_CHARS - {"="}  # what before a copy makes it part of a longer token


def copies_in_same_string(text: str, hits: list[Hit]) -> list[Hit]:
    """Hits for the other occurrences, in `text`, of the values that `hits` cover."""
    if not hits:
        return []
    covered = sorted((h.start, h.end) for h in hits)
    kinds: dict[str, Hit] = {}
    for hit in hits:
        if hit.length >= _MIN_COPY:
            kinds.setdefault(text[hit.start : hit.end], hit)
    copies: list[Hit] = []
    for value, hit in list(kinds.items())[:_MAX_VALUES]:
        at = text.find(value)
        while at >= 0:
            end = at + len(value)
            if _stands_alone(text, at, end) and not _inside(covered, at, end):
                copies.append(Hit(at, end, hit.kind, hit.detector))
            at = text.find(value, end)
    return copies


def _stands_alone(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before not in _GLUED_BEFORE and after not in _TOKEN_CHARS


def _inside(covered: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps a span a detector already reported."""
    return any(s < end and start < e for s, e in covered)
