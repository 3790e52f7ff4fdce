"""`scrub audit`'s progress line: drawn on stderr when it is a terminal (a real pty here) and
the scan is large, never when stderr is a pipe. Where none can be drawn the audit does not sum
the files' sizes either (a stat of every file: 20,000 for a large config dir)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from tests.conftest import Sandbox


def _big_session(sandbox: Sandbox) -> None:
    folder = sandbox.config / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    sid = "11111111-2222-4333-8444-555555555555"
    text = "run the tests please " * 50
    line = json.dumps(
        {
            "type": "user",
            "sessionId": sid,
            "uuid": "u",
            "message": {"role": "user", "content": text},
        }
    )
    with (folder / f"{sid}.jsonl").open("w") as out:
        for _ in range((10 << 20) // len(line) + 1):  # over the 8 MB a progress line waits for
            out.write(line + "\n")


def _stderr_on_a_terminal(sandbox: Sandbox, *args: str) -> tuple[int, bytes]:
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "scrubber.cli", *args],
            env=sandbox.environ(),
            cwd=sandbox.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=follower,
        )
        os.close(follower)
        seen = b""
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty's other end closed: the process is done
                break
            if not chunk:
                break
            seen += chunk
        return process.wait(timeout=60), seen
    finally:
        os.close(leader)


def test_the_progress_line_is_drawn_on_a_terminal_only(sandbox: Sandbox) -> None:
    _big_session(sandbox)
    status, on_terminal = _stderr_on_a_terminal(sandbox, "audit", "--no-cache")
    assert status == 0, on_terminal[-400:]
    assert b"scanning" in on_terminal and b"MB" in on_terminal
    piped = sandbox.scrub("audit", "--no-cache")
    assert piped.returncode == 0 and "scanning" not in piped.stderr
    quiet_status, quiet = _stderr_on_a_terminal(sandbox, "audit", "--no-cache", "--quiet")
    assert quiet_status == 0 and b"scanning" not in quiet


def test_no_size_is_summed_where_no_line_is_drawn(tmp_path: Path) -> None:
    from scrubber.cli import audit_cmd

    with audit_cmd._progress_line() as progress_for:  # pytest's stderr is no terminal
        assert progress_for is None
