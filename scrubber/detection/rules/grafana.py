"""Grafana: Cloud access policy tokens `glc_` + base64 JSON, service account tokens `glsa_` +
32 + `_` + 8 hex (grafana.com/docs "Service account tokens", "Access policies"; gitleaks rules
grafana-cloud-api-token, grafana-service-account-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

GRAFANA_TOKEN = PatternRule(
    name="grafana-token",
    kind="grafana-token",
    pattern=WORD_START
    + r"(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"
    + r"(?![A-Za-z0-9+/=_])",
    anchors=("glc_", "glsa_"),
    reference="grafana.com/docs/grafana/latest/administration/service-accounts; gitleaks rules "
    "grafana-cloud-api-token, grafana-service-account-token",
    reject=is_filler,
)

RULES = (GRAFANA_TOKEN,)
