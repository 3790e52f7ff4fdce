"""Telegram bot tokens: `<bot id>:<35 characters starting AA>` (core.telegram.org/bots/api,
"Authorizing your bot"; gitleaks rule telegram-bot-api-token). The bot id is part of the token:
the whole `id:secret` is redacted. In `api.telegram.org/bot<token>/…` the id follows `bot`.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_filler

TELEGRAM_BOT_TOKEN = PatternRule(
    name="telegram-bot-token",
    kind="telegram-bot-token",
    pattern=r"(?<![0-9])\d{5,16}:AA[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])",
    anchors=(":aa",),
    reference="core.telegram.org/bots/api#authorizing-your-bot; gitleaks rule "
    "telegram-bot-api-token",
    reject=is_filler,
)

RULES = (TELEGRAM_BOT_TOKEN,)
