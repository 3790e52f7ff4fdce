"""Copies of a found value inside the same string become hits of the same kind."""

from __future__ import annotations

import random
import string

from scrubber.detection.finding import Hit
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.detection.string_copies import copies_in_same_string


def _value(length: int, seed: str) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.hexdigits.lower()[:16]) for _ in range(length))


def _hit_for(text: str, value: str) -> Hit:
    start = text.index(value)
    return Hit(start, start + len(value), "dotenv-value", "sensitive-assignment")


def test_a_copy_after_a_separator_is_found() -> None:
    value = _value(40, "a")
    text = f"vendor token = '{value}' | '{value}'"
    copies = copies_in_same_string(text, [_hit_for(text, value)])
    assert [(c.start, c.end, c.kind) for c in copies] == [
        (text.rindex(value), text.rindex(value) + 40, "dotenv-value")
    ]


def test_a_longer_token_holding_the_value_is_not_a_copy() -> None:
    value = _value(12, "b")
    text = f"k='{value}' x{value} {value}9 {value}"
    copies = copies_in_same_string(text, [_hit_for(text, value)])
    assert [c.start for c in copies] == [text.rindex(value)]


def test_a_copy_assigned_with_an_equals_sign_is_found() -> None:
    # The password set in the environment after the URL that gave it away: the `=` names the
    # copy, it is not part of a longer token (base64 pads only at the end: a value followed
    # by `=` stays glued).
    value = _value(24, "f")
    text = f"DATABASE_URL=postgres://app:{value}@db/shop\nPGPASSWORD={value}\nx={value}=="
    copies = copies_in_same_string(text, [_hit_for(text, value)])
    assert [c.start for c in copies] == [text.index(f"PGPASSWORD={value}") + len("PGPASSWORD=")]


def test_short_values_are_not_spread() -> None:
    text = "pw='abc1234' abc1234"
    assert copies_in_same_string(text, [_hit_for(text, "abc1234")]) == []


def test_thousands_of_copies_and_a_megabyte_value() -> None:
    value = _value(32, "c")
    text = f"token = '{value}'\n" + f" {value}" * 5000
    copies = copies_in_same_string(text, [_hit_for(text, value)])
    assert len(copies) == 5000
    big = _value(2_000_000, "d")
    text = f"secret='{big}' {big}"
    copies = copies_in_same_string(text, [_hit_for(text, big)])
    assert [(c.start, c.end) for c in copies] == [(len(text) - len(big), len(text))]


def test_the_scanner_reports_and_masks_every_copy() -> None:
    value = _value(40, "e")
    text = f"vendor token = '{value}' | '{value}' and again {value}."
    scanner = SecretScanner(ALL_RULES, Fingerprinter(b"k" * 32))
    found = scanner.scan_text(text)
    assert len(found) == 3
    assert len({f.fingerprint for f in found}) == 1
    redacted = scanner.redact_text(text)
    assert value not in redacted
    assert scanner.redact_text(redacted) == redacted  # idempotent
