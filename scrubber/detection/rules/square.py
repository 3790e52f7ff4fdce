"""Square: access tokens `EAAA` + 60 characters and legacy `sq0atp-` + 22, OAuth application
secrets `sq0csp-` + 43 (developer.squareup.com "Access tokens"; gitleaks rules
square-access-token, square-secret; detect-secrets SquareOAuthDetector)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

SQUARE_TOKEN = PatternRule(
    name="square-token",
    kind="square-token",
    pattern=WORD_START
    + r"(?:EAAA[A-Za-z0-9_-]{60}|sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43})"
    + WORD_END,
    anchors=("eaaa", "sq0atp-", "sq0csp-"),
    reference="developer.squareup.com/docs/build-basics/access-tokens; gitleaks rules "
    "square-access-token, square-secret",
    reject=is_filler,
)

RULES = (SQUARE_TOKEN,)
