"""Redaction is idempotent on every positive example of leakbench (../shared/leakbench): once
a text is redacted, no rule finds anything in it, and redacting it again changes nothing. The
examples are written the way services' docs write secrets, so they exercise every rule's reading
of what follows a label, where a placeholder now stands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrubber.detection.detector import PLAIN, ScanContext, SourceKind
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from tests.skips import needs_shared

LEAKBENCH_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "leakbench" / "data"
FILES = ("positives.jsonl", "generated_positives.jsonl")


def _texts() -> list[str]:
    texts: list[str] = []
    for name in FILES:
        path = LEAKBENCH_DATA / name
        if path.is_file():
            texts.extend(json.loads(line)["text"] for line in path.read_text().splitlines())
    return [t for t in texts if t]


TEXTS = _texts()
pytestmark = pytest.mark.skipif(not TEXTS, reason=needs_shared("leakbench"))
SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(b"k" * 32))
CONTEXTS = (PLAIN, ScanContext(None, SourceKind.DOTENV, "/app/.env"))


@pytest.mark.parametrize("context", CONTEXTS, ids=["plain", "dotenv"])
def test_a_redacted_example_holds_nothing_more(context: ScanContext) -> None:
    changed = []
    for i, text in enumerate(TEXTS):
        once = SCANNER.redact_text(text, context)
        if SCANNER.scan_text(once, context) or SCANNER.redact_text(once, context) != once:
            changed.append(i)  # indexes only: the texts hold (fake) secrets
    assert changed == [], f"{len(changed)} of {len(TEXTS)} examples change on a second pass"


def test_netrc_after_a_placeholder_takes_no_next_word() -> None:
    # The netrc rule read the word after a placeholder (the next line's `machine`) as the
    # next password: every further pass ate one more word, and `verify` after `redact` failed.
    value = "".join(chr(ord("a") + (i * 7) % 26) + str(i % 10) for i in range(6))
    text = f"machine a.example\nlogin bob\npassword {value}\nmachine b.example\nlogin al\n"
    once = SCANNER.redact_text(text)
    assert "machine b.example" in once
    assert SCANNER.redact_text(once) == once
