"""Fly.io tokens: `fo1_` + 43 characters (org tokens), and macaroon tokens `fm1r_`/`fm1a_`/`fm2_`
+ base64, often written `FlyV1 fm2_…` (fly.io/docs "Access tokens"; gitleaks rule
flyio-access-token)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

FLYIO_TOKEN = PatternRule(
    name="flyio-token",
    kind="flyio-token",
    pattern=WORD_START
    + r"(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,4096}={0,3})"
    + r"(?![A-Za-z0-9+/=_-])",
    anchors=("fo1_", "fm1r_", "fm1a_", "fm2_", "fm1_"),
    reference="fly.io/docs/security/tokens; gitleaks rule flyio-access-token",
    reject=is_filler,
)

RULES = (FLYIO_TOKEN,)
