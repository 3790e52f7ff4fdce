"""A credential's default written into a shell parameter expansion (`${POSTGRES_PASSWORD:-V}`):
Docker Compose files, entrypoint scripts and CI YAML. The assignment rules take `${NAME}` for a
reference, which passed over the literal default inside it.

Checked on the rule and through the whole scanner on the raw JSONL line (its gate decides
whether the rule runs at all), with both prefilter engines. Fake values are built at run time."""

from __future__ import annotations

import pytest
from rule_cases import (
    B62,
    Case,
    check,
    check_through_the_gates,
    fake,
    ids,
    neg,
    pos,
    whole_scanners,
)

from scrubber.detection.rules.shell_default import RULES

(RULE,) = RULES
TOKEN = fake(B62, 32, "shell-default")
PASSWORD = fake(B62, 14, "shell-pw") + "7"
KEY = fake(B62 + "+/", 43, "shell-key") + "="

CASES: list[Case] = [
    pos(RULE, f"    POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-{PASSWORD}}}", PASSWORD,
        note="compose environment map"),
    pos(RULE, f"      - DB_PASSWORD=${{DB_PASSWORD:-{PASSWORD}}}", PASSWORD, note="compose list"),
    pos(RULE, f'password="${{PGPASSWORD-{PASSWORD}}}"', PASSWORD, note="without the colon"),
    pos(RULE, f"redis-server --requirepass ${{REDIS_PASSWORD:-{PASSWORD}}}", PASSWORD,
        note="in a command"),
    pos(RULE, f"API_TOKEN: ${{API_TOKEN:-'{TOKEN}'}}", TOKEN, note="quoted default"),
    pos(RULE, f"curl -H \"X-Key: ${{ACCOUNT_KEY:={KEY}}}\" https://h", KEY, note=":= form"),
    neg(RULE, "DB_PASSWORD=${DB_PASSWORD:-}", note="empty default"),
    neg(RULE, "DB_PASSWORD=${DB_PASSWORD:-changeme}", note="a placeholder"),
    neg(RULE, "DB_PASSWORD=${DB_PASSWORD:?the password is required}", note="an error message"),
    neg(RULE, "TOKEN=${TOKEN:-$(cat /run/secrets/token)}", note="a command"),
    neg(RULE, "PASSWORD=${PASSWORD:-${OTHER_PASSWORD}}", note="another reference"),
    neg(RULE, f"PORT=${{PORT:-{TOKEN}}}", note="not a credential's name"),
    neg(RULE, f"TOKEN_FILE=${{TOKEN_FILE:-/run/secrets/{TOKEN}}}", note="a path's name"),
    neg(RULE, "password=${DB_PASSWORD:-[REDACTED:dotenv-value:0123456789abcdef]}",
        note="our placeholder"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_rule(case: Case) -> None:
    check(case)


SCANNERS = whole_scanners()


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
@pytest.mark.parametrize("scanner", SCANNERS, ids=["python", "auto"])
def test_through_the_gates(case: Case, scanner: object) -> None:
    check_through_the_gates(case, scanner)
