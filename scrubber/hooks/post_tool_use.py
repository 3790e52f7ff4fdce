"""Claude Code PostToolUse hook: secrets in a tool's output never reach the model, the API or
the transcript.

Claude Code (2.1.332, /work/shared/reference/claude-code.md) replaces the output everywhere
(the `tool_result` sent to the model, the one stored in the transcript, `toolUseResult`) with the
`updatedToolOutput` a hook prints, when it has the original's shape. So: find the secrets in
`tool_response` with the live scanner, and print the same object with each secret replaced by
its placeholder; print nothing when there is none.

What this hook cannot change:
- An output over ~30 KB was already written in full to `<session>/tool-results/<id>.txt` before
  the hook runs (`tool_response.persistedOutputPath`): the hook rewrites that file at once
  (atomically, 0600, only a regular file inside the session's own folder).
- A command that fails fires PostToolUseFailure, where a replacement changes nothing: its
  output reaches the model unchanged. SessionEnd's audit (and redaction, when the policy asks
  for it) covers those records afterwards.

Exits 0 on any input; never prints or logs a value.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from scrubber import paths
from scrubber.hooks import live_common
from scrubber.hooks.live_common import Ignored, LiveSettings
from scrubber.policy.model import LiveMode, LiveOnError

# The use case (and with it the detection code) is imported only when the quick gate
# (live_gate.py) says the payload may hold a secret: most calls never pay for it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.usecases.live import Masked

HOOK = "post-tool-use"
EVENT = "PostToolUse"


def _answer(output: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "updatedToolOutput": output}}


def side_file(payload: Mapping[str, Any], response: Any, config: Path) -> Path | None:
    """The persisted output file the payload names, when it is a regular file inside the
    session's own folder (`projects/<p>/<session>/`); None when there is none; raises Ignored
    when it is somewhere else (never rewrite what a payload merely names)."""
    if not isinstance(response, dict):
        return None
    named = response.get("persistedOutputPath")
    if not isinstance(named, str) or not named:
        return None
    transcript = payload.get("transcript_path")
    session = payload.get("session_id")
    if not isinstance(transcript, str) or not isinstance(session, str) or "/" in session:
        raise Ignored("persistedOutputPath without a transcript_path and session_id")
    folder = os.path.realpath(Path(transcript).parent / session)
    projects = os.path.realpath(paths.projects_dir(config))
    real = os.path.realpath(named)
    if os.path.commonpath([projects, folder]) != projects:
        raise Ignored("transcript_path is outside the config directory's projects/")
    if os.path.commonpath([folder, real]) != folder or real == folder:
        raise Ignored("persistedOutputPath is outside the session's folder")
    try:
        st = os.lstat(named)
    except FileNotFoundError:
        raise Ignored("persistedOutputPath names a missing file") from None
    if not stat.S_ISREG(st.st_mode):
        raise Ignored("persistedOutputPath is not a regular file")
    return Path(real)


def rewrite_side_file(path: Path, scanner: Any) -> tuple[Masked, ...]:
    """Mask the secrets of a persisted output in place: temp file, 0600, fsync, rename."""
    from scrubber.durable import atomic_write
    from scrubber.usecases.live import mask_text

    with paths.open_regular(path, follow=False) as stream:
        st = os.fstat(stream.fileno())
        if st.st_size > live_common.MAX_SIDE_FILE_BYTES:
            raise Ignored("persisted output larger than the hook reads")
        data = stream.read()
    text = data.decode("utf-8", errors="surrogateescape")
    new, masked = mask_text(text, scanner)
    if masked:
        encoded = new.encode("utf-8", errors="surrogateescape")
        atomic_write(path, [encoded], mode=0o600, mtime_ns=st.st_mtime_ns)
    return masked


def _record(payload: Mapping[str, Any], item: Masked, where: str, mode: LiveMode) -> dict[str, Any]:
    session = payload.get("session_id")
    call = payload.get("tool_use_id")
    return {
        "component": "live",
        "event": "masked" if mode is LiveMode.MASK else "seen",
        "hook": HOOK,
        "tool": str(payload.get("tool_name"))[:80],
        "tool_use_id": call if isinstance(call, str) else None,
        "session_id": session if isinstance(session, str) else None,
        "where": where,
        "kind": item.kind,
        "detector": item.detector,
        "fingerprint": item.fingerprint,
    }


def scans_tool(name: object) -> bool:
    from scrubber.usecases.live import scans_tool as scans

    return scans(name)


def mask_tool_output(value: Any, scanner: Any) -> Any:
    from scrubber.usecases.live import mask_tool_output as mask

    return mask(value, scanner)


def run(
    payload: Mapping[str, Any],
    env: Mapping[str, str],
    settings: LiveSettings,
    data: bytes | None = None,
) -> Any:
    """The replacement output to print, or None. Raises Ignored. `data`: the raw payload, for
    the quick gate."""
    home = paths.scrub_home(env)
    mode = settings.live.post_tool_use
    if mode is LiveMode.OFF:
        raise Ignored("live.post_tool_use is off")
    tool = payload.get("tool_name")
    response = payload.get("tool_response")
    side_named = isinstance(response, dict) and "persistedOutputPath" in response
    if data is not None and not side_named and not settings.may_hold_secret(data):
        return None  # no live detector can match anywhere in it
    if not scans_tool(tool):
        raise Ignored(f"tool {str(tool)[:40]!r} is not one whose output is scanned")
    if "tool_response" not in payload:
        raise Ignored("no tool_response")
    response = payload["tool_response"]
    if not isinstance(response, str | list | dict):
        raise Ignored("tool_response of an unknown shape")
    scanner = live_common.build_scanner(home, settings)
    found: list[tuple[Masked, str]] = []
    try:
        side = side_file(payload, response, paths.config_dir(env))
    except Ignored as why:
        live_common.log(home, HOOK, f"side file left alone: {why}")
        side = None
    if side is not None:
        side_masked = rewrite_side_file(side, scanner) if mode is LiveMode.MASK else ()
        found.extend((m, "persisted-output") for m in side_masked)
    result = mask_tool_output(response, scanner)
    found.extend((m, "tool_response") for m in result.masked)
    for item, where in found:
        live_common.log_masked(home, _record(payload, item, where, mode))
    if found:
        live_common.log(home, HOOK, f"{tool}: {len(found)} secret(s) {mode.value}ed")
    return result.value if result.changed and mode is LiveMode.MASK else None


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Entry point of the shim and of `scrub hook post-tool-use`: always returns 0."""
    environment = live_common.env_or_os(env)
    home = paths.scrub_home(environment)
    settings = live_common.load_live_settings(home)
    payload: Mapping[str, Any] = {}
    try:
        data = live_common.read_stdin(stdin)
        payload = live_common.read_payload(data, EVENT)
        output = run(payload, environment, settings, data)
        if output is not None:
            live_common.emit(_answer(output), stdout)
    except Ignored as why:
        live_common.log(home, HOOK, f"passed through: {why}")
    except Exception as error:  # a hook must never fail Claude Code
        _failed(home, settings, payload, error, stdout)
    return 0


def _failed(
    home: Path,
    settings: LiveSettings,
    payload: Mapping[str, Any],
    error: BaseException,
    stdout: IO[str] | None,
) -> None:
    blocking = settings.live.on_error is LiveOnError.BLOCK and "tool_response" in payload
    live_common.log(
        home,
        HOOK,
        f"{live_common.describe_error(error)}; output "
        + ("withheld (live.on_error: block)" if blocking else "passed through unchanged"),
    )
    if blocking:
        from scrubber.usecases.live import withhold_tool_output

        with contextlib.suppress(Exception):  # nothing more a hook can do
            live_common.emit(_answer(withhold_tool_output(payload["tool_response"])), stdout)


if __name__ == "__main__":
    sys.exit(main())
