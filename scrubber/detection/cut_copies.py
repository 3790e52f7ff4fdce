"""Cut copies of a known value (see known_values.py): a 2 KB preview that cuts a value, an
answer that quotes its first characters, a prompt that breaks it with a line break. A piece of
at least `CUT_PIECE` characters beyond the value's public prefix that is the value's start
(ending where the string ends or at a character the value cannot hold) or its end (starting
likewise) stands for the value.

Bounded time: each piece is placed by `str.find` of a fixed start or end piece, then extended
by a binary search of `startswith`/`endswith` (C speed, whatever the value's length).
"""

from __future__ import annotations

import itertools
import json
import json.encoder
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# The shortest cut copy, in characters beyond a public prefix: 16 random characters are never a
# coincidence, and a value's public prefix alone names only its vendor.
CUT_PIECE = 16
# A piece stands for its value only when it looks random: two kinds of letter or digit, at
# most this many other characters (a path's or a URL's start is no token), no space.
_PIECE_PUNCTUATION = 2


def cut_pieces(
    value: str, prefix: str = "", shared: tuple[int, int] = (0, 0)
) -> tuple[str | None, str | None]:
    """The start and the end piece a cut copy of `value` holds at least (None: no cut copy
    of that end is looked for). `prefix`: the value's public prefix, never counted; `shared`:
    how many of its first and last characters another known value has too (`shared_ends`),
    never counted either: what several values hold names none of them."""
    public = max(len(prefix) if prefix and value.startswith(prefix) else 0, shared[0])
    if len(value) - public <= CUT_PIECE:
        return None, None  # a piece that long is the whole value
    head = value[: public + CUT_PIECE]
    tail_size = CUT_PIECE + shared[1]
    tail = value[-tail_size:] if len(value) - public > tail_size else None
    return (
        head if _looks_random(head[public:]) else None,
        tail if tail is not None and _looks_random(tail[:CUT_PIECE]) else None,
    )


def shared_ends(values: Sequence[str]) -> list[tuple[int, int]]:
    """For each value, how many of its first and of its last characters another of `values`
    has too: every 2048-bit RSA key's body starts `MIIEpAIBAAKCAQEA`, every HS256 JWT with the
    same header. A piece within those is no one value's (and would make every such value a
    candidate wherever one of them is)."""
    starts = _shared_starts(values)
    ends = _shared_starts([value[::-1] for value in values])
    return list(zip(starts, ends, strict=True))


def _shared_starts(values: Sequence[str]) -> list[int]:
    """For each value, its longest common start with any other (neighbours once sorted)."""
    shared = [0] * len(values)
    order = sorted(range(len(values)), key=values.__getitem__)
    for before, after in itertools.pairwise(order):
        common = _common_length(values[before], values[after])
        shared[before] = max(shared[before], common)
        shared[after] = max(shared[after], common)
    return shared


def _common_length(a: str, b: str) -> int:
    """How many first characters `a` and `b` share (short: distinct values part soon)."""
    size = min(len(a), len(b))
    at = 0
    while at < size and a[at] == b[at]:
        at += 1
    return at


def _looks_random(piece: str) -> bool:
    if not piece.isalnum():
        if any(c.isspace() for c in piece):
            return False
        if sum(not c.isalnum() for c in piece) > _PIECE_PUNCTUATION:
            return False
    has_lower, has_upper = piece != piece.upper(), piece != piece.lower()
    return has_lower + has_upper + any(c.isdigit() for c in piece) >= 2


@dataclass(frozen=True, slots=True)
class CutForm:
    """One text form of a value with its start and end pieces in the same form, and the
    characters other than letters and digits that the form holds (they continue it)."""

    form: str
    head: str | None
    tail: str | None
    joins: frozenset[str]

    def copies(self, text: str, number: int) -> Iterator[tuple[int, int, int]]:
        """The cut copies of this form in `text` (whole copies are not: `find` has them)."""
        form, head, tail = self.form, self.head, self.tail
        at = text.find(head) if head else -1
        while head and at >= 0:
            size = _common_start(text, at, form, len(head))
            end = at + size
            if size < len(form) and (end == len(text) or self._ends(text[end])):
                yield at, end, number
            at = text.find(head, end)
        at = text.find(tail) if tail else -1
        while tail and at >= 0:
            end = at + len(tail)
            size = _common_end(text, end, form, len(tail))
            if size < len(form) and (end == size or self._ends(text[end - size - 1])):
                yield end - size, end, number
            at = text.find(tail, end)

    def _ends(self, char: str) -> bool:
        return not char.isalnum() and char not in self.joins


def _common_start(text: str, at: int, form: str, known: int) -> int:
    """How many characters of `text` from `at` are `form`'s first (at least `known`)."""
    if text.startswith(form, at):
        return len(form)
    low, high = known, min(len(form), len(text) - at)  # text[at:at+low] matches
    while low < high:
        mid = (low + high + 1) // 2
        if text.startswith(form[:mid], at):
            low = mid
        else:
            high = mid - 1
    return low


def _common_end(text: str, end: int, form: str, known: int) -> int:
    """How many characters of `text` up to `end` are `form`'s last (at least `known`)."""
    if text.endswith(form, 0, end):
        return len(form)
    low, high = known, min(len(form), end)
    while low < high:
        mid = (low + high + 1) // 2
        if text.endswith(form[len(form) - mid :], 0, end):
            low = mid
        else:
            high = mid - 1
    return low


def cut_forms(value: str, head: str | None, tail: str | None) -> tuple[CutForm, ...]:
    """The forms of `value` a cut copy may take (as `known_values.text_forms`: itself, or
    JSON-escaped), each with its pieces (`cut_pieces`) in the same form."""
    if head is None and tail is None:
        return ()
    if plain(value):
        return (CutForm(value, head, tail, frozenset(c for c in set(value) if not c.isalnum())),)
    found: dict[str, CutForm] = {}
    for ascii_only in (None, False, True):
        form = _escaped(value, ascii_only)
        head_form = None if head is None else _escaped(head, ascii_only)
        tail_form = None if tail is None else _escaped(tail, ascii_only)
        joins = frozenset(c for c in set(form) if not c.isalnum())
        found.setdefault(form, CutForm(form, head_form, tail_form, joins))
    return tuple(found.values())


def _escaped(text: str, ascii_only: bool | None) -> str:
    """`text` itself (None), or JSON-escaped as a JSON document printed in a string holds it."""
    return text if ascii_only is None else json_escaped(text, ascii_only)


def json_escaped(text: str, ascii_only: bool) -> str:
    """`json.dumps(text, ensure_ascii=ascii_only)` without its quotes: the encoder's own string
    escapers (C), which `dumps` calls for a string after choosing one (an index of thousands
    of values calls this tens of thousands of times)."""
    escape = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    return escape(text)[1:-1]


def plain(text: str) -> bool:
    """Whether JSON escaping leaves `text` as it is (printable ASCII, no quote or backslash)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text
