"""`prefilter_literals.literal_events`, the exact-literal search of the by-value pass (known_values):
hyperscan's literal compiler and the pure-Python fallback report every occurrence's end,
overlapping ones and literals that hold a NUL byte included, as `bytes.find` defines them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.prefilter import load_hyperscan
from scrubber.detection.prefilter_literals import (
    HyperscanLiteralEvents,
    PythonLiteralEvents,
    literal_events,
)
from tests.skips import INSTALL_HYPERSCAN

HYPERSCAN = load_hyperscan()
needs_hyperscan = pytest.mark.skipif(HYPERSCAN is None, reason=INSTALL_HYPERSCAN)


def reference(literals: list[bytes], data: bytes) -> list[tuple[int, int]]:
    """The definition: every (literal, end) where the literal occurs, overlaps included."""
    return sorted(
        (i, at + len(lit))
        for i, lit in enumerate(literals)
        for at in range(len(data) - len(lit) + 1)
        if data.startswith(lit, at)
    )


KNOWN = [
    # overlapping occurrences of one literal and of a literal inside another
    ([b"aa", b"aaa"], b"aaaa", [(0, 2), (0, 3), (0, 4), (1, 3), (1, 4)]),
    # a NUL byte inside a literal: the whole literal, never its part before the NUL
    ([b"ab\0cd", b"zz\nq"], b"ab\0cd ab cd zz\nq ab\0c", [(0, 5), (1, 16)]),
    # case matters (values are exact)
    ([b"Secret"], b"secret SECRET Secret", [(0, 20)]),
]


@pytest.mark.parametrize(("literals", "data", "expected"), KNOWN)
def test_python_engine_known_answers(
    literals: list[bytes], data: bytes, expected: list[tuple[int, int]]
) -> None:
    assert sorted(PythonLiteralEvents(literals).events(data)) == expected


@needs_hyperscan
@pytest.mark.parametrize(("literals", "data", "expected"), KNOWN)
def test_hyperscan_engine_known_answers(
    literals: list[bytes], data: bytes, expected: list[tuple[int, int]]
) -> None:
    assert sorted(HyperscanLiteralEvents(literals, HYPERSCAN).events(data)) == expected


small_bytes = st.binary(min_size=1, max_size=6).map(lambda b: bytes(x % 4 for x in b))


@needs_hyperscan
@settings(max_examples=150, deadline=None)
@given(st.lists(small_bytes, min_size=1, max_size=6, unique=True), st.binary(max_size=80))
def test_engines_agree_with_the_definition(literals: list[bytes], noise: bytes) -> None:
    data = bytes(x % 4 for x in noise)  # a small alphabet: many occurrences and overlaps
    expected = reference(literals, data)
    assert sorted(literal_events(literals, engine="python").events(data)) == expected
    assert sorted(literal_events(literals, engine="hyperscan").events(data)) == expected


def test_no_data_no_events() -> None:
    assert literal_events([b"abc"]).events(b"") == []
