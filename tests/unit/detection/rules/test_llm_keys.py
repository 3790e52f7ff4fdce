"""Anthropic, OpenAI, OpenRouter and the other AI providers' keys."""

from __future__ import annotations

import pytest
from rule_cases import B62, B64URL, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import ai_providers, anthropic, openai, openrouter

ANT = join("sk-", "ant-", "api03-", fake(B64URL, 93, "ant"), "AA")
ADMIN = join("sk-", "ant-", "admin01-", fake(B64URL, 93, "adm"), "AA")
OAUTH = join("sk-", "ant-", "oat01-", fake(B64URL, 95, "oat"), "AA")
REFRESH = join("sk-", "ant-", "ort01-", fake(B64URL, 95, "ort"), "AA")
PROJ = join("sk-", "proj-", fake(B64URL, 58, "p1"), "T3Blbk", "FJ", fake(B64URL, 58, "p2"))
LEGACY = join("sk-", fake(B62, 20, "l1"), "T3Blbk", "FJ", fake(B62, 20, "l2"))
ROUTER = join("sk-", "or-", "v1-", fake(HEX, 64, "or"))
PPLX = join("pp", "lx-", fake(B62, 48, "pplx"))
GROQ = join("gs", "k_", fake(B62, 52, "groq"))

CASES: list[Case] = [
    pos(anthropic.ANTHROPIC_API_KEY, f"ANTHROPIC_API_KEY={ANT}\n", ANT),
    pos(anthropic.ANTHROPIC_API_KEY, f"x-api-key: {ADMIN}", ADMIN),
    neg(anthropic.ANTHROPIC_API_KEY, OAUTH, note="oauth is its own kind"),
    pos(anthropic.ANTHROPIC_OAUTH_TOKEN,
        f'{{"claudeAiOauth":{{"accessToken":"{OAUTH}","refreshToken":"{REFRESH}"}}}}', OAUTH, REFRESH),
    neg(anthropic.ANTHROPIC_API_KEY, "sk-ant-api03-short"),
    pos(openai.OPENAI_API_KEY, f"OPENAI_API_KEY={PROJ}", PROJ),
    pos(openai.OPENAI_LEGACY_KEY, f'"Authorization: Bearer {LEGACY}"', LEGACY),
    neg(openai.OPENAI_API_KEY, "sk-proj-"),
    pos(openrouter.OPENROUTER_API_KEY, f"key: {ROUTER}.", ROUTER),
    neg(openrouter.OPENROUTER_API_KEY, ROUTER[:-1], note="63 hex"),
    pos(ai_providers.AI_PROVIDER_KEY, f"PERPLEXITY_API_KEY={PPLX}", PPLX),
    pos(ai_providers.AI_PROVIDER_KEY, f"GROQ_API_KEY={GROQ}", GROQ),
    neg(ai_providers.AI_PROVIDER_KEY, "pplx-" + "x" * 48, note="filler"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_llm_keys(case: Case) -> None:
    check(case)
