"""1Password: service account tokens (`ops_` + base64 JSON) and account Secret Keys
(`A3-XXXXXX-…`) (developer.1password.com "Service accounts"; support.1password.com "Secret Key";
gitleaks rules 1password-service-account-token, 1password-secret-key)."""

from __future__ import annotations

from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

ONEPASSWORD_SERVICE_ACCOUNT_TOKEN = PatternRule(
    name="1password-service-account-token",
    kind="1password-token",
    pattern=WORD_START + r"ops_eyJ[A-Za-z0-9+/_-]{100,8192}={0,3}(?![A-Za-z0-9+/=_-])",
    anchors=("ops_eyj",),
    reference="developer.1password.com/docs/service-accounts; gitleaks rule "
    "1password-service-account-token",
    reject=is_filler,
)

ONEPASSWORD_SECRET_KEY = PatternRule(
    name="1password-secret-key",
    kind="1password-secret-key",
    pattern=WORD_START + r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
    r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}" + WORD_END,
    anchors=("a3-",),
    reference="support.1password.com/secret-key; gitleaks rule 1password-secret-key",
    reject=is_filler,
    # `a3-` is common in base64 (lockfile hashes); the key's shape is not.
    gates=(Gate(r"A3-[A-Z0-9]{6}-", caseless=False),),
)

RULES = (ONEPASSWORD_SERVICE_ACCOUNT_TOKEN, ONEPASSWORD_SECRET_KEY)
