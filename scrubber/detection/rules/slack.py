"""Slack: bot/user/app/config tokens (`xox…-`, `xapp-`) and incoming webhook URLs.

Slack's "Token types" page documents the prefixes: xoxb- bot, xoxp- user, xoxa-/xoxr- legacy
workspace app and refresh, xoxs-/xoxo- legacy, xoxe.xoxp-/xoxe- configuration access and
refresh tokens, xapp- app-level tokens. Webhooks (`hooks.slack.com/services/T…/B…/…`, also
`/workflows/` and `/triggers/`) carry their secret in the path; the whole path is redacted and
the host kept.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

SLACK_TOKEN = PatternRule(
    name="slack-token",
    kind="slack-token",
    # After the prefix come a numeric team/user id and a dash; the rest is at least 10 long.
    pattern=WORD_START + r"(?:xoxe\.)?xox[abposrce]-\d{1,20}-[0-9A-Za-z-]{9,500}[0-9A-Za-z]"
    r"(?![0-9A-Za-z_-])",
    anchors=("xox",),
    public_prefix=r"xox[abposre]-",
    reference="api.slack.com/authentication/token-types; gitleaks rules slack-bot-token, "
    "slack-user-token, slack-legacy-token, slack-config-access-token",
    reject=is_filler,
)

SLACK_APP_TOKEN = PatternRule(
    name="slack-app-token",
    kind="slack-token",
    pattern=WORD_START + r"xapp-\d-[A-Za-z0-9]{6,20}-\d{6,20}-[A-Za-z0-9]{20,200}"
    r"(?![0-9A-Za-z_-])",
    anchors=("xapp-",),
    reference="api.slack.com/authentication/token-types (app-level tokens); gitleaks rule "
    "slack-app-token",
    reject=is_filler,
)

SLACK_WEBHOOK = PatternRule(
    name="slack-webhook",
    kind="slack-webhook",
    # `\\?/`: Slack's own API responses escape slashes (`hooks.slack.com\/services\/…`).
    pattern=r"hooks\.slack\.com\\?/(?:services|workflows|triggers)\\?/"
    r"(?P<secret>[A-Za-z0-9_-]{6,40}(?:\\?/[A-Za-z0-9_-]{4,80}){1,4})",
    anchors=("hooks.slack.com",),
    reference="api.slack.com/messaging/webhooks; gitleaks rule slack-webhook-url",
    reject=is_filler,
)

RULES = (SLACK_TOKEN, SLACK_APP_TOKEN, SLACK_WEBHOOK)
