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

The state and the scan are `status_scan`'s; this module is the call and what it prints.

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
from pathlib import Path

from scrubber import paths
from scrubber.hooks import status_state
from scrubber.hooks.files import append_log_line, write_json_atomic
from scrubber.hooks.status_scan import (
    IncrementalScan,
    ScanState,
    allowlist_state_file,
    current_stamp,
    run_background_scan,
    save_state,
    start_background_scan,
    state_file,
    states_dir,
    unchanged,
)
from scrubber.hooks.status_state import (
    MAX_INPUT_BYTES,
)
from scrubber.untrusted import MAX_STATE_BYTES, load_json

# Imported only for type checking: `typing`, `dataclasses` (which pulls in `inspect`) and
# `hashlib` cost a status-line call more than reading its state file does, so this module uses
# none of them on the path that finds nothing new.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, TextIO

    from scrubber.policy.model import Policy


DEFAULT_BUDGET = 0.030  # seconds of scanning per call (the Contracts: "about 30 ms")


PREVIOUS_TIMEOUT = 10.0


def write_allowlist_state(policy: Policy, home: Path) -> Path:
    """Compile the policy's allowlist into `state/allowlist.json` for the status line (which
    never reads YAML). Called by the installer and by every worker run, so edits to the policy
    reach the status line after the next session ends, or at once with `scrub install`."""
    from scrubber.policy.model import compile_allowlist_json

    target = allowlist_state_file(home)
    paths.ensure_private_dir(target.parent)
    data = compile_allowlist_json(policy)
    try:
        if load_json(target, MAX_STATE_BYTES, follow=False) == data:
            return target  # unchanged: keep its mtime, so status lines keep their counts
    except (OSError, ValueError):
        pass  # missing, planted or damaged: written anew
    write_json_atomic(target, data, fsync=False)
    return target


def allowlist_state_is_current(policy: Policy, home: Path) -> bool:
    """The compiled allowlist says what the policy says. Judged by content, not by mtimes: a
    policy touched or saved unchanged is no reason to recompile, and `write_allowlist_state`
    keeps an unchanged file's mtime, so "older than the policy" stayed true after the fix
    doctor printed (issue 14, item 9)."""
    from scrubber.policy.model import compile_allowlist_json

    try:
        current = load_json(allowlist_state_file(home), MAX_STATE_BYTES, follow=False)
        return bool(current == compile_allowlist_json(policy))
    except (OSError, ValueError):
        return False


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


def _transcript_of(payload: Mapping[str, Any], config: Path) -> Path | None:
    found = status_state.transcript_in_projects(payload.get("transcript_path"), str(config))
    return None if found is None else Path(found)


def _load_state(where: Path, transcript: Path) -> ScanState | None:
    """The state of this transcript; None (scan it again) when it is missing or unusable: a
    link, a FIFO, too large, nested too deeply (a RecursionError, which status_scan's reader
    lets through, blanked the status line), a number too long."""
    try:
        data = load_json(where, MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):
        return None
    state = ScanState.from_json(data) if isinstance(data, dict) else None
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
    state = _load_state(where, transcript)
    try:
        st = transcript.stat()
    except OSError:
        return ""  # no transcript yet: early in a session
    if not stat.S_ISREG(st.st_mode):
        return ""  # a FIFO or a device is no transcript: reading it could block forever
    if state is not None and unchanged(state, st, current_stamp(home)):
        return render(state, color=color)
    if inline:
        state, changed = IncrementalScan(home).step(transcript, state, budget=budget)
        if changed:
            save_state(where, state)
        return render(state, color=color)
    if not start_background_scan(transcript, session_id, env):
        # One is running (lingering): it absorbs an append in milliseconds (see fastpath).
        fresh = status_state.wait_for_scan(str(where), str(transcript), str(home))
        caught_up = ScanState.from_json(fresh) if fresh is not None else None
        if caught_up is not None:
            return render(caught_up, color=color)
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
        segment = status_segment(
            data,
            environment,
            inline=args.inline,
            budget=args.budget,
            color=status_state.wants_color(environment),
        )
    except Exception as error:  # a status line prints nothing rather than fail
        detail = f" (errno {error.errno})" if isinstance(error, OSError) else ""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with contextlib.suppress(OSError):
            home = paths.scrub_home(environment)
            append_log_line(
                home / "log" / "status-line.log",
                f"{stamp} status-line: internal error {type(error).__name__}{detail}",
                home=home,
            )
    text = compose(previous.output() if previous is not None else "", segment)
    if text:
        out.write(text + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
