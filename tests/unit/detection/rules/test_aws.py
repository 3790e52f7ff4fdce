"""AWS access key ids, secret access keys beside their labels, session tokens, Bedrock keys."""

from __future__ import annotations

import pytest
from rule_cases import B62, B64, CREDENTIALS, UPPER_B32, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import aws

KEY_ID = join("AK", "IA", fake(UPPER_B32, 16, "aws"))
DIGIT_KEY_ID = join("AK", "IA", fake(UPPER_B32, 14, "aws-digits"), "09")
TEMP_KEY_ID = join("AS", "IA", fake(UPPER_B32, 16, "sts"))
SECRET = fake(B64, 40, "aws-secret")
SESSION = join("IQoJb3JpZ2lu", "X2Vj", fake(B64, 300, "session"))
BEDROCK = join("AB", "SK", fake(B64, 130, "bedrock"))

CASES: list[Case] = [
    pos(aws.AWS_ACCESS_KEY_ID, f"aws_access_key_id = {KEY_ID}", KEY_ID),
    pos(aws.AWS_ACCESS_KEY_ID, f'{{"AccessKeyId": "{TEMP_KEY_ID}"}}', TEMP_KEY_ID),
    pos(aws.AWS_ACCESS_KEY_ID, f"export AWS_ACCESS_KEY_ID={KEY_ID}\\nnext", KEY_ID,
        note="JSON-escaped line"),
    pos(aws.AWS_ACCESS_KEY_ID, f"id {DIGIT_KEY_ID} ok", DIGIT_KEY_ID,
        note="digits outside base32, as detect-secrets' AWSKeyDetector takes them"),
    neg(aws.AWS_ACCESS_KEY_ID, f"X{KEY_ID}", note="glued to a word"),
    neg(aws.AWS_ACCESS_KEY_ID, "Asia/Tokyo is a timezone; ASIAN markets"),
    neg(aws.AWS_ACCESS_KEY_ID, f"{KEY_ID[:-1]}", note="too short"),
    pos(aws.AWS_SECRET_ACCESS_KEY,
        f"[default]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n",
        SECRET, context=CREDENTIALS),
    pos(aws.AWS_SECRET_ACCESS_KEY, f'"SecretAccessKey": "{SECRET}",', SECRET),
    pos(aws.AWS_SECRET_ACCESS_KEY, f"AWS_SECRET_ACCESS_KEY={SECRET}", SECRET),
    pos(aws.AWS_SECRET_ACCESS_KEY, f'\\"SecretAccessKey\\": \\"{SECRET}\\"', SECRET,
        note="escaped JSON"),
    neg(aws.AWS_SECRET_ACCESS_KEY, f"aws_secret_access_key = {SECRET}x", note="41 chars"),
    neg(aws.AWS_SECRET_ACCESS_KEY, "aws_secret_access_key = ${AWS_SECRET}"),
    pos(aws.AWS_SESSION_TOKEN, f"aws_session_token = {SESSION}\n", SESSION),
    pos(aws.AWS_SESSION_TOKEN, f'"SessionToken": "{SESSION}"', SESSION),
    neg(aws.AWS_SESSION_TOKEN, "session_token = short"),
    pos(aws.AWS_SESSION_TOKEN_BARE, f"token is {SESSION} ok", SESSION),
    pos(aws.AWS_BEDROCK_API_KEY, f"AWS_BEARER_TOKEN_BEDROCK={BEDROCK}", BEDROCK),
    pos(aws.AWS_BEDROCK_API_KEY,
        join("k=bedrock-api-key-", "YmVkcm9jay5hbWF6b25hd3MuY29t", fake(B62, 80, "b")),
        join("bedrock-api-key-", "YmVkcm9jay5hbWF6b25hd3MuY29t", fake(B62, 80, "b"))),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_aws(case: Case) -> None:
    check(case)
