"""URLs that carry keys: query parameters named for a secret, and webhook paths."""

from __future__ import annotations

import pytest
from rule_cases import B62, B64URL, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import url_credentials as url

TOKEN = fake(B62, 32, "url-token")
LONG = fake(B62, 50, "url-long")
SIG = fake(B62, 27, "url-sig") + "%3D"
FUNCTION_KEY = fake(B62, 54, "url-fn") + "=="
DISCORD = join(fake("0123456789", 18, "dc-id"), "/", fake(B64URL, 68, "dc-token"))
TEAMS_HOST = "contoso.webhook.office.com"
TEAMS = join(
    "https://", TEAMS_HOST, "/webhookb2/", fake(B62, 8, "t1"), "-", fake(HEX, 4, "t2"), "-",
    fake(HEX, 4, "t3"), "-", fake(HEX, 12, "t4"), "@", fake(HEX, 8, "t5"), "-", fake(HEX, 12, "t6"),
    "/IncomingWebhook/", fake(HEX, 32, "t7"), "/", fake(B62, 36, "t8"),
)  # fmt: skip
Q = url.QUERY_CREDENTIAL

CASES: list[Case] = [
    pos(Q, f'base_url: "https://api.example.com/v1/x?tokenkey={LONG}"', LONG),
    pos(Q, f"https://api.example.com/a?apiKey={TOKEN}&page=2", TOKEN),
    pos(Q, f"curl 'https://gitlab.example.com/api/v4/projects?private_token={TOKEN}'", TOKEN),
    pos(Q, f"https://api.example.com/?subscription-key={TOKEN}", TOKEN),
    pos(Q, f"https://b.s3.amazonaws.com/k?Expires=1700000000&Signature={SIG}", SIG,
        note="SigV2 presigned"),
    pos(Q, f"https://fn.azurewebsites.net/api/HttpTrigger1?code={FUNCTION_KEY}", FUNCTION_KEY,
        note="Azure Functions key"),
    neg(Q, f"https://app.example.com/callback?state=x1&code={TOKEN}", note="an OAuth code elsewhere"),
    neg(Q, f"https://api.example.com/list?page_token={TOKEN}&next_token={TOKEN}"),
    neg(Q, "https://api.example.com/a?key=$API_KEY&token={token}&apiKey=<your-key>"),
    neg(Q, "https://example.com/search?q=api+key&tokenizer=bert-base-uncased&auth=true"),
    neg(Q, f"https://b.s3.amazonaws.com/k?X-Amz-Credential={TOKEN}%2F20240101%2Fus-east-1"),
    neg(Q, "https://api.example.com/a?api_key=development&secret=password"),
    pos(url.TEAMS_WEBHOOK, f"curl -X POST -d @msg.json {TEAMS}", TEAMS),
    neg(url.TEAMS_WEBHOOK, f"https://{TEAMS_HOST}/webhookb2/<group>@<tenant>/IncomingWebhook/<id>/<owner>"),
    pos(url.DISCORD_WEBHOOK, f"https://discord.com/api/webhooks/{DISCORD}", DISCORD),
    neg(url.DISCORD_WEBHOOK, "https://discord.com/api/webhooks/{webhook.id}/{webhook.token}"),
    pos(url.ZAPIER_WEBHOOK, f"https://hooks.zapier.com/hooks/catch/1234567/{TOKEN[:7]}/",
        f"1234567/{TOKEN[:7]}"),
    pos(url.IFTTT_WEBHOOK_KEY, f"https://maker.ifttt.com/trigger/door_open/with/key/{TOKEN}", TOKEN),
    neg(url.IFTTT_WEBHOOK_KEY, "https://maker.ifttt.com/trigger/{event}/with/key/{your-key}"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_url_credentials(case: Case) -> None:
    check(case)
