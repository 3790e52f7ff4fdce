"""A redacted copy is made from the lines that change and the source's unchanged bytes between
them (usecases/redact.py, over usecases/parts.py): it is byte for byte, and count for count,
the line-by-line redaction of the whole stream (redaction/lines.py)."""

from __future__ import annotations

import io
import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrubber.demo import fake_github_token, fake_stripe_key
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.redaction.lines import FileKind, FileRedaction, redact_transcript_lines
from scrubber.usecases.redact import redacted_transcript
from tests.strategies import jsonl_files

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"copy-path-key-32-bytes-long!!!!!")
)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _with_secrets(data: bytes, seed: int) -> bytes:
    """`data` with lines holding fake secrets put between its lines (built at run time)."""
    rng = random.Random(seed)
    lines = data.split(b"\n")
    for _ in range(rng.randint(0, 3)):
        secret = rng.choice((fake_github_token, fake_stripe_key))(rng)
        record = {"type": "user", "message": {"role": "user", "content": f"use {secret} now"}}
        lines.insert(rng.randint(0, len(lines)), json.dumps(record).encode())
    return b"\n".join(lines)


def _counts(result: FileRedaction) -> tuple[object, ...]:
    return (
        result.lines,
        result.lines_changed,
        result.replaced,
        result.left_in_thinking,
        list(result.by_kind.items()),
        result.problems,
        len(result.values),
    )


@SETTINGS
@given(jsonl_files(), st.integers(0, 1000), st.booleans())
def test_a_copy_is_the_line_by_line_redaction(data: bytes, seed: int, thinking: bool) -> None:
    data = _with_secrets(data, seed)
    one = FileRedaction(Path("x.jsonl"), None, FileKind.TRANSCRIPT)
    expected = b"".join(
        redact_transcript_lines(io.BytesIO(data), SCANNER, one, redact_thinking=thinking)
    )
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "x.jsonl"
        source.write_bytes(data)
        copy = FileRedaction(Path("x.jsonl"), None, FileKind.TRANSCRIPT)
        with source.open("rb") as stream:
            chunks = redacted_transcript(
                stream, source, len(data), SCANNER, copy, redact_thinking=thinking
            )
            got = b"".join(chunks)
    assert got == expected
    assert _counts(copy) == _counts(one)
