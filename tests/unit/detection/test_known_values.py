"""The value index (known_values.py): guards, raw and JSON-escaped forms, prefixes, huge values,
many copies; both engines give the same answers. Values are built at run time."""

from __future__ import annotations

import base64
import io
import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection import known_values as kv
from scrubber.detection import value_blocks
from scrubber.detection.known_values import KnownValues, ValueInfo, propagates
from scrubber.detection.prefilter import load_hyperscan
from tests.skips import INSTALL_HYPERSCAN

ENGINES = ["python", *(["hyperscan"] if load_hyperscan() is not None else [])]
INFO = ValueInfo("aws-secret-access-key", "aws-secret-access-key", "ab" * 32)
SCOPE = "s1"


def _token(rng: random.Random, n: int = 40) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _index(values: list[str], engine: str, scope: str = SCOPE) -> kv.ValueIndex:
    known = KnownValues()
    for value in values:
        assert known.add(value, INFO, scope)
    return known.index(engine)


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("Ab3" + "x" * 5, "dotenv-value", True),
        ("Ab3x", "dotenv-value", False),  # too short
        ("3f9a1c2e-1111-4222-8333-444455556666", "heroku-api-key", False),  # a uuid
        ("toolu_01ABCdefGHIjkl", "dotenv-value", False),  # an id of Claude Code's
        ("1234567890123", "dotenv-value", False),  # a number
        ("2026-11-30 10:00", "dotenv-value", False),  # no letter
        ("a" * 8 + "0" * 32, "dotenv-value", False),  # hex from a generic detector: a hash
        ("a" * 8 + "0" * 32, "stripe-secret-key", True),  # hex in a vendor's format: a key
        ("production", "dotenv-value", False),  # one kind of character: a word
        ("sha256-" + "Ab1" * 10, "dotenv-value", False),  # a digest
        ("[REDACTED:x:12345678]", "dotenv-value", False),
    ],
)
def test_guards(value: str, kind: str, expected: bool) -> None:
    assert propagates(value, kind) is expected


def test_repr_holds_no_value() -> None:
    rng = random.Random(1)
    value = _token(rng)
    known = KnownValues()
    known.add(value, INFO, SCOPE)
    assert value not in repr(known) and value not in repr(known.index("python"))


@pytest.mark.parametrize("engine", ENGINES)
def test_raw_and_escaped_copies_on_raw_lines(engine: str) -> None:
    rng = random.Random(2)
    plain = _token(rng)
    quoted = _token(rng, 20) + '"\\/' + _token(rng, 20)  # escaped differently in JSON
    index = _index([plain, quoted], engine)
    line_a = json.dumps({"a": f"err {plain}"}).encode()
    line_b = json.dumps({"b": f"x {quoted} y"}).encode()
    # A JSON document printed inside a string: the value is escaped twice on the raw line.
    line_c = json.dumps({"c": json.dumps({"k": quoted})}).encode()
    data = b"\n".join([b'{"n": 1}', line_a, line_b, line_c, b'{"n": 2}']) + b"\n"
    found = index.line_candidates(data)
    assert [data[s:e] for s, e, _ in found] == [line_a, line_b, line_c]
    for (s, e, numbers), line in zip(found, [line_a, line_b, line_c], strict=True):
        record = json.loads(data[s:e])
        [copy] = kv.record_copies(record, index, numbers)
        text = next(iter(record.values()))
        assert text[copy.start : copy.end] in kv.text_forms(plain if line is line_a else quoted)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_that_is_a_prefix_of_another(engine: str) -> None:
    rng = random.Random(3)
    short = _token(rng, 12)
    long = short + _token(rng, 12)
    index = _index([short, long], engine)
    text = f"{long} and {short} and {long}{short}"
    spans = index.find(text, [0, 1])
    got = [(text[s:e], n) for s, e, n in spans]
    assert got == [(long, 1), (short, 0), (long, 1), (short, 0)]


@pytest.mark.parametrize("engine", ENGINES)
def test_thousands_of_copies_on_one_line(engine: str) -> None:
    rng = random.Random(4)
    value = _token(rng)
    index = _index([value], engine)
    line = json.dumps({"stderr": " ".join([value] * 5000), "uuid": value}).encode()
    [(_, _, numbers)] = index.line_candidates(line + b"\n")
    record = json.loads(line)
    copies = kv.record_copies(record, index, numbers)
    assert len(copies) == 5000 and {c.pointer for c in copies} == {"/stderr"}  # never uuid


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_of_several_megabytes(engine: str) -> None:
    rng = random.Random(5)
    value = base64.b64encode(rng.randbytes(3 << 20)).decode()  # 4 MB
    near_miss = value[:-1] + ("A" if value[-1] != "A" else "B")
    index = _index([value], engine)
    data = (
        json.dumps({"a": near_miss}).encode()
        + b"\n"
        + json.dumps({"b": "x" + value + "y"}).encode()
        + b"\n"
    )
    stream = io.BytesIO(data)
    blocks = list(value_blocks.blocks(stream, index))
    assert b"".join(b.view() for b in blocks) == data  # every byte once, lines whole
    copies = []
    for block in blocks:
        for s, e, numbers in block.candidates:
            copies += kv.record_copies(json.loads(block.data[s:e]), index, numbers)
    assert [(c.pointer, c.start, c.end) for c in copies] == [("/b", 1, 1 + len(value))]


def test_engines_agree() -> None:
    if len(ENGINES) < 2:
        pytest.skip(INSTALL_HYPERSCAN)
    rng = random.Random(6)
    values = [_token(rng, rng.randint(8, 90)) for _ in range(50)]
    pieces = [rng.choice(values) if rng.random() < 0.3 else _token(rng, 30) for _ in range(3000)]
    data = "\n".join(" ".join(pieces[i : i + 7]) for i in range(0, 3000, 7)).encode() + b"\n"
    python, hyper = (_index(values, engine) for engine in ENGINES)
    assert python.line_candidates(data) == hyper.line_candidates(data)


def test_scopes_and_text_redaction() -> None:
    rng = random.Random(7)
    value = _token(rng)
    index = _index([value], "python", scope="one")
    title = f"deploy failed: {value}"
    assert value not in index.redact(title, "one")
    assert index.redact(title, "other") == title
    assert index.redact(title) != title  # no scope: every known value


@pytest.mark.parametrize("engine", ENGINES)
def test_blocks_cover_every_byte_once_whatever_the_reads(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads that end mid-line, lines longer than a read, no final newline: each line is in
    one block, whole, and every candidate line is found once."""
    rng = random.Random(8)
    value = _token(rng)
    index = _index([value], engine)
    monkeypatch.setattr(value_blocks, "_BLOCK", 64)
    lines = [
        json.dumps({"t": _token(rng, rng.randint(0, 300)) + (value if i % 3 == 0 else "")})
        for i in range(60)
    ]
    data = ("\n".join(lines)).encode()  # no newline at the end
    found = list(value_blocks.blocks(io.BytesIO(data), index))
    assert b"".join(b.view() for b in found) == data
    hits = [bytes(b.data[s:e]) for b in found for s, e, _ in b.candidates]
    assert hits == [line.encode() for i, line in enumerate(lines) if i % 3 == 0]


def _propagates_char_by_char(value: str, kind: str) -> bool:
    """`propagates` as first written, every character class tested one character at a time."""
    if len(value) < kv.MIN_LENGTH or kv.PLACEHOLDER_PREFIX in value or not value.strip():
        return False
    if kv._UUID.fullmatch(value) or kv._ID.fullmatch(value) or kv._DIGEST.match(value):
        return False
    if not any(c.isalpha() for c in value):
        return False
    generic = kind in kv._GENERIC_KINDS or kind.startswith("detect-secrets")
    if generic and kv._HEX.fullmatch(value):
        return False
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return sum(classes) >= 2


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet="aZq09-_/+= .\x7f\t\x00éß٣Ⅻ", min_size=6, max_size=20),
    st.sampled_from(["github-token", "dotenv-value", "detect-secrets-hex"]),
)
def test_propagates_tests_whole_strings_as_a_loop_would(value: str, kind: str) -> None:
    assert propagates(value, kind) == _propagates_char_by_char(value, kind)
