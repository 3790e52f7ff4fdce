"""Start a process that outlives the hook that started it. Standard library only.

Claude Code kills a hook that runs over its budget, with its whole process group, and reads
the hook's stdout and stderr until they close. A detached child therefore gets a new session
(out of the group), stdin and stdout on /dev/null, stderr on a log file, and no other inherited
descriptor (a child holding Claude Code's pipe would make it wait for the child).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from scrubber.durable import UnsafeFileError, UnsafeFolderError, ensure_private_dir, open_own_file


def spawn_detached(
    argv: Sequence[str], env: Mapping[str, str], log_path: Path, cwd: Path, *, home: Path
) -> int:
    """Start `argv` fully detached and return its pid without waiting for it.

    fork + setsid + exec rather than subprocess: importing subprocess alone costs a hook more
    than the whole fork, and the child needs nothing subprocess offers. The child is never
    waited for; when the hook exits it is re-parented, so no zombie stays behind.
    """
    try:
        # The folder too is ours all the way down from `home` (scrubber's folder): a link
        # planted as log/ is never followed.
        ensure_private_dir(log_path.parent, home)
        log_fd = open_own_file(log_path, os.O_WRONLY | os.O_APPEND)
    except (UnsafeFileError, UnsafeFolderError):
        # A link or FIFO planted as the log or its folder: the child still runs (it is the
        # worker, or a scan), its stderr goes nowhere rather than into the link's target.
        log_fd = os.open(os.devnull, os.O_WRONLY)
    null_fd = os.open(os.devnull, os.O_RDWR)
    program = argv[0]
    args = list(argv)
    environment = dict(env)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, covered by the e2e tests
            try:
                os.setsid()
                os.dup2(null_fd, 0)
                os.dup2(null_fd, 1)
                os.dup2(log_fd, 2)
                os.closerange(3, 65536)
                with contextlib.suppress(OSError):
                    os.chdir(cwd)
                os.execve(program, args, environment)  # noqa: S606 - our own program, no shell
            finally:
                os._exit(127)
        return pid
    finally:
        os.close(log_fd)
        os.close(null_fd)
