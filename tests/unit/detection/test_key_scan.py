"""Secrets in JSON object keys: found apart from the values (no redaction may change a key),
and a copy that still holds one is not verified."""

from __future__ import annotations

import json
import random
from pathlib import Path

from scrubber.demo import fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.key_scan import data_keys, secrets_in_keys
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.transcript.jsonl import RawLine
from scrubber.usecases.verify import check_redacted

SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(b"k" * 32))


def _snapshot(path_key: str) -> dict[str, object]:
    # What Claude Code writes: the backups of a turn, keyed by each file's path.
    backups = {path_key: {"backupFileName": "abc@v1", "version": 1}}
    return {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {
        "messageId": "u1", "trackedFileBackups": backups}}  # fmt: skip


def test_a_path_key_under_a_token_named_folder_is_a_secret() -> None:
    token = fake_github_token(random.Random(3))
    record = _snapshot(f"/home/me/{token}/app/README.md")
    # The object that holds the key: a member's pointer would spell the token out.
    assert secrets_in_keys(record, SCANNER) == [("/snapshot/trackedFileBackups", 1)]


def test_field_names_and_short_keys_are_not_read() -> None:
    record = {"trackedFileBackups": {"a/b": 1}, "isCompactSummary": True, "x": [{"y_1": 2}]}
    assert list(data_keys(record)) == []


def test_deep_nesting_costs_no_recursion() -> None:
    token = fake_github_token(random.Random(4))
    record: dict[str, object] = {f"key-{token}": 1}
    for _ in range(5000):
        record = {"n": [record]}
    assert len(secrets_in_keys(record, SCANNER)) == 1


def test_verify_fails_on_a_secret_left_in_a_key(tmp_path: Path) -> None:
    token = fake_github_token(random.Random(5))
    path = tmp_path / "copy.jsonl"
    clean = _snapshot("/home/me/app/README.md")
    path.write_text(json.dumps(clean) + "\n" + json.dumps(_snapshot(f"/w/{token}/x.py")) + "\n")
    result = check_redacted(path, SCANNER, None)
    assert (result.findings, result.findings_in_keys, result.key_lines) == (0, 1, [2])
    assert not result.ok
    path.write_text(json.dumps(clean) + "\n")
    assert check_redacted(path, SCANNER, None).ok


def _audit_line(record: dict[str, object]) -> list[tuple[str | None, bool]]:
    data = json.dumps(record).encode()
    scan = SCANNER.new_file_scan().scan_raw(RawLine(1, 0, data, True))
    if scan is None:
        return []  # no gate woke on the line: nothing is read
    return [(leaf.pointer, True) for leaf in scan.key_leaves] + [
        (leaf.pointer, False) for leaf in scan.leaves
    ]


def test_the_scan_reports_a_token_held_by_a_key_and_names_only_its_object() -> None:
    token = fake_github_token(random.Random(6))
    record = {"type": "user", "toolUseResult": {"owners": {token: "me"}}}
    assert _audit_line(record) == [("/toolUseResult/owners", True)]


def test_one_token_in_a_value_and_in_a_key_is_found_in_both() -> None:
    token = fake_github_token(random.Random(7))
    record = {"type": "user", "toolUseResult": {"stdout": f"GH={token}", f"k-{token}": 1}}
    # Found in a string, the token still says nothing of the keys: they are read too.
    assert _audit_line(record) == [("/toolUseResult", True), ("/toolUseResult/stdout", False)]
    # No token pattern's literal woke: the keys are not walked (they cost a walk of the record).
    assert _audit_line({"type": "user", "toolUseResult": {"cache_read_tokens_1": 2}}) == []
