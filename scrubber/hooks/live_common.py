"""What both live hooks share: reading the payload, the live settings compiled into
`state/live.json` (never the policy's YAML), the light live scanner, the log lines.

Never a value in a log line or on stdout/stderr: Claude Code keeps whatever a hook prints in the
transcript (an `attachment` record with the hook's stdout and stderr).
"""

from __future__ import annotations

import os
import sys

# Light on import (the hooks' fast paths read its constants): `paths` (pathlib, durable), the
# policy's model and the detection code are imported by the functions that use them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import IO, Any

    from scrubber.detection.live_prescan import Prescan
    from scrubber.policy.model import Allowlist, LivePolicy, Policy

LIVE_FILE = "live.json"
LIVE_LOG = "live.log"
ALLOWLIST_FILE = "allowlist.json"  # the status line's (status_state.ALLOWLIST_FILE)
# A tool output is at most a few MB (Claude Code persists anything over ~30 KB to a side file);
# anything larger is not a payload we understand, and reading it would cost the hook its budget.
MAX_INPUT_BYTES = 16 << 20
MAX_SIDE_FILE_BYTES = 64 << 20


def read_compiled(home: str) -> dict[str, Any] | None:
    """`state/live.json` for the hooks' fast paths (os.path, no pathlib): None when it is
    missing, not a regular file, not the user's own or writable by others (then the full path
    reads it the careful way, and a planted prescan never decides what is skipped)."""
    from scrubber.hooks.status_state import read_json

    path = os.path.join(home, "state", LIVE_FILE)  # noqa: PTH118 - see the module's imports
    try:
        st = os.stat(path, follow_symlinks=False)  # noqa: PTH116 - no pathlib here
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    data = read_json(path)
    return data if isinstance(data, dict) and data.get("live_format") == 1 else None


class Ignored(Exception):
    """The payload is not one the hook acts on; the message says why (no content in it)."""


def live_settings_file(home: Path) -> Path:
    from scrubber import paths

    return paths.state_dir(home) / LIVE_FILE


def write_live_settings(policy: Policy, home: Path) -> Path:
    """Compile `policy.live` (and the allowlist) into `state/live.json` for the live hooks,
    with the prescan of the live detectors (detection/live_prescan.py)."""
    from scrubber import paths
    from scrubber.detection.live_prescan_compile import compile_prescan
    from scrubber.detection.registry import live_detectors
    from scrubber.hooks.files import write_json_atomic
    from scrubber.policy.model import compile_live_json

    target = live_settings_file(home)
    paths.ensure_private_dir(target.parent, home)
    data = compile_live_json(policy)
    detectors = live_detectors(policy.live.detectors, policy.detection.disabled_detectors)
    try:
        data["prescan"] = compile_prescan(detectors)
    except ValueError:  # a detector outside the rule modules: no prescan, the full live scan
        data["prescan"] = None
    write_json_atomic(target, data)
    return target


class LiveSettings:
    """What the live hooks were told by the policy (defaults when nothing was compiled)."""

    __slots__ = ("allowlist", "disabled", "live", "prescan")

    def __init__(
        self,
        live: LivePolicy,
        allowlist: Allowlist,
        disabled: tuple[str, ...],
        prescan: Prescan | None = None,
    ) -> None:
        self.live = live
        self.allowlist = allowlist
        self.disabled = disabled
        self.prescan = prescan  # compiled with these settings; None: not compiled, or stale

    def may_hold_secret(self, text: str) -> bool:
        """False only when the prescan proves no live detector can match in `text`."""
        return self.prescan is None or bool(self.prescan.candidates(text))


def _read_json(path: Path) -> dict[str, Any] | None:
    """A compiled file of ours under state/, read as untrusted (scrubber/untrusted.py: never
    through a link or from a FIFO, bounded in size and depth); damaged is none. The bound is
    the one its writer and `scrub doctor` hold it to."""
    from scrubber.untrusted import MAX_STATE_BYTES, load_json

    try:
        data = load_json(path, MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):  # DamagedDocument is a ValueError
        return None
    return data if isinstance(data, dict) else None


def load_live_settings(home: Path) -> LiveSettings:
    """The compiled settings; a missing or malformed file gives the defaults (mask, pass)."""
    import contextlib

    from scrubber import paths
    from scrubber.detection.live_prescan import Prescan
    from scrubber.policy.model import (
        Allowlist,
        LivePolicy,
        PolicyValueError,
        allowlist_from_json,
        live_from_json,
    )

    data = _read_json(live_settings_file(home))
    source = data if data is not None else _read_json(paths.state_dir(home) / ALLOWLIST_FILE)
    live = LivePolicy()
    allowlist: Allowlist = Allowlist()
    disabled: tuple[str, ...] = ()
    prescan = None
    # A file someone else wrote may hold any shape: whatever it holds is the defaults.
    damaged = (PolicyValueError, ValueError, TypeError, KeyError, AttributeError)
    if data is not None:
        with contextlib.suppress(*damaged):
            live = live_from_json(data)
            prescan = Prescan.from_json(data.get("prescan"))
    if source is not None:
        with contextlib.suppress(*damaged):
            allowlist, disabled = allowlist_from_json(source)
    return LiveSettings(live, allowlist, disabled, prescan)


def build_scanner(home: Path, settings: LiveSettings) -> Any:
    """The live scanner (token rules of the light set; see registry.live_detectors)."""
    from scrubber import paths
    from scrubber.detection.fingerprint import read_or_create_key
    from scrubber.detection.registry import build_live_scanner, live_detectors

    key = read_or_create_key(paths.fingerprint_key_file(home))
    detectors = live_detectors(settings.live.detectors, settings.disabled)
    return build_live_scanner(home, key, settings.allowlist, detectors)


def read_stdin(stream: IO[bytes] | None) -> bytes:
    """The hook's stdin, bounded; raises Ignored when it is too large."""
    stream = stream if stream is not None else sys.stdin.buffer
    data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES + 1)
    check_size(data)
    return data


def check_size(data: bytes) -> None:
    """Raises Ignored when the hook's input is larger than any tool output."""
    if len(data) > MAX_INPUT_BYTES:
        raise Ignored(f"input larger than {MAX_INPUT_BYTES >> 20} MiB")


def read_payload(data: bytes, expected_event: str) -> dict[str, Any]:
    """The hook's stdin as a JSON object; raises Ignored (bad, another event)."""
    import json

    if not data.strip():
        raise Ignored("empty input")
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Ignored("input is not JSON") from None
    if not isinstance(value, dict):
        raise Ignored("input is not a JSON object")
    event = value.get("hook_event_name")
    if event is not None and event != expected_event:
        raise Ignored(f"not a {expected_event} event")
    return value


def log(home: Path, hook: str, message: str) -> None:
    import contextlib
    import time

    from scrubber.hooks.files import append_log_line

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(OSError):
        append_log_line(home / "log" / LIVE_LOG, f"{stamp} {hook}: {message}", home=home)


def describe_error(error: BaseException) -> str:
    """The type and errno only: an exception's text can quote a path or the payload."""
    detail = f" (errno {error.errno})" if isinstance(error, OSError) else ""
    return f"internal error {type(error).__name__}{detail}"


def log_masked(home: Path, record: Mapping[str, object]) -> None:
    """One line in the activity log per masked secret (kind, tool, fingerprint; no value)."""
    import contextlib
    import time

    from scrubber.activity import append_activity

    stamped = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
    with contextlib.suppress(OSError):
        append_activity(home, stamped)


def emit(answer: Mapping[str, Any], out: IO[str] | None = None) -> None:
    import json

    stream = out if out is not None else sys.stdout
    stream.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))
    stream.flush()


def env_or_os(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env
