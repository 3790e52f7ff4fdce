"""Secrets after a label with a loose separator, in a sentence, or on the next line."""

from __future__ import annotations

import pytest
from rule_cases import B62, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules.assignment import SENSITIVE_ASSIGNMENT as DOTENV_RULE
from scrubber.detection.rules.labelled_secret import (
    LOOSE_LABEL,
    NAME_VALUE,
    NEXT_LINE_LITERAL,
    PAIR_LITERAL,
    PROSE_LABEL,
)

TOKEN = fake(B62, 32, "lab")
HEXKEY = fake(HEX, 32, "labhex")
LONG = fake(B62, 80, "lablong")
B64KEY = fake(B62 + "+/", 86, "labb64") + "=="
PASSWORD = join("pw-", fake(B62, 6, "labpw"), "9")
PROSE_TOKEN = join(fake(B62, 12, "prose"), "7", fake(B62, 19, "prose2"))
SYMBOLS = join(fake(B62, 5, "sym"), "!2", fake(B62, 5, "sym2"))

CASES: list[Case] = [
    # separators that are not `=` or `:`
    pos(LOOSE_LABEL, f"vendor token - '{TOKEN}'", TOKEN, note="hyphen"),
    pos(LOOSE_LABEL, f"vendor secret - '{HEXKEY}'", HEXKEY, note="hex under a secret"),
    pos(LOOSE_LABEL, f"api key -> {TOKEN}", TOKEN, note="arrow"),
    pos(LOOSE_LABEL, f"vendor auth token |{LONG}\nnetworkId |L_64", LONG, note="table cell"),
    pos(LOOSE_LABEL, f"| Access Token | {TOKEN} |", TOKEN, note="markdown table"),
    pos(LOOSE_LABEL, f"API_KEY\t{TOKEN}", TOKEN, note="tab"),
    pos(LOOSE_LABEL, f"the stripe key is {PROSE_TOKEN}.", PROSE_TOKEN, note="prose is"),
    neg(LOOSE_LABEL, "the token is required", note="prose about a token"),
    pos(LOOSE_LABEL, f"db password {PASSWORD}", PASSWORD, note="no operator, strong label"),
    pos(LOOSE_LABEL, f"vendor token '{TOKEN}'", TOKEN, note="no operator, quoted"),
    pos(LOOSE_LABEL, f"vendor token - '{SYMBOLS}`>{TOKEN}'", f"{SYMBOLS}`>{TOKEN}",
        note="other quote characters inside"),
    # labels and values that are not secrets
    neg(LOOSE_LABEL, "the key difference is 12 tokens"),
    neg(LOOSE_LABEL, "public key - " + TOKEN, note="public key"),
    neg(LOOSE_LABEL, "primary key | id"),
    neg(LOOSE_LABEL, "max tokens | 4096"),
    neg(LOOSE_LABEL, "token count is 1234567890"),
    neg(LOOSE_LABEL, "the key " + HEXKEY + " was rotated", note="bare key and hex"),
    neg(LOOSE_LABEL, "token - <your-token>"),
    neg(LOOSE_LABEL, "password - ********"),
    neg(LOOSE_LABEL, "secret | Opaque"),
    neg(LOOSE_LABEL, "token -> /var/run/secrets/token"),
    neg(LOOSE_LABEL, "key - dafa7817-e246-48f3-91a7-e87653d587b8", note="uuid under a bare key"),
    neg(LOOSE_LABEL, "password reset flow"),
    # a sentence that ends in a colon
    pos(PROSE_LABEL, f"Here is the token to test the API: {LONG}", LONG),
    pos(PROSE_LABEL, f"password for the admin account: {SYMBOLS}", SYMBOLS),
    neg(PROSE_LABEL, "The token usage: abcdefghijklmnop was high"),
    neg(PROSE_LABEL, "key points to remember: caching matters"),
    # a literal on the line after its name
    pos(NEXT_LINE_LITERAL, f'const vendorApiKey =\n  "{TOKEN}"; // replace', TOKEN, note="JS"),
    pos(NEXT_LINE_LITERAL, f'String ACCOUNT_KEY\n        = "{B64KEY}";', B64KEY, note="Java"),
    pos(NEXT_LINE_LITERAL, f'std::string AccountKey{{\n    "{B64KEY}"}};', B64KEY, note="C++ brace"),
    neg(NEXT_LINE_LITERAL, 'const apiKey =\n  "Enter your API key";'),
    neg(NEXT_LINE_LITERAL, 'const apiKey =\n  process.env.API_KEY;'),
]  # fmt: skip


LABEL_CASES = list(CASES)  # CASES also gets the pair cases below, for the catalog's tests


@pytest.mark.parametrize("case", LABEL_CASES, ids=ids(LABEL_CASES))
def test_labelled_secret(case: Case) -> None:
    check(case)


# The id or user beside a secret (credential_pairs.py, run by the label rules).
COMPANION_ID = fake(HEX, 24, "companion")
APP_ID = join("cli", "_", fake("0123456789", 16, "appid"))
PAIR_CASES: list[Case] = [
    pos(DOTENV_RULE, f'"lark_app_id": "{APP_ID}",\n"lark_app_secret": "{TOKEN}"', APP_ID, TOKEN,
        note="app id above its secret"),
    pos(DOTENV_RULE, f"CLIENT_ID={COMPANION_ID}\nCLIENT_SECRET={TOKEN}", COMPANION_ID, TOKEN,
        note="env pair"),
    pos(DOTENV_RULE, f"shopify_client_id={COMPANION_ID}\nclient_secret={TOKEN}", COMPANION_ID,
        TOKEN, note="qualified owner"),
    pos(LOOSE_LABEL, f"plaid secret - '{HEXKEY}'\nplaid client id - '{COMPANION_ID}'", HEXKEY,
        COMPANION_ID, note="loose pair"),
    pos(DOTENV_RULE, f"[DEBUG] Using Key={TOKEN}\n[DEBUG] Using vendor ID={COMPANION_ID}", TOKEN,
        COMPANION_ID, note="log pair"),
    neg(DOTENV_RULE, f"user_id={COMPANION_ID}\nrequest_id={COMPANION_ID}", note="ids alone"),
    pos(DOTENV_RULE, f"user_id={COMPANION_ID}\napi_token={TOKEN}", TOKEN, note="other owner"),
    pos(DOTENV_RULE, f"CLIENT_ID=someone@example.com\nCLIENT_SECRET={TOKEN}", TOKEN,
        note="an email is no companion"),
    pos(DOTENV_RULE, f"[DEBUG] Using Key={TOKEN}\n\n\n[DEBUG] Using vendor ID={COMPANION_ID}",
        TOKEN, note="a bare key's companion stands next to it"),
    pos(DOTENV_RULE, f"vendor_client_id={COMPANION_ID}\nsecret={TOKEN}", COMPANION_ID, TOKEN,
        note="a bare secret's neighbour"),
    pos(DOTENV_RULE, f"account_id = {COMPANION_ID}\napi_token = {TOKEN}", COMPANION_ID, TOKEN,
        note="an unowned id next to a token"),
    pos(DOTENV_RULE, f"account_id = 123456789012\napi_token = {TOKEN}", TOKEN,
        note="a number is no companion"),
]  # fmt: skip


@pytest.mark.parametrize("case", PAIR_CASES, ids=ids(PAIR_CASES))
def test_credential_pairs(case: Case) -> None:
    check(case)


PAIR_LITERAL_CASES: list[Case] = [
    pos(PAIR_LITERAL, f'req.Header.Set("Authorization", "Bearer {TOKEN}")', TOKEN, note="Go header"),
    pos(PAIR_LITERAL, f"xhr.setRequestHeader('X-Vendor-Api-Key', '{TOKEN}')", TOKEN, note="JS header"),
    pos(PAIR_LITERAL, f'{{ "AccountKey", "{B64KEY}" }},', B64KEY, note="C# initializer"),
    pos(PAIR_LITERAL, f"assert.equal(parsed['AccountKey'], '{B64KEY}');", B64KEY, note="subscript"),
    neg(PAIR_LITERAL, "fields = ('password', 'password_confirmation')"),
    neg(PAIR_LITERAL, 'headers.set("Authorization", "Bearer " + token)'),
    neg(PAIR_LITERAL, 'getattr(settings, "SECRET_KEY", "")'),
    neg(PAIR_LITERAL, "(`X-Vault-Token`, `MultipleActiveResultSets=true`)", note="a setting"),
]  # fmt: skip


@pytest.mark.parametrize("case", PAIR_LITERAL_CASES, ids=ids(PAIR_LITERAL_CASES))
def test_pair_literal(case: Case) -> None:
    check(case)


# The catalog's tests read every positive example from CASES.
CASES.extend(PAIR_LITERAL_CASES)


NAME_VALUE_CASES: list[Case] = [
    pos(NAME_VALUE, f"env:\n- name: DB_PASSWORD\n  value: {TOKEN}", TOKEN, note="kubernetes env"),
    pos(NAME_VALUE, f'{{"name": "registry-password", "value": "{B64KEY}"}}', B64KEY, note="json pair"),
    neg(NAME_VALUE, '{"name": "password_reset", "value": "enabled"}'),
    neg(NAME_VALUE, "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef: {name: t}"),
    pos(LOOSE_LABEL, f"| AADRefreshToken | Refresh token of the app | {LONG} |", LONG,
        note="after a description cell"),
    pos(LOOSE_LABEL, f"| API_KEY | {TOKEN} | used by the app |", TOKEN, note="next cell first"),
    pos(NEXT_LINE_LITERAL, f'String ACCOUNT_KEY\n                = "{B64KEY}";', B64KEY,
        note="deep indentation"),
]  # fmt: skip


@pytest.mark.parametrize("case", NAME_VALUE_CASES, ids=ids(NAME_VALUE_CASES))
def test_name_value(case: Case) -> None:
    check(case)


CASES.extend(NAME_VALUE_CASES)
