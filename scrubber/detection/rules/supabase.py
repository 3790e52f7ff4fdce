"""Supabase: personal access tokens (`sbp_` + 40 hex) and secret API keys (`sb_secret_…`).

supabase.com/docs 'API keys' documents `sb_secret_` (secret) next to `sb_publishable_` (public,
not matched); Management API access tokens start `sbp_`. Service-role JWTs are caught by jwt.py.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START

SUPABASE_ACCESS_TOKEN = PatternRule(
    name="supabase-access-token",
    kind="supabase-token",
    pattern=WORD_START + r"sbp_(?:v0_)?[0-9a-f]{40}" + WORD_END,
    public_prefix=r"sbp_",
    anchors=("sbp_",),
    reference="supabase.com/docs/reference/api (Management API personal access tokens); "
    "gitleaks rule supabase-access-token",
)

SUPABASE_SECRET_KEY = PatternRule(
    name="supabase-secret-key",
    kind="supabase-token",
    pattern=WORD_START + r"sb_secret_[A-Za-z0-9_-]{20,200}(?![A-Za-z0-9_-])",
    public_prefix=r"sb_secret_",
    anchors=("sb_secret_",),
    reference="supabase.com/docs/guides/api/api-keys (sb_secret_ keys)",
)

RULES = (SUPABASE_ACCESS_TOKEN, SUPABASE_SECRET_KEY)
