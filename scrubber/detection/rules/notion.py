"""Notion integration tokens: `ntn_` + 11 digits + 35 characters (since 2024) and legacy
`secret_` + 43 characters (developers.notion.com "Authorization"; gitleaks rule notion-api-token)."""

from __future__ import annotations

from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

NOTION_TOKEN = PatternRule(
    name="notion-token",
    kind="notion-token",
    pattern=WORD_START + r"(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + WORD_END,
    anchors=("ntn_", "secret_"),
    reference="developers.notion.com/docs/authorization; gitleaks rule notion-api-token",
    reject=is_filler,
    # `secret_` starts many names; a 43-character token after it does not.
    gates=(
        Gate(r"ntn_[0-9]{11}"),
        Gate(r"secret_[A-Za-z0-9]{43}"),
    ),
)

RULES = (NOTION_TOKEN,)
