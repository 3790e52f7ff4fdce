"""Linear personal API keys: `lin_api_` + 40 characters (linear.app/developers "API and
Webhooks"; gitleaks rule linear-api-key)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

LINEAR_API_KEY = PatternRule(
    name="linear-api-key",
    kind="linear-api-key",
    pattern=WORD_START + r"lin_(?:api|oauth)_[A-Za-z0-9]{40,64}" + WORD_END,
    anchors=("lin_api_", "lin_oauth_"),
    reference="linear.app/developers; gitleaks rule linear-api-key",
    reject=is_filler,
)

RULES = (LINEAR_API_KEY,)
