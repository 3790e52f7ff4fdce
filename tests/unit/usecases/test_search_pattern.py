"""The raw-bytes prefilter of `scrub search`: sound (every line a match can be in passes it, in
any JSON writer's escaping) and selective (a plain phrase is searched as it is)."""

from __future__ import annotations

import json

import pytest

from scrubber.errors import UsageError
from scrubber.usecases.search_pattern import compile_pattern, raw_literal

PHRASES = [
    "connection refused",
    'say "hello"',
    "line one\nline two",
    "C:\\Users\\me",
    "https://example.com/path",
    "café au lait",
    "a < b && c > d",
    "it's done",
]


@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_every_json_line_holding_the_phrase_passes_the_prefilter(
    phrase: str, ensure_ascii: bool
) -> None:
    pattern = compile_pattern(phrase, regex=False)
    line = json.dumps({"text": f"before {phrase} after"}, ensure_ascii=ensure_ascii).encode()
    escaped_slash = line.replace(b"/", b"\\/")
    assert pattern.may_match(line) and pattern.may_match(escaped_slash)
    assert pattern.spans(json.loads(line)["text"]) == [(7, 7 + len(phrase))]


def test_a_plain_phrase_is_its_own_literal_and_others_use_their_longest_plain_run() -> None:
    assert raw_literal("connection refused") == b"connection refused"
    assert raw_literal('say "hello world"') == b"hello world"
    assert raw_literal("line one\nline two") == b"line one"
    assert raw_literal('"a"') is None  # nothing selective: every line is decoded
    assert not compile_pattern("connection refused", regex=False).may_match(b'{"a":"refused"}')


def test_a_regex_keeps_its_top_level_literal_and_a_caseless_one_has_none() -> None:
    assert compile_pattern(r"deploy(ed|ing) to \w+", regex=True).literal == b"deploy"
    assert compile_pattern(r"(?i)deploy", regex=True).literal is None
    assert compile_pattern(r"(a|b)c", regex=True).literal is None


@pytest.mark.parametrize(
    ("text", "regex", "message"),
    [
        ("", False, "empty"),
        ("(unclosed", True, "not a valid regular expression"),
        ("x*", True, "matches the empty string"),
        ("y" * 5000, False, "at most"),
    ],
)
def test_bad_patterns_are_usage_errors_that_do_not_repeat_the_pattern(
    text: str, regex: bool, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        compile_pattern(text, regex=regex)
    assert message in caught.value.message
    assert not text or text not in caught.value.message
