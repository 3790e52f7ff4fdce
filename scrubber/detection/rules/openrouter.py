"""OpenRouter API keys: `sk-or-v1-` + 64 hex characters (openrouter.ai/docs, API keys)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

OPENROUTER_API_KEY = PatternRule(
    name="openrouter-api-key",
    kind="openrouter-api-key",
    pattern=WORD_START + r"sk-or-v1-[0-9a-f]{64}" + WORD_END,
    public_prefix=r"sk-or-v1-",
    anchors=("sk-or-v1-",),
    reference="openrouter.ai/docs/api-reference/authentication (key format sk-or-v1-<hex>)",
    reject=is_filler,
)

RULES = (OPENROUTER_API_KEY,)
