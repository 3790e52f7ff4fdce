"""What `scrub search` looks for, and the cheap test on raw line bytes that comes first.

Most lines of a transcript do not hold what a user searches for, and parsing every line of a few
GB of JSON costs far more than a byte search (bench/README.md). So, as audit's gates do, a line
is decoded only when its raw bytes hold a literal that every match must hold.

Which literal: a JSON writer leaves most characters as they are between the quotes, but escapes
some (`"`, `\\`, control characters such as a newline) and, depending on the writer, others
(`/` as `\\/`, non-ASCII as `\\u00e9`, `<`, `>`, `&`, `'` in HTML-safe encoders, U+2028/9).
A pattern made only of characters that no writer escapes appears in the raw line exactly as
typed; otherwise its longest run of such characters does (`say "hello world"` holds the run
`hello world` in any encoding). A run too short to be selective (fewer than 3 characters) means
no prefilter: every line is decoded, slower but never wrong. A regex's literal is the longest
run of plain characters at its top level (every match holds it); a caseless pattern has none.

A regex is also refused when it can backtrack for ever (catastrophically): a repeated part that
repeats itself (`(a+)+`), or repeated alternatives that can match the same text (`(a|ab)*`),
which `re` tries in every combination on a line that almost matches. Possessive repeats (`a++`)
and atomic groups (`(?>...)`) never backtrack, so they are how to write such a pattern safely.
What is left (polynomial cases such as `.*.*x` on a huge line) the CLI can always interrupt.

What we assume: no writer escapes a letter, digit or space as `\\u0041`; JSON.stringify (Claude
Code), Python's json and orjson never do.
"""

from __future__ import annotations

import re

# The parser behind `re` (no stubs), as in detection/required_literals.py.
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scrubber.errors import UsageError

_MIN_RUN = 3
_MAX_PATTERN = 4096
# Characters some JSON writer escapes (see the module docstring).
_ESCAPED_BY_SOME_WRITER = frozenset("\"\\/<>&'\u2028\u2029")


def _never_escaped(char: str) -> bool:
    return " " <= char <= "~" and char not in _ESCAPED_BY_SOME_WRITER


def raw_literal(text: str) -> bytes | None:
    """The bytes every raw JSON line holding `text` in a decoded string must hold: the longest
    run of never-escaped characters of `text` (all of it, usually), or None when that run is
    too short to be worth a search."""
    best = ""
    run: list[str] = []
    for char in (*text, "\0"):
        if _never_escaped(char):
            run.append(char)
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best.encode("ascii") if len(best) >= _MIN_RUN else None


def _regex_literal(pattern: str) -> str | None:
    """The longest run of literal characters at the top level of a regex, which every match
    holds; None for a caseless pattern or one the parser cannot read."""
    try:
        parsed = re_parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    best = ""
    run: list[str] = []
    for op, value in (*list(parsed), (None, None)):
        if op is re_constants.LITERAL:
            run.append(chr(value))
            continue
        if len("".join(run)) > len(best):
            best = "".join(run)
        run = []
    return best or None


_REPEATS = frozenset({re_constants.MAX_REPEAT, re_constants.MIN_REPEAT})
_UNBOUNDED = re_constants.MAXREPEAT
_SMALL_SET = 256  # a character class wider than this counts as "any character"
_NESTED = (
    "--regex: the pattern repeats a part that itself repeats (like (a+)+), which can take "
    "for ever on a line that almost matches",
    "repeat it once (a+), or make the inner repeat possessive (a++) or atomic ((?>a+))",
)
_AMBIGUOUS = (
    "--regex: the pattern repeats alternatives that can match the same text (like (a|ab)* "
    "or (\\w|\\d)+), which can take for ever on a line that almost matches",
    "make the alternatives start with different characters, use one class ([\\w\\d]+), "
    "or make the group atomic ((?>a|ab)*)",
)


@dataclass(frozen=True, slots=True)
class _Start:
    """The characters a part of a regex can start with (None: any, as far as we can tell) and
    whether it can match the empty string."""

    chars: frozenset[str] | None
    nullable: bool

    def overlaps(self, other: _Start) -> bool:
        if self.nullable or other.nullable or self.chars is None or other.chars is None:
            return True
        return bool(self.chars & other.chars)


def _class_chars(members: list[tuple[Any, Any]], caseless: bool) -> frozenset[str] | None:
    chars: set[str] = set()
    for op, value in members:
        if op is re_constants.LITERAL:
            chars.add(chr(value))
        elif op is re_constants.RANGE and value[1] - value[0] < _SMALL_SET:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        else:  # a category, a negation, a wide range
            return None
    if caseless:
        chars |= {c.lower() for c in chars} | {c.upper() for c in chars}
    return frozenset(chars)


def _item_start(op: Any, value: Any, caseless: bool) -> _Start:
    if op is re_constants.LITERAL:
        return _Start(_class_chars([(op, value)], caseless), False)
    if op is re_constants.IN:
        return _Start(_class_chars(list(value), caseless), False)
    if op is re_constants.SUBPATTERN:
        return _start(value[3], caseless)
    if op is re_constants.ATOMIC_GROUP:
        return _start(value, caseless)
    if op is re_constants.BRANCH:
        starts = [_start(alternative, caseless) for alternative in value[1]]
        chars: set[str] = set()
        for start in starts:
            if start.chars is None:
                return _Start(None, any(s.nullable for s in starts))
            chars |= start.chars
        return _Start(frozenset(chars), any(s.nullable for s in starts))
    if op in _REPEATS or op is re_constants.POSSESSIVE_REPEAT:
        inner = _start(value[2], caseless)
        return _Start(inner.chars, inner.nullable or value[0] == 0)
    if op in (re_constants.AT, re_constants.ASSERT, re_constants.ASSERT_NOT):
        return _Start(frozenset(), True)
    return _Start(None, op is re_constants.GROUPREF or op is re_constants.GROUPREF_EXISTS)


def _start(items: Any, caseless: bool) -> _Start:
    """Where a sequence of parsed items can start: each item's start until one that cannot
    match the empty string."""
    chars: set[str] = set()
    for op, value in items:
        start = _item_start(op, value, caseless)
        if start.chars is None:
            return _Start(None, False)
        chars |= start.chars
        if not start.nullable:
            return _Start(frozenset(chars), False)
    return _Start(frozenset(chars), True)


def _backtracking_repeats(items: Any) -> Iterator[int]:
    """The most times of each repeat that can give characters back, inside `items`: not under a
    possessive repeat or an atomic group, which never backtrack into what they matched."""
    for op, value in items:
        if op in _REPEATS:
            yield value[1]
            yield from _backtracking_repeats(value[2])
        elif op is re_constants.SUBPATTERN:
            yield from _backtracking_repeats(value[3])
        elif op is re_constants.BRANCH:
            for alternative in value[1]:
                yield from _backtracking_repeats(alternative)


def _ambiguous_branches(items: Any, caseless: bool) -> bool:
    """Whether `items` hold, outside atomic groups, alternatives that can start alike."""
    for op, value in items:
        if op is re_constants.SUBPATTERN and _ambiguous_branches(value[3], caseless):
            return True
        if op is re_constants.BRANCH:
            starts = [_start(alternative, caseless) for alternative in value[1]]
            if any(a.overlaps(b) for i, a in enumerate(starts) for b in starts[i + 1 :]):
                return True
            if any(_ambiguous_branches(alternative, caseless) for alternative in value[1]):
                return True
    return False


def _backtracking_problem(items: Any, caseless: bool) -> tuple[str, str] | None:
    """Why the parsed regex `items` can backtrack for ever (a message and a hint), or None."""
    for op, value in items:
        children: list[Any] = []
        if op in _REPEATS:
            _low, high, body = value
            for inner_high in _backtracking_repeats(body):
                if inner_high > 1 and _UNBOUNDED in (high, inner_high):
                    return _NESTED
            if high > 1 and _ambiguous_branches(body, caseless):
                return _AMBIGUOUS
            if high == _UNBOUNDED and _start(body, caseless).nullable:
                return _NESTED
            children = [body]
        elif op is re_constants.POSSESSIVE_REPEAT:
            children = [value[2]]
        elif op is re_constants.SUBPATTERN:
            children = [value[3]]
        elif op is re_constants.ATOMIC_GROUP:
            children = [value]
        elif op is re_constants.BRANCH:
            children = list(value[1])
        elif op in (re_constants.ASSERT, re_constants.ASSERT_NOT):
            children = [value[1]]
        elif op is re_constants.GROUPREF_EXISTS:
            children = [part for part in value[1:] if part is not None]
        for child in children:
            found = _backtracking_problem(child, caseless)
            if found is not None:
                return found
    return None


def refuse_backtracking(pattern: str) -> None:
    """UsageError (exit 2) for a regex that can backtrack for ever, saying what to write
    instead; the pattern itself is never repeated."""
    try:
        parsed = re_parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return  # compile_pattern says what is wrong with it
    caseless = bool(parsed.state.flags & re.IGNORECASE)
    problem = _backtracking_problem(parsed, caseless)
    if problem is not None:
        raise UsageError(*problem)


@dataclass(frozen=True, slots=True)
class SearchPattern:
    """A literal or a regex, and the raw-bytes prefilter that goes with it. Holds the pattern
    text, which is the user's own input: never shown raw (it may be a secret they look for)."""

    text: str
    is_regex: bool
    compiled: re.Pattern[str]
    literal: bytes | None  # raw lines without it are skipped undecoded; None: decode all

    def may_match(self, raw: bytes) -> bool:
        return self.literal is None or self.literal in raw

    def spans(self, text: str) -> list[tuple[int, int]]:
        """[start, end) of each non-overlapping, non-empty match in `text`."""
        if not self.is_regex:
            found: list[tuple[int, int]] = []
            at = text.find(self.text)
            while at >= 0:
                found.append((at, at + len(self.text)))
                at = text.find(self.text, at + len(self.text))
            return found
        return [m.span() for m in self.compiled.finditer(text) if m.end() > m.start()]


def compile_pattern(text: str, *, regex: bool) -> SearchPattern:
    """The pattern a user gave; UsageError for an empty one, a bad regex or an oversized one
    (the error never repeats the pattern)."""
    if not text:
        raise UsageError("the search pattern is empty", hint="give the text to look for")
    if len(text) > _MAX_PATTERN:
        raise UsageError(f"the search pattern is {len(text)} characters (at most {_MAX_PATTERN})")
    if not regex:
        return SearchPattern(text, False, re.compile(re.escape(text)), raw_literal(text))
    try:
        compiled = re.compile(text)
    except (re.error, RecursionError, OverflowError) as error:
        where = f" at position {error.pos}" if isinstance(error, re.error) and error.pos else ""
        raise UsageError(
            f"--regex: the pattern is not a valid regular expression{where}",
            hint="Python `re` syntax; drop --regex to search for the text as it is",
        ) from None
    refuse_backtracking(text)
    if compiled.search("") is not None:
        raise UsageError(
            "--regex: the pattern matches the empty string", hint="make it match some text"
        )
    literal = _regex_literal(text)
    return SearchPattern(text, True, compiled, raw_literal(literal) if literal else None)
