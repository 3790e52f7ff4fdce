"""`gather_session_values`: the values of a session's files other than its transcripts, and of
its history.jsonl lines, for that session only; links, binary files and other sessions' lines
left out. Real files, the real scanner; fake values built at run time."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from scrubber.demo import fake_aws_secret_key
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.known_values import KnownValues
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.usecases.session_values import (
    gather_session_values,
    gather_stream_values,
    history_file,
)

SCANNER = SecretScanner(
    build_detectors(Policy.default()), Fingerprinter(b"session-values-key-of-32-bytes!!")
)
SESSION = "0a0a0a0a-0000-4000-8000-000000000012"
OTHER = "0b0b0b0b-0000-4000-8000-000000000012"
PROJECT = "-home-u-app"


def _values(known: KnownValues) -> dict[str, frozenset[str]]:
    return {value: scopes for value, _, scopes in known.items()}


def _named(value: str) -> str:
    return f"export AWS_SECRET_ACCESS_KEY={value}\n"


def test_side_files_and_own_history_lines_count_links_binaries_and_others_do_not(
    tmp_path: Path,
) -> None:
    rng = random.Random(12)
    snapshot, todo, typed, other, linked, binary, in_transcript = (
        fake_aws_secret_key(rng) for _ in range(7)
    )
    config = tmp_path / "config"
    project = config / "projects" / PROJECT
    (project / SESSION / "tool-results").mkdir(parents=True)
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": _named(in_transcript)}) + "\n")
    (config / "file-history" / SESSION).mkdir(parents=True)
    (config / "file-history" / SESSION / "abc@v1").write_text(_named(snapshot))
    (config / "todos").mkdir()
    (config / "todos" / f"{SESSION}-agent-{SESSION}.json").write_text(_named(todo))
    outside = tmp_path / "outside.env"
    outside.write_text(_named(linked))
    (project / SESSION / "tool-results" / "link.txt").symlink_to(outside)
    (project / SESSION / "tool-results" / "blob.bin").write_bytes(b"\0" + _named(binary).encode())
    history = config / "history.jsonl"
    lines = [
        {"display": _named(typed), "sessionId": SESSION, "timestamp": 1},
        {"display": _named(other), "sessionId": OTHER, "timestamp": 2},
    ]
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))

    known = KnownValues()
    gather_session_values(
        known,
        SCANNER,
        root=config,
        project=PROJECT,
        session_id=SESSION,
        skip=(transcript,),
        history=history_file(config),
    )

    session_only = frozenset({SESSION})
    assert _values(known) == {snapshot: session_only, todo: session_only, typed: session_only}


def test_a_text_stream_and_a_jsonl_stream_both_give_their_values() -> None:
    rng = random.Random(13)
    value = fake_aws_secret_key(rng)
    known = KnownValues()
    gather_stream_values(known, SCANNER, "notes.txt", io.BytesIO(_named(value).encode()), SESSION)
    line = json.dumps({"type": "user", "message": {"role": "user", "content": _named(value)}})
    jsonl = KnownValues()
    gather_stream_values(jsonl, SCANNER, "agent.jsonl", io.BytesIO(line.encode()), SESSION)
    assert _values(known) == {value: frozenset({SESSION})}
    assert _values(jsonl) == {value: frozenset({SESSION})}
