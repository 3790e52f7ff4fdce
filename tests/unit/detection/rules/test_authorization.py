"""`Authorization` headers in curl commands, `curl -v` output and header maps."""

from __future__ import annotations

import base64

import pytest
from rule_cases import B62, Case, check, fake, ids, neg, pos

from scrubber.detection.rules.authorization import AUTHORIZATION_HEADER as RULE

TOKEN = fake(B62, 40, "bearer")
BASIC = base64.b64encode(f"peggy:{fake(B62, 16, 'basic')}".encode()).decode()

CASES: list[Case] = [
    pos(RULE, f"> GET /v1/x HTTP/2\n> Authorization: Bearer {TOKEN}\n>\n", TOKEN, note="curl -v"),
    pos(RULE, f"curl -H 'Authorization: Basic {BASIC}' https://x", BASIC),
    pos(RULE, f'curl -H "Authorization: token {TOKEN}" https://api.github.com', TOKEN),
    pos(RULE, f"headers = {{'Authorization': 'Bearer {TOKEN}'}}", TOKEN),
    pos(RULE, f'\\"authorization\\": \\"Bearer {TOKEN}\\"', TOKEN, note="escaped"),
    pos(RULE, f"curl --header 'Authorization:  {TOKEN}'", TOKEN, note="no scheme"),
    pos(RULE, f"Proxy-Authorization: Basic {BASIC}\r\n", BASIC),
    neg(RULE, "Authorization: Bearer $API_TOKEN"),
    neg(RULE, "Authorization: Bearer ${{ secrets.TOKEN }}"),
    neg(RULE, "Authorization: Bearer <your token>"),
    neg(RULE, "Authorization: Bearer YOUR_API_KEY"),
    neg(RULE, "headers['Authorization'] = f'Bearer {token}'"),
    neg(RULE, "{'Authorization': 'Bearer ' + token}"),
    neg(RULE, "headers = {'x-amz-date': ts, 'Authorization': v4auth_header}"),
    neg(RULE, "Authorization: Digest username=\"u\", realm=\"r\", response=\"6629fae49393a05397450978507c4ef1\""),
    neg(RULE, "The Authorization: header carries credentials."),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_authorization(case: Case) -> None:
    check(case)
