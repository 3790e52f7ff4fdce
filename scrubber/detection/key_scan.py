"""Secrets held by JSON object keys, which redaction cannot change.

Claude Code's format fixes a record's keys (reference: "What must never change": only string
values change), yet some keys are data: `file-history-snapshot` records key their backups by
the file's path, and a path under a cwd named after a token holds the token. Such a secret
stays in every redacted copy; `verify` must not call that copy clean. The scanner walks
values only (detection/walk.py), so keys are looked at here, apart.

Only keys that can be data are scanned: at least `MIN_KEY_CHARS` characters and not letters
alone (a field name such as `trackedFileBackups` is neither a path nor a token). Iterative, so
a deeply nested record costs no recursion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scrubber.detection.detector import PLAIN
from scrubber.detection.scan import SecretScanner
from scrubber.transcript.records import json_pointer

MIN_KEY_CHARS = 12


def data_keys(record: Any) -> Iterator[tuple[str, str]]:
    """(pointer of the member, key) for every key of `record`, at any depth, that may be data
    rather than a field name."""
    todo: list[tuple[Any, tuple[str | int, ...]]] = [(record, ())]
    while todo:
        node, path = todo.pop()
        if isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(key, str) and len(key) >= MIN_KEY_CHARS and not key.isalpha():
                    yield json_pointer(*path, key), key
                if isinstance(item, Mapping | list):
                    todo.append((item, (*path, key)))
        elif isinstance(node, list):
            todo.extend((item, (*path, i)) for i, item in enumerate(node))


def secrets_in_keys(record: Any, scanner: SecretScanner) -> list[tuple[str, int]]:
    """(pointer of the member, secrets found in its key) for the keys of `record` that hold
    secrets."""
    found: list[tuple[str, int]] = []
    for pointer, key in data_keys(record):
        secrets = scanner.scan_text(key, PLAIN)
        if secrets:
            found.append((pointer, len(secrets)))
    return found
