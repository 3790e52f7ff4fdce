"""Atlassian API tokens: `ATATT3` + 186 characters (user API tokens since 2023) and `ATCTT3`
(Confluence/Jira Cloud admin tokens) (support.atlassian.com "Manage API tokens"; gitleaks rule
atlassian-api-token). Older 24-character tokens have no prefix; assignment/ catches them by
label."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

ATLASSIAN_API_TOKEN = PatternRule(
    name="atlassian-api-token",
    kind="atlassian-api-token",
    pattern=WORD_START + r"AT[AC]TT3[A-Za-z0-9_=-]{100,300}(?![A-Za-z0-9_=-])",
    anchors=("atatt3", "atctt3"),
    reference="support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-"
    "atlassian-account; gitleaks rule atlassian-api-token",
    reject=is_filler,
)

RULES = (ATLASSIAN_API_TOKEN,)
