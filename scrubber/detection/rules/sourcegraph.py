"""Sourcegraph access tokens: `sgp_` + 40 hex, or `sgp_<16 hex instance id>_` / `sgp_local_` +
40 hex (sourcegraph.com/docs "Access tokens"; gitleaks rule sourcegraph-access-token)."""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

SOURCEGRAPH_TOKEN = PatternRule(
    name="sourcegraph-token",
    kind="sourcegraph-token",
    pattern=WORD_START + r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + WORD_END,
    anchors=("sgp_",),
    reference="sourcegraph.com/docs/cli/how-tos/creating_an_access_token; gitleaks rule "
    "sourcegraph-access-token",
    reject=is_filler,
)

# Tokens from before the `sgp_` prefix: 40 hex next to a Sourcegraph label.
SOURCEGRAPH_LABELED_TOKEN = PatternRule(
    name="sourcegraph-labeled-token",
    kind="sourcegraph-token",
    pattern=r"sourcegraph[\w.-]{0,30}?\\?[\"']?\s{0,4}(?:=|:)\s{0,16}\\?[\"']?"
    r"(?P<secret>[a-fA-F0-9]{40})" + WORD_END,
    flags=re.IGNORECASE,
    anchors=("sourcegraph",),
    reference="sourcegraph.com/docs (SRC_ACCESS_TOKEN); gitleaks rule sourcegraph-access-token",
    reject=is_filler,
)

RULES = (SOURCEGRAPH_TOKEN, SOURCEGRAPH_LABELED_TOKEN)
