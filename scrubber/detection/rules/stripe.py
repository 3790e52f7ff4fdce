"""Stripe: secret and restricted keys (`sk_`/`rk_` + live/test) and webhook signing secrets.

Stripe's "API keys" page documents `sk_live_`/`sk_test_` secret keys and `rk_live_`/`rk_test_`
restricted keys; webhook endpoint secrets start `whsec_` ("Check the webhook signatures").
Publishable keys (`pk_…`) are public by design and not matched.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

STRIPE_SECRET_KEY = PatternRule(
    name="stripe-secret-key",
    kind="stripe-secret-key",
    pattern=WORD_START + r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,255}" + WORD_END,
    public_prefix=r"[sr]k_(?:live|test)_",
    anchors=("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
    reference="docs.stripe.com/keys; gitleaks rule stripe-access-token; detect-secrets "
    "StripeDetector",
    reject=is_filler,
)

STRIPE_WEBHOOK_SECRET = PatternRule(
    name="stripe-webhook-secret",
    kind="stripe-webhook-secret",
    pattern=WORD_START + r"whsec_[A-Za-z0-9+/]{20,255}={0,2}(?![A-Za-z0-9+/=_])",
    public_prefix=r"whsec_",
    anchors=("whsec_",),
    reference="docs.stripe.com/webhooks (endpoint signing secret whsec_…)",
    reject=is_filler,
)

RULES = (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET)
