"""Run a long piece of work in a child process that Ctrl-C always stops, at once.

Why a child: a `re` match holds the GIL for as long as it backtracks, and `scrub search` forks
worker processes (usecases/search_jobs.py) that a terminal's SIGINT reaches too, each printing
a KeyboardInterrupt traceback from deep inside a match. So the work runs in a forked child in a
process group of its own (no terminal signal reaches it or its workers), with SIGINT ignored;
this process only waits for its answer. On Ctrl-C this process kills the whole group and lets
the KeyboardInterrupt go on to the entry point (exit 130, one line, no traceback).

The answer comes back pickled through a pipe: it must hold nothing a secret could hide in that
the caller would not print anyway (`scrub search`'s result holds only redacted text). Linux and
macOS (fork); elsewhere the work runs in this process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import traceback
from collections.abc import Callable
from typing import Any, TypeVar, cast

from scrubber.errors import ScrubberError

T = TypeVar("T")


def _child(work: Callable[[], object], write_fd: int) -> None:
    """In the forked child: do the work, send back ("ok", result) or ("error", a
    ScrubberError), never return."""
    code = 0
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            answer: tuple[str, object] = ("ok", work())
        except ScrubberError as error:
            answer = ("error", (type(error), error.message, error.hint))
        except OSError as error:  # the entry point words these (os_errors.py)
            answer = ("oserror", (error.errno, error.strerror, error.filename))
        except BaseException as error:  # told by type only, never its text
            if os.environ.get("SCRUB_DEBUG"):
                traceback.print_exc()
            answer = ("internal", type(error).__name__)
        try:
            data = pickle.dumps(answer)
        except Exception:  # an answer that cannot be sent is an internal error
            data = pickle.dumps(("internal", "unpicklable result"))
        with os.fdopen(write_fd, "wb") as out:
            out.write(data)
    except BaseException:  # a child must never run on into the caller's code
        code = 3
    finally:
        os._exit(code)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def run_killable(work: Callable[[], T]) -> T:
    """`work()`, computed in a forked child that Ctrl-C (SIGINT to this process) kills with its
    own children; ScrubberErrors it raises are raised here. Its result must pickle."""
    if not hasattr(os, "fork"):
        return work()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read_fd)
        _child(work, write_fd)
    os.close(write_fd)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also set here, so a Ctrl-C right now still finds the group
    try:
        with os.fdopen(read_fd, "rb") as answers:
            data = answers.read()
        os.waitpid(pid, 0)
    except BaseException:
        _kill_group(pid)
        raise
    return cast(T, _unpacked(data))


def _unpacked(data: bytes) -> Any:
    if not data:
        raise ScrubberError("the work stopped without an answer (its process was killed)")
    kind, value = pickle.loads(data)  # noqa: S301 - our own child wrote it, through our pipe
    if kind == "ok":
        return value
    if kind == "error":
        kind_of_error, message, hint = value
        # Built without its __init__ (subclasses take other arguments): same class, exit code,
        # message and hint as the one the child raised.
        error = kind_of_error.__new__(kind_of_error)
        Exception.__init__(error, message)
        error.message, error.hint = message, hint
        raise error
    if kind == "oserror":
        raise OSError(*value)
    raise ScrubberError(f"internal error ({value}); rerun with SCRUB_DEBUG=1 for details")
