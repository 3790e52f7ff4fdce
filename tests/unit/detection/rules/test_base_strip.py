"""strip_leading_lookbehinds: the cheap pre-search of a PatternRule must never miss a match."""

from __future__ import annotations

import re

import pytest

from scrubber.detection.rules.base import strip_leading_lookbehinds
from scrubber.detection.rules.catalog import ALL_RULES


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))(?:ntn_x|y)", "(?:ntn_x|y)"),
        (r"(?<![\w-])_(?:a)", "_(?:a)"),
        (r"(?i)(?<![\w-])x", "(?i)x"),
        (r"(?<=[)(|])x", "x"),  # brackets and bars inside a class are not structure
        (r"(?:a|(?<=b))c", r"(?:a|(?<=b))c"),  # a branch that consumes: kept
        (r"(?<!a)?b", r"(?<!a)?b"),  # a quantified group: kept
        (r"(abc)", r"(abc)"),
        (r"\(?<!x)y", r"\(?<!x)y"),  # an escaped parenthesis is no group
    ],
)
def test_strip_leading_lookbehinds(pattern: str, expected: str) -> None:
    assert strip_leading_lookbehinds(pattern) == expected


def test_every_rule_core_is_its_pattern_minus_a_leading_part() -> None:
    # Only leading look-behinds go (inline flags stay in front): what is left is the tail of the
    # pattern, so it matches wherever the full pattern does, and it must still compile.
    for rule in ALL_RULES:
        pattern = getattr(rule, "pattern", None)
        if pattern is None:
            continue
        core = strip_leading_lookbehinds(pattern)
        flags = re.match(r"\(\?[aiLmsux]+\)", core)
        tail = core[flags.end() :] if flags else core
        assert pattern.endswith(tail), rule.name
        re.compile(core, getattr(rule, "flags", 0))
