"""Postman API keys: `PMAK-` + 24 hex + `-` + 34 hex (learning.postman.com "Postman API keys";
gitleaks rule postman-api-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

POSTMAN_API_KEY = PatternRule(
    name="postman-api-key",
    kind="postman-api-key",
    pattern=WORD_START + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + WORD_END,
    anchors=("pmak-",),
    reference="learning.postman.com/docs/developer/postman-api/authentication; gitleaks rule "
    "postman-api-token",
    reject=is_filler,
)

RULES = (POSTMAN_API_KEY,)
