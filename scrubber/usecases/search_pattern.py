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

What we assume: no writer escapes a letter, digit or space as `\\u0041`; JSON.stringify (Claude
Code), Python's json and orjson never do.
"""

from __future__ import annotations

import re

# The parser behind `re` (no stubs), as in detection/required_literals.py.
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]
from dataclasses import dataclass

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
    if compiled.search("") is not None:
        raise UsageError(
            "--regex: the pattern matches the empty string", hint="make it match some text"
        )
    literal = _regex_literal(text)
    return SearchPattern(text, True, compiled, raw_literal(literal) if literal else None)
