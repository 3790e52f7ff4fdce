"""Proof that every match of a regex holds one of some literals (for gates' `rare` literals).

A gate may name rare literals (`Gate.rare`) so that the hyperscan prefilter looks for it only on
lines that hold one: a second, small database run on few lines instead of a costly pattern run on
all of them. That is only sound when every match really holds one of them, so the scanner
refuses a declaration this module cannot prove. The proof reads the pattern's parse tree
(Python's own parser) and is conservative: it answers True only where the structure guarantees
it (a literal run, a class whose every character is a literal, a repeat of at least one, every
branch of an alternation); anything it cannot see through counts as not holding one.
"""

from __future__ import annotations

import functools
import re

# The parser behind `re` (no stubs), as in prefilter.py.
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from collections.abc import Collection
from typing import Any


def every_match_holds_one_of(pattern: str, literals: Collection[str], caseless: bool) -> bool:
    """Whether each match of `pattern` (as bytes: latin-1) contains one of `literals`, compared
    without ASCII case (the prefilter looks for them caselessly)."""
    return _holds_one_of(pattern, frozenset(literals), caseless)


# The same few hundred gates are proven each time a scanner is built, and a process may build
# several (the live set, the full set, a policy's): the proof is a pure function of its input.
@functools.lru_cache(maxsize=4096)
def _holds_one_of(pattern: str, literals: frozenset[str], caseless: bool) -> bool:
    wanted = frozenset(lit.encode("latin-1").lower() for lit in literals)
    if not wanted or not all(wanted):
        return False
    try:
        parsed = re_parser.parse(pattern.encode("latin-1"), re.IGNORECASE if caseless else 0)
    except re.error:
        return False
    return _sequence_holds(list(parsed), wanted)


def _sequence_holds(items: list[Any], wanted: frozenset[bytes]) -> bool:
    """A sequence holds one when every spelling of a run of literals and small classes in it
    contains one (`[!=]=` holds `==` or `!=`), or one of its items always does."""
    pending: set[bytes] = {b""}  # the spellings of the current run that hold none yet
    for op, av in items:
        characters = _run_characters(op, av)
        if characters is not None and len(pending) * len(characters) <= _MAX_SPELLINGS:
            pending = {
                spelling
                for run in pending
                for c in characters
                if not _holds((spelling := run + bytes([c]).lower()), wanted)
            }
            if not pending:
                return True
            continue
        pending = {b""}
        if _item_holds(op, av, wanted):
            return True
    return False


# More spellings than this and a run is given up (counted as holding nothing).
_MAX_SPELLINGS = 256


def _run_characters(op: Any, av: Any) -> set[int] | None:
    """The characters a literal or a positive class stands for; None for anything else."""
    if op is re_constants.LITERAL:
        return {av}
    if op is re_constants.IN:
        return _class_characters(av)
    return None


def _holds(spelling: bytes, wanted: frozenset[bytes]) -> bool:
    return any(lit in spelling for lit in wanted)


def _item_holds(op: Any, av: Any, wanted: frozenset[bytes]) -> bool:
    if op is re_constants.SUBPATTERN:
        return _sequence_holds(list(av[3]), wanted)
    if op is re_constants.BRANCH:
        return all(_sequence_holds(list(branch), wanted) for branch in av[1])
    if op in (re_constants.MAX_REPEAT, re_constants.MIN_REPEAT):
        low, _high, inner = av
        return bool(low >= 1 and _sequence_holds(list(inner), wanted))
    return False


def _class_characters(items: list[Any]) -> set[int] | None:
    """The characters of a positive character class, or None (negated, or a category)."""
    found: set[int] = set()
    for op, av in items:
        if op is re_constants.LITERAL:
            found.add(av)
        elif op is re_constants.RANGE:
            found.update(range(av[0], av[1] + 1))
        else:
            return None
    return found
