"""Invariants 2 and 3 at the level of one line: a rewrite changes only the chosen string leaves,
and a placeholder, once written, is masked exactly where it sits.

Documents are serialised by the test itself (not by the code under test), with numbers in every
shape JSON allows, strings in several escape styles (JavaScript's, all-ASCII, `\\/`, upper-case
hex) and spacing from JSON.stringify's compact form to arbitrary blanks, so that "every byte
outside the changed tokens is identical" means something. The stdlib parser is the oracle.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scrubber.detection.placeholder import (
    MASK_CHAR,
    PLACEHOLDER_PREFIX,
    make_placeholder,
    mask_placeholders,
    parse_placeholder,
    placeholder_spans,
)
from scrubber.redaction.rewrite import (
    RewriteError,
    decode_json_string,
    encode_json_string,
    parse_pointer,
    pointer_for,
    rewrite_json_line,
    rewrite_text_line,
)


def utf16_normal(text: str) -> str:
    """`text` as a UTF-16 reader (JSON.parse, or json.loads on `\\u` escapes) sees it: a high
    surrogate followed by a low one is one astral character."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# Every code point, lone surrogates included, biased towards what makes escaping interesting.
chars = st.one_of(
    st.characters(exclude_categories=()),
    st.sampled_from(['"', "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "😀", "\u2028"]),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
texts = st.text(chars, max_size=16).map(utf16_normal)
keys = st.text(chars, max_size=6).map(utf16_normal)


@dataclass(frozen=True, slots=True)
class RawNumber:
    """A number token exactly as written, e.g. `1.0`, `-0`, `1E+05`, a 40-digit integer."""

    text: str


numbers = st.from_regex(
    r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,8})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
).map(RawNumber)
scalars = st.one_of(texts, numbers, st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=16,
)
documents = st.one_of(st.dictionaries(keys, values, max_size=5), values)


# --- The test's own serialiser ------------------------------------------------------------------

_LONE = re.compile("[\ud800-\udfff]")


def _js_string(text: str) -> str:
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _string_token(text: str, rnd: random.Random) -> bytes:
    style = rnd.randrange(4)
    if style == 0:  # what JSON.stringify writes
        token = _js_string(text)
    elif style == 1:  # all ASCII, astral characters as surrogate pairs
        token = json.dumps(text)
    elif style == 2:  # escaped solidus, which JSON allows and nobody needs
        token = json.dumps(text).replace("/", "\\/")
    else:  # upper-case hex escapes
        token = re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), json.dumps(text))
    return token.encode("utf-8")


@dataclass(slots=True)
class Serialised:
    raw: bytearray = field(default_factory=bytearray)
    strings: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer -> token bytes


def _blank(rnd: random.Random, mode: int) -> bytes:
    if mode == 0:  # compact, as JSON.stringify
        return b""
    if mode == 1:
        return b" "
    return rnd.choice([b"", b" ", b"  ", b"\t", b"\n", b"\r\n", b" \t "])


def serialise(value: Any, rnd: random.Random, mode: int, out: Serialised, path: str = "") -> None:
    raw = out.raw
    if isinstance(value, str):
        start = len(raw)
        raw += _string_token(value, rnd)
        out.strings[path] = (start, len(raw))
    elif isinstance(value, RawNumber):
        raw += value.text.encode()
    elif value is True or value is False or value is None:
        raw += json.dumps(value).encode()
    elif isinstance(value, list):
        raw += b"[" + _blank(rnd, mode)
        for index, item in enumerate(value):
            if index:
                raw += _blank(rnd, mode) + b"," + _blank(rnd, mode)
            serialise(item, rnd, mode, out, f"{path}/{index}")
        raw += _blank(rnd, mode) + b"]"
    else:
        raw += b"{" + _blank(rnd, mode)
        for index, (key, item) in enumerate(value.items()):
            if index:
                raw += _blank(rnd, mode) + b"," + _blank(rnd, mode)
            raw += _string_token(key, rnd) + _blank(rnd, mode) + b":" + _blank(rnd, mode)
            token = key.replace("~", "~0").replace("/", "~1")  # RFC 6901, written out here
            serialise(item, rnd, mode, out, f"{path}/{token}")
        raw += _blank(rnd, mode) + b"}"


def get(value: Any, pointer: str) -> Any:
    for token in parse_pointer(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def put(value: Any, pointer: str, new: Any) -> Any:
    tokens = parse_pointer(pointer)
    if not tokens:
        return new
    parent = get(value, pointer_for(tokens[:-1]))
    parent[int(tokens[-1]) if isinstance(parent, list) else tokens[-1]] = new
    return value


@st.composite
def spans(draw: st.DrawFn, size: int) -> list[tuple[int, int, str]]:
    """Sorted, non-overlapping [start, end) spans within `size`, each with a replacement."""
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=6)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    replacement = st.one_of(
        texts,
        st.builds(
            make_placeholder,
            st.from_regex(r"[a-z0-9]+(-[a-z0-9]+)*", fullmatch=True),
            st.text("0123456789abcdef", min_size=8, max_size=64),
        ),
    )
    result = [(start, end, draw(replacement)) for start, end in pairs]
    return draw(st.permutations(result))  # the caller need not sort


def splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """The documented semantics: spans apply in (start, end) order, ties in the order given."""
    pieces, cursor = [], 0
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        pieces += [text[cursor:start], new]
        cursor = end
    return "".join([*pieces, text[cursor:]])


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


# --- Properties ---------------------------------------------------------------------------------


@settings(deadline=None)
@given(document=documents, rnd=st.randoms(use_true_random=False), data=st.data())
def test_rewrite_changes_exactly_the_chosen_string_leaves(
    document: Any, rnd: random.Random, data: st.DataObject
) -> None:
    mode = rnd.randrange(3)
    serialised = Serialised()
    serialise(document, rnd, mode, serialised)
    raw = bytes(serialised.raw) + rnd.choice([b"", b"\n"])
    original = json.loads(raw)
    leaves = sorted(serialised.strings)
    chosen = data.draw(st.lists(st.sampled_from(leaves), unique=True, max_size=5)) if leaves else []
    mapping = {pointer: data.draw(spans(len(get(original, pointer)))) for pointer in chosen}

    out = rewrite_json_line(raw, mapping)

    # The result parses to the original with exactly the chosen leaves changed: same keys in
    # the same order, same list lengths, same numbers.
    expected = copy.deepcopy(original)
    new_texts: dict[str, str] = {}
    for pointer, edits in mapping.items():
        new_texts[pointer] = utf16_normal(splice(get(original, pointer), edits))
        expected = put(expected, pointer, new_texts[pointer])
    assert json.dumps(json.loads(out)) == json.dumps(expected)  # order-sensitive equality

    # Every byte outside the rewritten tokens is the original byte; a token whose text did not
    # change was not even re-encoded.
    cursor_in, cursor_out = 0, 0
    for pointer in sorted(mapping, key=lambda p: serialised.strings[p]):
        start, end = serialised.strings[pointer]
        gap = raw[cursor_in:start]
        assert out[cursor_out : cursor_out + len(gap)] == gap
        cursor_out += len(gap)
        token = _TOKEN.match(out, cursor_out)
        assert token is not None
        assert json.loads(token.group()) == new_texts[pointer]
        if new_texts[pointer] == get(original, pointer):
            assert token.group() == raw[start:end]
        cursor_in, cursor_out = end, token.end()
    assert out[cursor_out:] == raw[cursor_in:]


@given(document=documents, rnd=st.randoms(use_true_random=False))
def test_nothing_to_replace_means_the_same_bytes(document: Any, rnd: random.Random) -> None:
    serialised = Serialised()
    serialise(document, rnd, rnd.randrange(3), serialised)
    raw = bytes(serialised.raw)
    assert rewrite_json_line(raw, {}) == raw
    # Replacing each leaf's text with itself finds every leaf and changes no byte.
    original = json.loads(raw)
    same = {p: [(0, len(get(original, p)), get(original, p))] for p in serialised.strings}
    assert rewrite_json_line(raw, same) == raw


@given(raw=st.binary(max_size=64), pointer=st.sampled_from(["", "/a", "/0", "/a/0/b"]))
def test_any_bytes_either_rewrite_or_raise_a_rewrite_error(raw: bytes, pointer: str) -> None:
    with contextlib.suppress(RewriteError):
        rewrite_json_line(raw, {pointer: [(0, 0, "X")]})


@given(text=st.text(chars).map(utf16_normal))
def test_string_tokens_round_trip_as_utf8(text: str) -> None:
    token = encode_json_string(text)
    token.decode("utf-8")  # strict: lone surrogates went out as escapes
    assert decode_json_string(token) == text
    assert json.loads(token) == text


@given(text=st.text(chars))
def test_adjacent_surrogates_read_back_as_utf16_readers_see_them(text: str) -> None:
    assert decode_json_string(encode_json_string(text)) == utf16_normal(text)


@given(parts=st.lists(st.one_of(texts, st.integers(0, 10**6)), max_size=6))
def test_pointers_round_trip(parts: list[str | int]) -> None:
    assert parse_pointer(pointer_for(parts)) == tuple(str(part) for part in parts)


@given(raw=st.binary(max_size=80), data=st.data())
def test_text_lines_keep_every_byte_outside_the_spans(raw: bytes, data: st.DataObject) -> None:
    text = raw.decode("utf-8", "surrogateescape")
    edits = data.draw(spans(len(text)).map(lambda s: [(a, b, "[X]") for a, b, _ in s]))
    out = rewrite_text_line(raw, edits)
    assert out == splice(text, edits).encode("utf-8", "surrogateescape")
    if not edits:
        assert out == raw


kinds = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)
fingerprints = st.text("0123456789abcdef", min_size=8, max_size=64)


@given(kind=kinds, fingerprint=fingerprints, before=texts, after=texts)
def test_placeholders_round_trip_and_are_found_where_they_are(
    kind: str, fingerprint: str, before: str, after: str
) -> None:
    placeholder = make_placeholder(kind, fingerprint)
    assert parse_placeholder(placeholder) == (kind, fingerprint[:8])
    text = before + placeholder + after
    assume(PLACEHOLDER_PREFIX not in before + after)
    assert placeholder_spans(text) == [(len(before), len(before) + len(placeholder))]


@given(text=texts, kind=kinds, fingerprint=fingerprints, data=st.data())
def test_a_placeholder_written_by_a_rewrite_is_masked_at_its_span_only(
    text: str, kind: str, fingerprint: str, data: st.DataObject
) -> None:
    assume(PLACEHOLDER_PREFIX not in text)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    placeholder = make_placeholder(kind, fingerprint)
    token = json.dumps(text) if data.draw(st.booleans()) else _js_string(text)
    raw = b'{"k":' + token.encode() + b"}"
    out = json.loads(rewrite_json_line(raw, {"/k": [(start, end, placeholder)]}))["k"]
    new = utf16_normal(text[:start] + placeholder + text[end:])
    assert out == new
    masked = mask_placeholders(out)
    at = len(utf16_normal(text[:start]))
    assert len(masked) == len(out)
    assert masked[at : at + len(placeholder)] == MASK_CHAR * len(placeholder)
    assert masked[:at] == out[:at]
    assert masked[at + len(placeholder) :] == out[at + len(placeholder) :]
    assert placeholder_spans(out) == [(at, at + len(placeholder))]
