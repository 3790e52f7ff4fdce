"""Hugging Face: user access tokens `hf_` + 34 letters, organization tokens `api_org_` + 34
letters (huggingface.co/docs/hub/security-tokens; gitleaks rules huggingface-access-token,
huggingface-organization-api-token).
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

HUGGINGFACE_TOKEN = PatternRule(
    name="huggingface-token",
    kind="huggingface-token",
    pattern=WORD_START + r"(?:hf_|api_org_)[A-Za-z]{34}" + WORD_END,
    anchors=("hf_", "api_org_"),
    public_prefix=r"hf_",
    reference="huggingface.co/docs/hub/security-tokens; gitleaks rule huggingface-access-token",
    reject=is_filler,
)

RULES = (HUGGINGFACE_TOKEN,)
