"""The declarative shape of most of our rules: a regex, anchors, and a few filters.

A rule file builds one or more `PatternRule`s and nothing else. The secret is the named group
`secret` when the pattern has one (so `password=` stays and only the value goes), else the whole
match.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _structure(pattern: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, nesting depth) of each `(`, `)` and `|` of a pattern that is neither
    escaped nor inside a character class; depth counts the groups open before the character."""
    depth = 0
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":  # a `]` right after `[` is a literal
                i += 1
        elif ch == "(":
            yield i, ch, depth
            depth += 1
        elif ch == ")":
            depth -= 1
            yield i, ch, depth
        elif ch == "|":
            yield i, ch, depth
        i += 1


def _group_end(pattern: str, start: int) -> int:
    """Index just past the group that opens at `pattern[start]` ("("), or -1."""
    for i, ch, depth in _structure(pattern[start:]):
        if ch == ")" and depth == 0:
            return start + i + 1
    return -1


def _only_lookbehinds(group: str) -> bool:
    """Is `group` (a parenthesised piece of a pattern) nothing but look-behind assertions?"""
    if group.startswith(("(?<=", "(?<!")):
        return True
    if not group.startswith("(?:"):
        return False
    body = group[3:-1]
    cuts = [i for i, ch, depth in _structure(body) if ch == "|" and depth == 0]
    bounds = zip([-1, *cuts], [*cuts, len(body)], strict=True)
    for branch in (body[a + 1 : b] for a, b in bounds):
        rest = branch
        while rest:
            if not rest.startswith("("):
                return False
            end = _group_end(rest, 0)
            if end < 0 or not _only_lookbehinds(rest[:end]):
                return False
            rest = rest[end:]
    return True


def strip_leading_lookbehinds(pattern: str) -> str:
    """The pattern without the look-behind assertions it starts with (if any)."""
    flags = ""
    inline = re.match(r"\(\?[aiLmsux]+\)", pattern)
    if inline:
        flags, pattern = inline.group(), pattern[inline.end() :]
    while pattern.startswith("("):
        end = _group_end(pattern, 0)
        if (
            end < 0
            or not _only_lookbehinds(pattern[:end])
            or pattern[end : end + 1] in ("*", "?", "+", "{")
        ):
            break
        pattern = pattern[end:]
    return flags + pattern


@runtime_checkable
class SameInAnyContext(Protocol):
    """A detector whose hits depend on the text alone (its `find` never reads the context, as
    a PatternRule's does not) and every hit of which matches one of its gates, in any text.
    Its gates then hold in a credential source as well, where the scanner otherwise runs every
    detector on every string whole. (Some gates are narrower than their detector's `find`, as
    a heuristic for ordinary text: such a detector says False.)
    `tests/unit/detection/rules/test_rules_catalog.py` holds each to this on every positive."""

    @property
    def same_in_any_context(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class PatternRule:
    name: str  # the detector name reported in findings
    kind: str  # kebab-case kind of secret
    pattern: str
    anchors: tuple[str, ...]  # lower-case literals; one must occur in any text the pattern matches
    reference: str  # where the format is documented (vendor docs, a published scanner rule)
    flags: int = 0
    context_only: bool = False  # run only on text known to come from a credential source
    min_length: int = 1
    min_entropy: float = 0.0  # bits per character the secret must reach
    reject: Callable[[str], bool] | None = None  # True for values that are not secrets
    # Where the anchors are common words or punctuation: a necessary condition on the token's
    # shape, so that the scanner wakes the rule only where it could match (see gates.py).
    gates: tuple[Gate, ...] | None = None
    # A regex for the start of a match that names the vendor, not the secret (`ghp_`): what a
    # masked preview may show (see `ShowsPublicPrefix`); "" when a match has none.
    public_prefix: str = ""
    # Compiled on first use: a hundred patterns cost ~100 ms to compile, which every command
    # and the status line would otherwise pay at import, whether or not it scans.
    _compiled: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    _core: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = re.compile(self.pattern, self.flags)
            object.__setattr__(self, "_compiled", compiled)
        return compiled

    @property
    def core(self) -> re.Pattern[str]:
        core = self._core
        if core is None:
            stripped = strip_leading_lookbehinds(self.pattern)
            core = self.compiled if stripped == self.pattern else re.compile(stripped, self.flags)
            object.__setattr__(self, "_core", core)
        return core

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        # A leading look-behind (a token boundary) stops `re` from jumping to the literal that
        # follows it, which makes a full scan several times slower; every full match is also a
        # match of the pattern without it, so that cheaper search decides whether to look at all.
        if self.core is not self.compiled and self.core.search(text) is None:
            return
        has_group = "secret" in self.compiled.groupindex
        for match in self.compiled.finditer(text):
            start, end = match.span("secret") if has_group else match.span()
            if start < 0 or end - start < self.min_length:
                continue
            value = text[start:end]
            if self.min_entropy and shannon_entropy(value) < self.min_entropy:
                continue
            if self.reject is not None and self.reject(value):
                continue
            yield Hit(start, end, self.kind, self.name)
