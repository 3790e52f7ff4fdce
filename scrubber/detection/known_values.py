"""A value found once is a secret everywhere: where else a session holds the values its
detectors found.

A detector sees a secret where its shape or its context gives it away (`AWS_SECRET=…` in a
tool-results file); the same value printed bare elsewhere (`err <40 chars>` on a failing
command's stderr) wakes nothing. So audit and redact collect the distinct values their
detectors found in a session, and every other exact occurrence of one of them, raw or
JSON-escaped, in any string of the session's files, is a finding of the same kind too (marked
as found by value), and is redacted.

Bounded time, whatever the input: one literal search (hyperscan, or the pure-Python fallback of
`prefilter_literals`, same matches) finds where the first `_ANCHOR` bytes of any form of any
value occur (or its start and end pieces, below); only the lines it names are parsed, and there
`str.find` (linear, two-way for long needles) places each candidate value's copies, never
overlapping. No value is searched for
on its own over the data.

A cut copy is a copy too: a 2 KB preview cuts a value, an answer quotes its first characters,
a prompt breaks it with a line break. A piece of at least `CUT_PIECE` characters (beyond a
public prefix such as `ghp_`) that is a value's start, ending at the string's end or at a
character the value cannot hold, or its end, starting likewise, is found as the value
(cut_copies.py; the literal search looks for each value's start and end pieces as well).

Precision guards: a value propagates only when it is long enough, not a decoy shape (uuids,
ids, numbers, hashes from a generic detector, a single kind of character) and it is never
looked for in a protected field (ids, signatures, chain fields) or in image data.

Values are held in memory only while one run needs them: never in a `Finding`, a repr, a log
line or a file.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scrubber.detection.anchor_groups import AnchorGroups
from scrubber.detection.crowd_filter import CROWD_MIN, CrowdFilter
from scrubber.detection.cut_copies import (
    CutForm,
    HeadGroups,
    cut_forms,
    cut_pieces,
    distinct_probe,
    json_escaped,
    longest_apart,
    plain,
    shared_starts,
    with_leads,
)
from scrubber.detection.placeholder import PLACEHOLDER_PREFIX, make_placeholder
from scrubber.detection.prefilter_literals import LiteralEvents, LiteralsCompiling
from scrubber.transcript.records import UNSCANNED_KEYS, json_pointer

MIN_LENGTH = 8
# The literal search looks for this many bytes of each form; longer forms (a PEM key, a
# several-MB value) are then placed by `str.find` on the lines where their start occurs.
_ANCHOR = 64

_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_ASCII_DIGIT = re.compile(r"[0-9]")
# Claude Code's and the Messages API's ids (tool_use ids, message ids, request ids): they
# repeat across records by design.
_ID = re.compile(r"(?:toolu|srvtoolu|msg|req|call|chatcmpl|file|agent)_[A-Za-z0-9_-]+")
_DIGEST = re.compile(r"(?:sha(?:1|224|256|384|512)|md5)[-:=]", re.IGNORECASE)
# Detectors that judge a value by its name or its context, not by a vendor's token format: a
# hex string they found may be a hash printed next to a `secret=` label, and its copies
# elsewhere unrelated. A vendor's hex API key (found by its own format) does propagate.
_GENERIC_KINDS = frozenset(
    {
        "dotenv-value", "sensitive-key-value", "connection-string-password", "url-query-secret",
        "cli-password", "netrc-password", "authorization-header", "docker-registry-auth",
        "npmrc-auth", "sidekiq-credentials",
    }
)  # fmt: skip


def propagates(value: str, kind: str) -> bool:
    """Whether copies of `value` (found as `kind`) elsewhere in its session are secrets too."""
    if len(value) < MIN_LENGTH or PLACEHOLDER_PREFIX in value or not value.strip():
        return False
    if _UUID.fullmatch(value) or _ID.fullmatch(value) or _DIGEST.match(value):
        return False
    ascii_only = value.isascii()  # then whole-string tests in C say what a loop would
    if not (_ASCII_LETTER.search(value) if ascii_only else any(c.isalpha() for c in value)):
        return False  # numbers, dates, versions, phone numbers
    generic = kind in _GENERIC_KINDS or kind.startswith("detect-secrets")
    if generic and _HEX.fullmatch(value):
        return False  # a git sha, a checksum
    if ascii_only:
        classes = (
            value != value.upper(),
            value != value.lower(),
            _ASCII_DIGIT.search(value) is not None,
            not value.isalnum(),
        )
    else:
        classes = (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    return sum(classes) >= 2  # a plain word ("production") repeats for its own reasons


@dataclass(frozen=True, slots=True)
class ValueInfo:
    """What a found value was found as: its copies are reported and redacted the same way."""

    kind: str
    detector: str
    fingerprint: str  # the full keyed fingerprint (placeholders take its first hex digits)
    prefix: str = ""


Scope = str  # a session id, or a file's own path for a file outside any session


@dataclass(slots=True)
class _Entry:
    info: ValueInfo
    scopes: set[Scope]


class KnownValues:
    """The distinct values found so far, each with what it was found as and in which scopes.
    Its repr shows a count only."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._index: ValueIndex | None = None
        # Counts every change (a value, or a scope of one, added): what is built from the
        # values (an index) is stale once this moved on.
        self.changes = 0

    def __repr__(self) -> str:
        return f"KnownValues({len(self._entries)} values)"

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, value: str, info: ValueInfo, scope: Scope) -> bool:
        """Remember `value` for `scope`; False when the guards keep it out."""
        entry = self._entries.get(value)
        if entry is None:
            if not propagates(value, info.kind):
                return False
            self._entries[value] = _Entry(info, {scope})
            self._index = None
            self.changes += 1
            return True
        if scope not in entry.scopes:
            entry.scopes.add(scope)
            self._index = None
            self.changes += 1
        return True

    def update(self, other: KnownValues) -> None:
        for value, entry in other._entries.items():
            for scope in entry.scopes:
                self.add(value, entry.info, scope)

    def items(self) -> Iterator[tuple[str, ValueInfo, frozenset[Scope]]]:
        for value, entry in self._entries.items():
            yield value, entry.info, frozenset(entry.scopes)

    def scopes(self) -> frozenset[Scope]:
        return frozenset(s for entry in self._entries.values() for s in entry.scopes)

    def index(self, engine: str = "auto") -> ValueIndex:
        if self._index is None or self._index.engine != engine:
            self._index = ValueIndex(self, engine)
        return self._index


def text_forms(value: str) -> tuple[str, ...]:
    """How a value can appear in a decoded string: as itself, or JSON-escaped (a JSON document
    printed by a tool, inside a transcript string)."""
    if plain(value):
        return (value,)
    forms = [value]
    for ensure_ascii in (False, True):
        escaped = json_escaped(value, ensure_ascii)
        if escaped not in forms:
            forms.append(escaped)
    return tuple(forms)


def raw_forms(value: str) -> tuple[bytes, ...]:
    """How a value can appear in a file's bytes: each text form as written in a text file, or
    escaped once more as a JSON line writes it (with JSON's optional `\\/` too)."""
    found: list[bytes] = []
    for form in text_forms(value):
        for written in (form, *text_forms(form)[1:]):
            for variant in (written, written.replace("/", "\\/")):
                data = variant.encode("utf-8", "surrogatepass")
                if data not in found:
                    found.append(data)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Copy:
    """One exact occurrence of a known value in a string (code points, [start, end))."""

    pointer: str | None  # into the line's object; None for text
    start: int
    end: int
    value: int  # the value's number in its index
    in_thinking: bool = False


class ValueIndex:
    """The literal search over every form of every known value (see the module's docstring)."""

    def __init__(self, known: KnownValues, engine: str = "auto") -> None:
        self.engine = engine
        self._values: list[str] = []
        self._infos: list[ValueInfo] = []
        self._scopes: list[frozenset[Scope]] = []
        self._forms: list[tuple[str, ...]] = []
        self._cuts: list[tuple[CutForm, ...]] = []
        anchors: dict[bytes, set[int]] = {}
        # The same anchors by role: of a value's start (its start piece, or the whole value)
        # and of its end piece; a cut copy holds only one of the two (`copies_all_found`).
        starts: dict[bytes, set[int]] = {}
        ends: dict[bytes, set[int]] = {}
        items = list(known.items())
        shared = shared_starts([value for value, _, _ in items])
        # For each value, what a string must hold to hold a whole copy of it (None: any).
        self._probes: list[str | None] = []
        self._by_scope: dict[Scope, frozenset[int]] | None = None  # each scope's values
        pieces: list[tuple[str | None, str | None]] = []
        for number, (value, info, scopes) in enumerate(items):
            self._values.append(value)
            self._infos.append(info)
            self._scopes.append(scopes)
            self._forms.append(text_forms(value))
            self._probes.append(distinct_probe(value, shared[number]))
            head, tail = cut_pieces(value, info.prefix)
            pieces.append((head, tail))
            # Every whole copy holds the start piece: then that is the value's anchor too.
            texts = [value if head is None else head, *([] if tail is None else [tail])]
            for role, text in zip((starts, ends), texts, strict=False):
                for form in raw_forms(text):
                    anchor = form[:_ANCHOR]
                    anchors.setdefault(anchor, set()).add(number)
                    role.setdefault(anchor, set()).add(number)
        self._anchors = list(anchors.items())
        self._groups = AnchorGroups(len(items), list(anchors), starts, ends)
        self._by_fingerprint: dict[int, dict[str, int]] = {}
        self._lengths = [len(anchor) for anchor, _ in self._anchors]
        # Hyperscan compiles without the GIL: the anchors' database (most of a second for the
        # values of a whole config dir) is compiled on a thread while the cut forms are made.
        matcher = (
            LiteralsCompiling([a for a, _ in self._anchors], engine) if self._anchors else None
        )
        try:
            self._cuts = with_leads(
                [cut_forms(v, h, t) for v, (h, t) in zip(self._values, pieces, strict=True)]
            )
            self._head_groups = HeadGroups(self._cuts)
            self._crowd = CrowdFilter(
                self._probes, self._cuts, self._head_groups.heads, engine=engine
            )
        finally:
            self._matcher: LiteralEvents | None = matcher.result() if matcher else None

    def __repr__(self) -> str:
        return f"ValueIndex({len(self._values)} values)"

    def __bool__(self) -> bool:
        return bool(self._values)

    def info(self, number: int) -> ValueInfo:
        return self._infos[number]

    def of_scope(self, numbers: frozenset[int], scope: Scope) -> list[int]:
        """Those of `numbers` known for `scope`, in `numbers`' own order (the order copies are
        looked for in, which decides between equal spans). A line that holds the start every
        RSA key shares names them all: a set test each, not a look at each one's scopes."""
        common = numbers & self._values_of(scope)
        if len(common) == len(numbers):
            return list(numbers)
        return [n for n in numbers if n in common] if common else []

    def _values_of(self, scope: Scope) -> frozenset[int]:
        """The numbers of the values known for `scope` (each scope's, made once)."""
        if self._by_scope is None:
            by_scope: dict[Scope, set[int]] = {}
            for n, scopes in enumerate(self._scopes):
                for where in scopes:
                    by_scope.setdefault(where, set()).add(n)
            self._by_scope = {where: frozenset(found) for where, found in by_scope.items()}
        return self._by_scope.get(scope, frozenset())

    def knows(self, scope: Scope) -> bool:
        """Whether any value is known for `scope`."""
        return bool(self._values_of(scope))

    def scopes(self, number: int) -> frozenset[Scope]:
        return self._scopes[number]

    def line_candidates(
        self, data: bytes, lo: int = 0, hi: int | None = None
    ) -> list[tuple[int, int, frozenset[int]]]:
        """For the whole lines of `data[lo:hi]`: (start, end) in `data` of each line where a
        value may occur (its anchor does), and which values; in order."""
        hi = len(data) if hi is None else hi
        if self._matcher is None or hi <= lo:
            return []
        found: list[tuple[int, int, set[int]]] = []
        anchors, lengths = self._anchors, self._lengths
        for gate, end in sorted(self._matcher.events(data), key=lambda event: event[1]):
            start = end - lengths[gate]
            if start < lo or end > hi:
                continue
            if found and start < found[-1][1]:
                found[-1][2].update(anchors[gate][1])
                continue
            # Events come in order, so each search for a line's edges stops at the last line's.
            low = found[-1][1] if found else lo
            line_start = data.rfind(b"\n", low, start) + 1 or low
            line_end = data.find(b"\n", end, hi)
            found.append((line_start, hi if line_end < 0 else line_end, set(anchors[gate][1])))
        return [(s, e, frozenset(v)) for s, e, v in found]

    def copies_all_found(self, line: bytes, found: Mapping[int, int]) -> bool:
        """Whether every copy of a known value that a JSONL line can hold is one of the
        findings already there (`found`: value number -> how many), told from its bytes
        alone. With no `\\u` or `\\/` escape in the line, each string's bytes are the one
        escaping of its text (JSON's other escapes are each the only way to write their
        character), so every finding and every copy holds, where it starts, an anchor of its
        value's start (but a cut copy of the end), and one of its end piece (but a cut copy of
        the start): when the anchors of values that share them (RSA keys share their start)
        occur no more often than those values were found, each copy is a finding. (False: the
        line must be read.)"""
        if self._matcher is None or b"\\u" in line or b"\\/" in line:
            return False
        return self._groups.all_found([g for g, _ in self._matcher.events(line)], found)

    def number_of(self, fingerprint: str) -> int | None:
        """The number of the value whose fingerprint starts with `fingerprint` (as findings
        show it), if it is known."""
        size = len(fingerprint)
        numbers = self._by_fingerprint.get(size)
        if numbers is None:
            numbers = {info.fingerprint[:size]: n for n, info in enumerate(self._infos)}
            self._by_fingerprint[size] = numbers
        return numbers.get(fingerprint)

    def find(self, text: str, numbers: Iterable[int]) -> list[tuple[int, int, int]]:
        """Non-overlapping copies of the given values' text forms in `text`, whole or cut (see
        the module's docstring), as (start, end, value number); where two overlap the longer
        wins (a value that is a prefix of another never cuts the other's copy)."""
        spans: list[tuple[int, int, int]] = []
        # Where the values' pieces occur, looked for once per text: values that share their
        # start (RSA keys) are all candidates wherever one of them is.
        places: dict[str, list[int]] = {}
        groups = self._head_groups
        grouped = groups.heads
        # By grouped head: the (value, form index) that may have a cut copy in this text.
        may_copy: dict[str, set[tuple[int, int]]] = {}
        wanted = numbers if isinstance(numbers, Sequence) else list(numbers)
        if self._crowd and len(wanted) >= CROWD_MIN:
            # Many candidates: the values of a crowd that cannot have a copy here go first.
            for start in grouped:
                if start in text:
                    may_copy[start] = groups.may_copy(text, start, places)
            wanted = self._crowd.narrowed(text, wanted, may_copy.values())
        probes, all_forms, all_cuts = self._probes, self._forms, self._cuts
        for number in wanted:
            probe = probes[number]
            if probe is None or probe in text:
                for form in all_forms[number]:
                    at = text.find(form)
                    while at >= 0:
                        spans.append((at, at + len(form), number))
                        at = text.find(form, at + len(form))
            for k, cut in enumerate(all_cuts[number]):
                head, tail = cut.head, cut.tail
                if head:
                    if head in grouped:
                        allowed = may_copy.get(head)
                        if allowed is None:
                            allowed = may_copy[head] = groups.may_copy(text, head, places)
                        if (number, k) in allowed:
                            spans.extend(cut.head_copies(text, number, places))
                    else:
                        spans.extend(cut.head_copies(text, number, places))
                # A tail the text does not hold has no copy (one C search, before a call).
                if tail and (tail in places or tail in text):
                    spans.extend(cut.tail_copies(text, number, places))
        return longest_apart(spans)

    def text_copies(self, text: str, scope: Scope | None = None) -> list[tuple[int, int, int]]:
        """Copies of the known values (of `scope`, when given) in one string: (start, end,
        value number), non-overlapping. For a title, a label, or the strings the status line
        reads."""
        if scope is not None and not self.knows(scope):
            return []  # a session none of whose values is known (most, in a large config)
        data = text.encode("utf-8", "surrogatepass")
        numbers = {n for _, _, found in self.line_candidates(data) for n in found}
        if scope is not None:
            numbers = {n for n in numbers if scope in self._scopes[n]}
        return self.find(text, sorted(numbers)) if numbers else []

    def may_hold(self, texts: Sequence[str], scope: Scope | None = None) -> set[int]:
        """Which of `texts` (their positions) may hold a copy of a value of `scope`: one
        search over them all, joined (a set of labels or commands, most holding nothing, is
        searched once rather than once each). A superset: `text_copies` tells for sure."""
        pieces = [text.encode("utf-8", "surrogatepass") for text in texts]
        starts: list[int] = []
        at = 0
        for piece in pieces:
            starts.append(at)
            at += len(piece) + 1
        flagged: set[int] = set()
        for start, end, numbers in self.line_candidates(b"\n".join(pieces)):
            if scope is not None and not any(scope in self._scopes[n] for n in numbers):
                continue
            # Every text the candidate line overlaps (a text may hold line breaks itself).
            first = bisect.bisect_right(starts, start) - 1
            last = bisect.bisect_right(starts, max(start, end - 1)) - 1
            flagged.update(range(max(first, 0), last + 1))
        return flagged

    def redact(self, text: str, scope: Scope | None = None) -> str:
        """`text` with every copy of a known value replaced by its placeholder."""
        copies = self.text_copies(text, scope)
        for start, end, number in reversed(copies):
            info = self._infos[number]
            text = text[:start] + make_placeholder(info.kind, info.fingerprint) + text[end:]
        return text


# -- where the strings of a record are -------------------------------------------------------


def record_copies(
    record: Mapping[str, Any], index: ValueIndex, numbers: Iterable[int]
) -> list[Copy]:
    """Copies of the given values in the string leaves of a record, as the scanner walks them:
    never in a protected field (ids, signatures, chain fields), an image or redacted thinking."""
    wanted = tuple(numbers)
    copies: list[Copy] = []
    for path, text, thinking in _leaves(record, [], False):
        if len(text) < MIN_LENGTH:
            continue
        found = index.find(text, wanted)
        if found:
            pointer = json_pointer(*path)
            copies.extend(Copy(pointer, s, e, n, thinking) for s, e, n in found)
    return copies


def _leaves(
    value: Any, path: list[str | int], thinking: bool
) -> Iterator[tuple[list[str | int], str, bool]]:
    # Parsed JSON holds its objects as dicts: `isinstance(…, dict)`, not the `Mapping` ABC,
    # whose check costs ten times as much on every node walked.
    if isinstance(value, str):
        yield path, value, thinking
    elif isinstance(value, dict):
        kind = value.get("type")
        if kind in ("redacted_thinking", "image", "base64") or "media_type" in value:
            return  # opaque data and base64 payloads: not text
        inner = thinking or kind == "thinking"
        for key, item in value.items():
            if key in UNSCANNED_KEYS and isinstance(item, str):
                continue
            yield from _leaves(item, [*path, key], inner)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict) and item.get("type") in ("image", "document"):
                continue
            yield from _leaves(item, [*path, i], thinking)
