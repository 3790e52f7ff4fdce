"""Sentry auth tokens: organization tokens `sntrys_` + base64 JSON + `_` + secret, user tokens
`sntryu_` + 64 hex (docs.sentry.io "Auth Tokens"; gitleaks rules sentry-org-token,
sentry-user-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

SENTRY_TOKEN = PatternRule(
    name="sentry-token",
    kind="sentry-token",
    pattern=WORD_START
    + r"(?:sntrys_eyJ[A-Za-z0-9+/=]{20,2048}_[A-Za-z0-9+/=]{20,200}|sntryu_[a-f0-9]{64})"
    + r"(?![A-Za-z0-9+/=_])",
    anchors=("sntrys_", "sntryu_"),
    reference="docs.sentry.io/account/auth-tokens; gitleaks rules sentry-org-token, "
    "sentry-user-token",
    reject=is_filler,
)

RULES = (SENTRY_TOKEN,)
