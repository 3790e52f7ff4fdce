"""HTTP credentials in headers: `Authorization: Bearer …`, `Basic …`, `token …`, a bare token,
also as a curl `-H 'Authorization: …'`, in `curl -v` output, or in a JSON/Python header map.

RFC 9110 §11.6.2 defines the header (`credentials = auth-scheme [ 1*SP token68 ]`); RFC 6750
the Bearer scheme, RFC 7617 Basic (base64 of `user:password`). Header names holding API keys
(`X-Api-Key`, `Api-Token`, `PRIVATE-TOKEN`) are caught by assignment/'s sensitive-name rule.
Digest and AWS SigV4 headers carry one-time signatures, not reusable credentials, and are not
matched; neither are references such as `Bearer $TOKEN` or `Bearer <token>`.
"""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_trivial, looks_like_code, looks_token_like

_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z_]+$")
# A variable of the code that builds the header: `'Authorization': v4auth_header}`.
_SNAKE_IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+[})\]]*$")


def _not_a_credential(value: str) -> bool:
    return (
        value[0] in "<[{("
        or is_trivial(value)
        or looks_like_code(value)
        or bool(_ENV_NAME.match(value))
        or bool(_SNAKE_IDENTIFIER.match(value))
        or not looks_token_like(value, min_length=8)
    )


AUTHORIZATION_HEADER = PatternRule(
    name="authorization-header",
    kind="authorization-header",
    pattern=r"(?<![\w-])(?:proxy-)?authorization\\?[\"']?\s{0,4}[:=]\s{0,16}\\?[\"']?"
    r"(?!digest\s|aws4-hmac-sha256\s|hoba\s|mutual\s)"
    r"(?:(?:bearer|basic|token|bot|jwt|oauth|negotiate|ntlm|api-?key|api-?token|sso-key|splunk|"
    r"dsn|key|secret|access-?token)\s+)?"
    r"(?P<secret>[^\s\"'`\\,;]{8,8192})",
    flags=re.IGNORECASE,
    anchors=("authorization",),
    reference="RFC 9110 §11.6.2 (Authorization), RFC 6750 (Bearer), RFC 7617 (Basic); "
    "gitleaks rules curl-auth-header, generic-api-key",
    reject=_not_a_credential,
)

RULES = (AUTHORIZATION_HEADER,)
