"""Mailgun private API keys: `key-` + 32 hex (legacy) (documentation.mailgun.com
"Authentication"; gitleaks rule mailgun-private-api-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

MAILGUN_API_KEY = PatternRule(
    name="mailgun-api-key",
    kind="mailgun-api-key",
    pattern=WORD_START + r"key-[0-9a-f]{32}" + WORD_END,
    anchors=("key-",),
    reference="documentation.mailgun.com (API keys); gitleaks rule mailgun-private-api-token",
    reject=is_filler,
)

RULES = (MAILGUN_API_KEY,)
