"""The scanner remembers what it found in a string: a string met again (a file read twice, a
command's output printed again) is not read by the detectors again, and the answer is keyed by
everything it depends on (the source, the file, whether the JSON key names a secret).

Fake secrets are made at run time by the demo's generators; assertions compare counts and
spans, so a failure never prints a value.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from scrubber.demo import fake_github_token
from scrubber.detection import scan
from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.finding import Hit
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.transcript.jsonl import RawLine

KEY = bytes(range(32))
GITHUB = next(rule for rule in ALL_RULES if rule.name == "github-token")


@dataclass
class CountingGithubRule:
    """The real GitHub token rule, counting the strings it is asked to read."""

    name: str = "github-token"
    anchors: tuple[str, ...] = ("ghp_",)
    context_only: bool = False
    texts_read: list[str] = field(default_factory=list)

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        self.texts_read.append(text)
        return iter(list(GITHUB.find(text, context)))


def scanner_with(rule: CountingGithubRule) -> SecretScanner:
    return SecretScanner([rule], Fingerprinter(KEY), engine="python")


def output_line(uuid: str, text: str) -> RawLine:
    record = {
        "type": "user",
        "uuid": uuid,
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }
    data = json.dumps(record, separators=(",", ":")).encode()
    return RawLine(number=1, offset=0, data=data, terminated=True)


def token() -> str:
    return fake_github_token(random.Random(3))  # fake data, not cryptography


def test_a_string_met_again_in_a_later_line_is_not_read_again() -> None:
    rule = CountingGithubRule()
    file_scan = scanner_with(rule).new_file_scan()
    text = "deploy log: pushed with token " + token() + " to origin"
    first = file_scan.scan_raw(output_line("a", text))
    second = file_scan.scan_raw(output_line("b", text))
    assert first is not None and second is not None
    spans = [[(f.hit.start, f.hit.end) for f in leaf.found] for leaf in first.leaves]
    assert spans == [[(f.hit.start, f.hit.end) for f in leaf.found] for leaf in second.leaves]
    assert spans and spans[0]
    assert rule.texts_read == [text]


def test_the_same_string_from_another_source_or_file_is_read_again() -> None:
    rule = CountingGithubRule()
    scanner = scanner_with(rule)
    text = "GITHUB_TOKEN=" + token()
    plain = scanner.scan_text(text, ScanContext())
    dotenv = scanner.scan_text(text, ScanContext(source=SourceKind.DOTENV, file_name=".env"))
    other_file = scanner.scan_text(text, ScanContext(source=SourceKind.DOTENV, file_name="b.env"))
    assert len(rule.texts_read) == 3
    assert [f.hit.kind for f in plain] == [f.hit.kind for f in dotenv] == ["github-token"]
    assert [f.fingerprint for f in other_file] == [f.fingerprint for f in plain]


def test_a_secret_named_key_is_part_of_the_answer() -> None:
    scanner = scanner_with(CountingGithubRule())
    value = "hunter2-" + "correct-horse"
    assert [f.hit.kind for f in scanner.scan_text(value, ScanContext(key="password"))] == [
        "sensitive-key-value"
    ]
    assert scanner.scan_text(value, ScanContext(key="note")) == ()
    assert len(scanner.scan_text(value, ScanContext(key="db_password"))) == 1


def test_what_is_remembered_is_bounded_oldest_first_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_FOUND_CACHE_ENTRIES", 2)
    rule = CountingGithubRule()
    scanner = scanner_with(rule)
    texts = [f"line {i}: token " + token() for i in range(3)]
    for text in texts:
        scanner.scan_text(text)
    scanner.scan_text(texts[2])  # still remembered
    assert len(rule.texts_read) == 3
    scanner.scan_text(texts[0])  # pushed out by the third
    assert len(rule.texts_read) == 4


def test_the_bound_counts_characters_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_FOUND_CACHE_CHARS", 100)
    rule = CountingGithubRule()
    scanner = scanner_with(rule)
    long_text = "x" * 200 + " token " + token()
    scanner.scan_text(long_text)
    scanner.scan_text(long_text)
    assert len(rule.texts_read) == 2
