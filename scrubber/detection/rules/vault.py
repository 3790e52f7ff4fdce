"""HashiCorp Vault tokens: `hvs.` service, `hvb.` batch and `hvr.` recovery tokens (Vault 1.10+),
and legacy `s.` + 24 characters, which is only trusted next to a token label
(developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes; gitleaks rules
vault-service-token, vault-batch-token)."""

from __future__ import annotations

import re

from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

VAULT_TOKEN = PatternRule(
    name="vault-token",
    kind="vault-token",
    pattern=WORD_START + r"hv[sbr]\.[A-Za-z0-9_-]{24,300}(?![A-Za-z0-9_-])",
    public_prefix=r"hvs\.",
    anchors=("hvs.", "hvb.", "hvr."),
    reference="developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
    reject=is_filler,
)

VAULT_LEGACY_TOKEN = PatternRule(
    name="vault-legacy-token",
    kind="vault-token",
    pattern=r"token\\?[\"']?\s{0,4}(?:=|:|=>|\s)\s{0,16}\\?[\"']?"
    r"(?P<secret>(?-i:s)\.[A-Za-z0-9]{24})(?![A-Za-z0-9_-])",
    flags=re.IGNORECASE,
    anchors=("token",),
    reference="developer.hashicorp.com/vault/docs/concepts/tokens (pre-1.10 s.<24> tokens)",
    reject=is_filler,
    # "token" is in most lines; the legacy `s.` + 24 shape is rare.
    gates=(Gate(r"s\.[A-Za-z0-9]{24}", caseless=False),),
)

RULES = (VAULT_TOKEN, VAULT_LEGACY_TOKEN)
