"""Cloudflare Origin CA keys: `v1.0-` + 24 hex + `-` + 146 hex (developers.cloudflare.com
"Origin CA keys"; gitleaks rule cloudflare-origin-ca-key). Cloudflare API tokens have no prefix
and are caught by their label (`CLOUDFLARE_API_TOKEN=…`) in assignment/."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

CLOUDFLARE_ORIGIN_CA_KEY = PatternRule(
    name="cloudflare-origin-ca-key",
    kind="cloudflare-origin-ca-key",
    pattern=WORD_START + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + WORD_END,
    anchors=("v1.0-",),
    reference="developers.cloudflare.com/fundamentals/api/get-started/ca-keys; gitleaks rule "
    "cloudflare-origin-ca-key",
    reject=is_filler,
)

RULES = (CLOUDFLARE_ORIGIN_CA_KEY,)
