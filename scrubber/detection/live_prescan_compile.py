"""Compiling the live prescan (live_prescan.py) from the live detectors, at `scrub install`
and when the worker recompiles `state/live.json`: with the detectors imported, never in a hook.

Per detector: its module and place in that module's RULES (so that a hook imports only it),
the literals that wake it (its anchors' ASCII prefixes, as the scanner's literal gates use
them, or the literals a pattern rule's gates start with), its own gates otherwise, and for a
pattern rule a confirmation: the pattern without its leading look-behinds, with how far a match
reaches when that is bounded and every match is proven to hold one of the literals.
"""

from __future__ import annotations

import re

# The parser behind `re` (no stubs), as in required_literals.py.
import re._constants as c  # type: ignore[import-not-found]
import re._parser as parser  # type: ignore[import-not-found]
from collections.abc import Iterable, Sequence
from typing import Any

from scrubber.detection.live_prescan import PRESCAN_FORMAT, rules_stamp

_RULES_PACKAGE = "scrubber.detection.rules."
# Reaches above this are treated as unbounded (the confirmation then reads the whole text).
_MAX_WIDTH = 1 << 20


def compile_prescan(detectors: Sequence[Any]) -> dict[str, Any]:
    """The prescan of `detectors` (the live set, in its order) as JSON-ready data."""
    from scrubber.detection.rules.base import PatternRule, strip_leading_lookbehinds

    entries = []
    places = _rule_places()
    for detector in detectors:
        module, index = _location(detector, places)
        own = getattr(detector, "gates", None)
        if own is not None and isinstance(detector, PatternRule):
            # A pattern rule's gates that start with rare literals (`ntn_`, `secret_`): those
            # literals wake it (every gate match begins with one), and its pattern confirms.
            starts = _gate_starts(own)
            if starts is not None:
                own, anchors = None, tuple(starts)
            else:
                anchors = detector.anchors
        else:
            anchors = detector.anchors
        literals = (
            [] if own is not None else sorted({p for a in anchors if (p := _ascii_prefix(a))})
        )
        if own is None and not literals:
            continue  # no gate at all: the scanner never wakes it on text of unknown origin
        confirm = None
        if isinstance(detector, PatternRule):
            core = strip_leading_lookbehinds(detector.pattern)
            width = max_reach(core, detector.flags)
            caseless = bool(detector.flags & re.IGNORECASE)
            around = bool(literals) and width is not None and _holds(core, literals, caseless)
            behind = max_lookbehind(detector.pattern, detector.flags)
            confirm = [core, int(detector.flags), width if around else None, behind]
        entries.append(
            {
                "name": detector.name,
                "module": module,
                "index": index,
                "literals": literals,
                "gates": [[g.text, g.caseless] for g in own] if own is not None else None,
                "confirm": confirm,
            }
        )
    return {"format": PRESCAN_FORMAT, "stamp": rules_stamp(), "detectors": entries}


def _holds(pattern: str, literals: list[str], caseless: bool) -> bool:
    """Whether every match of `pattern` holds one of `literals` (ASCII case aside): then a
    match lies within its reach of a place where a literal occurs."""
    from scrubber.detection.required_literals import every_match_holds_one_of

    try:
        if every_match_holds_one_of(pattern, literals, caseless):
            return True
    except UnicodeEncodeError:  # a pattern beyond latin-1: not provable that way
        pass
    starts = _start_spellings(pattern, caseless)
    wanted = [lit.lower() for lit in literals]
    return starts is not None and all(any(w in s for w in wanted) for s in starts)


# More spellings of a pattern's start than this and the proof is given up.
_MAX_SPELLINGS = 1024


def _start_spellings(pattern: str, caseless: bool) -> set[str] | None:
    """Every way a match of `pattern` can begin, lower-cased, as far as its start is a finite
    set of strings (`(?:AKIA|A3T[A-Z0-9])` gives akia and a3ta…a3t9); None when unknown. The
    parser factors alternations (`A(?:KIA|3T…)`), which required_literals does not see through."""

    def language(items: Iterable[tuple[Any, Any]], whole: bool) -> set[str] | None:
        spellings = {""}
        for op, av in items:
            chars: set[str] | None = None
            if op is c.LITERAL:
                chars = {chr(av)}
            elif op is c.IN:
                chars = set()
                for inner_op, inner in av:
                    if inner_op is c.LITERAL:
                        chars.add(chr(inner))
                    elif inner_op is c.RANGE and inner[1] - inner[0] < 128:
                        chars.update(chr(x) for x in range(inner[0], inner[1] + 1))
                    else:
                        chars = None
                        break
            elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
                continue  # consumes nothing
            elif op in (c.SUBPATTERN, c.BRANCH):
                branches = [av[-1]] if op is c.SUBPATTERN else av[1]
                parts: set[str] = set()
                for branch in branches:
                    part = language(branch, True)
                    if part is None:
                        return spellings if not whole else None
                    parts |= part
                if len(spellings) * len(parts) > _MAX_SPELLINGS:
                    return spellings if not whole else None
                spellings = {s + p for s in spellings for p in parts}
                continue
            if chars is None or len(spellings) * len(chars) > _MAX_SPELLINGS:
                return spellings if not whole else None
            spellings = {s + ch.lower() for s in spellings for ch in chars}
        return spellings

    try:
        found = language(parser.parse(pattern, re.IGNORECASE if caseless else 0), False)
    except (re.error, RecursionError, ValueError):
        return None
    return found if found and "" not in found else None


# A gate's starting literals stand in for it only when they are this long (shorter ones, such
# as `s.`, occur everywhere and would wake the rule more often than the gate does).
_MIN_START_LITERAL = 4


def _gate_starts(gates: Sequence[Any]) -> set[str] | None:
    """The literals every match of one of `gates` starts with, when they are few and long."""
    starts: set[str] = set()
    for gate in gates:
        found = _start_spellings(gate.text, gate.caseless)
        if found is None or len(found) > 64 or min(map(len, found)) < _MIN_START_LITERAL:
            return None
        starts |= found
    return starts


def _ascii_prefix(anchor: str) -> str:
    """The part of an anchor the scanner's literal gate looks for (gates.literal_gate)."""
    prefix = ""
    for ch in anchor:
        if ord(ch) > 127:
            break
        prefix += ch
    return prefix.lower()


def _rule_places() -> dict[int, tuple[str, int]]:
    """For each rule object in a rule module's RULES (under scrubber.detection.rules), by id:
    that module and the rule's place in it. Worked out once per compile, not per detector."""
    import sys

    places: dict[int, tuple[str, int]] = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith(_RULES_PACKAGE):
            continue
        rules = getattr(module, "RULES", ())
        for index, rule in enumerate(rules if isinstance(rules, tuple) else ()):
            places.setdefault(id(rule), (name[len(_RULES_PACKAGE) :], index))
    return places


def _location(detector: object, places: dict[int, tuple[str, int]]) -> tuple[str, int]:
    """The rule module whose RULES hold `detector`, and where (see `_rule_places`)."""
    found = places.get(id(detector))
    if found is None:
        raise ValueError(
            f"detector {getattr(detector, 'name', '?')!r} is in no rule module's RULES"
        )
    return found


def max_lookbehind(pattern: str, flags: int = 0) -> int | None:
    """How far before where a match starts its look-behinds read (0 without any), or None
    when not known."""

    def behind(items: Iterable[tuple[Any, Any]]) -> int:
        widest = 0
        for op, av in items:
            if op in (c.ASSERT, c.ASSERT_NOT) and av[0] < 0:
                widest = max(widest, av[1].getwidth()[1], behind(av[1]))
            elif op in (c.ASSERT, c.ASSERT_NOT, c.SUBPATTERN):
                widest = max(widest, behind(av[-1]))
            elif op is c.ATOMIC_GROUP:
                widest = max(widest, behind(av))
            elif op is c.BRANCH:
                widest = max([widest, *(behind(branch) for branch in av[1])])
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                widest = max(widest, behind(av[2]))
        return widest

    try:
        found = behind(parser.parse(pattern, flags))
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    return found if found <= _MAX_WIDTH else None


def max_reach(pattern: str, flags: int = 0) -> int | None:
    """How far right of where a match starts the regex engine may look for it (look-aheads
    counted as if consumed), or None when that is unbounded or not known."""

    def reach(items: Iterable[tuple[Any, Any]]) -> int | None:
        total = 0
        for op, av in items:
            if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.RANGE, c.CATEGORY):
                width: int | None = 1
            elif op is c.AT:
                width = 0
            elif op is c.SUBPATTERN:
                width = reach(av[-1])
            elif op is c.ATOMIC_GROUP:
                width = reach(av)
            elif op is c.BRANCH:
                widths = [reach(branch) for branch in av[1]]
                width = None if None in widths else max(w for w in widths if w is not None)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                _low, high, inner = av
                one = reach(inner)
                width = None if one is None or high == c.MAXREPEAT else high * one
            elif op in (c.ASSERT, c.ASSERT_NOT):
                # A look-behind reads before the match (`search(text, pos)` sees before pos);
                # a look-ahead reads past what is consumed.
                width = 0 if av[0] < 0 else reach(av[1])
            else:
                return None  # back-references, conditionals: not bounded here
            if width is None:
                return None
            total += width
        return total

    try:
        found = reach(parser.parse(pattern, flags))
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    return found if found is not None and found <= _MAX_WIDTH else None
