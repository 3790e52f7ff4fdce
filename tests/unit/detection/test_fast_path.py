"""The fast path of a scan finds exactly what a full read of the decoded string finds.

A raw JSONL line is skipped when no gate matches it, a woken detector can be dropped after a
cheap look at the raw bytes (sensitive-assignment judges the line of text around a name), and
detectors read only near their gate matches. Each is a shortcut that must never lose a hit. So:
for strings built to hit those shortcuts' edges (assignments with tabs, escaped quotes, line
numbers, CRLF, non-ASCII, JSON inside strings, names right after a newline), the findings of
`FileScan.scan_raw` on a JSONL line holding the string equal those of `scan_text` on the string.
Values are built at run time.
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.detector import PLAIN
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.transcript.jsonl import RawLine

DETECTORS = build_detectors(Policy.default())
ENGINES = ["python"]
try:
    import hyperscan  # noqa: F401

    ENGINES.append("hyperscan")
except ImportError:
    pass
SCANNERS = {e: SecretScanner(DETECTORS, Fingerprinter(b"f" * 32), engine=e) for e in ENGINES}

_RNG = random.Random(5)


def _value(n: int = 14) -> str:
    return "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


NAMES = ["DB_PASSWORD", "token", "api_key", "secret_name", "password_hash", "authToken", "smtp_pw",
         "client_secret", "GITHUB_TOKEN", "pass", "credentials", "AWS_SECRET_ACCESS_KEY", "dbPw"]  # fmt: skip
OPERATORS = ["=", " = ", ": ", ":", " := ", "=>", '": "', "': '", '\\": \\"', " ?= ", "\t=\t"]
PREFIXES = ["", "export ", "  ", "\t", "12\t", "   7→", "é ", '{"', "\\n", "const ", "<"]
SUFFIXES = ["", "\n", "\r\n", '"', "'", ";", " # note", "\tx", ")", "\\n", "</x>", " and more"]


def _line_for(text: str) -> RawLine:
    record = {
        "type": "user",
        "uuid": "u",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }
    data = json.dumps(record, ensure_ascii=False).encode()
    return RawLine(number=1, offset=0, data=data, terminated=True)


def _spans(found: object) -> list[tuple[int, int, str]]:
    return sorted((f.hit.start, f.hit.end, f.hit.kind) for f in found)  # type: ignore[attr-defined]


def _check(text: str) -> None:
    for engine, scanner in SCANNERS.items():
        expected = _spans(scanner.scan_text(text, PLAIN))
        scanned = scanner.new_file_scan().scan_raw(_line_for(text))
        got = [] if scanned is None else [s for leaf in scanned.leaves for s in _spans(leaf.found)]
        assert sorted(got) == expected, (engine, text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("operator", OPERATORS)
def test_assignments_are_found_through_the_fast_path(name: str, operator: str) -> None:
    # A seeded sample of the prefix and suffix pairs (all of them take a minute).
    pairs = random.Random(f"{name}{operator}").sample(
        [(p, s) for p in PREFIXES for s in SUFFIXES], 16
    )
    for prefix, suffix in pairs:
        value = _value()
        quoted = ['"' + value + '"', value] if not operator.endswith(('"', "'")) else [value]
        for shown in quoted:
            _check(f"line one\n{prefix}{name}{operator}{shown}{suffix}\nlast line")


_ALPHABET = [
    *"abkt_-:=\"'\\ \t\n→é<>()[]{},;.0123456789",
    "token", "password", "secret", "key", "auth", "pw", "PASS", "\\n", '\\"', "\r\n", "export ",
    "DB_", ": str", "= '", "xK9mQ2vL7pR4",
]  # fmt: skip


@given(st.lists(st.sampled_from(_ALPHABET), max_size=40).map("".join))
@settings(max_examples=250, deadline=None)
def test_arbitrary_text_is_found_alike(text: str) -> None:
    _check(text)


def test_a_long_key_on_one_line_of_a_long_output_is_found_whole() -> None:
    # A kubeconfig's client-key-data (a base64 PEM key of 2,000+ characters on one line) in a
    # grep output longer than a scan window: its hit reaches past the window around its anchor.
    rng = random.Random(9)
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(1200))).decode()
    label = "RSA PRIVATE KEY"
    pem = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"
    value = base64.b64encode(pem.encode()).decode()
    text = "x" * 3000 + "\n~/.kube/config:18:    client-key-data: " + value + "\n" + "y" * 3000
    for scanner in SCANNERS.values():
        spans = [(f.hit.start, f.hit.end) for f in scanner.scan_text(text, PLAIN)]
        assert spans == [(text.index(value), text.index(value) + len(value))]
    _check(text)


@pytest.mark.parametrize(
    "template",
    [
        "token\ta: {v}",  # a tab after the noun: `\t` on the raw line (hypothesis found it)
        "the key to\tthe API:\t{v}",
        "the token für die Verbindung: {v}",  # non-ASCII prose, within 40 bytes
        "the token für die Verbindung mit der Schnittstelle é: {v}",  # wider than 40 bytes
    ],
)
def test_prose_labels_are_found_alike(template: str) -> None:
    _check(template.format(v=_value(12) + "9"))
