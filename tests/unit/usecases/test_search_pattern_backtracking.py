"""`scrub search --regex` refuses, up front, patterns `re` can backtrack on for ever, and says
what to write instead; the safe ways to write them (possessive, atomic, one class) pass."""

from __future__ import annotations

import pytest

from scrubber.errors import ExitCode, UsageError
from scrubber.usecases.search_pattern import compile_pattern

CATASTROPHIC = [
    "(a+)+b",
    "(a*)*b",
    "(?:x+x+)+y",
    "(a|ab)*c",
    "(a|a)+b",
    "(foo|foobar)*!",
    r"(\w+\s)+$",
    "(?:a{1,3})+b",
    "(a?)+b",
]
SAFE = [
    "(a++)+b",
    "(?>a+)+b",
    "(?>a|ab)*c",
    r"(\d{1,3}\.){3}\d{1,3}",
    "deploy(ed|ing) to (staging|prod)",
    "(ab|ac)+",
    "(?i)(A|a)+b",  # one class once case is folded
    r"(\w|\s)+x",
    "[a-z]+@[a-z]+\\.com",
    "x{2,}",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_backtracking_pattern_is_refused_with_what_to_write(pattern: str) -> None:
    with pytest.raises(UsageError) as refused:
        compile_pattern(pattern, regex=True)
    error = refused.value
    assert error.exit_code == ExitCode.USAGE
    assert "take for ever" in error.message
    assert error.hint is not None and ("a++" in error.hint or "(?>" in error.hint)
    assert pattern not in error.message and pattern not in error.hint


@pytest.mark.parametrize("pattern", SAFE)
def test_safe_ways_to_write_it_are_accepted(pattern: str) -> None:
    assert compile_pattern(pattern, regex=True).is_regex


def test_a_literal_search_is_never_refused() -> None:
    assert compile_pattern("(a+)+b", regex=False).spans("x (a+)+b y") == [(2, 8)]
