"""Leaving the process without tearing the interpreter down.

After a command is done, Python's normal exit frees every object and module one by one: after
an audit of a large file (the scanner's compiled detectors, its caches, the report) that takes
40-60 ms, as long as some commands' own work. Nothing of it is needed: the OS takes the memory
back. So the console script runs what a normal exit runs that matters (the atexit handlers:
logging's flush, temp folders' finalizers, multiprocessing's clean-up), flushes the standard
streams, and ends the process with `os._exit`. While another thread still runs, it leaves the
normal way, which waits for that thread first.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn


def run_and_exit(main: Callable[[], object]) -> NoReturn:
    """Run `main`, then exit with the status a normal exit would have given."""
    try:
        main()
        status: object = 0
    except SystemExit as done:
        status = done.code
    if threading.active_count() > 1:
        raise SystemExit(status)
    atexit._run_exitfuncs()
    os._exit(_flushed(_exit_status(status)))


def _exit_status(code: object) -> int:
    """What the interpreter makes of `SystemExit(code)`: None is 0, an int itself, anything
    else is printed to stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def _flushed(status: int) -> int:
    """Flush stdout and stderr. A reader gone (a closed pipe) or a stream that cannot be
    written gives 120, as the interpreter's own exit does when its final flush fails."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    return status
