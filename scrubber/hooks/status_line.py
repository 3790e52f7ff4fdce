"""The status line: `secrets: 2 (aws-access-key, dotenv-value)` when a secret entered the
transcript, nothing when it is clean.

Claude Code runs the status-line command after every assistant message and cancels a run that
is still going when the next starts (reference note, "Status line"), so a call must be quick.
Loading the detectors (importing and compiling a hundred rules) alone takes longer than a call
may, so the work is split:

- the call reads a small per-session state file under `$SCRUB_HOME/state/status-line/` and
  prints from it; when the transcript grew (or was rewritten) it starts the detached scan,
  unless one is running, and prints what is known. It never loads the detectors.
- the detached scan (`--scan`, one per transcript, under a lock) scans only what was appended
  since the state's offset, in steps of about `BACKGROUND_STEP` seconds, saving the state after
  each (a long transcript, a resumed session, is caught up over a few calls, and the segment
  says "catching up" meanwhile); then it lingers, watching the file, so later appends are
  absorbed within a fraction of a second by detectors already loaded.
- `--inline` instead scans in the call itself for about `--budget-ms` (30 ms by default, after
  the detectors are loaded), resuming where the last call stopped: for those who prefer no
  background process, at the price of the load time in every call that has something new.

The state file holds the byte offset and line number reached, the file's identity (device,
inode, size, mtime) and a keyed hash of the bytes just before the offset, so a truncated or
rewritten transcript (an in-place redaction renames a new file over it) is rescanned from the
start; and the findings as kinds with keyed fingerprints (never values).

Imports: the standard library, the transcript reader, the detection rules, context and the
scanner that applies them (all stdlib-only), the policy values (for the allowlist, read from the
JSON file `scrub` compiles into `state/`, never from YAML). Not detect_secrets, typer, yaml or
cryptography: a test runs this module in a fresh interpreter and checks `sys.modules`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from scrubber import paths
from scrubber.hooks import status_state
from scrubber.hooks.files import append_log_line, write_json_atomic
from scrubber.hooks.status_state import (
    ALLOWLIST_FILE,
    MAX_INPUT_BYTES,
    STATE_FOLDER,
    STATE_FORMAT,
    valid_session_id,
)

# Imported only for type checking: `typing`, `dataclasses` (which pulls in `inspect`) and
# `hashlib` cost a status-line call more than reading its state file does, so this module uses
# none of them on the path that finds nothing new.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, TextIO

    from scrubber.detection.scan import FileScan, SecretScanner
    from scrubber.policy.model import Policy

DEFAULT_BUDGET = 0.030  # seconds of scanning per call (the Contracts: "about 30 ms")
TAIL_BYTES = 64  # bytes before the offset whose keyed hash proves the file was not rewritten
MAX_REMEMBERED_CALLS = 64  # sensitive tool calls whose results may arrive in a later call
MAX_FINGERPRINTS = 4096
FINGERPRINT_CHARS = 16
PREVIOUS_TIMEOUT = 10.0
BACKGROUND_STEP = 0.25  # seconds of scanning between two saves of the state (progress)
BACKGROUND_POLL = 0.1  # seconds between two looks at the transcript while lingering (a stat)
BACKGROUND_LINGER = 300.0  # seconds the detached scan stays after the transcript went quiet
BACKGROUND_MAX_SECONDS = 6 * 3600.0
ENV_LINGER = "SCRUB_STATUS_LINE_LINGER"


def states_dir(home: Path) -> Path:
    return paths.state_dir(home) / STATE_FOLDER


def allowlist_state_file(home: Path) -> Path:
    return paths.state_dir(home) / ALLOWLIST_FILE


def write_allowlist_state(policy: Policy, home: Path) -> Path:
    """Compile the policy's allowlist into `state/allowlist.json` for the status line (which
    never reads YAML). Called by the installer and by every worker run, so edits to the policy
    reach the status line after the next session ends, or at once with `scrub install`."""
    from scrubber.policy.model import compile_allowlist_json

    target = allowlist_state_file(home)
    paths.ensure_private_dir(target.parent)
    data = compile_allowlist_json(policy)
    try:
        if json.loads(_read_own(target)) == data:
            return target  # unchanged: keep its mtime, so status lines keep their counts
    except (OSError, ValueError):
        pass
    write_json_atomic(target, data, fsync=False)
    return target


def prune_states(home: Path, *, now: float, max_age_days: float = 30.0) -> int:
    """Remove state files of sessions not seen for `max_age_days`; returns how many."""
    removed = 0
    folder = states_dir(home)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        with contextlib.suppress(OSError):
            if now - entry.stat().st_mtime > max_age_days * 86400:
                Path(entry.path).unlink()
                removed += 1
    return removed


# -- state ------------------------------------------------------------------------------------


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
        if not all(isinstance(data.get(k), int) for k in ints):
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


def _read_own(path: Path) -> bytes:
    """A file of ours under state/: never through a link, never a FIFO (which would block the
    status line, or its detached scan while it holds the transcript's lock)."""
    with paths.open_regular(path, follow=False) as stream:
        return stream.read()


def load_state(path: Path) -> ScanState | None:
    try:
        data = json.loads(_read_own(path))
    except (OSError, ValueError):
        return None
    return ScanState.from_json(data) if isinstance(data, dict) else None


def save_state(path: Path, state: ScanState) -> None:
    paths.ensure_private_dir(path.parent)
    # No fsync: losing a state file costs one rescan, and the status line has no time for it.
    write_json_atomic(path, state.to_json(), fsync=False)


def _stamp(home: Path) -> str:
    return status_state.stamp(str(home))


# -- scanning ---------------------------------------------------------------------------------


def _tail_hash(key: bytes, stream: IO[bytes], offset: int) -> str:
    import hashlib
    import hmac

    start = max(0, offset - TAIL_BYTES)
    stream.seek(start)
    data = stream.read(offset - start)
    return hmac.new(key, data, hashlib.sha256).hexdigest()[:32]


def _build_scanner(home: Path, key: bytes) -> SecretScanner:
    """The scanner over our own rules (no detect-secrets), with the compiled allowlist."""
    from scrubber.detection.fingerprint import Fingerprinter
    from scrubber.detection.rules.catalog import ALL_RULES
    from scrubber.detection.scan import SecretScanner
    from scrubber.policy.model import Allowlist, PolicyValueError, allowlist_from_json

    allowlist: Allowlist = Allowlist()
    disabled: tuple[str, ...] = ()
    with contextlib.suppress(OSError, ValueError, PolicyValueError):
        data = json.loads(_read_own(allowlist_state_file(home)))
        if isinstance(data, dict):
            allowlist, disabled = allowlist_from_json(data)
    detectors = [rule for rule in ALL_RULES if rule.name not in disabled]
    # hyperscan when installed: on real transcripts nearly every line passes the prefilter's
    # anchors, and the pure-Python literal search is then several times slower per byte
    # (bench/README.md); building either index costs about the same.
    return SecretScanner(
        detectors,
        Fingerprinter(key),
        allowlist,
        engine="auto",
        cache_dir=paths.prefilter_cache_dir(home),
    )


def _restore_calls(file_scan: FileScan, calls: list[list[str]]) -> None:
    """Tell a new FileScan about sensitive tool calls seen by earlier runs, whose results
    (a Read of `.env`, the output of `printenv`) may only now be in the file."""
    from scrubber.detection.context import ToolCall
    from scrubber.detection.detector import SourceKind

    remembered = {}
    for call_id, name, source, file_name in calls:
        with contextlib.suppress(ValueError):
            remembered[call_id] = ToolCall(name, file_name, SourceKind(source))
    file_scan.remember_calls(remembered)


# Tools whose target is a file path (scrubber.detection.context classifies them by it).
_FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead"})


def _remembered_calls(file_scan: FileScan) -> list[list[str]]:
    """The most recent sensitive calls, in the order they were made. Only a file tool's file
    name is kept of the target (a command can hold a token); the name is all the rules use."""
    kept = []
    for call_id, call in file_scan._calls.items():
        if call_id not in file_scan._sensitive_calls:
            continue
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

        stamp = _stamp(self.home)
        with paths.open_regular(transcript) as stream:  # a FIFO must not hang the scan
            st = os.fstat(stream.fileno())
            if state is not None and _unchanged(state, st, stamp):
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


def _unchanged(state: ScanState, st: os.stat_result, stamp: str) -> bool:
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


# -- rendering --------------------------------------------------------------------------------


def render(state: ScanState | None, *, size: int | None = None, color: bool = True) -> str:
    """The segment for a state (see status_state.render); "" when nothing is known yet."""
    if state is None:
        return status_state.render({}, offset=0, size=0, current_size=size, color=color)
    return status_state.render(
        state.findings,
        offset=state.offset,
        size=state.size,
        partial=state.partial,
        current_size=size,
        color=color,
    )


# -- the background scan ----------------------------------------------------------------------


def _lock_path(state_path: Path) -> Path:
    return Path(status_state.lock_path(str(state_path)))


def _try_lock(path: Path) -> int | None:
    """An exclusive flock on `path`, or None when another process holds it."""
    import fcntl

    paths.ensure_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, paths.PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _linger(env: Mapping[str, str]) -> float:
    try:
        return max(0.0, float(env.get(ENV_LINGER, "")))
    except ValueError:
        return BACKGROUND_LINGER


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
        state = _load_for(where, transcript)
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
    spawn_detached(argv, child_env, home / "log" / "status-line.log", home)
    return True


# -- entry point ------------------------------------------------------------------------------


def _transcript_of(payload: Mapping[str, Any], config: Path) -> Path | None:
    found = status_state.transcript_in_projects(payload.get("transcript_path"), str(config))
    return None if found is None else Path(found)


def _load_for(where: Path, transcript: Path) -> ScanState | None:
    state = load_state(where)
    return state if state is not None and state.path == str(transcript) else None


def status_segment(
    data: bytes,
    env: Mapping[str, str],
    *,
    inline: bool = False,
    budget: float = DEFAULT_BUDGET,
    color: bool = True,
) -> str:
    """The segment for one status-line payload; "" for anything unexpected.

    Up to date: print from the state file. Behind: start the detached scan and print what is
    known, or with `inline`, scan for `budget` seconds in this process first.
    """
    try:
        payload = json.loads(data) if data.strip() else None
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(payload, dict):
        return ""
    transcript = _transcript_of(payload, paths.config_dir(env))
    if transcript is None:
        return ""
    home = paths.scrub_home(env)
    session = payload.get("session_id")
    session_id = session if isinstance(session, str) else ""
    where = state_file(home, session_id, transcript)
    state = _load_for(where, transcript)
    try:
        st = transcript.stat()
    except OSError:
        return ""  # no transcript yet: early in a session
    if not stat.S_ISREG(st.st_mode):
        return ""  # a FIFO or a device is no transcript: reading it could block forever
    if state is not None and _unchanged(state, st, _stamp(home)):
        return render(state, color=color)
    if inline:
        state, changed = IncrementalScan(home).step(transcript, state, budget=budget)
        if changed:
            save_state(where, state)
        return render(state, color=color)
    start_background_scan(transcript, session_id, env)
    return render(state, size=st.st_size, color=color)


class _Previous:
    """The status line the user had before: run with the same stdin, alongside our scan."""

    def __init__(self, command: str, data: bytes) -> None:
        import subprocess

        self._subprocess = subprocess
        self._proc = subprocess.Popen(  # noqa: S602 - the user's own status-line command
            command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._data: bytes | None = data
        if len(data) < 32 << 10 and self._proc.stdin is not None:
            # Fits the pipe buffer: hand it over now, so the command runs while we scan.
            with contextlib.suppress(OSError):
                self._proc.stdin.write(data)
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
            self._proc.stdin = None  # communicate() must not touch it again
            self._data = None

    def output(self) -> str:
        try:
            out, _ = self._proc.communicate(self._data, timeout=PREVIOUS_TIMEOUT)
        except self._subprocess.TimeoutExpired:
            self._proc.kill()
            out, _ = self._proc.communicate()
        return out.decode("utf-8", errors="replace")


def compose(previous: str, segment: str) -> str:
    """Our segment after the previous status line's output, on its last row."""
    previous = previous.rstrip("\n")
    if not segment:
        return previous
    if not previous:
        return segment
    return f"{previous}  {segment}"


class Args:
    __slots__ = ("budget", "inline", "scan", "session", "wrap")

    def __init__(
        self,
        wrap: str | None = None,  # the status-line command the user had before
        inline: bool = False,  # scan in this process (bounded by budget), not in the background
        budget: float = DEFAULT_BUDGET,
        scan: str | None = None,  # internal: run the background scan of this transcript
        session: str = "",
    ) -> None:
        self.wrap, self.inline, self.budget, self.scan, self.session = (
            wrap, inline, budget, scan, session,
        )  # fmt: skip


def parse_args(argv: Sequence[str]) -> Args:
    """Tolerant: unknown arguments are ignored (a status line never fails on its command)."""
    values: dict[str, Any] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--inline":
            values["inline"] = True
        elif arg in ("--wrap", "--scan", "--session", "--budget-ms") and args:
            value = args.pop(0)
            if arg == "--budget-ms":
                with contextlib.suppress(ValueError):
                    values["budget"] = max(0.001, float(value) / 1000)
            else:
                values[arg[2:]] = value
    return Args(**values)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Entry point of the shim and of `scrub hook status-line [--wrap CMD] [--inline]
    [--budget-ms N]`. Always exits 0; prints nothing rather than an error."""
    environment = os.environ if env is None else env
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.scan is not None:
        with contextlib.suppress(Exception):
            run_background_scan(Path(args.scan), args.session, environment)
        return 0
    out = stdout or sys.stdout
    data = b""
    with contextlib.suppress(OSError):
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES)
    previous = None
    if args.wrap:
        with contextlib.suppress(OSError):
            previous = _Previous(args.wrap, data)
    segment = ""
    try:
        segment = status_segment(data, environment, inline=args.inline, budget=args.budget)
    except Exception as error:  # a status line prints nothing rather than fail
        detail = f" (errno {error.errno})" if isinstance(error, OSError) else ""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with contextlib.suppress(OSError):
            append_log_line(
                paths.scrub_home(environment) / "log" / "status-line.log",
                f"{stamp} status-line: internal error {type(error).__name__}{detail}",
            )
    text = compose(previous.output() if previous is not None else "", segment)
    if text:
        out.write(text + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
