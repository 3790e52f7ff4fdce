"""Cut copies of a known value (see known_values.py): a 2 KB preview that cuts a value, an
answer that quotes its first characters, a prompt that breaks it with a line break. A piece of
at least `CUT_PIECE` characters beyond the value's public prefix that is the value's start
(ending where the string ends or at a character the value cannot hold) or its end (starting
likewise) stands for the value.

Bounded time: each piece is placed by `str.find` of a fixed start or end piece, then extended
by a binary search of `startswith`/`endswith` (C speed, whatever the value's length).
"""

from __future__ import annotations

import bisect
import itertools
import json
import json.encoder
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, replace

# The shortest cut copy, in characters beyond a public prefix: 16 random characters are never a
# coincidence, and a value's public prefix alone names only its vendor.
CUT_PIECE = 16
# A piece stands for its value only when it looks random: two kinds of letter or digit, at
# most this many other characters (a path's or a URL's start is no token), no space.
_PIECE_PUNCTUATION = 2


def cut_pieces(value: str, prefix: str = "") -> tuple[str | None, str | None]:
    """The start and the end piece a cut copy of `value` holds at least (None: no cut copy
    of that end is looked for). `prefix`: the value's public prefix, never counted."""
    public = len(prefix) if prefix and value.startswith(prefix) else 0
    if len(value) - public <= CUT_PIECE:
        return None, None  # a piece that long is the whole value
    head, tail = value[: public + CUT_PIECE], value[-CUT_PIECE:]
    return (head if _looks_random(head[public:]) else None, tail if _looks_random(tail) else None)


def shared_starts(values: Sequence[str]) -> list[int]:
    """For each value, its longest common start with any other of `values` (neighbours once
    sorted): every 2048-bit RSA key's body starts `MIIEpAIBAAKCAQEA`. Used to pick what tells a
    value from the others (`distinct_probe`), never to drop a piece."""
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


# `CUT_PIECE` characters that JSON escaping leaves as they are (`plain`): printable ASCII but
# the quote and the backslash.
_PLAIN_PIECE = re.compile(rf"[\x20\x21\x23-\x5b\x5d-\x7e]{{{CUT_PIECE}}}")


def distinct_probe(value: str, shared: int) -> str | None:
    """A piece of `value` that every text form of it holds as it is (plain characters, which
    JSON escaping leaves alone) and that starts where the value parts from the others
    (`shared_starts`): a string without it holds no whole copy. None: no such piece."""
    start = min(shared, max(0, len(value) - CUT_PIECE))
    # The first plain piece from there on (a PEM key's body lines hold line breaks, which its
    # JSON forms escape: the piece is then taken within a line), else the first at all.
    found = _PLAIN_PIECE.search(value, start) or _PLAIN_PIECE.search(value)
    probe = found.group() if found else value[start : start + CUT_PIECE]
    return probe if probe and plain(probe) else None


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
    # The start this form shares with every known form of the same head, beyond the head
    # (PKCS#8 RSA keys share 34 characters): a text that holds it is compared from there on.
    lead: str = ""

    def head_copies(
        self, text: str, number: int, places: dict[str, list[int]]
    ) -> list[tuple[int, int, int]]:
        """The cut copies of this form in `text` that hold its start piece (whole copies are
        not: `ValueIndex.find` has them). `places`: where pieces occur in `text`, filled as
        they are looked for (values that share a piece look for it once per text)."""
        found: list[tuple[int, int, int]] = []
        form, head = self.form, self.head
        if not head:
            return found
        end = 0
        for at in _places(text, head, places):
            if at < end:
                continue  # inside the copy just taken: the search goes on after it
            known = len(head)
            if self.lead and text.startswith(self.lead, at):
                known = len(self.lead)
            after = at + known
            # The first character past the piece tells most copies' length at once.
            if after >= len(text) or form[known] != text[after]:
                size = known
            else:
                size = _common_start(text, at, form, known)
            end = at + size
            if size < len(form) and (end == len(text) or self._ends(text[end])):
                found.append((at, end, number))
        return found

    def tail_copies(
        self, text: str, number: int, places: dict[str, list[int]]
    ) -> list[tuple[int, int, int]]:
        """The cut copies of this form in `text` that hold its end piece (as `head_copies`)."""
        found: list[tuple[int, int, int]] = []
        form, tail = self.form, self.tail
        if not tail:
            return found
        stop = 0
        for at in _places(text, tail, places):
            if at < stop:
                continue
            known = len(tail)
            stop = at + known
            before = at - 1
            if before < 0 or form[-known - 1] != text[before]:
                size = known
            else:
                size = _common_end(text, stop, form, known)
            if size < len(form) and (stop == size or self._ends(text[stop - size - 1])):
                found.append((stop - size, stop, number))
        return found

    def _ends(self, char: str) -> bool:
        return not char.isalnum() and char not in self.joins


def _places(text: str, piece: str, places: dict[str, list[int]]) -> list[int]:
    """Every place `piece` starts in `text`, overlapping ones too, in order (looked for once)."""
    found = places.get(piece)
    if found is None:
        found = []
        at = text.find(piece)
        while at >= 0:
            found.append(at)
            at = text.find(piece, at + 1)
        places[piece] = found
    return found


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


# A character `CutForm._ends` may take for an end: what `str.isalnum` says no to (`\\w` is
# exactly the characters it says yes to, and `_`).
_NOT_ALNUM = re.compile(r"[\W_]")
# Values that share a start piece by this many forms or more are looked up as a group.
_GROUP_MIN = 8


class HeadGroups:
    """The cut forms that share a start piece, sorted, to tell at once which of them can have
    a cut copy where that piece stands in a text: a cut copy ends at a character that is not a
    letter or digit, so only a form that holds all of the text from the piece to the first
    such character can (one prefix search of the sorted forms); each of the others ends its
    match on a letter or digit there, where no copy ends. Every PKCS#8 RSA key starts alike: a
    text holding one made each of them be measured."""

    def __init__(self, cuts: Sequence[Sequence[CutForm]]) -> None:
        members: dict[str, list[tuple[str, tuple[int, int]]]] = {}
        for i, forms in enumerate(cuts):
            for j, cut in enumerate(forms):
                if cut.head:
                    members.setdefault(cut.head, []).append((cut.form, (i, j)))
        # By head: the (form, (value, form index)) entries in form order, and the forms alone.
        self._groups: dict[str, tuple[list[tuple[str, tuple[int, int]]], list[str]]] = {}
        for head, found in members.items():
            if len(found) >= _GROUP_MIN:
                found.sort()
                self._groups[head] = (found, [form for form, _ in found])
        self._heads = frozenset(self._groups)

    @property
    def heads(self) -> frozenset[str]:
        """The start pieces looked up as groups."""
        return self._heads

    def may_copy(self, text: str, head: str, places: dict[str, list[int]]) -> set[tuple[int, int]]:
        """(value, form index) of the group of `head` that can have a cut copy in `text` (see
        the class)."""
        found: set[tuple[int, int]] = set()
        entries, forms = self._groups[head]
        for at in _places(text, head, places):
            stop = _NOT_ALNUM.search(text, at + len(head))
            prefix = text[at : stop.start() if stop else len(text)]
            for k in range(bisect.bisect_left(forms, prefix), len(forms)):
                if not forms[k].startswith(prefix):
                    break
                found.add(entries[k][1])
        return found


def with_leads(cuts: Sequence[Sequence[CutForm]]) -> list[tuple[CutForm, ...]]:
    """The cut forms of many values, each with the start it shares with every other form of
    the same head (`CutForm.lead`): where thousands of values share a head, each copy's length
    is then told from past what they all share, not searched for from the head."""
    by_head: dict[str, list[tuple[int, int]]] = {}
    for i, forms in enumerate(cuts):
        for j, cut in enumerate(forms):
            if cut.head:
                by_head.setdefault(cut.head, []).append((i, j))
    leads: dict[tuple[int, int], str] = {}
    for members in by_head.values():
        if len(members) < 2:
            continue
        # What all of them share (a text holding any one of them holds it), not what each
        # shares with its nearest: the others then part from the text one character past it.
        texts = [cuts[i][j].form for i, j in members]
        shared = _common_length(min(texts), max(texts))
        for i, j in members:
            form = cuts[i][j].form
            if len(cuts[i][j].head or "") < shared < len(form):  # a whole form is no lead
                leads[(i, j)] = form[:shared]
    return [
        tuple(
            replace(cut, lead=leads[(i, j)]) if (i, j) in leads else cut
            for j, cut in enumerate(forms)
        )
        for i, forms in enumerate(cuts)
    ]


def cut_forms(value: str, head: str | None, tail: str | None) -> tuple[CutForm, ...]:
    """The forms of `value` a cut copy may take (as `known_values.text_forms`: itself, or
    JSON-escaped), each with its pieces (`cut_pieces`) in the same form."""
    if head is None and tail is None:
        return ()
    if plain(value):
        return (CutForm(value, head, tail, _joins(value)),)
    found: dict[str, CutForm] = {}
    for ascii_only in (None, False, True):
        form = _escaped(value, ascii_only)
        if form in found:
            continue
        head_form = None if head is None else _escaped(head, ascii_only)
        tail_form = None if tail is None else _escaped(tail, ascii_only)
        found[form] = CutForm(form, head_form, tail_form, _joins(form))
    return tuple(found.values())


_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)


def _joins(form: str) -> frozenset[str]:
    """The characters of `form` other than letters and digits (in C for ASCII: an index of
    thousands of values makes these for each)."""
    chars = set(form)
    if form.isascii():
        return frozenset(chars.difference(_ASCII_ALNUM))
    return frozenset(c for c in chars if not c.isalnum())


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


def longest_apart(spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Copies that do not overlap, in order: of two that overlap the longer stays (the first
    found of two as long), so a value that is a prefix of another never cuts its copy."""
    if len(spans) < 2:
        return spans
    spans.sort(key=lambda s: (s[0], -s[1]))
    kept = [spans[0]]
    for span in spans[1:]:
        if span[0] >= kept[-1][1]:
            kept.append(span)
        elif span[1] - span[0] > kept[-1][1] - kept[-1][0]:
            kept[-1] = span
    # A longer span replacing an earlier one may now overlap the one kept before it.
    result = [kept[0]]
    for span in kept[1:]:
        if span[0] >= result[-1][1]:
            result.append(span)
    return result
