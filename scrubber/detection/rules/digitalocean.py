"""DigitalOcean tokens: `dop_v1_` personal access, `doo_v1_` OAuth, `dor_v1_` refresh, each + 64
hex (docs.digitalocean.com 'How to Create a Personal Access Token'; gitleaks rules
digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

DIGITALOCEAN_TOKEN = PatternRule(
    name="digitalocean-token",
    kind="digitalocean-token",
    pattern=WORD_START + r"do[opr]_v1_[a-f0-9]{64}" + WORD_END,
    public_prefix=r"dop_v1_|doo_v1_|dor_v1_",
    anchors=("dop_v1_", "doo_v1_", "dor_v1_"),
    reference="docs.digitalocean.com/reference/api/create-personal-access-token; gitleaks rule "
    "digitalocean-pat",
    reject=is_filler,
)

RULES = (DIGITALOCEAN_TOKEN,)
