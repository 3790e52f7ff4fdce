"""Masked previews show only what the rules declare public (`public_prefix`): the part of a
token that names its vendor. Values are built at run time (no literal secret in the tree)."""

from __future__ import annotations

import re

import pytest

from scrubber.detection.detector import ShowsPublicPrefix
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy

_BODY = "Xk9mQ2vL7pR4tW8zN3bC6dF1gH5jK0sY"  # 32 characters of no meaning


def _declared() -> list[str]:
    return [
        r.public_prefix for r in ALL_RULES if isinstance(r, ShowsPublicPrefix) and r.public_prefix
    ]


def test_every_declared_prefix_is_a_valid_regex_that_no_other_one_shadows() -> None:
    prefixes = _declared()
    assert len(prefixes) >= 20
    for prefix in prefixes:
        re.compile(prefix)
    # With `^(?:a|b)` the first alternative that matches wins: no declared prefix may match
    # the start of what another one matches, or the preview would depend on the rules' order.
    spellings = {"gh[pousr]_": "ghp_", "[sr]k_(?:live|test)_": "sk_live_", "xox[abposre]-": "xoxb-"}
    for prefix in prefixes:
        sample = spellings.get(prefix, re.sub(r"\\(.)", r"\1", prefix.split("|")[0]))
        sample = re.sub(r"\(\?:([^|)]*)[^)]*\)", r"\1", sample).replace(r"\d\d", "03")
        others = [p for p in prefixes if p != prefix and re.match(f"(?:{p})", sample)]
        assert not others, (prefix, sample, others)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("gh" + "p_" + _BODY + "abcd", "ghp_"),
        ("sk-" + "proj-" + _BODY, "sk-proj-"),
        ("xox" + "b-123456789012-" + _BODY, "xoxb-"),
        ("AKIA" + "QWERTYUIOPASDFGH", "AKIA"),
    ],
)
def test_a_preview_shows_the_vendor_prefix_only(value: str, shown: str) -> None:
    scanner = SecretScanner(build_detectors(Policy.default()), Fingerprinter(bytes(32)))
    (found,) = scanner.scan_text(f"export TOKEN={value}\n")
    assert found.prefix == shown
