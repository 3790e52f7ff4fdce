"""Google: API keys (`AIza…`), OAuth client secrets (`GOCSPX-…`), OAuth access and refresh
tokens, and the `private_key_id` of a service-account JSON key (its `private_key` PEM is found
by private_key.py, also when JSON-escaped).
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

GOOGLE_API_KEY = PatternRule(
    name="google-api-key",
    kind="google-api-key",
    # 39 characters in all; the character after the key is not checked because keys are often
    # pasted glued to punctuation.
    pattern=WORD_START + r"AIza[A-Za-z0-9_-]{35}",
    public_prefix=r"AIza",
    anchors=("aiza",),
    reference="cloud.google.com/docs/authentication/api-keys; gitleaks rule gcp-api-key",
    reject=is_filler,
)

GOOGLE_OAUTH_CLIENT_SECRET = PatternRule(
    name="google-oauth-client-secret",
    kind="google-oauth-client-secret",
    pattern=WORD_START + r"GOCSPX-[A-Za-z0-9_-]{28}" + WORD_END,
    anchors=("gocspx-",),
    reference="Google Cloud console OAuth client secrets (GOCSPX- prefix since 2021)",
    reject=is_filler,
)

GOOGLE_OAUTH_TOKEN = PatternRule(
    name="google-oauth-token",
    kind="google-oauth-token",
    # Access tokens `ya29.…`; refresh tokens `1//0…` (developers.google.com/identity/protocols/oauth2).
    pattern=WORD_START + r"(?:ya29\.[A-Za-z0-9_-]{20,2048}|1//0[A-Za-z0-9_-]{40,512})"
    r"(?![A-Za-z0-9_-])",
    anchors=("ya29.", "1//0"),
    reference="developers.google.com/identity/protocols/oauth2 (token formats)",
    reject=is_filler,
)

GCP_PRIVATE_KEY_ID = PatternRule(
    name="gcp-private-key-id",
    kind="gcp-private-key-id",
    pattern=r'private_key_id\\?"\s*:\s*\\?"(?P<secret>[0-9a-f]{40})' + WORD_END,
    anchors=("private_key_id",),
    reference="cloud.google.com/iam/docs/keys-create-delete (service account key JSON)",
    reject=is_filler,
)

RULES = (GOOGLE_API_KEY, GOOGLE_OAUTH_CLIENT_SECRET, GOOGLE_OAUTH_TOKEN, GCP_PRIVATE_KEY_ID)
