"""Invariants 2, 3 and 4 on generated transcripts, through the real scanner and rewriter.

- Redacting any transcript line keeps the line count, keeps each line's structure (keys, order,
  numbers, list lengths, protected strings), leaves lines without findings byte-identical, and a
  second pass changes nothing.
- A fake secret planted in any of the places a secret hides does not survive.
- A placeholder never triggers a detector, whatever surrounds it.
- Scanning never raises, whatever the bytes.

Fake secrets are made from a drawn seed by the demo's generators; assertion messages name the
place and the kind, never the value.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrubber.demo import (
    fake_anthropic_key,
    fake_aws_access_key,
    fake_github_token,
    fake_npm_token,
    fake_private_key,
    fake_stripe_key,
)
from scrubber.detection.detector import PLAIN, ScanContext, SourceKind
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import make_placeholder, placeholder_spans
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.redaction.lines import FileKind, FileRedaction, redact_transcript_lines
from scrubber.redaction.structure import same_structure
from scrubber.transcript.jsonl import RawLine
from tests.strategies import json_values, jsonl_files, record_dicts, record_line, utf8_text

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"properties-key-32-bytes-long!!!!")
)
SLOW = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def redact(data: bytes, *, thinking: bool = True) -> tuple[bytes, FileRedaction]:
    result = FileRedaction(Path("x.jsonl"), None, FileKind.TRANSCRIPT)
    out = b"".join(
        redact_transcript_lines(io.BytesIO(data), SCANNER, result, redact_thinking=thinking)
    )
    return out, result


# -- secrets and the places they hide ----------------------------------------------------------

Maker = Callable[[random.Random], tuple[str, list[str]]]  # -> (text to plant, needles)


def _token(make: Callable[[random.Random], str]) -> Maker:
    def plant(r: random.Random) -> tuple[str, list[str]]:
        value = make(r)
        return value, [value]

    return plant


def _connection(r: random.Random) -> tuple[str, list[str]]:
    password = "".join(r.choices("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", k=16))
    return f"postgres://app:{password}@db.internal:5432/app", [password]


def _dotenv(r: random.Random) -> tuple[str, list[str]]:
    password = (
        r.choice(("Plum", "Cedar", "Otter"))
        + r.choice(("harbor", "quartz"))
        + str(r.randint(1000, 9999))
        + "!"
    )
    return f"DB_PASSWORD={password}", [password]


def _pem(r: random.Random) -> tuple[str, list[str]]:
    key = fake_private_key(r)
    body = [line for line in key.splitlines() if not line.startswith("-----")]
    return key, [line for line in body if len(line) >= 16]


MAKERS: dict[str, Maker] = {
    "github-token": _token(fake_github_token),
    "aws-access-key": _token(fake_aws_access_key),
    "stripe-key": _token(fake_stripe_key),
    "anthropic-key": _token(fake_anthropic_key),
    "npm-token": _token(fake_npm_token),
    "connection-string": _connection,
    "dotenv": _dotenv,
    "private-key": _pem,
}


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"id": "msg_01x", "role": "assistant", "content": list(blocks)},
    }


PLACES: dict[str, Callable[[str], dict[str, Any]]] = {
    "user prompt": _user,
    "user prompt block": lambda t: _user([{"type": "text", "text": t}]),
    "assistant text": lambda t: _assistant({"type": "text", "text": t}),
    "thinking (copy)": lambda t: _assistant(
        {"type": "thinking", "thinking": t, "signature": "c2ln"}
    ),
    "tool_use input": lambda t: _assistant(
        {"type": "tool_use", "id": "toolu_01a", "name": "Bash", "input": {"command": f"echo {t}"}}
    ),
    "tool_result string": lambda t: _user(
        [{"tool_use_id": "toolu_01b", "type": "tool_result", "content": t}]
    ),
    "tool_result blocks": lambda t: _user(
        [
            {
                "tool_use_id": "toolu_01c",
                "type": "tool_result",
                "content": [{"type": "text", "text": t}],
            }
        ]
    ),
    "toolUseResult stdout": lambda t: _user("x", toolUseResult={"stdout": t, "stderr": ""}),
    "toolUseResult file content": lambda t: _user(
        "x", toolUseResult={"type": "text", "file": {"filePath": "/a/notes.md", "content": t}}
    ),
    "toolUseResult originalFile": lambda t: _user(
        "x", toolUseResult={"filePath": "/a/b.py", "oldString": "a", "originalFile": t}
    ),
    "toolUseResult string": lambda t: _user("x", toolUseResult=f"Error: {t}"),
    "compaction summary": lambda t: _user(
        f"This session is being continued from a previous conversation.\n{t}", isCompactSummary=True
    ),
    "summary record": lambda t: {"type": "summary", "summary": t, "leafUuid": "u"},
    "unknown record type": lambda t: {"type": "brand-new-kind", "payload": {"notes": [1, t]}},
}

words = st.text(alphabet="abc xyz\n\t.,:;()é😀", max_size=30)


@given(
    place=st.sampled_from(sorted(PLACES)),
    kind=st.sampled_from(sorted(MAKERS)),
    seed=st.integers(0, 2**32),
    before=words,
    after=words,
    ascii_only=st.booleans(),
    compact=st.booleans(),
)
@SLOW
def test_no_planted_secret_survives_anywhere(
    place: str, kind: str, seed: int, before: str, after: str, ascii_only: bool, compact: bool
) -> None:
    text, needles = MAKERS[kind](random.Random(seed))
    record = PLACES[place](f"{before} {text} {after}")
    separators = (",", ":") if compact else (", ", ": ")
    line = json.dumps(record, separators=separators, ensure_ascii=ascii_only).encode()
    out, result = redact(line + b"\n")
    decoded = json.dumps(json.loads(out))  # escapes resolved: a needle cannot hide in \\u
    assert not any(n in decoded or n.encode() in out for n in needles), (place, kind)
    assert result.replaced >= 1, (place, kind)
    assert same_structure(record, json.loads(out)), (place, kind)
    assert redact(out)[0] == out, (place, kind)  # idempotent


# -- structure on arbitrary records ------------------------------------------------------------


@st.composite
def records_with_secrets(draw: st.DrawFn) -> dict[str, Any]:
    """A generated record with fake secrets written into some of its string leaves."""
    record = draw(record_dicts())
    seed = draw(st.integers(0, 2**32))
    r = random.Random(seed)
    makers = sorted(MAKERS)

    def plant(value: Any, key: str | None) -> Any:
        if isinstance(value, str) and key not in (
            "type",
            "uuid",
            "parentUuid",
            "sessionId",
            "id",
            "tool_use_id",
            "signature",
        ):
            if r.random() < 0.3:
                text, _ = MAKERS[r.choice(makers)](r)
                return f"{value} {text} "
            return value
        if isinstance(value, dict):
            return {k: plant(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [plant(v, key) for v in value]
        return value

    planted: dict[str, Any] = plant(record, None)
    return planted


@given(st.lists(st.one_of(records_with_secrets(), record_dicts()), min_size=1, max_size=5))
@SLOW
def test_redaction_keeps_structure_and_is_idempotent(records: list[dict[str, Any]]) -> None:
    lines = [record_line(r) for r in records]
    data = b"".join(line + b"\n" for line in lines)
    out, result = redact(data)
    new_lines = out.split(b"\n")
    assert len(new_lines) == len(lines) + 1 and new_lines[-1] == b""
    for old, new in zip(lines, new_lines, strict=False):
        if old == new:
            continue
        assert same_structure(json.loads(old), json.loads(new))
    assert result.lines_changed == sum(1 for a, b in zip(lines, new_lines, strict=False) if a != b)
    again, second = redact(out)
    assert again == out
    assert second.replaced == 0


@given(jsonl_files())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_file_keeps_its_lines_and_damaged_lines_are_kept(data: bytes) -> None:
    out, result = redact(data)
    assert out.count(b"\n") == data.count(b"\n")
    assert out.endswith(b"\n") == data.endswith(b"\n")
    if result.replaced == 0:
        assert out == data  # nothing found: byte for byte
    assert redact(out)[0] == out


@given(json_values(10), st.booleans())
@settings(max_examples=150, deadline=None)
def test_json_values_that_are_not_records_pass_through(value: Any, ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode() + b"\n"
    out, _ = redact(line)
    if not isinstance(value, dict):
        assert out == line or out.count(b"\n") == 1


# -- placeholders ------------------------------------------------------------------------------

kinds = st.from_regex(r"\A[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}\Z")
fingerprints = st.text(alphabet="0123456789abcdef", min_size=8, max_size=64)
placeholders = st.builds(make_placeholder, kinds, fingerprints)
glue = st.sampled_from(
    ["", " ", "=", ": ", '="', "'", "\n", "KEY=", "password=", "DB_PASSWORD=", "Bearer ",
     "Authorization: ", "postgres://u:", "@host", "token ", "api_key: ", "export SECRET=", "\t"]
)  # fmt: skip
contexts = st.sampled_from(
    [
        PLAIN,
        ScanContext("password"),
        ScanContext("api_key"),
        ScanContext(None, SourceKind.DOTENV, "/app/.env"),
        ScanContext(None, SourceKind.CREDENTIAL_FILE, "/home/u/.aws/credentials"),
        ScanContext(None, SourceKind.SECRET_DUMP, None),
    ]
)


@given(st.lists(st.one_of(placeholders, glue, words), min_size=1, max_size=12), contexts)
@settings(max_examples=200, deadline=None)
def test_a_placeholder_never_triggers_a_detector(parts: list[str], context: ScanContext) -> None:
    text = "".join(parts)
    spans = placeholder_spans(text)
    for item in SCANNER.scan_text(text, context):
        for start, end in spans:
            assert item.hit.end <= start or item.hit.start >= end, item.hit.kind


@given(placeholders, contexts)
@settings(max_examples=40, deadline=None)
def test_a_lone_placeholder_is_never_a_finding(placeholder: str, context: ScanContext) -> None:
    for text in (placeholder, f"SECRET={placeholder}", f'"{placeholder}"', f"{placeholder}\n" * 3):
        assert SCANNER.scan_text(text, context) == ()


# -- scanning never raises ---------------------------------------------------------------------


@given(st.lists(st.binary(max_size=300), max_size=8), st.booleans())
@settings(max_examples=200, deadline=None)
def test_scanning_raw_lines_never_raises(lines: list[bytes], last_terminated: bool) -> None:
    scan = SCANNER.new_file_scan()
    offset = 0
    for number, raw_data in enumerate(lines, 1):
        data = raw_data.replace(b"\n", b" ")
        terminated = number < len(lines) or last_terminated
        result = scan.scan_raw(RawLine(number, offset, data, terminated))
        offset += len(data) + 1
        if result is not None:
            text = result.line.text() if result.line.record is None else None
            for leaf in result.leaves:
                for item in leaf.found:
                    assert 0 <= item.hit.start < item.hit.end
                    if text is not None:
                        assert item.hit.end <= len(text)


@given(st.text(max_size=400), contexts)
@settings(max_examples=200, deadline=None)
def test_scanning_any_text_never_raises(text: str, context: ScanContext) -> None:
    for item in SCANNER.scan_text(text, context):
        assert 0 <= item.hit.start < item.hit.end <= len(text)
    SCANNER.redact_text(text, context)


@given(jsonl_files())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_scanning_damaged_files_never_raises(data: bytes) -> None:
    scan = SCANNER.new_file_scan()
    offset = 0
    chunks = data.split(b"\n")
    for number, chunk in enumerate(chunks, 1):
        terminated = number < len(chunks)
        if not terminated and not chunk:
            break
        scan.scan_raw(RawLine(number, offset, chunk, terminated))
        offset += len(chunk) + 1


@given(utf8_text)
def test_redacting_plain_text_lines_is_idempotent(text: str) -> None:
    line = text.replace("\n", " ").encode()
    out, _ = redact(line + b"\n")
    assert redact(out)[0] == out
