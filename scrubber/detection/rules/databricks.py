"""Databricks personal access tokens: `dapi` + 32 hex, optionally `-<n>` (docs.databricks.com
"Databricks personal access token authentication"; gitleaks rule databricks-api-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

DATABRICKS_TOKEN = PatternRule(
    name="databricks-token",
    kind="databricks-token",
    pattern=WORD_START + r"dapi[a-f0-9]{32}(?:-\d)?" + WORD_END,
    anchors=("dapi",),
    reference="docs.databricks.com/en/dev-tools/auth/pat.html; gitleaks rule databricks-api-token",
    reject=is_filler,
)

RULES = (DATABRICKS_TOKEN,)
