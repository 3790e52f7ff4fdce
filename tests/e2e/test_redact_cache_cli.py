"""`scrub redact --all` and its redaction cache, through the CLI: the second run writes nothing
and says the same, a changed session is redone, `--no-cache` writes every copy again, and the
cache holds no value."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrubber.demo import DemoManifest


def _copies(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Each copy's bytes, inode and ctime (a rewrite changes one of the two)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            found[path.relative_to(root).as_posix()] = (
                path.read_bytes(),
                st.st_ino,
                st.st_ctime_ns,
            )
    return found


def test_redact_all_twice_writes_once(
    demo_config: Path,
    sandbox: Any,
    scrub_cli: Callable[..., Any],
    demo_secrets: DemoManifest,
) -> None:
    home = Path(sandbox.scrub_home)
    first = scrub_cli("redact", "--all", "--format", "json")
    assert first.returncode == 0, first.stderr[-400:]
    dest = home / "redacted"
    written = _copies(dest)
    assert written
    second = scrub_cli("redact", "--all", "--format", "json")
    assert second.returncode == 0, second.stderr[-400:]
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert _copies(dest) == written  # same bytes, and not one file written again
    folder = home / "state" / "redact-cache"
    [cache] = folder.glob("*.json")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    blob = cache.read_bytes()
    for secret in demo_secrets.secrets:
        assert secret.value.encode() not in blob, secret.kind
    # A session that changed is redone; the others stay as they were.
    transcript = next(demo_config.glob("projects/-home-demo-work-shop-api/896642b1-*.jsonl"))
    with transcript.open("ab") as out:
        out.write(b'{"type":"system","content":"more"}\n')
    third = scrub_cli("redact", "--all")
    assert third.returncode == 0, third.stderr[-400:]
    now = _copies(dest)
    changed = {name for name in written if now[name][1:] != written[name][1:]}
    assert changed == {transcript.relative_to(demo_config).as_posix()}
    # --no-cache: every copy written again.
    fourth = scrub_cli("redact", "--all", "--no-cache")
    assert fourth.returncode == 0, fourth.stderr[-400:]
    again = _copies(dest)
    assert {name: v[0] for name, v in again.items()} == {name: v[0] for name, v in now.items()}
    assert all(again[name][1:] != now[name][1:] for name in now)


def test_redact_help_shows_no_cache(scrub_cli: Callable[..., Any]) -> None:
    shown = scrub_cli("redact", "--help")
    assert shown.returncode == 0
    assert "--no-cache" in shown.stdout and "scrub redact --all --no-cache" in shown.stdout
