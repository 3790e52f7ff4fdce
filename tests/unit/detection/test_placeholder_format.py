"""The one placeholder format, and masking placeholders before detectors run."""

from __future__ import annotations

import secrets

import pytest

from scrubber.detection.placeholder import (
    MASK_CHAR,
    PLACEHOLDER_PREFIX,
    PLACEHOLDER_RE,
    PlaceholderError,
    is_valid_kind,
    make_placeholder,
    mask_placeholders,
    parse_placeholder,
    placeholder_spans,
)

FINGERPRINT = "3f9a1c2e" + "0123456789abcdef" * 3  # a hex digest, as the scanner computes it


def test_placeholder_has_the_documented_shape() -> None:
    assert make_placeholder("aws-access-key", FINGERPRINT) == "[REDACTED:aws-access-key:3f9a1c2e]"


def test_placeholder_keeps_only_the_first_eight_hex_characters() -> None:
    assert make_placeholder("x", "deadbeef") == "[REDACTED:x:deadbeef]"
    assert make_placeholder("x", "deadbeef99") == "[REDACTED:x:deadbeef]"


@pytest.mark.parametrize(
    "kind",
    ["aws-access-key", "dotenv-value", "connection-string-password", "jwt", "x", "a1-2b", "0"],
)
def test_kebab_case_kinds_are_accepted(kind: str) -> None:
    assert is_valid_kind(kind)
    assert parse_placeholder(make_placeholder(kind, FINGERPRINT)) == (kind, FINGERPRINT[:8])


@pytest.mark.parametrize(
    "kind",
    ["", "AWS", "aws_key", "-a", "a-", "a--b", "a b", "é", "a:b", "a]", "a\n", "aws-Key"],
)
def test_other_kinds_are_refused(kind: str) -> None:
    assert not is_valid_kind(kind)
    with pytest.raises(PlaceholderError):
        make_placeholder(kind, FINGERPRINT)


@pytest.mark.parametrize(
    "fingerprint", ["", "3f9a1c2", "3F9A1C2E", "3f9a1c2g", " 3f9a1c2e", "3f9a-1c2e"]
)
def test_fingerprints_that_are_not_lower_case_hex_are_refused(fingerprint: str) -> None:
    with pytest.raises(PlaceholderError):
        make_placeholder("jwt", fingerprint)


def test_errors_never_repeat_what_they_refused() -> None:
    # A caller that swapped its arguments would pass the secret itself.
    fake_secret = "gh" + "p_" + secrets.token_urlsafe(27)
    for kind, fingerprint in ((fake_secret, FINGERPRINT), ("github-token", fake_secret)):
        with pytest.raises(PlaceholderError) as caught:
            make_placeholder(kind, fingerprint)
        assert fake_secret not in str(caught.value)
        assert fake_secret not in repr(caught.value)


def test_placeholder_error_is_a_value_error() -> None:
    assert issubclass(PlaceholderError, ValueError)


@pytest.mark.parametrize(
    "text",
    [
        "[REDACTED:aws-access-key:3f9a1c2e",  # no closing bracket
        "[REDACTED:aws-access-key:3f9a1c2]",  # 7 hex
        "[REDACTED:aws-access-key:3f9a1c2e0]",  # 9 hex
        "[REDACTED:AWS:3f9a1c2e]",
        "[redacted:aws:3f9a1c2e]",
        "[REDACTED::3f9a1c2e]",
        "[REDACTED:aws:3F9A1C2E]",
        " [REDACTED:aws:3f9a1c2e]",
    ],
)
def test_near_misses_are_not_placeholders(text: str) -> None:
    assert parse_placeholder(text) is None


def test_spans_are_code_points_and_in_order() -> None:
    first = make_placeholder("github-token", "a" * 8)
    second = make_placeholder("dotenv-value", "b" * 8)
    text = f"é😀 token={first}, KEY={second}\n"
    spans = placeholder_spans(text)
    assert [text[s:e] for s, e in spans] == [first, second]
    assert spans[0][0] == len("é😀 token=")


def test_no_spans_in_text_without_placeholders() -> None:
    assert placeholder_spans("") == []
    assert placeholder_spans("[REDACTED] and [REDACTED:x] are not ours") == []


def test_masking_blanks_each_placeholder_with_as_many_mask_characters() -> None:
    placeholder = make_placeholder("dotenv-value", FINGERPRINT)
    text = f"API_KEY={placeholder}\nOTHER=visible"
    masked = mask_placeholders(text)
    assert len(masked) == len(text)
    assert masked == "API_KEY=" + MASK_CHAR * len(placeholder) + "\nOTHER=visible"
    assert PLACEHOLDER_PREFIX not in masked


def test_masking_adjacent_placeholders_and_astral_neighbours() -> None:
    a = make_placeholder("a", "0" * 8)
    b = make_placeholder("b-c", "f" * 8)
    text = f"😀{a}{b}😀"
    masked = mask_placeholders(text)
    assert masked == "😀" + MASK_CHAR * (len(a) + len(b)) + "😀"


def test_masking_leaves_other_text_alone() -> None:
    text = "nothing to see [REDACTED:Not-Ours:12345678] here"
    assert mask_placeholders(text) is text  # no copy on the common path
    assert mask_placeholders(text) == text


def test_the_public_pattern_matches_what_make_placeholder_makes() -> None:
    placeholder = make_placeholder("private-key", FINGERPRINT)
    match = PLACEHOLDER_RE.fullmatch(placeholder)
    assert match is not None
    assert match["kind"] == "private-key"
    assert match["short"] == FINGERPRINT[:8]


def test_detection_recognises_exactly_the_placeholders_we_write() -> None:
    # Detection masks placeholders before its detectors run but may not import redaction (an
    # import-linter contract), so it carries its own copy of the format. The two must agree, or
    # a second redaction run would flag the placeholders of the first.
    from scrubber.detection import placeholder as detection

    kinds = ["aws-access-key", "dotenv-value", "connection-string-password", "jwt", "x1"]
    for kind in kinds:
        ours = make_placeholder(kind, FINGERPRINT)
        assert detection.make_placeholder(kind, FINGERPRINT) == ours
        text = f"KEY={ours} and é😀{ours}"
        assert detection.mask_placeholders(text) == mask_placeholders(text)
        assert detection.PLACEHOLDER_RE.fullmatch(ours)
