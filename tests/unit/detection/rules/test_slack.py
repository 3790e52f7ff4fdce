"""Slack tokens and incoming webhooks."""

from __future__ import annotations

import pytest
from rule_cases import B62, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import slack

BOT = join("xo", "xb-", "809059221533-", "9169789284478-", fake(B62, 24, "bot"))
USER = join("xo", "xp-", "41684372915-1320496754-45609968301-", fake(HEX, 32, "user"))
CONFIG = join("xo", "xe.xo", "xp-1-", fake(B62, 140, "cfg"))
APP = join("xa", "pp-1-A052FGTS2DL-5171572773297-", fake(HEX, 64, "app"))
HOOK_PATH = join(
    "T",
    fake("ABCDEFGHJK0123456789", 8, "t"),
    "/B",
    fake("ABCDEFGHJK0123456789", 10, "b"),
    "/",
    fake(B62, 24, "hook"),
)

CASES: list[Case] = [
    pos(slack.SLACK_TOKEN, f'"slack_bot_token": "{BOT}"', BOT),
    pos(slack.SLACK_TOKEN, f"SLACK_USER_TOKEN={USER}", USER),
    pos(slack.SLACK_TOKEN, f"refresh: {CONFIG}", CONFIG, note="config token"),
    neg(slack.SLACK_TOKEN, "https://example.org/images/2018-250-xoxo-indieweb-1.jpg"),
    neg(slack.SLACK_TOKEN, "xoxb-xoxb-my-bot-token"),
    neg(slack.SLACK_TOKEN, "xoxb-" + "x" * 10 + "-" + "x" * 12, note="filler"),
    pos(slack.SLACK_APP_TOKEN, f"SLACK_APP_TOKEN={APP}", APP),
    pos(slack.SLACK_WEBHOOK, f"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{HOOK_PATH}",
        HOOK_PATH),
    pos(slack.SLACK_WEBHOOK,
        '"url":"https:\\/\\/hooks.slack.com\\/services\\/' + HOOK_PATH.replace("/", "\\/") + '"',
        HOOK_PATH.replace("/", "\\/"), note="escaped slashes"),
    neg(slack.SLACK_WEBHOOK, "see https://hooks.slack.com/services/ for the docs"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_slack(case: Case) -> None:
    check(case)
