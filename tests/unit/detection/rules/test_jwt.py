"""JSON Web Tokens: three base64url segments whose header names an algorithm."""

from __future__ import annotations

import base64
import json

import pytest
from rule_cases import B64URL, Case, check, fake, ids, neg, pos

from scrubber.detection.rules.jwt import JWT


def segment(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


HEADER = segment({"alg": "HS256", "typ": "JWT"})
PAYLOAD = segment({"sub": "1234567890", "name": "Test", "iat": 1516239022})
SIGNED = f"{HEADER}.{PAYLOAD}.{fake(B64URL, 43, 'sig')}"
UNSIGNED = f"{segment({'alg': 'none'})}.{PAYLOAD}."
TWO_SEGMENTS = f"{segment({'typ': 'JWT', 'alg': 'HS256'})}.{PAYLOAD}"
NOT_A_HEADER = f"{segment({'sub': 'x', 'name': 'no algorithm here'})}.{PAYLOAD}.{fake(B64URL, 20)}"

CASES: list[Case] = [
    pos(JWT, f'{{"access_token":"{SIGNED}","token_type":"Bearer"}}', SIGNED),
    pos(JWT, f"Cookie: session={SIGNED}; Path=/; HttpOnly", SIGNED),
    pos(JWT, f"https://x.example/cb?id_token={SIGNED}&state=1", SIGNED),
    pos(JWT, f'String t = "{UNSIGNED}";', UNSIGNED, note="alg none, empty signature"),
    pos(JWT, f"token {TWO_SEGMENTS} end", TWO_SEGMENTS, note="no signature segment"),
    pos(JWT, f"Bearer {SIGNED}. Next sentence.", SIGNED, note="sentence period stays"),
    neg(JWT, NOT_A_HEADER, note="header without alg"),
    neg(JWT, "eyJhbGciOi", note="a prefix only"),
    neg(JWT, f"ops_{HEADER}", note="glued to a prefix"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_jwt(case: Case) -> None:
    check(case)
