"""sensitive-assignment's raw-line precheck (`may_match_raw`) is a necessary condition: a line it
turns down holds no hit of the rule in any of its strings. The scanner drops the rule from a
raw line the precheck turns down, so a line that wakes no other detector is then never parsed:
a precheck stricter than the rule loses secrets (a bare `Key=` in a log line, a quoted value
ending in `\\r`), which only showed once the pgpass gate stopped waking such lines by chance.
Values are built at run time; the carrier test skips when ../shared is absent."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrubber.detection.detector import PLAIN
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.rules.assignment.candidates import RAW_CANDIDATE
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from tests.skips import needs_shared

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
CARRIERS = sorted((SHARED / "leakbench" / "carriers").glob("*.jsonl"))

SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(b"p" * 32))
INDEX = SCANNER.index
RULE_AT = next(i for i, d in enumerate(INDEX.detectors) if d.name == "sensitive-assignment")
RULE = INDEX.detectors[RULE_AT]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _rule_hits(data: bytes) -> bool:
    return any(True for text in _strings(json.loads(data)) for _ in RULE.find(text, PLAIN))


def _precheck_keeps(data: bytes) -> bool:
    gates = INDEX.line_scan(data)
    if gates.escaped_slash:
        data = data.replace(b"\\/", b"/")
    return RULE_AT in gates.woken and RULE.may_match_raw(data, gates.events.get(RULE_AT, ()))


def _tool_output_line(output: str) -> bytes:
    record = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}],
        },
    }
    return json.dumps(record).encode()


def _value(seed: str, n: int = 40) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


@pytest.mark.parametrize(
    "output",
    [
        "Sending request\n\t\t\t\t[DEBUG] Using Key={v}\n",
        "[DEBUG] using KEY={v} for the call",
        "config/app.yaml:1:app token = '{v}\r'",
        'const KEY = "{v}";\r\nnext',
    ],
)
def test_the_precheck_keeps_what_the_rule_finds(output: str) -> None:
    data = _tool_output_line(output.format(v=_value(output)))
    assert _rule_hits(data)
    assert _precheck_keeps(data)


def test_the_precheck_still_turns_down_names_that_assign_nothing() -> None:
    data = _tool_output_line("def f(secret_name: str, token: list[str]) -> None:\n    pass\n")
    assert not _rule_hits(data)
    assert not _precheck_keeps(data)


@pytest.mark.skipif(not CARRIERS, reason=needs_shared("leakbench/carriers"))
def test_no_carrier_line_with_a_hit_is_turned_down() -> None:
    turned_down = []
    for path in CARRIERS:
        with path.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                data = line.rstrip(b"\n")
                # A line with no candidate holds no hit: skip the costly full read.
                if not RAW_CANDIDATE.search(data.lower()):
                    continue
                if _rule_hits(data) and not _precheck_keeps(data):
                    turned_down.append(f"{path.name}:{number}")
    assert turned_down == []
