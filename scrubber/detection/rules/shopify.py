"""Shopify: admin API access tokens `shpat_`, custom app `shpca_`, private app `shppa_`, shared
secrets `shpss_`, each + 32 hex (shopify.dev "About API authentication"; gitleaks rules
shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token,
shopify-shared-secret)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

SHOPIFY_TOKEN = PatternRule(
    name="shopify-token",
    kind="shopify-token",
    pattern=WORD_START + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + WORD_END,
    anchors=("shpat_", "shpca_", "shppa_", "shpss_"),
    reference="shopify.dev/docs/apps/build/authentication-authorization; gitleaks rules shopify-*",
    reject=is_filler,
)

RULES = (SHOPIFY_TOKEN,)
