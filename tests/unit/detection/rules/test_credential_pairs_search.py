"""The companion search's shortcuts (credential_pairs.py) find what the plain case-insensitive
pattern finds: the lowered ASCII window searched case-sensitively, the pre-check on a label's
last word and operator, and the look-behind at the window's first character."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.rules import credential_pairs as pairs

_PIECES = [
    "client_id", "ClientId", "APP_ID", "user", "Username", "tenantId", "ORG", "account2",
    "key", "secret", "x", "ab", "=", ": ", " - ", "=>", "'", '"', '\\"', " ", "\t", "\n",
    "a1B2c3D4e5F6g7H8", "0f8fad5b-d9cb-469f-a165-70867728950e", ";", "é", "\u212a", "İd",
]  # fmt: skip


def _reference(text: str, low: int, high: int) -> list[tuple[int, str, tuple[int, int]]]:
    found = []
    for match in pairs._COMPANION.finditer(text, low, high):
        group = next(g for g in ("dq", "sq", "bare") if match.group(g) is not None)
        found.append((match.start(), match.group("label"), match.span(group)))
    return found


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24), st.integers(0, 40), st.integers(0, 40))
def test_companion_matches_are_the_case_insensitive_patterns(
    pieces: list[str], cut_low: int, cut_high: int
) -> None:
    text = "".join(pieces)
    low = min(cut_low, len(text))
    high = max(low, len(text) - cut_high)
    assert list(pairs._companion_matches(text, low, high)) == _reference(text, low, high)
