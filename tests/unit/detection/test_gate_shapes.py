"""Gates that describe a token's shape rather than a common word: a line that only names the
word wakes no detector (and is not parsed for it); a line with the token still does.

Fake tokens are built at run time; assertions compare sets of detector names."""

from __future__ import annotations

import json
import random

from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(bytes(32)), engine="python"
)
UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def woken_names(text: str) -> set[str]:
    index = SCANNER.index
    data = json.dumps({"type": "user", "text": text}).encode()
    return {index.detectors[i].name for i in index.line_detectors(data)}


def test_an_api_gateway_line_does_not_wake_the_octopus_key_rule() -> None:
    for text in (
        "curl -H 'x-api-key: $KEY' https://api-gateway.internal/v1",
        "API-docs: see Api-Guide",
    ):
        assert "octopus-deploy-api-key" not in woken_names(text)


def test_an_octopus_key_still_wakes_it_and_is_found() -> None:
    rng = random.Random(5)  # fake data, not cryptography
    key = "API-" + "".join(rng.choice(UPPER_DIGITS) for _ in range(26))
    text = "octopus key " + key + " for the deploy"
    assert "octopus-deploy-api-key" in woken_names(text)
    found = SCANNER.scan_text(text)
    assert [(f.hit.kind, f.hit.end - f.hit.start) for f in found] == [
        ("octopus-deploy-api-key", len(key))
    ]
