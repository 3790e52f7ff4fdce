"""Facebook (Meta): page/user access tokens `EAA…` (100+ characters) and app access tokens
`<app id>|<app secret>` (developers.facebook.com "Access Tokens"; gitleaks rules
facebook-page-access-token, facebook-access-token). App secrets alone are 32 hex with no
marker; assignment/ catches them by label."""

from __future__ import annotations

from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

FACEBOOK_ACCESS_TOKEN = PatternRule(
    name="facebook-access-token",
    kind="facebook-access-token",
    pattern=WORD_START + r"EAA[A-Za-z0-9]{100,400}" + WORD_END,
    anchors=("eaa",),
    reference="developers.facebook.com/docs/facebook-login/guides/access-tokens; gitleaks rule "
    "facebook-page-access-token",
    reject=is_filler,
    # `eaa` is common in base64 text; the token's length is not.
    gates=(Gate(r"EAA[A-Za-z0-9]{100}", caseless=False),),
)

FACEBOOK_APP_TOKEN = PatternRule(
    name="facebook-app-token",
    kind="facebook-access-token",
    pattern=r"(?<![0-9])\d{15,16}(?:\||%7C)(?P<secret>[A-Za-z0-9_-]{27})" + WORD_END,
    anchors=("|", "%7c"),
    reference="developers.facebook.com/docs/facebook-login/guides/access-tokens#apptokens; "
    "gitleaks rule facebook-access-token",
    reject=is_filler,
    # `|` is common punctuation: the app id and secret around it are not.
    gates=(Gate(r"[0-9]{15}(?:\||%7[Cc])[A-Za-z0-9_-]{27}"),),
)

RULES = (FACEBOOK_ACCESS_TOKEN, FACEBOOK_APP_TOKEN)
