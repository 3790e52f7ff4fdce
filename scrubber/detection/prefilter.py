"""Which of many literals occur in a piece of text, fast (the only hyperscan import).

The scanner asks this of every raw line, so it sets the floor of a scan's speed. Intel's
hyperscan answers at several hundred MB/s (all literals in one database, caseless); where its
wheel is not installed, a pure-Python search gives the same answers, more slowly. Both are
tested to agree.
"""

from __future__ import annotations

import re

# The parser behind `re` (no stubs): used only to read which literals a gate starts with.
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from scrubber.detection.gates import is_literal_pattern
from scrubber.detection.prefilter_cache import (
    cache_file,
    gates_identity,
    load_databases,
    store_databases,
)
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
            expressions=[_literal_regex(lit) for lit in literals],
            ids=list(range(len(literals))),
            flags=[flags] * len(literals),
        )
        self._scratch_owner = self._db

    def present(self, data: bytes) -> set[int]:
        return set() if self._empty else _ids_present(self._db, data)


def _ids_present(database: Any, data: bytes) -> set[int]:
    """The ids of a hyperscan database's patterns that match somewhere in `data`."""
    found: set[int] = set()
    if not data:
        return found

    def on_match(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
        found.add(pattern)

    database.scan(data, match_event_handler=on_match)
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


class GateMatcher(Protocol):
    def present(self, data: bytes) -> set[int]:
        """Indexes of the gates whose raw-line form matches somewhere in `data`."""
        ...

    def events(self, data: bytes) -> list[tuple[int, int]]:
        """(gate index, end offset) of the matches of the gates' text forms in `data`."""
        ...

    def present_and_ends(self, data: bytes) -> tuple[set[int], list[tuple[int, int]]]:
        """`present`, and (gate index, end offset) of every raw-form match of the gates
        named `every_end` when the matcher was made."""
        ...


def _as_literal(pattern: bytes) -> bytes | None:
    """The bytes a gate made only of `\\xHH` escapes stands for (a literal anchor), or None."""
    if not is_literal_pattern(pattern.decode("latin-1")):
        return None
    return bytes(int(pattern[i + 2 : i + 4], 16) for i in range(0, len(pattern), 4))


def _leading_literals(pattern: bytes, caseless: bool) -> tuple[bytes, ...] | None:
    """Literals one of which any match of `pattern` starts with (lower-cased when `caseless`),
    or None when the pattern does not start with literals (a class, a repeat, a look-around).
    `re` scans slowly for a pattern that opens with an alternation; a substring test for these
    literals first skips most data."""
    try:
        parsed = re_parser.parse(pattern, re.IGNORECASE if caseless else 0)
    except re.error:
        return None
    found = _lead(list(parsed))
    if found is None or not all(found):
        return None
    return tuple(lit.lower() for lit in found) if caseless else found


def _lead(items: list[Any]) -> tuple[bytes, ...] | None:
    literal = bytearray()
    for op, av in items:
        if op is re_constants.LITERAL:
            literal.append(av)
            continue
        if literal:
            break
        if op is re_constants.SUBPATTERN:
            return _lead(list(av[3]))
        if op is re_constants.BRANCH:
            alternatives = [_lead(list(alternative)) for alternative in av[1]]
            if any(a is None for a in alternatives):
                return None
            return tuple(lit for a in alternatives if a is not None for lit in a)
        return None
    return (bytes(literal),) if literal else None


class PythonGateMatcher:
    """The same answers as hyperscan's, with `re` and substring tests (slower, for machines
    without its wheel). Literal gates (anchors) are looked for with `in` on the lower-cased
    bytes, one C-speed search each; only the others are regexes. `events` reports the ends of
    non-overlapping matches where hyperscan reports every end; the scanner only uses them to
    place windows, which both cover."""

    def __init__(
        self, gates: Sequence[tuple[bytes, bytes, bool]], every_end: Collection[int] = ()
    ) -> None:
        def build(pattern: bytes, caseless: bool) -> re.Pattern[bytes]:
            return re.compile(pattern, re.IGNORECASE if caseless else 0)

        self._raw = [build(raw, caseless) for _, raw, caseless in gates]
        self._text = [build(text, caseless) for text, _, caseless in gates]
        self._every_end = sorted(every_end)
        # (index, literal, caseless) for literal gates whose two forms agree; the rest by regex.
        self._literals: list[tuple[int, bytes, bool]] = []
        self._regexes: list[int] = []
        for i, (text, raw, caseless) in enumerate(gates):
            literal = _as_literal(raw) if raw == text else None
            if literal is None or i in every_end:
                self._regexes.append(i)
            else:
                self._literals.append((i, literal.lower() if caseless else literal, caseless))
        # For each regex gate and form: literals one of which its matches start with. `re` is
        # slow to search for a pattern that opens with an alternation, fast to match it at a
        # given place: such gates are matched where their literals occur.
        self._raw_hints = {i: _leading_literals(gates[i][1], gates[i][2]) for i in self._regexes}
        self._text_hints = {i: _leading_literals(gates[i][0], gates[i][2]) for i in self._regexes}
        self._caseless = [caseless for _, _, caseless in gates]

    def _matches(
        self,
        pattern: re.Pattern[bytes],
        hints: tuple[bytes, ...] | None,
        i: int,
        data: bytes,
        lowered: bytes,
        first_only: bool,
    ) -> list[re.Match[bytes]]:
        if hints is None:
            if first_only:
                found = pattern.search(data)
                return [found] if found else []
            return list(pattern.finditer(data))
        subject = lowered if self._caseless[i] else data
        starts: set[int] = set()
        matches = []
        for hint in hints:
            at = subject.find(hint)
            while at >= 0:
                if at not in starts:
                    starts.add(at)
                    found = pattern.match(data, at)
                    if found is not None:
                        if first_only:
                            return [found]
                        matches.append(found)
                at = subject.find(hint, at + 1)
        matches.sort(key=lambda m: m.start())
        return matches

    def present(self, data: bytes) -> set[int]:
        lowered = data.lower()
        found = {i for i, lit, caseless in self._literals if lit in (lowered if caseless else data)}
        raw = self._raw
        found.update(
            i
            for i in self._regexes
            if self._matches(raw[i], self._raw_hints[i], i, data, lowered, first_only=True)
        )
        return found

    def present_and_ends(self, data: bytes) -> tuple[set[int], list[tuple[int, int]]]:
        found = self.present(data)
        lowered = data.lower()
        ends = [
            (i, m.end())
            for i in self._every_end
            if i in found
            for m in self._matches(self._raw[i], self._raw_hints[i], i, data, lowered, False)
        ]
        return found, ends

    def events(self, data: bytes) -> list[tuple[int, int]]:
        lowered = data.lower()
        found: list[tuple[int, int]] = []
        for i, lit, caseless in self._literals:
            subject = lowered if caseless else data
            at = subject.find(lit)
            while at >= 0:
                found.append((i, at + len(lit)))
                at = subject.find(lit, at + 1)
        text = self._text
        found.extend(
            (i, m.end())
            for i in self._regexes
            for m in self._matches(text[i], self._text_hints[i], i, data, lowered, False)
        )
        return found


# Databases this process compiled, by gates_identity: a second scanner with the same gates (a
# fresh SCRUB_HOME whose file cache is empty, the status line's set built again) reuses them
# instead of compiling for most of a second. Only what this process compiled itself goes here,
# so nothing in it needs verifying; scrubber scans on one thread, so sharing a database (and
# its scratch space) between scanners is safe. A few gate sets at most: bounded anyway.
_COMPILED_HERE: dict[bytes, list[Any]] = {}
_COMPILED_KEPT = 8


def _remember_compiled(identity: bytes, databases: list[Any]) -> None:
    while len(_COMPILED_HERE) >= _COMPILED_KEPT:
        del _COMPILED_HERE[next(iter(_COMPILED_HERE))]
    _COMPILED_HERE[identity] = databases


class HyperscanGateMatcher:
    """Two databases: the raw forms, reporting each gate once per line, and the text forms,
    reporting every match end. Compiling them takes most of a second (the assignment gates are
    large automata), so with a `cache_dir` the compiled databases are kept there, keyed by the
    gates and the hyperscan version, and loaded in milliseconds by later runs.

    `deferred` gates (index -> rare literals one of which each of their raw matches holds) are
    left out of the raw database, which looks for their literals instead; a line that holds one
    is then scanned with a small database of the gates waiting for it. The answers are the
    same; a costly gate is run on few lines instead of all."""

    def __init__(
        self,
        gates: Sequence[tuple[bytes, bytes, bool]],
        hyperscan: Any,
        cache_dir: Path | None = None,
        every_end: Collection[int] = (),
        deferred: Mapping[int, Sequence[bytes]] | None = None,
    ) -> None:
        self._empty = not gates
        self._every_end = frozenset(every_end)
        if self._empty:
            return
        plan = _DeferralPlan(len(gates), deferred or {})
        self._plan = plan
        every_end_sorted = sorted(self._every_end)
        cache = (
            cache_file(cache_dir, gates, hyperscan, every_end_sorted, plan.identity())
            if cache_dir is not None
            else None
        )
        loaded = (
            load_databases(cache, hyperscan, 2 + len(plan.groups)) if cache is not None else None
        )
        if loaded is not None:
            self._raw, self._text, *self._groups = loaded
            return
        identity = gates_identity(gates, hyperscan, every_end_sorted, plan.identity())
        compiled = _COMPILED_HERE.get(identity)
        if compiled is None:
            compiled = self._compile_all(gates, hyperscan, plan)
            _remember_compiled(identity, compiled)
        self._raw, self._text, *self._groups = compiled
        if cache is not None:
            store_databases(cache, hyperscan, compiled)

    def _compile_all(
        self, gates: Sequence[tuple[bytes, bytes, bool]], hyperscan: Any, plan: _DeferralPlan
    ) -> list[Any]:
        """The raw database, the text database, then one per group of deferred gates."""
        self._hs = hyperscan
        caseless = [hyperscan.HS_FLAG_CASELESS if c else 0 for _, _, c in gates]
        first = [i for i in range(len(gates)) if i not in plan.deferred]
        raw = self._compile(
            [gates[i][1] for i in first] + [_literal_regex(lit) for lit in plan.literals],
            first + plan.literal_ids,
            [self._raw_flags(i, caseless[i]) for i in first]
            + [hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH] * len(plan.literals),
        )
        text = self._compile([text for text, _, _ in gates], list(range(len(gates))), caseless)
        groups = [
            self._compile(
                [gates[i][1] for i in group],
                list(group),
                [self._raw_flags(i, caseless[i]) for i in group],
            )
            for group in plan.groups
        ]
        return [raw, text, *groups]

    def _raw_flags(self, gate: int, caseless: int) -> int:
        single = 0 if gate in self._every_end else self._hs.HS_FLAG_SINGLEMATCH
        return caseless | single

    def _compile(self, expressions: list[bytes], ids: list[int], flags: list[int]) -> Any:
        database = self._hs.Database(mode=self._hs.HS_MODE_BLOCK)
        database.compile(expressions=expressions, ids=ids, flags=flags)
        return database

    def present(self, data: bytes) -> set[int]:
        return set() if self._empty else self.present_and_ends(data)[0]

    def events(self, data: bytes) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        if self._empty or not data:
            return found

        def on_match(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
            found.append((pattern, end))

        self._text.scan(data, match_event_handler=on_match)
        return found

    def present_and_ends(self, data: bytes) -> tuple[set[int], list[tuple[int, int]]]:
        found: set[int] = set()
        ends: list[tuple[int, int]] = []
        if self._empty or not data:
            return found, ends
        every_end = self._every_end

        def on_match(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
            found.add(pattern)
            if pattern in every_end:
                ends.append((pattern, end))

        self._raw.scan(data, match_event_handler=on_match)
        plan = self._plan
        if plan.groups and not found.isdisjoint(plan.group_of_literal):
            groups = {plan.group_of_literal[i] for i in found if i in plan.group_of_literal}
            found.difference_update(plan.group_of_literal)
            for group in sorted(groups):
                self._groups[group].scan(data, match_event_handler=on_match)
        return found, ends


def _literal_regex(literal: bytes) -> bytes:
    """Every byte as \\xHH: hyperscan takes NUL-terminated C strings, so a raw NUL would cut
    the pattern short, and escapes keep metacharacters and newlines literal."""
    return "".join(f"\\x{b:02x}" for b in literal).encode()


class _DeferralPlan:
    """Which gates wait for which rare literals: the literals get ids after the gates' in the
    raw database; gates waiting for the same literals share a small database (a group)."""

    def __init__(self, gate_count: int, deferred: Mapping[int, Sequence[bytes]]) -> None:
        self.deferred = frozenset(deferred)
        by_literals: dict[tuple[bytes, ...], list[int]] = {}
        for gate, literals in sorted(deferred.items()):
            by_literals.setdefault(tuple(sorted({lit.lower() for lit in literals})), []).append(
                gate
            )
        self.groups = [tuple(gates) for gates in by_literals.values()]
        self._literal_sets = list(by_literals)
        self.literals: list[bytes] = []
        self.group_of_literal: dict[int, int] = {}
        for group, literals in enumerate(by_literals):
            for literal in literals:
                self.group_of_literal[gate_count + len(self.literals)] = group
                self.literals.append(literal)
        self.literal_ids = list(range(gate_count, gate_count + len(self.literals)))

    def identity(self) -> list[tuple[tuple[bytes, ...], tuple[int, ...]]]:
        """What the cached databases depend on beyond the gates: each group's literals, gates."""
        return list(zip(self._literal_sets, self.groups, strict=True))


def gate_matcher(
    gates: Sequence[tuple[bytes, bytes, bool]],
    *,
    engine: str = "auto",
    cache_dir: Path | None = None,
    every_end: Collection[int] = (),
    deferred: Mapping[int, Sequence[bytes]] | None = None,
) -> GateMatcher:
    """Gates as (text form, raw form, caseless); `engine` as for `literal_set`; `cache_dir`
    keeps hyperscan's compiled databases between runs; `every_end`: the gates whose raw-form
    matches `present_and_ends` reports one by one; `deferred`: gates to run only on lines that
    hold one of their rare literals (see HyperscanGateMatcher; the pure-Python matcher, which
    tests its literals first anyway, ignores it)."""
    if engine in ("auto", "hyperscan"):
        hyperscan = load_hyperscan()
        if hyperscan is not None:
            return HyperscanGateMatcher(gates, hyperscan, cache_dir, every_end, deferred)
        if engine == "hyperscan":
            raise UsageError(
                "the hyperscan prefilter was asked for, but the hyperscan package is not installed",
                "pip install hyperscan, or set SCRUB_PREFILTER=auto",
            )
    return PythonGateMatcher(gates, every_end)


def pattern_set(patterns: Sequence[bytes], *, engine: str = "auto") -> PatternSet:
    """Simple regexes (no look-arounds, no back-references: both engines must accept them)."""
    if engine in ("auto", "hyperscan"):
        hyperscan = load_hyperscan()
        if hyperscan is not None:
            return HyperscanPatternSet(patterns, hyperscan)
    return PythonPatternSet(patterns)
