"""Mailchimp API keys: 32 hex + `-us` + datacenter number (mailchimp.com/developer "API keys";
gitleaks rule mailchimp-api-key; detect-secrets MailchimpDetector)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

MAILCHIMP_API_KEY = PatternRule(
    name="mailchimp-api-key",
    kind="mailchimp-api-key",
    pattern=WORD_START + r"[0-9a-f]{32}-us\d{1,2}" + WORD_END,
    anchors=("-us",),
    reference="mailchimp.com/developer/marketing/guides/quick-start (API key with -usNN "
    "datacenter suffix); gitleaks rule mailchimp-api-key",
    reject=is_filler,
)

RULES = (MAILCHIMP_API_KEY,)
