"""API keys of AI providers with their own prefixes (each provider's API keys page):
Perplexity `pplx-` + 48, xAI `xai-` + 80, Groq `gsk_` + 52, Replicate `r8_` + 37, LangSmith
`lsv2_pt_`/`lsv2_sk_` + 32 hex + `_` + 10 hex, Pinecone `pcsk_`, Tavily `tvly-`, Fireworks
`fw_` (gitleaks rules perplexity-api-key and others)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

AI_PROVIDER_KEY = PatternRule(
    name="ai-provider-key",
    kind="ai-provider-key",
    pattern=WORD_START
    + r"(?:pplx-[A-Za-z0-9]{48}|xai-[A-Za-z0-9]{70,90}|gsk_[A-Za-z0-9]{52}|r8_[A-Za-z0-9]{37}|"
    r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|pcsk_[A-Za-z0-9]{5,8}_[A-Za-z0-9]{40,80}|"
    r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}|fw_[A-Za-z0-9]{24,40})" + r"(?![A-Za-z0-9_-])",
    anchors=("pplx-", "xai-", "gsk_", "r8_", "lsv2_", "pcsk_", "tvly-", "fw_"),
    reference="docs.perplexity.ai, docs.x.ai, console.groq.com, replicate.com/docs, "
    "docs.smith.langchain.com, docs.pinecone.io, docs.tavily.com, docs.fireworks.ai (key "
    "formats); gitleaks rule perplexity-api-key",
    reject=is_filler,
)

RULES = (AI_PROVIDER_KEY,)
