"""Rewrite one transcript line with parts of some string values replaced, and nothing else.

Why not parse the line and dump it again: a dump is a different file. `json.dumps` writes `1e5`
as `100000.0`, drops the digits of `0.10000000000000000001` that a double cannot hold, and
changes escapes (`\\u00e9`, `\\/`) and spacing. Claude Code, `--check` and anyone diffing a
redacted copy against the original expect every byte that is not a secret to stay put
(identifiers, signatures, image data, numbers). So we walk the raw JSON text instead, find the
byte range of each target string token, and splice a new token in its place. Every other byte of
the line is copied verbatim, and a token whose text does not change is not touched either.

Targets are named by JSON Pointers (RFC 6901, https://www.rfc-editor.org/rfc/rfc6901) into the
line's value, and edits by [start, end) spans in code points of the decoded string, which is what
a detector sees in the parsed record. A pointer names a value, never an object key: keys are
structure and are never rewritten.

Speed: the walk only descends into containers on the way to a target. Members and elements that
are not wanted are passed with a regex match or two each, strings are found with bytes.find or a
possessive pattern (never backtracking), and the rest of an array after the last wanted element
is skipped bracket to bracket. A 5.6 MB line with one finding takes about 60-90 ms; lines of the
leakbench carriers go through at about 27 MB/s, most of it per-member overhead (measured on the
2-core dev machines; see tests/unit/redaction for the bounds the tests hold).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from scrubber.errors import ScrubberError


class Replacement(NamedTuple):
    """Replace code points [start, end) of a string with `text` (a placeholder, usually)."""

    start: int
    end: int
    text: str


Replacements = Sequence[tuple[int, int, str]]


class RewriteError(ScrubberError, ValueError):
    """A rewrite that cannot be done as asked. Messages name places and sizes, never content."""


class InvalidPointer(RewriteError):
    """The text is not a JSON Pointer."""


class PointerNotFound(RewriteError):
    """The pointer names nothing in this line."""


class NotAString(RewriteError):
    """The pointer names a value that is not a string (or names the line's whole object)."""


class BadSpan(RewriteError):
    """A replacement span is outside its string, or overlaps another."""


class MalformedLine(RewriteError):
    """The line is not the JSON text the caller said it was."""


# --- JSON Pointers ------------------------------------------------------------------------------

_BAD_POINTER_ESCAPE = re.compile(r"~(?![01])")


def escape_pointer_token(token: str) -> str:
    """One reference token, escaped: `~` as `~0`, then `/` as `~1` (RFC 6901, section 3)."""
    if "~" in token:
        token = token.replace("~", "~0")
    if "/" in token:
        token = token.replace("/", "~1")
    return token


def child_pointer(parent: str, part: str | int) -> str:
    """The pointer of a member (`str` key) or element (`int` index) of the value at `parent`."""
    if isinstance(part, int):
        if isinstance(part, bool) or part < 0:
            raise InvalidPointer("an array index in a JSON Pointer is a non-negative integer")
        return f"{parent}/{part}"
    return f"{parent}/{escape_pointer_token(part)}"


def pointer_for(parts: Iterable[str | int]) -> str:
    """The JSON Pointer of the value reached by these keys and indices ("" is the whole value)."""
    pointer = ""
    for part in parts:
        pointer = child_pointer(pointer, part)
    return pointer


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """The reference tokens of a JSON Pointer, unescaped; array indices stay decimal strings."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise InvalidPointer("a JSON Pointer is empty or starts with '/'")
    if _BAD_POINTER_ESCAPE.search(pointer):
        raise InvalidPointer("in a JSON Pointer, '~' is followed by '0' or '1'")
    # RFC 6901, section 4: `~1` first, then `~0`, so that `~01` becomes `~1`, not `/`.
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


# --- JSON string tokens -------------------------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Text that JSON.stringify writes as it is, between the quotes (no escape needed).
_PLAIN_TEXT = re.compile('[^"\\\\\x00-\x1f\ud800-\udfff]*')


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def encode_json_string(text: str) -> bytes:
    """`text` as a JSON string token, written the way Claude Code (JavaScript) writes it.

    JSON.stringify (ECMA-262, "QuoteJSONString") escapes `"` and `\\`, writes \\b \\f \\n \\r \\t
    in short form, other control characters and lone surrogates as lower-case `\\u00xx`, and
    leaves everything else, non-ASCII included, as UTF-8. Python's encoder does the same except
    that it leaves lone surrogates raw, which UTF-8 cannot hold: we escape those ourselves. (A
    high and a low surrogate that end up next to each other read back as one astral character,
    exactly as in JavaScript, whose strings are UTF-16.)
    """
    encoded = json.dumps(text, ensure_ascii=False)
    if _LONE_SURROGATE.search(encoded) is not None:
        encoded = _LONE_SURROGATE.sub(_escape_surrogate, encoded)
    return encoded.encode("utf-8")


def decode_json_string(token: bytes) -> str:
    """The string a JSON string token (quotes included) stands for."""
    try:
        value = json.loads(token.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        # `from None`: a JSONDecodeError carries the whole document, and this one is a secret.
        raise MalformedLine("a string token is not valid JSON text") from None
    if not isinstance(value, str):
        raise MalformedLine("a string token is not valid JSON text")
    return value


def replace_spans(text: str, replacements: Replacements) -> str:
    """`text` with each [start, end) code-point span replaced; spans refer to the original text.

    Spans may come in any order but must not overlap (empty spans insert).
    """
    size = len(text)
    pieces: list[str] = []
    cursor = 0
    for start, end, new in sorted(replacements, key=lambda r: (r[0], r[1])):
        if not 0 <= start <= end <= size:
            raise BadSpan(f"span [{start}, {end}) is outside a string of {size} code points")
        if start < cursor:
            raise BadSpan(f"span [{start}, {end}) overlaps the span before it, ending at {cursor}")
        pieces.append(text[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


# --- Walking the raw JSON text ------------------------------------------------------------------

_WS = re.compile(rb"[ \t\n\r]*+")
# A whole string token as an "unrolled loop" with possessive quantifiers: unambiguous, so it never
# backtracks, and about 130 MB/s even when every other character is escaped (measured; the plain
# `"(?:[^"\\]|\\.)*"` is five times slower).
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
# A key, its colon and the blanks around it, in one match: objects on the way to a target are
# walked member by member, and a line's records have dozens of members.
_MEMBER = re.compile(rb'"([^"\\]*+(?:\\.[^"\\]*+)*+)"[ \t\n\r]*+:[ \t\n\r]*+', re.DOTALL)
# What follows a value inside a container: blanks, then ',' or the closing bracket, then blanks.
_SEPARATOR = re.compile(rb"[ \t\n\r]*+([,\]}])[ \t\n\r]*+")
# Python's json (the reader's fallback parser) also reads Infinity, -Infinity and NaN: a line
# that holds them was parsed, so its strings must be rewritable too.
_SCALAR = re.compile(
    rb"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?[0-9]++)?+|true|false|null|-?Infinity|NaN"
)
# Everything up to the next bracket that is not inside a string: what a skipped container is made
# of between its brackets. Stops early at a quote that opens a string with no end.
_SKIP_RUN = re.compile(rb'[^"\[\]{}]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^"\[\]{}]*+)*+', re.DOTALL)
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")  # RFC 6901: no leading zeros, no "-" (past the end)

# Walking a member in Python costs a few microseconds, and records have dozens of members, so
# the common member (a key that needs no unescaping, a value nesting at most four brackets deep)
# is passed in one regex call. Inside such a value the pattern only pairs brackets and finds
# whole strings, which is enough for a line the reader has already parsed. Anything else (an
# escaped key, a deep value) goes through the step-by-step walk.
_WS_B = rb"[ \t\n\r]*+"
_STRING_B = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_SCALAR_B = (
    rb"(?:-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?[0-9]++)?+|true|false|null|-?Infinity|NaN)"
)


def _container_pattern(depth: int) -> bytes:
    """An array or object nesting at most `depth` brackets deep (the pattern doubles per level)."""
    inner = _STRING_B if depth == 1 else _STRING_B + rb"|" + _container_pattern(depth - 1)
    inside = rb'(?:[^"\[\]{}]++|' + inner + rb")*+"
    return rb"(?:\[" + inside + rb"\]|\{" + inside + rb"\})"


_VALUE_B = rb"(?:" + _STRING_B + rb"|" + _container_pattern(4) + rb"|" + _SCALAR_B + rb")"


# The two patterns below are compiled when a rewrite first needs them, not at import: 9 ms,
# paid by every command that imports this module (an audit does) and rewrites nothing.
@functools.cache
def _simple_member_value() -> re.Pattern[bytes]:
    """A member's value; group: what follows it (',' or the closing brace)."""
    return re.compile(_VALUE_B + _WS_B + rb"([,}])" + _WS_B, re.DOTALL)


@functools.cache
def _simple_element() -> re.Pattern[bytes]:
    """An array's element; group: what follows it (',' or the closing bracket)."""
    return re.compile(_VALUE_B + _WS_B + rb"([,\]])" + _WS_B, re.DOTALL)


_QUOTE, _LBRACE, _RBRACE, _LBRACKET, _RBRACKET, _COMMA, _BACKSLASH = b'"{}[],\\'


@dataclass(slots=True, eq=False)
class _Target:
    """A node of the tree of wanted pointers, and what the walk saw there."""

    children: dict[str, _Target] = field(default_factory=dict)
    # The same children by key as JavaScript writes it (the raw bytes between the quotes), so
    # that most keys are looked up without decoding, and by array index.
    by_raw_key: dict[bytes, _Target] = field(default_factory=dict)
    by_index: dict[int, _Target] = field(default_factory=dict)
    token: tuple[int, int] | None = None  # byte range of the string token last seen here
    not_string: bool = False  # the value last seen here was not a string

    def child(self, token: str) -> _Target:
        node = self.children.get(token)
        if node is None:
            node = self.children[token] = _Target()
            raw_key = (
                token.encode("utf-8")
                if _PLAIN_TEXT.fullmatch(token)
                else encode_json_string(token)[1:-1]
            )
            self.by_raw_key[raw_key] = node
            if _ARRAY_INDEX.fullmatch(token):
                self.by_index[int(token)] = node
        return node


def _run_end(pattern: re.Pattern[bytes], raw: bytes, pos: int) -> int:
    """Where a pattern that can match nothing (a `*` run) stops matching from `pos`."""
    match = pattern.match(raw, pos)
    if match is None:  # pragma: no cover - every caller's pattern matches the empty string
        raise MalformedLine(f"unexpected text at byte {pos}")
    return match.end()


class _Walk:
    """One pass over a line's bytes, descending only towards wanted values.

    Object members are all visited even after every target was seen: for duplicate keys the
    last occurrence wins, as in json.loads and JSON.parse, so the token we rewrite is the one a
    reader of the line sees. Arrays are left as soon as the last wanted index is passed.
    """

    __slots__ = ("raw", "size")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.size = len(raw)

    def ws(self, pos: int) -> int:
        return _run_end(_WS, self.raw, pos)

    def string_end(self, pos: int) -> int:
        raw = self.raw
        # Most strings hold no escaped quote: then the first quote after the opening one closes
        # it, and bytes.find gets there at memchr speed (about 5x the regex on file contents).
        close = raw.find(b'"', pos + 1)
        if close > pos and raw[close - 1] != _BACKSLASH:
            return close + 1
        match = _STRING.match(raw, pos)
        if match is None:
            raise MalformedLine(f"a string at byte {pos} has no end")
        return match.end()

    def separator(self, pos: int, closer: int) -> tuple[int, bool]:
        """After a value in a container: the next position, and whether the container ended."""
        match = _SEPARATOR.match(self.raw, pos)
        if match is None:
            raise MalformedLine(f"expected ',' or a closing bracket at byte {pos}")
        found = match[1][0]
        if found == _COMMA:
            return match.end(), False
        if found != closer:
            raise MalformedLine(f"mismatched bracket at byte {match.start(1)}")
        return match.start(1) + 1, True

    def value(self, pos: int, node: _Target) -> int:
        if pos >= self.size:
            raise MalformedLine("the line ends where a value should start")
        first = self.raw[pos]
        if first == _QUOTE:
            end = self.string_end(pos)
            node.token, node.not_string = (pos, end), False
            return end
        node.token, node.not_string = None, True
        if first == _LBRACE and node.children:
            return self.members(pos, node)
        if first == _LBRACKET and node.by_index:
            return self.elements(pos, node)
        return self.skip(pos)

    def members(self, pos: int, node: _Target) -> int:
        raw, by_raw_key, children = self.raw, node.by_raw_key, node.children
        pos = self.ws(pos + 1)
        if pos < self.size and raw[pos] == _RBRACE:
            return pos + 1
        while True:
            match = _MEMBER.match(raw, pos)
            if match is None:
                raise MalformedLine(f"expected a key at byte {pos}")
            key = match[1]
            child = by_raw_key.get(key)
            if child is None and _BACKSLASH in key:  # written with escapes JavaScript avoids
                child = children.get(decode_json_string(b'"' + key + b'"'))
            pos = match.end()
            if child is None:
                simple = _simple_member_value().match(raw, pos)
                if simple is not None:
                    if simple[1] == b"}":
                        return simple.start(1) + 1
                    pos = simple.end()
                    continue
                pos = self.skip(pos)
            else:
                pos = self.value(pos, child)
            pos, ended = self.separator(pos, _RBRACE)
            if ended:
                return pos

    def elements(self, pos: int, node: _Target) -> int:
        raw, by_index = self.raw, node.by_index
        pos = self.ws(pos + 1)
        if pos < self.size and raw[pos] == _RBRACKET:
            return pos + 1
        remaining = len(by_index)
        index = 0
        while True:
            child = by_index.get(index)
            if child is None:
                simple = _simple_element().match(raw, pos)
                if simple is not None:
                    if simple[1] == b"]":
                        return simple.start(1) + 1
                    pos = simple.end()
                    index += 1
                    continue
                pos = self.skip(pos)
            else:
                pos = self.value(pos, child)
                remaining -= 1
            pos, ended = self.separator(pos, _RBRACKET)
            if ended:
                return pos
            index += 1
            if not remaining:  # nothing wanted further on: find the closing bracket
                return self.close(pos, [_RBRACKET])

    def scalar(self, pos: int) -> int:
        match = _SCALAR.match(self.raw, pos)
        if match is None:
            raise MalformedLine(f"expected a value at byte {pos}")
        return match.end()

    def skip(self, pos: int) -> int:
        """The end of the value at `pos`, without looking inside it more than needed."""
        if pos >= self.size:
            raise MalformedLine("the line ends where a value should start")
        first = self.raw[pos]
        if first == _QUOTE:
            return self.string_end(pos)
        if first == _LBRACE:
            return self.close(pos + 1, [_RBRACE])
        if first == _LBRACKET:
            return self.close(pos + 1, [_RBRACKET])
        return self.scalar(pos)

    def close(self, pos: int, closers: list[int]) -> int:
        """Past the bracket that closes the innermost of the open containers in `closers`."""
        raw, size = self.raw, self.size
        while True:
            pos = _run_end(_SKIP_RUN, raw, pos)
            if pos >= size:
                raise MalformedLine("the line ends inside a value")
            char = raw[pos]
            if char == _LBRACE:
                closers.append(_RBRACE)
            elif char == _LBRACKET:
                closers.append(_RBRACKET)
            elif char in (_RBRACE, _RBRACKET):
                if closers.pop() != char:
                    raise MalformedLine(f"mismatched bracket at byte {pos}")
                if not closers:
                    return pos + 1
            else:
                raise MalformedLine(f"a string at byte {pos} has no end")
            pos += 1


def locate_strings(raw: bytes, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """The [start, end) byte range of the string token (quotes included) at each pointer.

    `raw` is one JSON text (a transcript line, without or with its newline). Raises
    PointerNotFound, NotAString, InvalidPointer or MalformedLine.
    """
    root = _Target()
    wanted: dict[str, _Target] = {}
    for pointer in pointers:
        node = root
        for token in parse_pointer(pointer):
            node = node.child(token)
        wanted[pointer] = node
    if not wanted:
        return {}
    walk = _Walk(raw)
    end = walk.ws(walk.value(walk.ws(0), root))
    if end != len(raw):
        raise MalformedLine(f"unexpected data after the JSON value, at byte {end}")
    found: dict[str, tuple[int, int]] = {}
    for pointer, node in wanted.items():
        if node.token is not None:
            found[pointer] = node.token
        elif node.not_string:
            raise NotAString(f"the value at JSON Pointer {pointer!r} is not a string")
        else:
            raise PointerNotFound(f"no value at JSON Pointer {pointer!r}")
    return found


# --- Rewriting ----------------------------------------------------------------------------------


def rewrite_json_line(raw: bytes, replacements: Mapping[str, Replacements]) -> bytes:
    """`raw` with the replacements applied to the string values their pointers name.

    Only those string tokens change; every other byte is copied. A string whose text comes out
    unchanged keeps its original token. With nothing to replace, `raw` itself is returned.
    """
    edits_by_pointer = {pointer: edits for pointer, edits in replacements.items() if edits}
    if not edits_by_pointer:
        return raw
    tokens = locate_strings(raw, edits_by_pointer)
    splices: list[tuple[int, int, bytes]] = []
    for pointer, (start, end) in tokens.items():
        old = decode_json_string(raw[start:end])
        try:
            new = replace_spans(old, edits_by_pointer[pointer])
        except BadSpan as exc:
            raise BadSpan(f"{exc.message}, at JSON Pointer {pointer!r}") from None
        if new != old:
            splices.append((start, end, encode_json_string(new)))
    if not splices:
        return raw
    splices.sort()
    pieces: list[bytes] = []
    cursor = 0
    for start, end, token in splices:
        pieces.append(raw[cursor:start])
        pieces.append(token)
        cursor = end
    pieces.append(raw[cursor:])
    return b"".join(pieces)


def rewrite_text_line(raw: bytes, replacements: Replacements) -> bytes:
    """`raw` (a line that is not JSON: a torn last line, say) with code-point spans replaced.

    Spans count code points of the line decoded as UTF-8 with `surrogateescape`, as the scanner
    reads such lines, so bytes that are not UTF-8 survive the round trip unchanged.
    """
    if not replacements:
        return raw
    text = raw.decode("utf-8", errors="surrogateescape")
    new = replace_spans(text, replacements)
    try:
        return new.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        raise RewriteError("a replacement holds a character that UTF-8 cannot encode") from None
