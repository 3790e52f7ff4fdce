"""Shared shape of the rule tests: a table of (text, expected secrets) per detector.

Fake secrets are assembled at run time from fragments and a seeded generator, so no file of the
repository holds anything shaped like a real credential (the repository passes its own audit).
Expected spans are computed from the expected secret substrings, in order of appearance, and
compared exactly with the detector's hits: a span that stops short or runs long fails.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scrubber.detection.detector import PLAIN, Detector, ScanContext, SourceKind

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
B64URL = B62 + "-_"
HEX = "0123456789abcdef"
UPPER_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

DOTENV = ScanContext(None, SourceKind.DOTENV, "/app/.env")
CREDENTIALS = ScanContext(None, SourceKind.CREDENTIAL_FILE, "/home/u/.netrc")
SECRET_DUMP = ScanContext(None, SourceKind.SECRET_DUMP, "kubectl get secret db -o yaml")


def fake(alphabet: str, length: int, seed: int | str = 0) -> str:
    """A deterministic random string: the same table gives the same ids on every run."""
    rng = random.Random(f"{seed}:{alphabet}:{length}")
    return "".join(rng.choice(alphabet) for _ in range(length))


def join(*parts: str) -> str:
    """Glue fragments of a fake token (keeps prefixes and bodies apart in the source)."""
    return "".join(parts)


@dataclass(frozen=True)
class Case:
    rule: Detector
    # Fake secrets, but still kept out of reprs and test ids.
    text: str = field(repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)  # expected values, in order
    context: ScanContext = PLAIN
    note: str = ""

    @property
    def id(self) -> str:
        sign = "+" if self.secrets else "-"
        return f"{self.rule.name}{sign}{self.note}" if self.note else f"{self.rule.name}{sign}"


def pos(
    rule: Detector, text: str, *secrets: str, context: ScanContext = PLAIN, note: str = ""
) -> Case:
    assert secrets, "a positive case names the secrets it expects"
    return Case(rule, text, tuple(secrets), context, note)


def neg(rule: Detector, text: str, context: ScanContext = PLAIN, note: str = "") -> Case:
    return Case(rule, text, (), context, note)


def expected_spans(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    spans = []
    cursor = 0
    for secret in secrets:
        start = text.index(secret, cursor)
        spans.append((start, start + len(secret)))
        cursor = start + len(secret)
    return spans


def found_spans(rule: Detector, text: str, context: ScanContext = PLAIN) -> list[tuple[int, int]]:
    return sorted({(hit.start, hit.end) for hit in rule.find(text, context)})


def check(case: Case) -> None:
    found = found_spans(case.rule, case.text, case.context)
    want = expected_spans(case.text, case.secrets)
    # Report positions and lengths only: values stay out of assertion output.
    assert found == want, f"{case.id}: found spans {found}, expected {want}"
    for hit in case.rule.find(case.text, case.context):
        assert hit.detector == case.rule.name


def ids(cases: Iterable[Case]) -> list[str]:
    return [f"{i}:{c.id}" for i, c in enumerate(cases)]


def whole_scanners() -> list[Any]:
    """The whole default scanner, once per prefilter engine (pure Python, and hyperscan when it
    is installed), for tests that check a class of syntax through the gates."""
    from scrubber.detection.fingerprint import Fingerprinter
    from scrubber.detection.registry import build_detectors
    from scrubber.detection.scan import SecretScanner
    from scrubber.policy.model import Policy

    detectors = build_detectors(Policy.default())
    return [
        SecretScanner(detectors, Fingerprinter(b"k" * 32), engine=engine)
        for engine in ("python", "auto")
    ]


def check_through_the_gates(case: Case, scanner: Any) -> None:
    """What the whole scanner takes from the case's text as a transcript line hands it over:
    only the detectors whose gates match the raw JSONL line run (a rule that matches behind a
    gate that does not is a leak)."""
    data = json.dumps({"type": "user", "message": {"content": case.text}}).encode()
    woken = scanner.index.line_detectors(data)
    found = [
        case.text[f.hit.start : f.hit.end]
        for f in scanner.scan_text(case.text, line_detectors=woken)
    ]
    if case.secrets:
        assert found == list(case.secrets), case.id
    else:
        assert not found, case.id
