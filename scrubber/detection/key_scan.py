"""Secrets held by JSON object keys, which redaction cannot change.

Claude Code's format fixes a record's keys (reference: "What must never change": only string
values change), yet some keys are data: `file-history-snapshot` records key their backups by
the file's path, and a path under a cwd named after a token holds the token. Such a secret
stays in every redacted copy; `verify` must not call that copy clean. The scanner walks
values only (detection/walk.py), so keys are looked at here, apart: by `verify` in every
record, and by the scan itself (scan.py) where a token detector woke on a line and found
nothing in its strings.

Only keys that can be data are scanned: at least `MIN_KEY_CHARS` characters and not letters
alone (a field name such as `trackedFileBackups` is neither a path nor a token). Iterative, so
a deeply nested record costs no recursion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scrubber.detection.detector import PLAIN
from scrubber.transcript.records import json_pointer

if TYPE_CHECKING:  # scan.py calls this module: a run-time import would be circular
    from scrubber.detection.scan import FoundSecret, SecretScanner

MIN_KEY_CHARS = 12


def data_keys(record: Any) -> Iterator[tuple[str, str]]:
    """(pointer of the object, key) for every key of `record`, at any depth, that may be data
    rather than a field name. The pointer names the object that holds the key, never the
    member: a member's pointer spells its key out, and a key that holds a secret must not be
    printed as a finding's place."""
    # Parsed JSON holds its objects as dicts: `isinstance(…, dict)`, not the `Mapping` ABC,
    # whose check costs ten times as much on every node walked.
    todo: list[tuple[Any, tuple[str | int, ...]]] = [(record, ())]
    while todo:
        node, path = todo.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str) and len(key) >= MIN_KEY_CHARS and not key.isalpha():
                    yield json_pointer(*path), key
                if isinstance(item, dict | list):
                    todo.append((item, (*path, key)))
        elif isinstance(node, list):
            todo.extend((item, (*path, i)) for i, item in enumerate(node))


def found_in_keys(
    record: Any, scanner: SecretScanner, woken: frozenset[int] | None = None
) -> list[tuple[str, str, tuple[FoundSecret, ...]]]:
    """(pointer of the object, key, what the scanner found in the key) for the keys of
    `record` that hold secrets; `woken`: the detectors the record's raw line woke, if known."""
    found: list[tuple[str, str, tuple[FoundSecret, ...]]] = []
    for pointer, key in data_keys(record):
        secrets = scanner.scan_text(key, PLAIN, woken)
        if secrets:
            found.append((pointer, key, secrets))
    return found


def secrets_in_keys(record: Any, scanner: SecretScanner) -> list[tuple[str, int]]:
    """(pointer of the object, secrets found in its key) for the keys of `record` that hold
    secrets."""
    return [(pointer, len(secrets)) for pointer, _, secrets in found_in_keys(record, scanner)]
