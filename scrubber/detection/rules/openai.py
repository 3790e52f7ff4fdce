"""OpenAI: project, service-account and admin keys, and legacy `sk-` keys.

Every OpenAI secret key embeds the marker `T3BlbkFJ` (base64 of "OpenAI"); current keys start
`sk-proj-`, `sk-svcacct-` or `sk-admin-` (platform.openai.com API keys page; gitleaks rule
openai-api-key; detect-secrets OpenAIDetector).
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

OPENAI_API_KEY = PatternRule(
    name="openai-api-key",
    kind="openai-api-key",
    pattern=WORD_START + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}(?![A-Za-z0-9_-])",
    public_prefix=r"sk-proj-|sk-svcacct-|sk-admin-",
    anchors=("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-none-"),
    reference="platform.openai.com/api-keys (project and service account keys); gitleaks rule "
    "openai-api-key",
    reject=is_filler,
)

OPENAI_LEGACY_KEY = PatternRule(
    name="openai-legacy-key",
    kind="openai-api-key",
    pattern=WORD_START + r"sk-[A-Za-z0-9_-]{8,200}T3BlbkFJ[A-Za-z0-9_-]{8,200}(?![A-Za-z0-9_-])",
    anchors=("t3blbkfj",),
    reference="detect-secrets OpenAIDetector (the T3BlbkFJ marker); gitleaks rule openai-api-key",
    reject=is_filler,
)

RULES = (OPENAI_API_KEY, OPENAI_LEGACY_KEY)
