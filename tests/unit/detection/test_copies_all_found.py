"""`ValueIndex.copies_all_found` lets the by-value pass skip a line without parsing it: it must
never say so when the line holds a copy that is not one of the findings already on it (a copy
whole or cut, in any string, escaped once more as JSON printed in a string), and it must say
so for the common line whose copies are all findings."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scrubber.detection.known_values import KnownValues, ValueIndex, ValueInfo, record_copies
from scrubber.detection.prefilter import load_hyperscan
from scrubber.transcript.records import string_at

ENGINES = ["python", *(["hyperscan"] if load_hyperscan() is not None else [])]
INFO = ValueInfo("dotenv-value", "sensitive-assignment", "cd" * 32)
SCOPE = "s1"
CUT = "…"


def _token(rng: random.Random, n: int = 40) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _index(values: list[str], engine: str) -> ValueIndex:
    known = KnownValues()
    for value in values:
        assert known.add(value, INFO, SCOPE)
    return known.index(engine)


def _line(record: dict[str, Any], *, ascii_only: bool = False, slashes: bool = False) -> bytes:
    text = json.dumps(record, ensure_ascii=ascii_only, separators=(",", ":"))
    return (text.replace("/", "\\/") if slashes else text).encode()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_line_whose_copies_are_its_findings_is_settled(engine: str) -> None:
    rng = random.Random(1)
    value = _token(rng) + "/x"  # a slash: JSON may write it `\/`
    index = _index([value], engine)
    record = {
        "message": {"content": [{"type": "tool_result", "content": f"DB_PASSWORD={value}\n"}]},
        "toolUseResult": {"file": {"content": f"DB_PASSWORD={value}\n"}},
    }
    line = _line(record)
    assert len(record_copies(json.loads(line), index, [0])) == 2
    assert index.copies_all_found(line, {0: 2})
    # One more copy than findings, anywhere: read the line.
    assert not index.copies_all_found(line, {0: 1})
    record["toolUseResult"]["stderr"] = f"warning: {value} is weak"
    assert not index.copies_all_found(_line(record), {0: 2})
    # A cut copy of the start (a label cut short) or of the end.
    for cut in (value[:24] + CUT, CUT + value[-20:]):
        record["toolUseResult"]["stderr"] = f"Bash({cut})"
        assert record_copies(json.loads(_line(record)), index, [0])[2:]
        assert not index.copies_all_found(_line(record), {0: 2})
    # Escapes that give a text more than one spelling: never settled from the bytes.
    del record["toolUseResult"]["stderr"]
    assert not index.copies_all_found(_line(record, slashes=True), {0: 2})
    record["toolUseResult"]["note"] = "café"
    assert not index.copies_all_found(_line(record, ascii_only=True), {0: 2})


def test_keys_that_share_their_start_are_counted_together() -> None:
    """Every 2048-bit key's body starts alike: its start anchor is any of them, so a line that
    holds one key, found, is settled for the others too, but not with a cut copy of another."""
    rng = random.Random(4)
    start = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
    keys = [start + _token(rng, 40) for _ in range(3)]
    index = _index(keys, "python")
    record: dict[str, Any] = {"content": keys[0], "toolUseResult": {"file": {"content": keys[0]}}}
    line = _line(record)
    assert len(record_copies(json.loads(line), index, [0, 1, 2])) == 2
    assert index.copies_all_found(line, {0: 2})
    assert not index.copies_all_found(line, {0: 1})
    for cut in (f"{CUT}{keys[1][-24:]}", f"{keys[2][:30]}{CUT}"):  # another key's end, start
        record["label"] = f"cat id_rsa {cut}"
        assert len(record_copies(json.loads(_line(record)), index, [0, 1, 2])) == 3
        assert not index.copies_all_found(_line(record), {0: 2})


def _leaf(rng: random.Random, value: str) -> Any:
    """A string or a nested object that may hold the value: as it is, in JSON printed in a
    string, cut at either end, or not at all."""
    shape = rng.randrange(6)
    if shape == 0:
        return f"x {value} y"
    if shape == 1:
        return json.dumps({"secret": value, "n": rng.randrange(9)})
    if shape == 2:
        return f"Bash(echo {value[: rng.randint(16, len(value) - 1)]}{CUT}"
    if shape == 3:
        return f"{CUT}{value[-rng.randint(16, len(value) - 1) :]} done"
    if shape == 4:
        return {"inner": [f"{value}", "plain words"]}
    return "nothing here " + _token(rng, 12)


def _values(rng: random.Random) -> list[str]:
    """Values of three shapes: random throughout; a start they share (every 2048-bit RSA key's
    body starts alike, so they share their start anchor) and random ends; a word start (no
    start piece) and a random end."""
    shape = rng.randrange(3)
    if shape == 0:
        return [_token(rng) + rng.choice(["", "/path", '"q"', "\\b", "é"]) for _ in range(2)]
    if shape == 1:
        start = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
        return [start + _token(rng, rng.randint(20, 60)) for _ in range(3)]
    return ["passwordpassword-" + _token(rng, 24) for _ in range(2)]


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans(), st.booleans())
def test_never_settled_with_a_copy_that_is_no_finding(
    rng: random.Random, ascii_only: bool, slashes: bool
) -> None:
    values = _values(rng)
    known = KnownValues()
    assume(all(known.add(value, INFO, SCOPE) for value in values))  # a run of one letter is none
    index = known.index("python")
    numbers = {value: n for n, (value, _, _) in enumerate(known.items())}
    record = {f"k{i}": _leaf(rng, rng.choice(values)) for i in range(rng.randint(1, 5))}
    line = _line(record, ascii_only=ascii_only, slashes=slashes)
    parsed = json.loads(line)
    wanted = sorted(numbers.values())
    copies = record_copies(parsed, index, wanted)
    # What a detector can have found: a value itself, whole (a cut copy, or one escaped once
    # more inside JSON printed in a string, is a copy no detector made).
    whole = {
        n: sum(1 for c in copies if c.value == n and _text(parsed, c) == value)
        for value, n in numbers.items()
    }
    every = {n: sum(1 for c in copies if c.value == n) for n in wanted}
    for _ in range(4):
        found = {n: rng.randint(0, whole[n]) for n in wanted}
        settled = index.copies_all_found(line, found)
        # Settled only when every copy of every value is one of its findings.
        assert not settled or all(found[n] >= every[n] for n in wanted), (found, every)


def _text(record: Any, copy: Any) -> str:
    return str(string_at(record, copy.pointer or ""))[copy.start : copy.end]
