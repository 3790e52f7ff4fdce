"""SendGrid API keys: `SG.` + 22 + `.` + 43 base64url characters (docs.sendgrid.com API keys;
gitleaks rule sendgrid-api-token; detect-secrets SendGridDetector)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

SENDGRID_API_KEY = PatternRule(
    name="sendgrid-api-key",
    kind="sendgrid-api-key",
    pattern=WORD_START + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
    public_prefix=r"SG\.",
    anchors=("sg.",),
    reference="docs.sendgrid.com/ui/account-and-settings/api-keys; gitleaks rule "
    "sendgrid-api-token",
    reject=is_filler,
)

RULES = (SENDGRID_API_KEY,)
