"""The status line's state, as plain strings: where its files are, how to read them, what is
current, and how a state is shown. Shared by the fast path (which must start in milliseconds),
the full status line, the spool and the hook files, so that none of them imports another.

This module imports nothing but `os` and `scrubber.__version__`: not `json` (which pulls in
`re`), not `pathlib` (`re`, `urllib.parse`, `fnmatch`), not `dataclasses` (`inspect`). JSON is
read with CPython's C scanner (`_json`), the one `json` itself uses.

The rules for where files are (`CLAUDE_CONFIG_DIR`, `SCRUB_HOME`) mirror `scrubber.paths` in
plain strings; a test keeps the two in step.
"""

from __future__ import annotations

# os.path, not pathlib, throughout: importing pathlib costs the fast path more than its work.
# ruff: noqa: PTH111, PTH116, PTH117, PTH118
import os

from scrubber import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

STATE_FORMAT = 1
RED = "\x1b[31m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"
SHOWN_KINDS = 3
CATCH_UP_SHOWN = 1 << 20  # unscanned bytes above which the segment says "catching up"
ALLOWLIST_FILE = "allowlist.json"
STATE_FOLDER = "status-line"
MAX_INPUT_BYTES = 1 << 20
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def wants_color(env: Mapping[str, str]) -> bool:
    """No ANSI colours when `NO_COLOR` is set to anything but the empty string (no-color.org)."""
    return not env.get("NO_COLOR")


def plain_word(value: object) -> bool:
    """Claude Code's SessionEnd reasons are words (`clear`, `logout`, `prompt_input_exit`);
    anything else would go into the hook log, the job and the activity log as it came: a line
    break forging log lines, a terminal escape for whoever reads them, a pasted token."""
    return isinstance(value, str) and 0 < len(value) <= 64 and all(c in _ID_CHARS for c in value)


def valid_session_id(value: object) -> bool:
    """Claude Code's session ids are uuids; a few more characters are allowed for future
    shapes, but never a path separator, a leading dot or `..`: the id becomes a file name."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 128
        and value[0].isascii()
        and value[0].isalnum()
        and ".." not in value
        and all(c in _ID_CHARS for c in value)
    )


# -- where files are (scrubber.paths, as strings) ------------------------------------------


def config_dir(env: Mapping[str, str]) -> str:
    configured = env.get("CLAUDE_CONFIG_DIR", "")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


def scrub_home(env: Mapping[str, str]) -> str:
    configured = env.get("SCRUB_HOME", "")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(config_dir(env), "scrubber")


def transcript_in_projects(value: object, config: str) -> str | None:
    """`value` when it is a `.jsonl` path under the config dir's `projects/`, else None."""
    if not isinstance(value, str) or not value.endswith(".jsonl") or not os.path.isabs(value):
        return None
    root = os.path.realpath(os.path.join(config, "projects"))
    real = os.path.realpath(value)
    if os.path.commonpath([root, real]) != root or real == root:
        return None
    return value


# -- JSON without `json` --------------------------------------------------------------------


class _DecoderSettings:
    """The attributes `_json.make_scanner` reads from a `json.JSONDecoder`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json.loads reads them


_scan: Callable[[str, int], tuple[Any, int]] | None
try:
    from _json import make_scanner as _make_scanner

    # typeshed types the argument as the scanner class; any object with these attributes works.
    _scan = _make_scanner(_DecoderSettings())  # type: ignore[arg-type]
except ImportError:  # pragma: no cover - not CPython: fall back to json
    _scan = None


def loads(data: bytes) -> Any:
    """Like `json.loads` for one UTF-8 document; raises ValueError."""
    text = data.decode("utf-8")
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip())
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    except RecursionError:  # nested deeper than the scanner goes: a planted or damaged file
        raise ValueError("nested too deeply") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


# Far above any state file we write; a planted file is not read past it.
MAX_STATE_BYTES = 16 << 20


def read_json(path: str) -> Any:
    """A JSON file's value, or None when it is missing or unreadable."""
    try:
        # Our own file: a link or a FIFO planted there is not read (a FIFO would block the
        # status line); O_NONBLOCK makes the open return at once, fstat says what it is.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not _is_regular(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read(MAX_STATE_BYTES + 1)
        return None if len(data) > MAX_STATE_BYTES else loads(data)
    except (OSError, ValueError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _is_regular(mode: int) -> bool:
    return mode & 0o170000 == 0o100000  # S_ISREG, without importing stat


# -- the state and its rendering ------------------------------------------------------------


def state_path(home: str, session_id: str) -> str:
    return os.path.join(home, "state", STATE_FOLDER, f"{session_id}.json")


def lock_path(state: str) -> str:
    """The lock the detached scan of this state's transcript holds while it runs."""
    return state[: -len(".json")] + ".lock" if state.endswith(".json") else state + ".lock"


def scan_running(state: str) -> bool:
    """A detached scan holds this state's lock (it will absorb whatever was appended)."""
    import fcntl

    try:
        fd = os.open(lock_path(state), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also drops the lock if we took it
    return False


FRESH_WAIT = 0.25  # seconds a call waits for a running scan to absorb what was appended
FRESH_POLL = 0.01


def wait_for_scan(where: str, transcript: str, home: str, timeout: float = FRESH_WAIT) -> Any:
    """The state (its JSON form) once the running detached scan has caught up with the
    transcript, or None after `timeout` seconds or when no scan runs any more.

    Claude Code calls the status line after an event and not again while idle (unless
    `refreshInterval` is set): when Claude reads a `.env` and answers at once, the call that
    follows the answer is the last one for a while. The lingering scan absorbs an append in well
    under a tenth of a second, so waiting that long lets this call show what it found instead
    of the next one (issue 14, item 5)."""
    import time

    current = stamp(home)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(FRESH_POLL)
        state = read_json(where)
        try:
            st = os.stat(transcript)
        except OSError:
            return None
        if (
            isinstance(state, dict)
            and state.get("format") == STATE_FORMAT
            and state.get("path") == transcript
            and isinstance(state.get("findings"), dict)
            and is_current(state, st, current)
        ):
            return state
        if not scan_running(where):
            return None
    return None


def stamp(home: str) -> str:
    """What the findings were computed with: this version and the compiled allowlist's identity
    (a change of either makes the detached scan start over)."""
    try:
        st = os.stat(os.path.join(home, "state", ALLOWLIST_FILE))
        allow = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        allow = "none"
    return f"{__version__}/{allow}"


def is_current(state: Mapping[str, Any], st: os.stat_result, current_stamp: str) -> bool:
    """The state (its JSON form) describes the transcript as it is now, nothing left to scan."""
    return (
        state.get("stamp") == current_stamp
        and (state.get("dev"), state.get("ino"), state.get("size"), state.get("mtime_ns"))
        == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        and not behind(state.get("offset", 0), state.get("size", 0), bool(state.get("partial")))
    )


def behind(offset: int, size: int, partial: bool) -> bool:
    """More complete lines wait to be scanned (an unterminated last line is not one)."""
    return offset < size and not partial


def render(
    findings: Mapping[str, Sequence[str]],
    *,
    offset: int,
    size: int,
    partial: bool = False,
    current_size: int | None = None,
    color: bool = True,
) -> str:
    """The segment: empty when clean (as far as scanned) and not far behind.

    `current_size` is the transcript's size when the caller knows more was appended than the
    state has seen; "catching up" shows only when that backlog is large (a resumed long
    session), not for the few kilobytes every turn adds.
    """
    red, dim, reset = (RED, DIM, RESET) if color else ("", "", "")
    current = max(current_size or 0, size)
    catching_up = ""
    if current - offset > CATCH_UP_SHOWN and not (partial and current == size):
        catching_up = f"catching up {min(99, offset * 100 // current)}%"
    total = len({f for fps in findings.values() for f in fps})
    if not total:
        return f"{dim}scrub: {catching_up}{reset}" if catching_up else ""
    ranked = sorted(findings.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    kinds = [kind for kind, fps in ranked if fps]
    shown = ", ".join(kinds[:SHOWN_KINDS])
    if len(kinds) > SHOWN_KINDS:
        shown += f", +{len(kinds) - SHOWN_KINDS}"
    segment = f"{red}secrets: {total} ({shown}){reset}"
    return f"{segment} {dim}{catching_up}{reset}" if catching_up else segment
