"""The status line's incremental scan: one state file per transcript, resuming where the last
call stopped, and the detached scan that lingers to absorb appends.

The state file holds the byte offset and line number reached, the file's identity (device,
inode, size, mtime) and a keyed hash of the bytes just before the offset, so a truncated or
rewritten transcript (an in-place redaction renames a new file over it) is rescanned from the
start; and the findings as kinds with keyed fingerprints (never values).

Imports: as `status_line` (the standard library, the transcript reader, the light detection
rules, the policy values); the detectors load only inside the scan, never on a call that finds
nothing new.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from scrubber import paths
from scrubber.errors import ScrubberError
from scrubber.hooks import status_state
from scrubber.hooks.files import write_json_atomic
from scrubber.hooks.status_state import (
    ALLOWLIST_FILE,
    STATE_FOLDER,
    STATE_FORMAT,
    valid_session_id,
)
from scrubber.untrusted import MAX_STATE_BYTES, load_json

# Imported only for type checking: `typing`, `dataclasses` (which pulls in `inspect`) and
# `hashlib` cost a status-line call more than reading its state file does, so this module uses
# none of them on the path that finds nothing new.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from scrubber.detection.scan import FileScan, SecretScanner


TAIL_BYTES = 64  # bytes before the offset whose keyed hash proves the file was not rewritten


MAX_REMEMBERED_CALLS = 64  # sensitive tool calls whose results may arrive in a later call


MAX_FINGERPRINTS = 4096


FINGERPRINT_CHARS = 16


BACKGROUND_STEP = 0.25  # seconds of scanning between two saves of the state (progress)


BACKGROUND_POLL = 0.05  # seconds between two looks at the transcript while lingering (a stat)


BACKGROUND_LINGER = 300.0  # seconds the detached scan stays after the transcript went quiet


MAX_LINGER = 3600.0  # the most SCRUB_STATUS_LINE_LINGER may ask for


BACKGROUND_MAX_SECONDS = 6 * 3600.0


ENV_LINGER = "SCRUB_STATUS_LINE_LINGER"


def states_dir(home: Path) -> Path:
    return paths.state_dir(home) / STATE_FOLDER


class ScanState:
    """Where the scan of one transcript stands. Mutable: one call updates it and saves it.
    (A plain slotted class, not a dataclass: see the imports.)"""

    __slots__ = (
        "calls", "dev", "findings", "ino", "line", "mtime_ns", "offset", "partial", "path",
        "size", "stamp", "tail",
    )  # fmt: skip

    def __init__(
        self,
        path: str,
        *,
        dev: int = 0,
        ino: int = 0,
        size: int = 0,
        mtime_ns: int = 0,
        offset: int = 0,
        line: int = 1,
        tail: str = "",
        partial: bool = False,
        stamp: str = "",
        findings: dict[str, list[str]] | None = None,
        calls: list[list[str]] | None = None,
    ) -> None:
        self.path = path
        self.dev = dev
        self.ino = ino
        self.size = size  # the file's size when offset was last compared with it
        self.mtime_ns = mtime_ns
        self.offset = offset  # bytes scanned (always at a line start)
        self.line = line  # number of the line at offset
        self.tail = tail  # keyed hash of the TAIL_BYTES before offset
        self.partial = partial  # stopped at an unterminated last line (being written, or torn)
        self.stamp = stamp  # version + allowlist identity the findings were computed with
        self.findings = findings if findings is not None else {}  # kind -> fingerprints
        self.calls = calls if calls is not None else []  # [id, tool, source, file name]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScanState) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"ScanState({self.path!r}, offset={self.offset}, size={self.size})"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "path": self.path,
            "dev": self.dev,
            "ino": self.ino,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "offset": self.offset,
            "line": self.line,
            "tail": self.tail,
            "partial": self.partial,
            "stamp": self.stamp,
            "findings": self.findings,
            "calls": self.calls,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScanState | None:
        if data.get("format") != STATE_FORMAT or not isinstance(data.get("path"), str):
            return None
        ints = ("dev", "ino", "size", "mtime_ns", "offset", "line")
        # Not bool (an int to isinstance), never negative: an offset below 0 is no place in a file.
        if not all(type(data.get(k)) is int and data[k] >= 0 for k in ints):
            return None
        findings = data.get("findings")
        calls = data.get("calls")
        if not isinstance(findings, dict) or not isinstance(calls, list):
            return None
        return cls(
            path=data["path"],
            dev=data["dev"],
            ino=data["ino"],
            size=data["size"],
            mtime_ns=data["mtime_ns"],
            offset=data["offset"],
            line=data["line"],
            tail=str(data.get("tail", "")),
            partial=bool(data.get("partial", False)),
            stamp=str(data.get("stamp", "")),
            findings={
                str(k): [str(f) for f in v] for k, v in findings.items() if isinstance(v, list)
            },
            calls=[[str(x) for x in c] for c in calls if isinstance(c, list) and len(c) == 4],
        )

    @property
    def behind(self) -> bool:
        """More complete lines wait to be scanned."""
        return status_state.behind(self.offset, self.size, self.partial)

    def total(self) -> int:
        return len({f for fps in self.findings.values() for f in fps})


def state_file(home: Path, session_id: str, transcript: Path) -> Path:
    if valid_session_id(session_id):
        name = session_id
    else:  # still one file per transcript, with a name that is safe
        import hashlib

        name = "t-" + hashlib.sha256(str(transcript).encode()).hexdigest()[:32]
    return states_dir(home) / f"{name}.json"


def load_state(path: Path) -> ScanState | None:
    """A scan state of ours under state/, read as untrusted (scrubber/untrusted.py): never
    through a link, never a FIFO (which would block the status line, or its detached scan while
    it holds the transcript's lock), bounded in size and depth; damaged is none (a rescan)."""
    try:
        data = load_json(path, MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):  # DamagedDocument is a ValueError
        return None
    return ScanState.from_json(data) if isinstance(data, dict) else None


def save_state(path: Path, state: ScanState) -> None:
    paths.ensure_private_dir(path.parent)
    # No fsync: losing a state file costs one rescan, and the status line has no time for it.
    write_json_atomic(path, state.to_json(), fsync=False)


def current_stamp(home: Path) -> str:
    return status_state.stamp(str(home))


def _tail_hash(key: bytes, stream: IO[bytes], offset: int) -> str:
    import hashlib
    import hmac

    start = max(0, offset - TAIL_BYTES)
    stream.seek(start)
    data = stream.read(offset - start)
    return hmac.new(key, data, hashlib.sha256).hexdigest()[:32]


def _build_scanner(home: Path, key: bytes) -> SecretScanner:
    """The light scanner (no detect-secrets), with the allowlist the installer copied."""
    from scrubber.detection.registry import build_light_scanner
    from scrubber.policy.model import Allowlist, PolicyValueError, allowlist_from_json

    allowlist: Allowlist = Allowlist()
    disabled: tuple[str, ...] = ()
    with contextlib.suppress(OSError, ValueError, PolicyValueError):
        data = load_json(allowlist_state_file(home), MAX_STATE_BYTES, follow=False)
        if isinstance(data, dict):
            allowlist, disabled = allowlist_from_json(data)
    return build_light_scanner(home, key, allowlist, disabled)


def _restore_calls(file_scan: FileScan, calls: list[list[str]]) -> None:
    """Tell a new FileScan about sensitive tool calls seen by earlier runs, whose results
    (a Read of `.env`, the output of `printenv`) may only now be in the file."""
    from scrubber.detection.context import ClassifiedCall
    from scrubber.detection.detector import SourceKind

    remembered = {}
    for call_id, name, source, file_name in calls:
        with contextlib.suppress(ValueError):
            remembered[call_id] = ClassifiedCall(name, file_name, SourceKind(source))
    file_scan.remember_calls(remembered)


# Tools whose target is a file path (scrubber.detection.context classifies them by it).
_FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead"})


def _remembered_calls(file_scan: FileScan) -> list[list[str]]:
    """The most recent sensitive calls, in the order they were made. Only a file tool's file
    name is kept of the target (a command can hold a token); the name is all the rules use."""
    kept = []
    for call_id, call in file_scan.sensitive_calls_seen().items():
        name = PurePosixPath(call.target).name if call.name in _FILE_TOOLS else ""
        kept.append([call_id, call.name, call.source.value, name])
    return kept[-MAX_REMEMBERED_CALLS:]


class IncrementalScan:
    """Scans one transcript in steps, keeping the detectors loaded between steps (building
    them is the expensive part: importing and compiling the rules takes longer than a status
    line may)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._key: bytes | None = None
        self._scanner: SecretScanner | None = None
        self._scanner_stamp = ""
        self._file_scan: FileScan | None = None
        self._file_scan_at: tuple[int, int, int] | None = None  # (dev, ino, offset) it is at

    def _key_bytes(self) -> bytes:
        if self._key is None:
            from scrubber.detection.fingerprint import read_or_create_key

            self._key = read_or_create_key(paths.fingerprint_key_file(self.home))
        return self._key

    def step(
        self, transcript: Path, state: ScanState | None, *, budget: float
    ) -> tuple[ScanState, bool]:
        """Bring `state` up to date with `transcript`, scanning for about `budget` seconds
        (at least one line). Returns the state and whether it changed (False: nothing new).

        Raises OSError when the transcript cannot be read.
        """
        from scrubber.transcript.jsonl import iter_raw_lines

        stamp = current_stamp(self.home)
        with paths.open_regular(transcript) as stream:  # a FIFO must not hang the scan
            st = os.fstat(stream.fileno())
            if state is not None and unchanged(state, st, stamp):
                return state, False
            key = self._key_bytes()
            if state is None or not _can_resume(state, st, stamp, key, stream):
                state = ScanState(str(transcript), stamp=stamp)
            state.dev, state.ino = st.st_dev, st.st_ino
            file_scan = self._file_scan_for(state, key, stamp)
            deadline = time.perf_counter() + budget
            seen = {f for fps in state.findings.values() for f in fps}
            stream.seek(state.offset)
            state.partial = False
            for raw in iter_raw_lines(stream, offset=state.offset, number=state.line):
                if not raw.terminated:
                    state.partial = True  # being written (or torn): wait for its newline
                    break
                scanned = file_scan.scan_raw(raw)
                if scanned is not None:
                    for leaf in scanned.leaves:
                        for found in leaf.found:
                            fingerprint = found.fingerprint[:FINGERPRINT_CHARS]
                            kind = state.findings.setdefault(found.hit.kind, [])
                            if fingerprint not in kind and len(seen) < MAX_FINGERPRINTS:
                                kind.append(fingerprint)
                                seen.add(fingerprint)
                state.offset = raw.end_offset
                state.line = raw.number + 1
                if time.perf_counter() >= deadline:
                    break
            end = os.fstat(stream.fileno())
            state.size, state.mtime_ns = end.st_size, end.st_mtime_ns
            state.tail = _tail_hash(key, stream, state.offset)
            state.calls = _remembered_calls(file_scan)
            self._file_scan_at = (state.dev, state.ino, state.offset)
        return state, True

    def _file_scan_for(self, state: ScanState, key: bytes, stamp: str) -> FileScan:
        """The FileScan that is at `state.offset` of this file: the one of the last step when it
        continues there, else a new one told about the tool calls the state remembers."""
        if self._scanner is None or self._scanner_stamp != stamp:
            self._scanner = _build_scanner(self.home, key)  # the allowlist may have changed
            self._scanner_stamp = stamp
            self._file_scan = None
        if self._file_scan is None or self._file_scan_at != (state.dev, state.ino, state.offset):
            self._file_scan = self._scanner.new_file_scan()
            _restore_calls(self._file_scan, state.calls)
        return self._file_scan


def unchanged(state: ScanState, st: os.stat_result, stamp: str) -> bool:
    """Nothing to do: same file, same size and mtime, nothing left to scan."""
    return status_state.is_current(state.to_json(), st, stamp)


def _can_resume(
    state: ScanState, st: os.stat_result, stamp: str, key: bytes, stream: IO[bytes]
) -> bool:
    if state.stamp != stamp or (state.dev, state.ino) != (st.st_dev, st.st_ino):
        return False
    if st.st_size < state.offset:
        return False  # truncated
    if state.offset == 0:
        return True
    import hmac

    return hmac.compare_digest(state.tail, _tail_hash(key, stream, state.offset))


def _lock_path(state_path: Path) -> Path:
    return Path(status_state.lock_path(str(state_path)))


def _try_lock(path: Path) -> int | None:
    """An exclusive flock on `path`, or None when another process holds it, or when the lock
    file is a planted link or FIFO (no scan then: the status line must not fail over it)."""
    paths.ensure_private_dir(path.parent)
    try:
        return paths.try_lock_own_file(path)
    except ScrubberError:
        return None


def _linger(env: Mapping[str, str]) -> float:
    """Seconds to linger: `SCRUB_STATUS_LINE_LINGER`, within [0, MAX_LINGER], else the default."""
    try:
        value = float(env.get(ENV_LINGER, ""))
    except ValueError:
        return BACKGROUND_LINGER
    import math

    if math.isnan(value):
        return BACKGROUND_LINGER
    return min(MAX_LINGER, max(0.0, value))


def run_background_scan(
    transcript: Path,
    session_id: str,
    env: Mapping[str, str],
    *,
    step_budget: float = BACKGROUND_STEP,
    linger: float | None = None,
    max_seconds: float = BACKGROUND_MAX_SECONDS,
) -> ScanState | None:
    """The detached half of the status line: scan everything new in `transcript`, saving the
    state after every step (status-line calls show the progress), then keep watching the file
    for `linger` seconds and scan what is appended as soon as it is (the detectors stay loaded,
    so the next status-line call usually finds nothing left to do). One per transcript: a
    second exits at once. Returns the final state, or None when another scan was running."""
    home = paths.scrub_home(env)
    where = state_file(home, session_id, transcript)
    fd = _try_lock(_lock_path(where))
    if fd is None:
        return None
    linger = _linger(env) if linger is None else linger
    try:
        scan = IncrementalScan(home)
        state = load_for(where, transcript)
        started = time.monotonic()
        idle_since = started
        while True:
            try:
                state, changed = scan.step(transcript, state, budget=step_budget)
            except (FileNotFoundError, paths.NotRegularFileError):
                return state  # the transcript (or the whole config dir) is gone, or not a file
            now = time.monotonic()
            if changed:
                save_state(where, state)
                idle_since = now
            if state.behind and now - started < max_seconds:
                continue
            if now - idle_since >= linger or now - started >= max_seconds:
                return state
            time.sleep(BACKGROUND_POLL)
    finally:
        os.close(fd)


def start_background_scan(transcript: Path, session_id: str, env: Mapping[str, str]) -> bool:
    """Start the detached scan unless one is running for this transcript."""
    from scrubber.hooks.detach import spawn_detached

    home = paths.scrub_home(env)
    where = state_file(home, session_id, transcript)
    fd = _try_lock(_lock_path(where))
    if fd is None:
        return False  # a scan is running; it picks up what was appended
    os.close(fd)
    import scrubber

    child_env = dict(env)
    # The launcher may have put the package on sys.path by hand (python -S): tell the child.
    root = str(Path(scrubber.__file__).resolve().parents[1])
    existing = child_env.get("PYTHONPATH")
    child_env["PYTHONPATH"] = root + (os.pathsep + existing if existing else "")
    argv = [sys.executable, "-m", "scrubber.hooks.status_line", "--scan", str(transcript)]
    if valid_session_id(session_id):
        argv += ["--session", session_id]
    spawn_detached(argv, child_env, home / "log" / "status-line.log", home, home=home)
    return True


def allowlist_state_file(home: Path) -> Path:
    return paths.state_dir(home) / ALLOWLIST_FILE


def load_for(where: Path, transcript: Path) -> ScanState | None:
    state = load_state(where)
    return state if state is not None and state.path == str(transcript) else None
