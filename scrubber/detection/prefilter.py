"""Which of many literals occur in a piece of text, fast (the only hyperscan import).

The scanner asks this of every raw line, so it sets the floor of a scan's speed. Intel's
hyperscan answers at several hundred MB/s (all literals in one database, caseless); where its
wheel is not installed, a pure-Python search gives the same answers, more slowly. Both are
tested to agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from scrubber.errors import UsageError


class LiteralSet(Protocol):
    def present(self, data: bytes) -> set[int]:
        """Indexes of the literals that occur in `data`, ignoring ASCII case."""
        ...


class PythonLiteralSet:
    """One substring test per literal on the lower-cased data. Each test is a C-speed search, so
    the cost is predictable whatever the data holds (a regex alternation that resumes after every
    match crawls on lines full of a short literal such as ":")."""

    def __init__(self, literals: Sequence[bytes]) -> None:
        self._literals = [(i, lit.lower()) for i, lit in enumerate(literals)]

    def present(self, data: bytes) -> set[int]:
        lowered = data.lower()
        return {i for i, lit in self._literals if lit in lowered}


class HyperscanLiteralSet:
    def __init__(self, literals: Sequence[bytes], hyperscan: Any) -> None:
        self._empty = not literals
        if self._empty:
            return
        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH
        self._db.compile(
            # Every byte as \\xHH: hyperscan takes NUL-terminated C strings, so a raw NUL would
            # cut the pattern short, and escapes keep metacharacters and newlines literal.
            expressions=["".join(f"\\x{b:02x}" for b in lit).encode() for lit in literals],
            ids=list(range(len(literals))),
            flags=[flags] * len(literals),
        )
        self._scratch_owner = self._db

    def present(self, data: bytes) -> set[int]:
        found: set[int] = set()
        if self._empty or not data:
            return found

        def on_match(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
            found.add(pattern)

        self._db.scan(data, match_event_handler=on_match)
        return found


def load_hyperscan() -> Any | None:
    try:
        import hyperscan
    except ImportError:
        return None
    return hyperscan


def literal_set(literals: Sequence[bytes], *, engine: str = "auto") -> LiteralSet:
    """`engine`: "auto" (hyperscan when installed), "hyperscan" or "python"."""
    if engine in ("auto", "hyperscan"):
        hyperscan = load_hyperscan()
        if hyperscan is not None:
            return HyperscanLiteralSet(literals, hyperscan)
        if engine == "hyperscan":
            raise UsageError(
                "the hyperscan prefilter was asked for, but the hyperscan package is not installed",
                "pip install hyperscan, or set SCRUB_PREFILTER=auto",
            )
    return PythonLiteralSet(literals)


class PatternSet(Protocol):
    def matching(self, data: bytes) -> set[int]:
        """Indexes of the patterns that match somewhere in `data`."""
        ...


class PythonPatternSet:
    def __init__(self, patterns: Sequence[bytes]) -> None:
        self._patterns = [(i, re.compile(p)) for i, p in enumerate(patterns)]

    def matching(self, data: bytes) -> set[int]:
        return {i for i, pattern in self._patterns if pattern.search(data)}


class HyperscanPatternSet:
    def __init__(self, patterns: Sequence[bytes], hyperscan: Any) -> None:
        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._db.compile(
            expressions=list(patterns),
            ids=list(range(len(patterns))),
            flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(patterns),
        )

    def matching(self, data: bytes) -> set[int]:
        found: set[int] = set()
        if not data:
            return found

        def on_match(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
            found.add(pattern)

        self._db.scan(data, match_event_handler=on_match)
        return found


def pattern_set(patterns: Sequence[bytes], *, engine: str = "auto") -> PatternSet:
    """Simple regexes (no look-arounds, no back-references: both engines must accept them)."""
    if engine in ("auto", "hyperscan"):
        hyperscan = load_hyperscan()
        if hyperscan is not None:
            return HyperscanPatternSet(patterns, hyperscan)
    return PythonPatternSet(patterns)
