"""Syntax classes found missing by leakbench: a default written after a fallback operator
(`process.env.API_TOKEN || "…"`, `?? '…'`, also with the literal on the next line), a PHP or
Ruby hash entry (`'account_key' => '…'`), and a labelled value longer than the separator regexes
read (a 1,000-character refresh token in a table cell), a label of words before a colon
(`API key: …`, `aylien key: …`), and a credential's default in a shell parameter expansion
(`${POSTGRES_PASSWORD:-…}`: the assignment rules take `${NAME}` for a reference).

Each class is checked on the rule and through the whole scanner, on the string and on the raw
JSONL line that holds it (the gates decide which lines a rule reads at all: a rule that matches
behind a gate that does not is a leak). Fake values are built at run time."""

from __future__ import annotations

import pytest
from rule_cases import (
    B62,
    Case,
    check,
    check_through_the_gates,
    fake,
    ids,
    join,
    neg,
    pos,
    whole_scanners,
)

from scrubber.detection.rules import shell_default
from scrubber.detection.rules.assignment import SENSITIVE_ASSIGNMENT as RULE
from scrubber.detection.rules.labelled_secret import COLON_LABEL, LOOSE_LABEL, NEXT_LINE_LITERAL

TOKEN = fake(B62, 32, "fallback")
B64KEY = fake(B62 + "+/", 86, "arrow") + "=="
WEAK = "hunter" + "2"
# An Azure AD refresh token's shape: `0.` and well over 512 characters of base64url and dots.
REFRESH = join("0.", fake(B62 + "-_.", 1300, "refresh"))
LOWER = fake("abcdefghijklmnopqrstuvwxyz0123456789", 32, "lower")
HASH = fake("0123456789abcdef", 64, "colonhash")
SHELL_PW = fake(B62, 14, "shell-pw") + "7"
SHELL_KEY = fake(B62 + "+/", 43, "shell-key") + "="
(SHELL,) = shell_default.RULES

CASES: list[Case] = [
    # a fallback's default
    pos(RULE, f'const token = process.env.API_TOKEN || "{TOKEN}";', TOKEN, note="js ||"),
    pos(RULE, f"const token = process.env.API_TOKEN ?? '{TOKEN}';", TOKEN, note="ts ??"),
    pos(RULE, f'apiKey: process.env["STRIPE_KEY"] || "{TOKEN}",', TOKEN, note="subscript"),
    pos(RULE, f'const pw = process.env.DB_PASSWORD || "{WEAK}";', WEAK, note="weak password"),
    neg(RULE, "const pw = process.env.DB_PASSWORD || defaultPassword;", note="a variable"),
    neg(RULE, 'const pw = process.env.DB_PASSWORD || "";', note="empty default"),
    neg(RULE, "if (a.token || b.token) {", note="an expression"),
    neg(RULE, 'const t = opts.token || "Enter your token";', note="a UI string"),
    neg(RULE, 'x = token ?? "default"', note="a literal word"),
    neg(RULE, 'const key = cacheKey || "user:123:profile";', note="a map key"),
    # PHP and Ruby hash entries
    pos(RULE, f"\t'account_key' => '{B64KEY}',\n", B64KEY, note="php arrow"),
    pos(RULE, f':api_token => "{TOKEN}",', TOKEN, note="ruby hash rocket"),
    neg(RULE, "'sort_key' => 'created_at_desc_2024',", note="a sort key"),
    neg(RULE, "'cache_key' => 'user:123:profile',", note="a cache key"),
    neg(RULE, "'token_type' => 'Bearer',", note="names the token"),
    # the literal on the line after a fallback operator
    pos(NEXT_LINE_LITERAL, f'export const key =\n  process.env.ACCOUNT_KEY ||\n  "{B64KEY}";', B64KEY,
        note="fallback then next line"),
    pos(NEXT_LINE_LITERAL, f"const apiToken = env.API_TOKEN ??\n  '{TOKEN}';", TOKEN,
        note="?? then next line"),
    neg(NEXT_LINE_LITERAL, 'const apiKey = env.API_KEY ||\n  "Enter your API key";', note="prose"),
    # a long value after a label
    pos(LOOSE_LABEL, f"| AADRefreshToken | Refresh token of the Azure app | {REFRESH} |", REFRESH,
        note="longer than 512"),
    # a label of words, a colon
    pos(COLON_LABEL, f"API key: {TOKEN}", TOKEN, note="api key"),
    pos(COLON_LABEL, f"  vendor key: {LOWER}\n  vendor id: y3ej", LOWER, note="service key"),
    pos(COLON_LABEL, f'Stripe secret key: "{TOKEN}"', TOKEN, note="quoted"),
    pos(COLON_LABEL, f"Vendor access key: {TOKEN} (rotate monthly)", TOKEN, note="prose after"),
    neg(COLON_LABEL, f"key: {TOKEN}", note="one word: assignment/'s"),
    neg(COLON_LABEL, f"primary key: {TOKEN}", note="a table's key"),
    neg(COLON_LABEL, f"Cache key: {HASH}", note="a cache key"),
    neg(COLON_LABEL, "Sort key: created_at", note="a column"),
    neg(COLON_LABEL, "lookup by key: user_id", note="an identifier"),
    neg(COLON_LABEL, "the api key: required", note="a word"),
    neg(COLON_LABEL, "Max tokens: 4096", note="a counter"),
    pos(LOOSE_LABEL, f"refresh token - {REFRESH}\nnext line", REFRESH, note="long, hyphen"),
    # a credential's default in a shell parameter expansion (compose files, entrypoints)
    pos(SHELL, f"    POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-{SHELL_PW}}}", SHELL_PW,
        note="compose environment map"),
    pos(SHELL, f"      - DB_PASSWORD=${{DB_PASSWORD:-{SHELL_PW}}}", SHELL_PW, note="compose list"),
    pos(SHELL, f'password="${{PGPASSWORD-{SHELL_PW}}}"', SHELL_PW, note="without the colon"),
    pos(SHELL, f"redis-server --requirepass ${{REDIS_PASSWORD:-{SHELL_PW}}}", SHELL_PW,
        note="in a command"),
    pos(SHELL, f"API_TOKEN: ${{API_TOKEN:-'{TOKEN}'}}", TOKEN, note="quoted default"),
    pos(SHELL, f'curl -H "X-Key: ${{ACCOUNT_KEY:={SHELL_KEY}}}" https://h', SHELL_KEY,
        note=":= form"),
    neg(SHELL, "DB_PASSWORD=${DB_PASSWORD:-}", note="empty default"),
    neg(SHELL, "DB_PASSWORD=${DB_PASSWORD:-changeme}", note="a placeholder"),
    neg(SHELL, "DB_PASSWORD=${DB_PASSWORD:?the password is required}", note="an error message"),
    neg(SHELL, "TOKEN=${TOKEN:-$(cat /run/secrets/token)}", note="a command"),
    neg(SHELL, "PASSWORD=${PASSWORD:-${OTHER_PASSWORD}}", note="another reference"),
    neg(SHELL, f"PORT=${{PORT:-{TOKEN}}}", note="not a credential's name"),
    neg(SHELL, f"TOKEN_FILE=${{TOKEN_FILE:-/run/secrets/{TOKEN}}}", note="a path's name"),
    neg(SHELL, "password=${DB_PASSWORD:-[REDACTED:dotenv-value:0123456789abcdef]}",
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
