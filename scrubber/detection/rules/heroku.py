"""Heroku API keys, current format `HRKU-` + 60 characters (devcenter.heroku.com "Heroku CLI
Authentication"; gitleaks rule heroku-api-key-v2). Legacy UUID keys are only recognisable by
their label (`HEROKU_API_KEY=…`), which assignment/ handles."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

HEROKU_API_KEY = PatternRule(
    name="heroku-api-key",
    kind="heroku-api-key",
    pattern=WORD_START + r"HRKU-[A-Za-z0-9_-]{40,100}(?![A-Za-z0-9_-])",
    anchors=("hrku-",),
    reference="devcenter.heroku.com/articles/authentication; gitleaks rule heroku-api-key-v2",
    reject=is_filler,
)

RULES = (HEROKU_API_KEY,)
