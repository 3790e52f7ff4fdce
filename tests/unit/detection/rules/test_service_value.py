"""A quoted credential after a service's name at the start of a line."""

from __future__ import annotations

import string

import pytest
from rule_cases import B62, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules.service_value import SERVICE_VALUE as RULE

MIXED = join("Q", fake(B62, 20, "svc"), "7")
LOWER_DIGITS = join(
    fake(string.ascii_lowercase, 6, "ld"),
    "42",
    fake(string.ascii_lowercase + "0123456789", 10, "ld2"),
    "9",
)
HEXKEY = fake(HEX, 40, "svchex")
UPPER_DIGITS = join(
    "H1",
    fake(string.ascii_uppercase, 4, "ud"),
    "22",
    fake(string.ascii_uppercase + "0123456789", 5, "ud2"),
    "7",
)

CASES: list[Case] = [
    pos(RULE, f"vendor '{MIXED}'", MIXED, note="name then key"),
    pos(RULE, f"     3\u2192vendor '{MIXED}' 'acct.vendor.example.com'", MIXED, note="Read prefix, host after"),
    pos(RULE, f"tests/fixtures/v.txt:1:vendor '{LOWER_DIGITS}'", LOWER_DIGITS, note="grep prefix"),
    pos(RULE, f"vendor '{MIXED}' vendor '42'", MIXED, note="name repeated"),
    neg(RULE, f'alphabet = "{MIXED}"', note="an assignment to a plain name"),
    pos(RULE, f"vendor '{UPPER_DIGITS}'", UPPER_DIGITS, note="upper case and digits"),
    pos(RULE, f"vendor '{MIXED}= ' vendor '{MIXED}+ '", f"{MIXED}=", f"{MIXED}+", note="padded"),
    neg(RULE, f"echo '{MIXED}'", note="a command"),
    neg(RULE, f"print('{MIXED}')", note="a call"),
    neg(RULE, f"commit '{HEXKEY}'", note="a commit"),
    neg(RULE, f"vendor '{HEXKEY}'", note="hex alone is a digest"),
    neg(RULE, "vendor 'dafa7817-e246-48f3-91a7-e87653d587b8'", note="uuid"),
    neg(RULE, f"vendor '{MIXED}' and more words", note="prose after"),
    neg(RULE, "vendor 'https://api.example.com/v1'"),
    neg(RULE, "vendor 'x1.example-host.com'"),
    neg(RULE, "   run 'npm install'", note="spaces in value"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_service_value(case: Case) -> None:
    check(case)


WITH_EMAIL_CASES: list[Case] = [
    pos(RULE, f"vendor: {HEXKEY} / someone@example.com", HEXKEY, note="hex key with its email"),
    pos(RULE, f"     1\u2192vendor: {LOWER_DIGITS} / someone@example.com", LOWER_DIGITS, note="Read"),
    neg(RULE, "author: JohnSmith / john@example.com", note="a name"),
    neg(RULE, "version: 1.2.3-beta / dev@example.com", note="a version"),
]  # fmt: skip


@pytest.mark.parametrize("case", WITH_EMAIL_CASES, ids=ids(WITH_EMAIL_CASES))
def test_with_email(case: Case) -> None:
    check(case)
