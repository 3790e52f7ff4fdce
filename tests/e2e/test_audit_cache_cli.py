"""`scrub audit` and its scan cache, through the CLI: the cache it writes, what the next audit
answers from it, and `--no-cache`."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrubber.demo import DemoManifest


def _report(result: Any) -> dict[str, Any]:
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_audit_writes_a_private_cache_and_answers_the_same_from_it(
    demo_config: Path,
    sandbox: Any,
    scrub_cli: Callable[..., Any],
    demo_secrets: DemoManifest,
) -> None:
    home = Path(sandbox.scrub_home)
    first = scrub_cli("audit", "--format", "json")
    assert first.returncode == 1, first.stderr[-400:]
    folder = home / "state" / "scan-cache"
    shards = sorted(folder.glob("*.json"))
    assert shards, "the audit wrote no scan cache"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(s.stat().st_mode) == 0o600 for s in shards)
    blob = b"".join(s.read_bytes() for s in shards)
    for secret in demo_secrets.secrets:
        assert secret.value.encode() not in blob, secret.kind
    stamps = {s: s.stat().st_mtime_ns for s in shards}
    second = scrub_cli("audit", "--format", "json")
    assert _report(second)["findings"] == _report(first)["findings"]
    assert {s: s.stat().st_mtime_ns for s in shards} == stamps  # nothing changed: not rewritten
    # A transcript that grew: its shard is rewritten, the report is a full scan's.
    transcript = max(demo_config.glob("projects/*/*.jsonl"), key=lambda p: p.stat().st_size)
    with transcript.open("ab") as out:
        out.write(b'{"type":"system","content":"appended later"}\n')
    grown = scrub_cli("audit", "--format", "json")
    forced = scrub_cli("audit", "--format", "json", "--no-cache")
    assert _report(grown)["findings"] == _report(forced)["findings"]
    assert _report(grown)["sessions"] == _report(forced)["sessions"]
    assert any(s.stat().st_mtime_ns != stamps[s] for s in shards)
    shards[0].chmod(0o644)  # open to others: ignored, and written afresh
    again = scrub_cli("audit", "--format", "json")
    assert _report(again)["findings"] == _report(forced)["findings"]
    assert stat.S_IMODE(shards[0].stat().st_mode) == 0o600
