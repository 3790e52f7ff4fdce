"""Doppler tokens: `dp.pt.` personal, `dp.st.` service, `dp.sa.` service account, `dp.ct.` CLI,
`dp.scim.`, `dp.audit.` + 40-44 characters (docs.doppler.com "Token Formats"; gitleaks rule
doppler-api-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

DOPPLER_TOKEN = PatternRule(
    name="doppler-token",
    kind="doppler-token",
    pattern=WORD_START
    + r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}"
    + WORD_END,
    anchors=("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
    reference="docs.doppler.com/reference/auth-token-formats; gitleaks rule doppler-api-token",
    reject=is_filler,
)

RULES = (DOPPLER_TOKEN,)
