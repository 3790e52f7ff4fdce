"""The proof behind `Gate.rare`: a gate is run only on lines holding one of its rare literals,
so a declaration the proof wrongly accepts would hide lines the gate matches (missed secrets).
Checked on patterns whose answer is known, then against the regex engine itself on random
strings: wherever a pattern proven to hold one of some literals matches, the match holds one."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.gate_index import GateIndex
from scrubber.detection.gates import Gate
from scrubber.detection.registry import build_detectors
from scrubber.detection.required_literals import every_match_holds_one_of
from scrubber.policy.model import Policy


@pytest.mark.parametrize(
    ("pattern", "literals", "expected"),
    [
        (r"ab@cd", ["@"], True),
        (r"[a-z]{0,40}@", ["@"], True),
        (r"(?:x|y)[0-9]*\|[^|]{1,9}\|", ["|"], True),
        (r"[!=]=\s*key", ["==", "!="], True),
        (r"(?:[?&;]|\\u0026)tok", ["?", "&", ";", "\\u0026"], True),
        (r"<[a-z]{1,3}>", ["<"], True),
        (r"(?:ab|c@)d", ["@"], False),  # one branch holds none
        (r"a@?b", ["@"], False),  # optional
        (r"a(?:@){0,2}b", ["@"], False),  # a repeat that may be empty
        (r"a[^<]b", ["<"], False),  # a negated class
        (r"a.b", ["."], False),  # any character is not the literal dot
        (r"[!=]x", ["==", "!="], False),  # the class alone is not the pair
        (r"a@b", [], False),
        (r"a@b", [""], False),  # the empty literal proves nothing
        (r"(unclosed", ["("], False),
        (r"KEY@", ["key"], True),  # compared without case
    ],
)
def test_known_answers(pattern: str, literals: list[str], expected: bool) -> None:
    assert every_match_holds_one_of(pattern, literals, caseless=True) is expected


_PIECES = ["a", "b", "@", "|", "<", "==", "!=", "[ab@]", "[!=]=", "(?:a|@)", "(?:@|b)", "@?",
           "a*", "[^@]", "(?:ab)+", "(?:@b)+", "(?:|@)", "[a-c]{1,3}", "\\|{2}", "x{0,2}"]  # fmt: skip
_SUBJECT = st.text(alphabet="ab@|<=!xc", max_size=40)


@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6), st.lists(_SUBJECT, max_size=8))
@settings(max_examples=400, deadline=None)
def test_a_proven_pattern_never_matches_without_a_literal(
    pieces: list[str], subjects: list[str]
) -> None:
    pattern = "".join(pieces)
    literals = ["@", "|", "==", "!="]
    if not every_match_holds_one_of(pattern, literals, caseless=True):
        return
    compiled = re.compile(pattern)
    for subject in subjects:
        for match in compiled.finditer(subject):
            assert any(lit in match.group(0) for lit in literals), (pattern, subject)


def test_every_rare_declaration_of_the_shipped_detectors_is_proven() -> None:
    # Building the index proves each declaration (it raises on one it cannot prove), and
    # the declarations are in use: some gates wait for their literals.
    index = GateIndex(build_detectors(Policy.default()), engine="python")
    waiting = {index.gates[g][1]: literals for g, literals in index.deferred.items()}
    assert len(waiting) >= 4
    assert all(literals for literals in waiting.values())


def test_a_declaration_that_does_not_hold_is_refused() -> None:
    class Planted:
        name = "planted"
        kind = "planted"
        context_only = False
        gates = (Gate(r"token[a-z]{0,9}(?:=|@)", rare=("@",)),)

        def find(self, text: str, context: object) -> list[object]:
            return []

    with pytest.raises(ValueError, match="not every match"):
        GateIndex([Planted()], engine="python")  # type: ignore[list-item]
