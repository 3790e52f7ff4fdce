"""Twilio: auth tokens and API key secrets are 32 hex characters with no marker, so they are
only recognised next to a Twilio label (`TWILIO_AUTH_TOKEN=…`, `twilio_api_secret: …`).
Account SIDs (`AC…`) and API key SIDs (`SK…`) are identifiers and are left alone.
"""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_filler

TWILIO_SECRET = PatternRule(
    name="twilio-secret",
    kind="twilio-auth-token",
    pattern=r"twilio[\w.-]{0,30}?(?:auth[_-]?token|api[_-]?secret|secret|token)"
    r"""\\?["']?\s{0,4}(?:=|:|=>)\s{0,16}\\?["']?(?P<secret>[0-9a-fA-F]{32})(?![0-9a-zA-Z])""",
    flags=re.IGNORECASE,
    anchors=("twilio",),
    reference="twilio.com/docs/iam/api-keys and /docs/iam/credentials (32-hex auth token)",
    reject=is_filler,
)

RULES = (TWILIO_SECRET,)
