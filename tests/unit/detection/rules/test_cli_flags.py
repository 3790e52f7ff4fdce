"""Flags of any command whose name says they carry a key, a token or a secret."""

from __future__ import annotations

import pytest
from rule_cases import B62, B64, Case, check, fake, ids, neg, pos

from scrubber.detection.rules import cli_flags as flags

TOKEN = fake(B62, 32, "flag-token")
KEY = fake(B64, 86, "flag-key") + "=="
PASSWORD = fake(B62, 10, "flag-pw") + "!9"
UUID = "4c0f8e7a-2d1b-4e3f-9a8b-7c6d5e4f3a2b"
F = flags.SECRET_FLAG

CASES: list[Case] = [
    pos(F, f"az storage blob list --account-name acct --account-key {KEY}", KEY),
    pos(F, f"azcopy copy a b -storagekey {KEY}", KEY, note="single-dash long flag"),
    pos(F, f'go run main.go -AzureDefaultAccountName="acct" -AzureDefaultAccountKey="{KEY}"', KEY,
        note="Go flag, quoted"),
    pos(F, f"Connect-Thing -StorageAccountKey {TOKEN} -Force", TOKEN),
    pos(F, f"New-Login -Password:'{PASSWORD}'", PASSWORD, note="PowerShell -Name:value"),
    pos(F, f"mytool --api_key {TOKEN} --verbose", TOKEN),
    pos(F, f"mytool --client-secret='{TOKEN}'", TOKEN),
    pos(F, f"deploy --signing-secret {TOKEN}", TOKEN),
    pos(F, f"heroku-cli --api-key {UUID}", UUID, note="a uuid under an api-key flag"),
    pos(F, f"tool \\\n  --auth-token {TOKEN} \\\n  --region x", TOKEN, note="continued line"),
    neg(F, "vault login --token-file /run/secrets/token"),
    neg(F, f"echo x | docker login --password-stdin {TOKEN}"),
    neg(F, f"gpg --key-id {TOKEN}; ssh-keygen --public-key {TOKEN}"),
    neg(F, "tool --token $TOKEN --api-key <api-key> --secret '{secret}' --key @key.txt"),
    neg(F, "set the --api-key flag, or pass --password options"),
    neg(F, "llm --max-tokens 1024 --token-limit 200000"),
    neg(F, f"aws dynamodb list-tables --starting-token {TOKEN} --registration-token {TOKEN}",
        note="pagination and ids"),
    neg(F, f"aws cognito-idp forget-device --device-key {TOKEN} --private-key-outfile {TOKEN}"),
    neg(F, f"curl -k {TOKEN}; tool -key {TOKEN}", note="short flags are the tools' own"),
    neg(F, f"tool --no-auth {TOKEN} --ssh-key {TOKEN}"),
    neg(F, "tool --api-key ./keys/prod.txt --token https://example.com/token"),
    pos(flags.SECURE_STRING_PLAINTEXT,
        f"$pw = ConvertTo-SecureString '{PASSWORD}' -AsPlainText -Force", PASSWORD),
    neg(flags.SECURE_STRING_PLAINTEXT, "$pw = ConvertTo-SecureString $env:PW -AsPlainText -Force"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_cli_flags(case: Case) -> None:
    check(case)


def test_secret_name_strength() -> None:
    assert flags.secret_name_strength("storagekey") is not None
    assert flags.secret_name_strength("tokenkey") is not None
    assert flags.secret_name_strength("password-stdin") is None
    assert flags.secret_name_strength("token-file") is None
    assert flags.secret_name_strength("monkey") is None
