"""The detached half of the UserPromptSubmit hook: mask a blocked prompt's secrets in the records
Claude Code still writes for it (`queue-operation`, the `system` "…blocked by hook… Original
prompt: …" record, `last-prompt`), in the live transcript, in place.

Only those record types are touched: they are never sent to the API and carry no thinking
signature, so rewriting them cannot break a resume. Byte-exact elsewhere
(redaction.rewrite.rewrite_json_line): only the string tokens that held a secret change. A tail
appended while the rewrite ran is folded in before the rename. The child lingers a few seconds,
because the `system` record is written after the hook has answered.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.hooks import live_common

SCRUBBED_TYPES = frozenset({"queue-operation", "system", "last-prompt"})
BLOCKED_MARK = b"blocked by hook"
LINGER_SECONDS = 10.0
POLL_SECONDS = 0.2
# Once the blocked record is scrubbed, stop after this long without a change: `last-prompt`
# can come later, at the session's end (the worker scrubs it then, as a backstop).
QUIET_SECONDS = 3.0
ENV_LINGER = "SCRUB_PROMPT_SCRUB_LINGER"


def start_scrub(transcript: str, env: Mapping[str, str]) -> str:
    """Start the detached scrub of `transcript`; returns what to log."""
    from scrubber.hooks.detach import spawn_detached
    from scrubber.hooks.session_end import Rejected, check_transcript_path

    try:
        path = check_transcript_path(transcript, paths.config_dir(env))
    except Rejected as why:
        return f"transcript not scrubbed: {why}"
    import scrubber

    home = paths.scrub_home(env)
    child_env = dict(env)
    root = str(Path(scrubber.__file__).resolve().parents[1])
    existing = child_env.get("PYTHONPATH")
    child_env["PYTHONPATH"] = root + (os.pathsep + existing if existing else "")
    argv = [sys.executable, "-m", "scrubber.hooks.user_prompt_submit", "--scrub-transcript"]
    log = home / "log" / "live-scrub.log"
    pid = spawn_detached([*argv, str(path)], child_env, log, home, home=home)
    return f"transcript scrub {pid} started"


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{index}")
    elif isinstance(value, dict):
        for key, item in value.items():
            token = str(key).replace("~", "~0").replace("/", "~1")
            yield from _strings(item, f"{pointer}/{token}")


def scrub_line(raw: bytes, scanner: Any) -> tuple[bytes, int]:
    """`raw` with the secrets of a scrubbed record type masked, and how many were."""
    from scrubber.redaction.rewrite import rewrite_json_line

    try:
        record = json.loads(raw)
    except ValueError:
        return raw, 0
    if not isinstance(record, dict) or record.get("type") not in SCRUBBED_TYPES:
        return raw, 0
    edits: dict[str, list[tuple[int, int, str]]] = {}
    for pointer, text in _strings(record, ""):
        found = scanner.scan_text(text)
        if found:
            edits[pointer] = [(f.hit.start, f.hit.end, f.placeholder) for f in found]
    if not edits:
        return raw, 0
    return rewrite_json_line(raw, edits), sum(len(e) for e in edits.values())


def scrub_transcript(path: Path, scanner: Any) -> tuple[int, bool]:
    """One pass: (secrets masked, whether the blocked-prompt record was there)."""
    with paths.open_regular(path) as stream:
        st = os.fstat(stream.fileno())
        data = stream.read()
    blocked = BLOCKED_MARK in data
    lines = data.split(b"\n")
    total = 0
    for index, raw in enumerate(lines[:-1] if not data.endswith(b"\n") else lines):
        if raw.strip():
            lines[index], count = scrub_line(raw, scanner)
            total += count
    if not total:
        return 0, blocked
    tmp = path.with_name(f".{path.name}.{os.getpid()}.scrub.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, st.st_mode & 0o777)
    try:
        os.write(fd, b"\n".join(lines))
        # Claude Code opens, appends and closes for each write: fold in what came meanwhile.
        with paths.open_regular(path) as stream:
            stream.seek(len(data))
            os.write(fd, stream.read())
        os.fsync(fd)
        os.close(fd)
        fd = -1
        tmp.replace(path)
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return total, blocked


def scrub_main(path: Path, env: Mapping[str, str]) -> int:
    """Scrub until the blocked-prompt record has been seen and the file stays quiet."""
    home = paths.scrub_home(env)
    try:
        linger = float(env.get(ENV_LINGER, "") or LINGER_SECONDS)
        scanner = live_common.build_scanner(home, live_common.load_live_settings(home))
        start = time.monotonic()
        masked = 0
        quiet_since: float | None = None
        while True:  # at least one pass, then until quiet or `linger` seconds have passed
            count, blocked = scrub_transcript(path, scanner)
            masked += count
            now = time.monotonic()
            if count or not blocked:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= QUIET_SECONDS:
                break
            if now - start >= linger:
                break
            time.sleep(POLL_SECONDS)
        live_common.log(home, "user-prompt-submit", f"transcript scrubbed: {masked} secret(s)")
    except Exception as error:
        live_common.log(home, "user-prompt-submit", live_common.describe_error(error))
    return 0
