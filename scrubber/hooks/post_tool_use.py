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

Two paths. The fast one (`_fast`) reads `state/live.json` and runs its prescan
(detection/live_prescan.py) on the output's strings (and the side file): most outputs are
answered there, with nothing imported but the prescan; one it cannot clear is masked by the
light scanner of its candidates (detection/live_scan.py). Anything else (no compiled or a stale
prescan, live mode off, bad input, a side file that may hold a secret, an error) goes to the
full path (`_full`), which loads the settings the careful way, scans with the whole live set,
and logs why it passed anything through.

Exits 0 on any input; never prints or logs a value.
"""

from __future__ import annotations

# os.path, not pathlib, on the fast path: importing pathlib costs more than the prescan of a
# 100 KB output.
# ruff: noqa: PTH118, PTH120
import os
import stat
import sys

from scrubber.detection.live_prescan import Prescan, scans_tool, tool_output_strings
from scrubber.hooks.live_common import MAX_INPUT_BYTES, MAX_SIDE_FILE_BYTES, read_compiled
from scrubber.hooks.status_state import config_dir, loads, scrub_home

# The detection code, the policy's model and the use case are imported only when the prescan
# (detection/live_prescan.py) could not rule a secret out: most calls never pay for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import IO, Any

    from scrubber.hooks.live_common import LiveSettings
    from scrubber.usecases.live import Masked, TextScanner

HOOK = "post-tool-use"
EVENT = "PostToolUse"


class SideFileRefused(ValueError):
    """The payload names a persisted output the hook must not touch; the message says why."""


def _answer(output: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "updatedToolOutput": output}}


def side_file(payload: Mapping[str, Any], response: Any, config: str) -> str | None:
    """The persisted output file the payload names, when it is a regular file inside the
    session's own folder (`projects/<p>/<session>/`); None when there is none; raises
    SideFileRefused when it is somewhere else (never rewrite what a payload merely names)."""
    if not isinstance(response, dict):
        return None
    named = response.get("persistedOutputPath")
    if not isinstance(named, str) or not named:
        return None
    transcript = payload.get("transcript_path")
    session = payload.get("session_id")
    if not isinstance(transcript, str) or not isinstance(session, str) or "/" in session:
        raise SideFileRefused("persistedOutputPath without a transcript_path and session_id")
    folder = os.path.realpath(os.path.join(os.path.dirname(transcript), session))
    projects = os.path.realpath(os.path.join(config, "projects"))
    real = os.path.realpath(named)
    if os.path.commonpath([projects, folder]) != projects:
        raise SideFileRefused("transcript_path is outside the config directory's projects/")
    if os.path.commonpath([folder, real]) != folder or real == folder:
        raise SideFileRefused("persistedOutputPath is outside the session's folder")
    try:
        st = os.lstat(named)
    except FileNotFoundError:
        raise SideFileRefused("persistedOutputPath names a missing file") from None
    if not stat.S_ISREG(st.st_mode):
        raise SideFileRefused("persistedOutputPath is not a regular file")
    return real


def _read_side_file(path: str) -> tuple[str, os.stat_result]:
    """A persisted output's text (surrogate escapes keep its bytes) and its stat."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as stream:
        st = os.fstat(stream.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SideFileRefused("persistedOutputPath is not a regular file")
        if st.st_size > MAX_SIDE_FILE_BYTES:
            raise SideFileRefused("persisted output larger than the hook reads")
        data = stream.read(MAX_SIDE_FILE_BYTES + 1)
    return data.decode("utf-8", errors="surrogateescape"), st


def rewrite_side_file(path: str, scanner: TextScanner) -> tuple[Masked, ...]:
    """Mask the secrets of a persisted output in place: temp file, 0600, fsync, rename."""
    from pathlib import Path

    from scrubber.durable import atomic_write
    from scrubber.usecases.live import mask_text

    text, st = _read_side_file(path)
    new, masked = mask_text(text, scanner)
    if masked:
        encoded = new.encode("utf-8", errors="surrogateescape")
        atomic_write(Path(path), [encoded], mode=0o600, mtime_ns=st.st_mtime_ns)
    return masked


def _record(payload: Mapping[str, Any], item: Masked, where: str, mode: str) -> dict[str, Any]:
    session = payload.get("session_id")
    call = payload.get("tool_use_id")
    return {
        "component": "live",
        "event": "masked" if mode == "mask" else "seen",
        "hook": HOOK,
        "tool": str(payload.get("tool_name"))[:80],
        "tool_use_id": call if isinstance(call, str) else None,
        "session_id": session if isinstance(session, str) else None,
        "where": where,
        "kind": item.kind,
        "detector": item.detector,
        "fingerprint": item.fingerprint,
    }


def _mask(
    payload: Mapping[str, Any],
    response: Any,
    home: str,
    scanner: TextScanner,
    mode: str,
    side: str | None,
) -> Any:
    """Mask `response` (and rewrite the side file, in mask mode), log every secret found;
    the replacement to print, or None."""
    from pathlib import Path

    from scrubber.hooks import live_common

    found: list[tuple[Masked, str]] = []
    if side is not None and mode == "mask":
        try:
            found.extend((m, "persisted-output") for m in rewrite_side_file(side, scanner))
        except SideFileRefused as why:
            live_common.log(Path(home), HOOK, f"side file left alone: {why}")
    result = mask_tool_output(response, scanner)
    found.extend((m, "tool_response") for m in result.masked)
    for item, where in found:
        live_common.log_masked(Path(home), _record(payload, item, where, mode))
    if found:
        tool = payload.get("tool_name")
        live_common.log(Path(home), HOOK, f"{tool}: {len(found)} secret(s) {mode}ed")
    return result.value if result.changed and mode == "mask" else None


def mask_tool_output(value: Any, scanner: TextScanner) -> Any:
    from scrubber.usecases.live import mask_tool_output as mask

    return mask(value, scanner)


# -- the fast path: compiled settings and the prescan, no policy, no scanner index -------------


def _fast(data: bytes, env: Mapping[str, str], stdout: IO[str] | None) -> bool:
    """Answer the call from `state/live.json` and the prescan; False when the full path must
    (no compiled or a stale prescan, live mode off, bad input, a side file that may hold a
    secret): it decides, and logs why."""
    home = scrub_home(env)
    live = read_compiled(home)
    if live is None:
        return False
    mode = live.get("post_tool_use")
    if mode not in ("mask", "warn"):
        return False
    prescan = Prescan.from_json(live.get("prescan"))
    if prescan is None or not data.strip():
        return False
    payload = loads(data)
    if not isinstance(payload, dict) or payload.get("hook_event_name", EVENT) != EVENT:
        return False
    response = payload.get("tool_response")
    if not scans_tool(payload.get("tool_name")) or not isinstance(response, str | list | dict):
        return False
    side = side_file(payload, response, config_dir(env))
    if side is not None and prescan.candidates(_read_side_file(side)[0]):
        return False  # the full path rewrites it
    if not any(prescan.candidates(text) for text in tool_output_strings(response)):
        return True  # no live detector can match anywhere in it
    output = _mask(payload, response, home, _live_scanner(home, live, prescan), mode, None)
    if output is not None:
        _emit(_answer(output), stdout)
    return True


def _live_scanner(home: str, live: Mapping[str, Any], prescan: Prescan) -> TextScanner:
    """The scanner of the prescan's candidates, with the allowlist the installer compiled (the
    policy's model is imported only when there is one)."""
    from pathlib import Path

    from scrubber.detection.fingerprint import Fingerprinter, read_or_create_key
    from scrubber.detection.live_scan import LiveScanner

    allowlist = None
    if live.get("patterns") or live.get("fingerprints"):
        from scrubber.policy.model import allowlist_from_json

        allowlist, _ = allowlist_from_json(live)
    key = read_or_create_key(Path(home) / "fingerprint.key")
    return LiveScanner(prescan, Fingerprinter(key), allowlist)


def _emit(answer: Mapping[str, Any], out: IO[str] | None) -> None:
    import json

    stream = out if out is not None else sys.stdout
    stream.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))
    stream.flush()


# -- the full path --------------------------------------------------------------------------


def run(payload: Mapping[str, Any], env: Mapping[str, str], settings: LiveSettings) -> Any:
    """The replacement output to print, or None. Raises Ignored."""
    from pathlib import Path

    from scrubber.hooks import live_common
    from scrubber.hooks.live_common import Ignored
    from scrubber.policy.model import LiveMode

    home = scrub_home(env)
    mode = settings.live.post_tool_use
    if mode is LiveMode.OFF:
        raise Ignored("live.post_tool_use is off")
    tool = payload.get("tool_name")
    if not scans_tool(tool):
        raise Ignored(f"tool {str(tool)[:40]!r} is not one whose output is scanned")
    if "tool_response" not in payload:
        raise Ignored("no tool_response")
    response = payload["tool_response"]
    if not isinstance(response, str | list | dict):
        raise Ignored("tool_response of an unknown shape")
    try:
        side = side_file(payload, response, config_dir(env))
    except ValueError as why:  # SideFileRefused, or paths commonpath cannot compare
        live_common.log(Path(home), HOOK, f"side file left alone: {why}")
        side = None
    scanner = live_common.build_scanner(Path(home), settings)
    return _mask(payload, response, home, scanner, mode.value, side)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Entry point of the shim and of `scrub hook post-tool-use`: always returns 0."""
    environment = os.environ if env is None else env
    data: bytes | None = None
    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES + 1)
    except Exception:  # noqa: S110 - the full path reads nothing more, and logs
        pass
    if data is not None and len(data) <= MAX_INPUT_BYTES:
        try:
            if _fast(data, environment, stdout):
                return 0
        except Exception:  # noqa: S110 - the full path decides, and logs
            pass
    return _full(data, environment, stdout)


def _full(data: bytes | None, env: Mapping[str, str], stdout: IO[str] | None) -> int:
    from pathlib import Path

    from scrubber.hooks import live_common
    from scrubber.hooks.live_common import Ignored

    home = Path(scrub_home(env))
    settings = live_common.load_live_settings(home)
    payload: Mapping[str, Any] = {}
    try:
        if data is None:
            raise Ignored("stdin could not be read")
        live_common.check_size(data)
        payload = live_common.read_payload(data, EVENT)
        output = run(payload, env, settings)
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
    from scrubber.hooks import live_common
    from scrubber.policy.model import LiveOnError

    blocking = settings.live.on_error is LiveOnError.BLOCK and "tool_response" in payload
    live_common.log(
        home,
        HOOK,
        f"{live_common.describe_error(error)}; output "
        + ("withheld (live.on_error: block)" if blocking else "passed through unchanged"),
    )
    if blocking:
        import contextlib

        from scrubber.usecases.live import withhold_tool_output

        with contextlib.suppress(Exception):  # nothing more a hook can do
            live_common.emit(_answer(withhold_tool_output(payload["tool_response"])), stdout)


if __name__ == "__main__":
    sys.exit(main())
