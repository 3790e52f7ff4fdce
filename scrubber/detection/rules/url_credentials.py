"""URLs that carry a key: in a query parameter whose name says so, or in the path of a webhook
whose vendor documents the path as the secret.

- Query parameters: connection_string.py's rule takes the usual names (`access_token`, `api_key`,
  `sig`); this one judges any parameter name by its words like any other name (`tokenkey`,
  `apiKey`, `private_token`, `subscription-key`, `client_secret`), plus `signature` (AWS SigV2
  presigned and CloudFront signed URLs: the signature is what grants access) and the `code` of an
  Azure Functions URL (the function key: learn.microsoft.com "Azure Functions HTTP trigger,
  API key authorization", `?code=`). Pagination and other cursors (`page_token`, `next_token`)
  are not credentials; neither are references (`$KEY`, `{key}`) or values too short or too plain
  to be generated.
- Webhooks: Microsoft Teams incoming webhooks
  (`<tenant>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<id>/<owner>`,
  learn.microsoft.com "Create an Incoming Webhook": the URL is the credential, so all of it goes),
  Discord (`discord.com/api/webhooks/<id>/<token>`, discord.com/developers/docs/resources/webhook),
  Zapier catch hooks (`hooks.zapier.com/hooks/catch/<account>/<hook>/`, zapier.com help
  "Trigger Zaps from webhooks") and IFTTT Webhooks (`maker.ifttt.com/trigger/<event>/with/key/
  <key>`, ifttt.com/maker_webhooks). Slack's are slack.py's, Telegram's bot URLs telegram.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate
from scrubber.detection.rules.assignment import Strength
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.cli_flags import credential_value, secret_name_strength
from scrubber.detection.rules.values import is_filler, is_trivial

_KEYWORDS = r"(?:pass|pwd|secret|token|key|auth|cred|sig)"
# A parameter: `?` or `&` (raw JSON may write it `\u0026`), a name, `=`, the value to the next
# delimiter of a query or of the text around the URL.
_PARAMETER = re.compile(
    r"(?:[?&;]|\\u0026)(?P<name>[A-Za-z][\w.\-\[\]]{0,60})="
    r"(?P<secret>[^&#;\s\"'<>`\\|)]{8,2048})"
)
# AWS SigV2 presigned URLs and CloudFront signed URLs.
_SIGNATURES = frozenset({"signature", "sig"})
# The signer's key id and scope, beside the signature: public parts of a presigned URL.
_SIGNING_SCOPE = frozenset({"x-amz-credential", "x-goog-credential", "x-amz-signedheaders"})
_AZURE_FUNCTION = re.compile(r"\.azurewebsites\.net/api/[^?\s\"'<>]{0,200}\Z", re.IGNORECASE)


def _query_gate() -> str:
    return (
        rf"(?:[?&;]|\\u0026)[a-z0-9_.\-\[\]]{{0,60}}(?:{_KEYWORDS}|code)"
        r"[a-z0-9_.\-\[\]]{0,40}=[^&#\s]{8}"
    )


@dataclass(frozen=True, slots=True)
class QueryCredentialRule:
    """A query parameter whose name says it holds a key, a token, a secret or a signature."""

    name: str = "url-query-credential"
    kind: str = "url-query-secret"
    anchors: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "sig",
                                "code=")  # fmt: skip
    # A query's separators are on few lines; the credential words on most.
    gates: tuple[Gate, ...] = (Gate(_query_gate(), rare=("?", "&", ";", "\\u0026")),)
    reach_before: int = 300
    reach_after: int = 2100
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = (
        "RFC 3986 §3.4 (query); RFC 6750 §2.3; AWS S3 'Authenticating requests: query string' "
        "(Signature); learn.microsoft.com Azure Functions HTTP trigger (code)"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        for match in _PARAMETER.finditer(text):
            name = match.group("name")
            value = match.group("secret")
            if not self._secret(text, match.start(), name, value):
                continue
            yield Hit(match.start("secret"), match.end("secret"), self.kind, self.name)

    @staticmethod
    def _secret(text: str, at: int, name: str, value: str) -> bool:
        lowered = name.lower()
        if lowered in _SIGNING_SCOPE:
            return False
        if lowered == "code":
            url = text[max(0, at - 300) : at]
            return _AZURE_FUNCTION.search(url) is not None and credential_value(value, Strength.KEY)
        strength = Strength.KEY if lowered in _SIGNATURES else secret_name_strength(name)
        if strength is None:
            return False
        # A query value is never a plain word, even under a password-like name.
        return credential_value(value, Strength.KEY if strength is Strength.STRONG else strength)


QUERY_CREDENTIAL = QueryCredentialRule()


def _not_a_hook(value: str) -> bool:
    return is_trivial(value) or is_filler(value)


TEAMS_WEBHOOK = PatternRule(
    name="teams-webhook",
    kind="teams-webhook",
    # The URL from its scheme: the tenant's host and every part of the path are the credential.
    pattern=r"(?:https?://)?[A-Za-z0-9-]{1,63}\.webhook\.office\.com\\?/webhookb2\\?/"
    r"[A-Za-z0-9@._-]{16,200}\\?/IncomingWebhook\\?/[A-Za-z0-9_-]{16,64}\\?/[A-Za-z0-9_-]{16,64}"
    r"(?:\\?/[A-Za-z0-9_-]{8,128})?"
    r"|(?:https?://)?outlook\.office(?:365)?\.com\\?/webhook\\?/[A-Za-z0-9@._-]{16,200}"
    r"\\?/IncomingWebhook\\?/[A-Za-z0-9_-]{16,64}\\?/[A-Za-z0-9_-]{16,64}",
    flags=re.IGNORECASE,
    anchors=("incomingwebhook",),
    reference="learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/"
    "add-incoming-webhook; gitleaks rule microsoft-teams-webhook",
    reject=_not_a_hook,
)

DISCORD_WEBHOOK = PatternRule(
    name="discord-webhook",
    kind="discord-webhook",
    pattern=r"discord(?:app)?\.com\\?/api(?:\\?/v\d{1,2})?\\?/webhooks\\?/"
    r"(?P<secret>\d{15,21}\\?/[A-Za-z0-9_-]{60,80})(?![A-Za-z0-9_-])",
    flags=re.IGNORECASE,
    anchors=("/webhooks",),
    reference="discord.com/developers/docs/resources/webhook (Execute Webhook: "
    "/webhooks/{webhook.id}/{webhook.token}); gitleaks rule discord-webhook",
    reject=_not_a_hook,
)

ZAPIER_WEBHOOK = PatternRule(
    name="zapier-webhook",
    kind="zapier-webhook",
    pattern=r"hooks\.zapier\.com\\?/hooks\\?/catch\\?/(?P<secret>\d{3,12}\\?/[A-Za-z0-9]{5,40})",
    flags=re.IGNORECASE,
    anchors=("hooks.zapier.com",),
    reference="help.zapier.com 'Trigger Zaps from webhooks' (catch hook URL)",
    reject=_not_a_hook,
)

IFTTT_WEBHOOK_KEY = PatternRule(
    name="ifttt-webhook-key",
    kind="ifttt-webhook-key",
    pattern=r"maker\.ifttt\.com\\?/trigger\\?/[^/\s]{1,100}\\?/(?:json\\?/)?with\\?/key\\?/"
    r"(?P<secret>[A-Za-z0-9_-]{16,64})",
    flags=re.IGNORECASE,
    anchors=("maker.ifttt.com",),
    reference="ifttt.com/maker_webhooks (Webhooks service: /trigger/{event}/with/key/{key})",
    reject=_not_a_hook,
)

RULES = (QUERY_CREDENTIAL, TEAMS_WEBHOOK, DISCORD_WEBHOOK, ZAPIER_WEBHOOK, IFTTT_WEBHOOK_KEY)
