"""Anthropic: API keys `sk-ant-api03-…`, admin keys `sk-ant-admin01-…`, and the OAuth access and
refresh tokens Claude Code stores (`sk-ant-oat01-…`, `sk-ant-ort01-…`).

The prefix names the key type and version; the body is base64url and ends in `AA`
(console.anthropic.com key format; gitleaks rules anthropic-api-key, anthropic-admin-api-key).
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

_BODY = r"[A-Za-z0-9_-]{20,300}(?![A-Za-z0-9_-])"

ANTHROPIC_API_KEY = PatternRule(
    name="anthropic-api-key",
    kind="anthropic-api-key",
    pattern=WORD_START + r"sk-ant-(?:api|admin)\d{2}-" + _BODY,
    public_prefix=r"sk-ant-(?:api|admin)\d\d-",
    anchors=("sk-ant-",),
    reference="docs.anthropic.com (API keys, Admin API keys); gitleaks rules "
    "anthropic-api-key, anthropic-admin-api-key",
    reject=is_filler,
)

ANTHROPIC_OAUTH_TOKEN = PatternRule(
    name="anthropic-oauth-token",
    kind="anthropic-oauth-token",
    pattern=WORD_START + r"sk-ant-(?!api\d|admin\d)[a-z]{2,10}\d{2}-" + _BODY,
    public_prefix=r"sk-ant-(?:oat|ort|sid)\d\d-",
    anchors=("sk-ant-",),
    reference="Claude Code ~/.claude/.credentials.json (claudeAiOauth accessToken/refreshToken)",
    reject=is_filler,
)

RULES = (ANTHROPIC_API_KEY, ANTHROPIC_OAUTH_TOKEN)
