"""The status line's fast path: a call that finds nothing new, in a few milliseconds.

Most status-line calls come when the transcript has not changed since the last scan (or the
lingering detached scan has already absorbed what was appended). Such a call only has to read
its JSON input and a small state file, compare the transcript's identity, and print. Start-up is
then most of its time, so this module imports nothing but `os`, `sys` and the state's own
module (`status_state`, as light). Anything else (no state yet, a transcript that grew or was
rewritten, `--wrap`, `--inline`) goes to `status_line`, imported only then.
"""

from __future__ import annotations

# os.path, not pathlib, throughout: importing pathlib costs this module more than its work.
# ruff: noqa: PTH116
import os
import sys

from scrubber.hooks.status_state import (
    MAX_INPUT_BYTES,
    STATE_FORMAT,
    config_dir,
    is_current,
    loads,
    read_json,
    render,
    scan_running,
    scrub_home,
    stamp,
    state_path,
    transcript_in_projects,
    valid_session_id,
    wait_for_scan,
    wants_color,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def fast_segment(data: bytes, env: Mapping[str, str]) -> str | None:
    """The segment when it can be told from the state file alone, else None."""
    try:
        payload = loads(data) if data.strip() else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ""  # not our input: print nothing (as status_line does)
    if not isinstance(payload, dict):
        return ""
    transcript = transcript_in_projects(payload.get("transcript_path"), config_dir(env))
    if transcript is None:
        return ""
    session_id = payload.get("session_id")
    if not valid_session_id(session_id):
        return None
    home = scrub_home(env)
    where = state_path(home, str(session_id))
    state = read_json(where)
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        return None
    if state.get("path") != transcript:
        return None
    try:
        st = os.stat(transcript)
    except OSError:
        return ""  # no transcript yet: early in a session
    findings = state.get("findings")
    if not isinstance(findings, dict):
        return None
    color = wants_color(env)
    if is_current(state, st, stamp(home)):
        return render(findings, offset=state["offset"], size=state["size"], color=color)
    if scan_running(where):
        # The transcript grew (or was rewritten) and the lingering scan is at it already: it
        # takes a few milliseconds, so wait for it (bounded); else show what is known, and the
        # next call (or the refreshInterval's) shows what it found.
        fresh = wait_for_scan(where, transcript, home)
        if fresh is not None:
            return render(
                fresh["findings"], offset=fresh["offset"], size=fresh["size"], color=color
            )
        return render(
            findings,
            offset=state["offset"],
            size=state["size"],
            partial=bool(state.get("partial")),
            current_size=st.st_size,
            color=color,
        )
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """The launchers' and the plugin shim's entry point; always exits 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    data = b""
    try:
        stream = sys.stdin.buffer
        data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES)
    except (OSError, AttributeError, ValueError):
        pass
    if not args:  # --wrap, --inline and --scan are status_line's business
        try:
            segment = fast_segment(data, os.environ)
        except Exception:  # the full path decides, and logs
            segment = None
        if segment is not None:
            if segment:
                sys.stdout.write(segment + "\n")
            return 0
    import io

    from scrubber.hooks import status_line

    return status_line.main(args, stdin=io.BytesIO(data))


if __name__ == "__main__":
    raise SystemExit(main())
