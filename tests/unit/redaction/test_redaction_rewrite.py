"""Structure-preserving rewrite of one JSONL line: only the targeted string tokens change."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scrubber.detection.placeholder import make_placeholder
from scrubber.errors import ScrubberError
from scrubber.redaction.rewrite import (
    BadSpan,
    InvalidPointer,
    MalformedLine,
    NotAString,
    PointerNotFound,
    Replacement,
    RewriteError,
    child_pointer,
    decode_json_string,
    encode_json_string,
    locate_strings,
    parse_pointer,
    pointer_for,
    replace_spans,
    rewrite_json_line,
    rewrite_text_line,
)
from tests.skips import INSTALL_NODE, needs_shared

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
PLACEHOLDER = make_placeholder("github-token", "3f9a1c2e" * 8)  # pragma: allowlist secret


def fake_token() -> str:
    return "gh" + "p_" + secrets.token_urlsafe(27)


# --- JSON Pointers ------------------------------------------------------------------------------

# RFC 6901, section 5: every pointer of the example document, with its tokens.
RFC_POINTERS = [
    ("", ()),
    ("/foo", ("foo",)),
    ("/foo/0", ("foo", "0")),
    ("/", ("",)),
    ("/a~1b", ("a/b",)),
    ("/c%d", ("c%d",)),
    ("/e^f", ("e^f",)),
    ("/g|h", ("g|h",)),
    ("/i\\j", ("i\\j",)),
    ('/k"l', ('k"l',)),
    ("/ ", (" ",)),
    ("/m~0n", ("m~n",)),
]


@pytest.mark.parametrize(("pointer", "tokens"), RFC_POINTERS)
def test_pointers_parse_and_print_as_rfc_6901_says(pointer: str, tokens: tuple[str, ...]) -> None:
    assert parse_pointer(pointer) == tokens
    assert pointer_for(tokens) == pointer


def test_tilde_one_is_unescaped_before_tilde_zero() -> None:
    assert parse_pointer("/~01") == ("~1",)
    assert pointer_for(["~1"]) == "/~01"
    assert pointer_for(["/~"]) == "/~1~0"


def test_pointer_for_takes_indices_and_builds_incrementally() -> None:
    assert pointer_for(["message", "content", 0, "text"]) == "/message/content/0/text"
    assert child_pointer("/message", "a/b") == "/message/a~1b"
    assert child_pointer("", 3) == "/3"


@pytest.mark.parametrize("pointer", ["foo", "/~", "/~2", "/a~", "#/foo"])
def test_malformed_pointers_are_refused(pointer: str) -> None:
    with pytest.raises(InvalidPointer):
        parse_pointer(pointer)


@pytest.mark.parametrize("part", [-1, True])
def test_bad_indices_are_refused(part: int) -> None:
    with pytest.raises(InvalidPointer):
        child_pointer("", part)


def test_the_rfc_example_document_locates_its_strings() -> None:
    doc = {
        "foo": ["bar", "baz"],
        "": "0",
        "a/b": "1",
        "c%d": "2",
        "e^f": "3",
        "g|h": "4",
        "i\\j": "5",
        'k"l': "6",
        " ": "7",
        "m~n": "8",
    }
    raw = json.dumps(doc).encode()
    pointers = [p for p, _ in RFC_POINTERS if p not in ("", "/foo")]
    found = locate_strings(raw, pointers)
    assert {p: json.loads(raw[s:e]) for p, (s, e) in found.items()} == {
        "/foo/0": "bar",
        "/": "0",
        "/a~1b": "1",
        "/c%d": "2",
        "/e^f": "3",
        "/g|h": "4",
        "/i\\j": "5",
        '/k"l': "6",
        "/ ": "7",
        "/m~0n": "8",
    }


# --- Rewriting: what stays ----------------------------------------------------------------------


def test_only_the_target_token_changes_and_everything_else_keeps_its_bytes() -> None:
    secret = fake_token()
    # Numbers in shapes a re-serialiser would change, escapes JavaScript would not write, odd
    # spacing, keys in a non-sorted order.
    prefix = (
        b'{"z":1.0, "big":123456789012345678901234567890,"e":1e5,"E":-1.5E+05,"neg0":-0,'
        b'"esc":"caf\\u00e9 \\/ \\ud83d\\ude00", "nested" : { "list" : [ true, null, false ] ,'
        b'"text":"token '
    )
    suffix = b' here"},\t"after":"x"}'
    raw = prefix + secret.encode() + suffix
    start = len("token ")
    out = rewrite_json_line(raw, {"/nested/text": [(start, start + len(secret), PLACEHOLDER)]})
    assert out == prefix + PLACEHOLDER.encode() + suffix
    assert secret.encode() not in out


@pytest.mark.parametrize("token", [b"Infinity", b"-Infinity", b"NaN"])
def test_the_non_standard_numbers_pythons_json_reads_are_walked_past(token: bytes) -> None:
    # The reader falls back to Python's json, which parses these: a secret beside one must be
    # rewritable, or the whole file is refused (found by the structure property test).
    secret = fake_token()
    raw = b'{"n":' + token + b',"deep":{"m":[' + token + b',1],"t":"k ' + secret.encode() + b'"}}'
    out = rewrite_json_line(raw, {"/deep/t": [(2, 2 + len(secret), PLACEHOLDER)]})
    assert out == raw.replace(secret.encode(), PLACEHOLDER.encode())


def test_empty_mapping_returns_the_very_same_bytes() -> None:
    raw = b'{"a": "b"}'
    assert rewrite_json_line(raw, {}) is raw
    assert rewrite_json_line(raw, {"/a": []}) is raw
    assert rewrite_text_line(raw, []) is raw


def test_a_replacement_that_changes_nothing_keeps_the_original_token() -> None:
    raw = b'{"a": "caf\\u00e9 \\/"}'
    out = rewrite_json_line(raw, {"/a": [(0, 3, "caf")]})
    assert out == raw


def test_non_ascii_is_written_as_utf8_like_javascript_does() -> None:
    raw = '{"a":"café SECRET 😀"}'.encode()
    out = rewrite_json_line(raw, {"/a": [(5, 11, "X")]})
    assert out == '{"a":"café X 😀"}'.encode()


def test_spans_count_code_points_not_bytes_or_utf16_units() -> None:
    raw = '{"a":"😀😀SECRET"}'.encode()
    assert rewrite_json_line(raw, {"/a": [(2, 8, "X")]}) == '{"a":"😀😀X"}'.encode()
    # An escaped surrogate pair is one code point too.
    raw = b'{"a":"\\ud83d\\ude00SECRET"}'
    assert json.loads(rewrite_json_line(raw, {"/a": [(1, 7, "X")]})) == {"a": "😀X"}


def test_lone_surrogates_survive_as_escapes() -> None:
    raw = b'{"a":"\\ud800SECRET\\udfff"}'
    out = rewrite_json_line(raw, {"/a": [(1, 7, "X")]})
    assert out == b'{"a":"\\ud800X\\udfff"}'
    out.decode("utf-8")  # strict: no raw surrogate reached the bytes
    assert json.loads(out) == {"a": "\ud800X\udfff"}


def test_several_spans_in_any_order_and_several_strings() -> None:
    raw = b'{"a":"one TWO three FOUR","b":["x","keep","y SIX"]}'
    out = rewrite_json_line(
        raw,
        {
            "/a": [Replacement(14, 18, "[4]"), Replacement(4, 7, "[2]")],
            "/b/2": [(2, 5, "[6]")],
        },
    )
    assert out == b'{"a":"one [2] three [4]","b":["x","keep","y [6]"]}'


def test_an_empty_span_inserts() -> None:
    assert rewrite_json_line(b'{"a":"ab"}', {"/a": [(1, 1, "-")]}) == b'{"a":"a-b"}'


def test_replacement_text_is_escaped() -> None:
    out = rewrite_json_line(b'{"a":"x"}', {"/a": [(0, 1, 'q"\\\n\t\x01\x7f\u2028')]})
    assert out == b'{"a":"q\\"\\\\\\n\\t\\u0001\x7f\xe2\x80\xa8"}'
    assert json.loads(out)["a"] == 'q"\\\n\t\x01\x7f\u2028'


def test_keys_written_with_escapes_are_found_by_their_decoded_name() -> None:
    raw = b'{"\\u0061":{"b\\/c":"SECRET"}}'
    out = rewrite_json_line(raw, {"/a/b~1c": [(0, 6, "X")]})
    assert out == b'{"\\u0061":{"b\\/c":"X"}}'


def test_keys_are_never_rewritten_even_when_they_equal_a_target_value() -> None:
    raw = b'{"SECRET":"SECRET","x":{"SECRET":1}}'
    out = rewrite_json_line(raw, {"/SECRET": [(0, 6, "X")]})
    assert out == b'{"SECRET":"X","x":{"SECRET":1}}'


def test_a_line_with_its_newline_keeps_it() -> None:
    out = rewrite_json_line(b'{"a":"SECRET"}\n', {"/a": [(0, 6, "X")]})
    assert out == b'{"a":"X"}\n'


def test_root_string_and_deep_arrays() -> None:
    assert rewrite_json_line(b' "SECRET" ', {"": [(0, 6, "X")]}) == b' "X" '
    raw = b'[[0,[1,2,[3,"SECRET"]]],{"k":[]}]'
    assert rewrite_json_line(raw, {"/0/1/2/1": [(0, 6, "X")]}) == raw.replace(b"SECRET", b"X")


def test_the_last_of_duplicate_keys_is_the_one_rewritten() -> None:
    # json.loads and JSON.parse keep the last member; rewrite what a reader sees.
    raw = b'{"a":"first SECRET","a":"second SECRET"}'
    out = rewrite_json_line(raw, {"/a": [(7, 13, "X")]})
    assert out == b'{"a":"first SECRET","a":"second X"}'
    assert json.loads(out) == {"a": "second X"}


def test_an_index_past_many_elements_and_a_target_after_a_deep_sibling() -> None:
    deep: Any = "d"
    for _ in range(12):  # deeper than the one-call skip pattern handles
        deep = [deep, {"k": deep}]
    doc = {"deep": deep, "nums": [*range(5000), "SECRET"], "mixed": [deep, "x", deep, "SECRET"]}
    raw = json.dumps(doc, separators=(",", ":")).encode()
    steps: list[str | int] = [1, "k"]
    to_d = pointer_for(["deep", *steps * 12])
    out = rewrite_json_line(
        raw, {"/nums/5000": [(0, 6, "X")], "/mixed/3": [(0, 6, "Y")], to_d: [(0, 1, "Z")]}
    )
    expected = json.loads(raw)
    expected["nums"][5000] = "X"
    expected["mixed"][3] = "Y"
    inner = expected["deep"]
    for _ in range(11):
        inner = inner[1]["k"]
    inner[1]["k"] = "Z"
    assert json.loads(out) == expected
    assert len(out) == len(raw) - 10


def test_typical_transcript_record() -> None:
    secret = fake_token()
    record = {
        "parentUuid": "5e0c3f7b-1d0a-4e0e-9d55-0b7c7c0d9e11",
        "isSidechain": False,
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": "toolu_01ABCDEF",
                    "type": "tool_result",
                    "content": f"     1\tGITHUB_TOKEN={secret}\n     2\tDEBUG=1\n",
                    "is_error": False,
                }
            ],
        },
        "uuid": "0d7f6a51-4f0c-4a8a-bb1e-0e7d6f1a2b3c",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "toolUseResult": {
            "type": "text",
            "file": {"filePath": "/app/.env", "content": f"GITHUB_TOKEN={secret}\nDEBUG=1\n"},
            "numLines": 2,
        },
    }
    raw = json.dumps(record, separators=(",", ":")).encode()
    at_result = len("     1\tGITHUB_TOKEN=")
    at_file = len("GITHUB_TOKEN=")
    out = rewrite_json_line(
        raw,
        {
            "/message/content/0/content": [(at_result, at_result + len(secret), PLACEHOLDER)],
            "/toolUseResult/file/content": [(at_file, at_file + len(secret), PLACEHOLDER)],
        },
    )
    assert secret.encode() not in out
    assert out == raw.replace(secret.encode(), PLACEHOLDER.encode())


# --- Rewriting: what is refused -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pointer", "error"),
    [
        ("/missing", PointerNotFound),
        ("/list/3", PointerNotFound),
        ("/list/01", PointerNotFound),  # not an array index in RFC 6901
        ("/list/-", PointerNotFound),
        ("/text/0", PointerNotFound),  # strings have no members
        ("/num", NotAString),
        ("/obj", NotAString),
        ("/nil", NotAString),
        ("/list", NotAString),
        ("", NotAString),  # the line's whole object
        ("no-slash", InvalidPointer),
    ],
)
def test_pointers_that_name_no_string_are_refused(pointer: str, error: type[RewriteError]) -> None:
    raw = b'{"text":"SECRET","num":1,"obj":{},"nil":null,"list":["a","b","c"]}'
    with pytest.raises(error) as caught:
        rewrite_json_line(raw, {pointer: [(0, 1, "X")]})
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize(
    "spans",
    [
        [(0, 99, "X")],
        [(-1, 2, "X")],
        [(3, 2, "X")],
        [(0, 4, "X"), (3, 5, "Y")],
        [(2, 4, "X"), (0, 3, "Y")],
    ],
)
def test_bad_spans_are_refused_without_content(spans: list[tuple[int, int, str]]) -> None:
    secret = fake_token()
    raw = json.dumps({"a": secret}).encode()
    with pytest.raises(BadSpan) as caught:
        rewrite_json_line(raw, {"/a": spans})
    assert secret not in str(caught.value)
    assert secret not in repr(caught.value)
    assert "/a" in str(caught.value)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b'{"a":"SECRET"',  # torn
        b'{"a":"SECRET',  # torn inside the string
        b'{"a":"SECRET"} trailing',
        b'{"a":"SECRET",}',
        b'{"a" "SECRET"}',
        b'{"a":"SECRET"]',
        b'{"b":[1,2},"a":"SECRET"}',
        b'{"b":{"c":"unterminated},"a":"SECRET"}',
        b'{"b":nope,"a":"SECRET"}',
        b'{a:"SECRET"}',
        b"[1,2,3]",
    ],
)
def test_lines_that_are_not_the_json_they_claim_to_be_are_refused(raw: bytes) -> None:
    with pytest.raises(RewriteError) as caught:
        rewrite_json_line(raw, {"/a": [(0, 6, "X")]})
    assert "SECRET" not in str(caught.value)


def test_a_broken_target_token_is_refused_without_content() -> None:
    with pytest.raises(MalformedLine) as caught:
        rewrite_json_line(b'{"a":"SECRET \\x"}', {"/a": [(0, 6, "X")]})
    assert "SECRET" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_rewrite_errors_are_value_errors_and_scrubber_errors() -> None:
    for error in (
        RewriteError,
        InvalidPointer,
        PointerNotFound,
        NotAString,
        BadSpan,
        MalformedLine,
    ):
        assert issubclass(error, ValueError)
        assert issubclass(error, ScrubberError)


# --- Plain-text lines ---------------------------------------------------------------------------


def test_text_lines_keep_undecodable_bytes() -> None:
    secret = fake_token()
    raw = b'\xff\xfe{"torn": "' + secret.encode() + b"\xc3"
    start = len('\udcff\udcfe{"torn": "')
    out = rewrite_text_line(raw, [(start, start + len(secret), PLACEHOLDER)])
    assert out == b'\xff\xfe{"torn": "' + PLACEHOLDER.encode() + b"\xc3"


def test_text_line_spans_are_code_points() -> None:
    raw = "é😀 SECRET".encode()
    assert rewrite_text_line(raw, [(3, 9, "X")]) == "é😀 X".encode()


def test_text_line_bad_spans_and_unencodable_replacements_are_refused() -> None:
    with pytest.raises(BadSpan):
        rewrite_text_line(b"abc", [(2, 9, "X")])
    with pytest.raises(RewriteError):
        rewrite_text_line(b"abc", [(0, 1, "\ud800")])


# --- String tokens ------------------------------------------------------------------------------


def test_replace_spans_on_plain_strings() -> None:
    assert replace_spans("abcdef", []) == "abcdef"
    assert replace_spans("abcdef", [(4, 6, "Z"), (0, 2, "X")]) == "XcdZ"
    assert replace_spans("abc", [(0, 3, "")]) == ""


@pytest.mark.parametrize(
    "text",
    ["", "plain", "é😀", "\ud800", "a\udfffb", "\x00\x1f\x7f", '"\\/', "\u2028\u2029", "\ufeff"],
)
def test_encode_then_decode_round_trips(text: str) -> None:
    token = encode_json_string(text)
    token.decode("utf-8")  # always valid UTF-8
    assert decode_json_string(token) == text
    assert json.loads(token) == text


def test_adjacent_surrogates_read_back_as_one_character_as_in_javascript() -> None:
    assert decode_json_string(encode_json_string("\ud83d\ude00")) == "😀"


TRICKY = [
    *[chr(c) for c in range(0x20)],
    "\x7f",
    '"',
    "\\",
    "/",
    "é",
    "😀",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "a\ud83d",
    "\ude00b",
    "\ud800\ud800",
    'mixed \t"quote" \\ /path é 😀 \x1b[0m \ud800 end',
]


@pytest.mark.skipif(shutil.which("node") is None, reason=INSTALL_NODE)
def test_encoding_matches_javascript_json_stringify() -> None:
    # Claude Code writes its transcripts with JSON.stringify: a rewritten token must look like
    # one it wrote. Each input goes to node as an ASCII JSON document, so lone surrogates arrive.
    script = (
        "const xs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(xs.map(x => JSON.stringify(x)).join('\\n'));"
    )
    result = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(TRICKY).encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    expected = result.stdout.split(b"\n")
    assert len(expected) == len(TRICKY)
    for text, js in zip(TRICKY, expected, strict=True):
        assert encode_json_string(text) == js, repr(text)


# --- Speed --------------------------------------------------------------------------------------


def _best_of(runs: int, action: Any) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def test_a_five_megabyte_line_with_one_replacement_is_fast() -> None:
    secret = fake_token()
    body = 'line of a file with "quotes" and a tab\t, é and more text\n' * 45_000
    record = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "content": body}]},
        "toolUseResult": {"file": {"content": body + secret, "numLines": 45_000}},
        "uuid": "u",
    }
    raw = json.dumps(record, ensure_ascii=False).encode()
    assert len(raw) > 5_000_000
    at = len(body)
    mapping = {"/toolUseResult/file/content": [(at, at + len(secret), PLACEHOLDER)]}
    out = rewrite_json_line(raw, mapping)
    assert secret.encode() not in out
    assert _best_of(3, lambda: rewrite_json_line(raw, mapping)) < 1.0


def test_a_line_of_escapes_is_still_linear() -> None:
    raw = json.dumps({"skip": '\\"\n' * 1_500_000, "a": "SECRET"}).encode()
    assert _best_of(2, lambda: rewrite_json_line(raw, {"/a": [(0, 6, "X")]})) < 1.0


# --- Real transcripts ---------------------------------------------------------------------------


def _string_leaves(value: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, child_pointer(pointer, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_leaves(item, child_pointer(pointer, index))


def test_every_string_of_real_format_transcripts_can_be_rewritten_alone() -> None:
    carriers = sorted((SHARED / "leakbench" / "carriers").glob("*.jsonl"))[:1]
    if not carriers:
        pytest.skip(needs_shared("leakbench"))
    lines = spliced = 0
    for raw in carriers[0].read_bytes().splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # torn lines are the plain-text path's business
        lines += 1
        for pointer, text in _string_leaves(value):
            if not text:
                continue
            mid = len(text) // 2
            new_text = text[:mid] + PLACEHOLDER
            out = rewrite_json_line(raw, {pointer: [(mid, len(text), PLACEHOLDER)]})
            old_token, new_token = encode_json_string(text), encode_json_string(new_text)
            assert len(out) == len(raw) - len(old_token) + len(new_token)
            assert _at(json.loads(out), pointer) == new_text
            # These lines were written the way JavaScript writes them, so our encoding gives the
            # old token back, and where it is unique the new line is the old one with it swapped.
            if raw.count(old_token) == 1:
                start = raw.index(old_token)
                assert out == raw[:start] + new_token + raw[start + len(old_token) :]
                spliced += 1
    assert lines > 100
    assert spliced > 1000


def _at(value: Any, pointer: str) -> Any:
    for token in parse_pointer(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value
