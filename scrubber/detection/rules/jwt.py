"""JSON Web Tokens (RFC 7519): base64url segments separated by dots, whose first segment
decodes to a JSON header naming its algorithm (`{"alg": …}`, RFC 7515 §4.1.1).

A JWS has three segments (the signature may be empty for `alg: none`), a JWE five; tokens
pasted without their signature still identify a session and are matched with two. The header
check is what keeps other `eyJ…` base64 (1Password and Sentry tokens have their own rules)
from being reported as a JWT.
"""

from __future__ import annotations

import base64
import binascii

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START

_SEGMENT = r"[A-Za-z0-9_-]"


def _not_a_jwt(value: str) -> bool:
    header = value.split(".", 1)[0].rstrip("=")
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
    except (binascii.Error, ValueError):
        return True
    return not (decoded.lstrip().startswith(b"{") and b'"alg"' in decoded)


JWT = PatternRule(
    name="jwt",
    kind="jwt",
    pattern=WORD_START
    + rf"eyJ{_SEGMENT}{{8,4096}}={{0,2}}\.{_SEGMENT}{{4,16384}}={{0,2}}"
    + rf"(?:\.(?:{_SEGMENT}{{1,4096}}={{0,2}}(?:\.{_SEGMENT}{{1,16384}}){{0,2}})?)?"
    + r"(?![A-Za-z0-9_=-])",
    anchors=("eyj",),
    public_prefix=r"eyJ",  # base64 of `{"`: every JWT's header starts so
    reference="RFC 7519 (JWT), RFC 7515 §4.1.1 (alg header); gitleaks rule jwt; "
    "detect-secrets JwtTokenDetector",
    reject=_not_a_jwt,
)

RULES = (JWT,)
