"""The install record (`$SCRUB_HOME/state/install.json`): what an install changed, so that
uninstall can undo exactly that (the original settings, the status line we wrapped, the
cleanup period we raised, the schedule, the launchers and the interpreter)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scrubber import __version__, paths
from scrubber.durable import atomic_write
from scrubber.untrusted import MAX_STATE_BYTES, load_json

RECORD_NAME = "install.json"


RECORD_FORMAT = 1


def record_file(home: Path) -> Path:
    return paths.state_dir(home) / RECORD_NAME


def read_record(home: Path) -> dict[str, Any]:
    try:
        # Bounded, never blocking, never through a link: the record may have been planted.
        data = load_json(record_file(home), MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == RECORD_FORMAT else {}


def write_record(home: Path, record: Mapping[str, Any]) -> Path:
    target = record_file(home)
    paths.ensure_private_dir(target.parent)
    body = {"format": RECORD_FORMAT, "version": __version__, **record}
    atomic_write(target, [(json.dumps(body, indent=2) + "\n").encode()], mode=0o600)
    return target


def remove_record(home: Path) -> None:
    record_file(home).unlink(missing_ok=True)
