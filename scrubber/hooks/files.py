"""Small file operations the hooks share: safe names, atomic JSON writes, appended log lines.

Standard library only, and only cheap modules: the status line runs after every assistant
message and the SessionEnd hook within Claude Code's 1.5 s budget, so start-up time matters more
here than anywhere else (no dataclasses, whose import pulls in `inspect`; no typing at run time).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from scrubber.durable import PRIVATE_FILE_MODE, ensure_private_dir, open_own_file
from scrubber.hooks.status_state import valid_session_id

__all__ = ["append_log_line", "fsync_dir", "valid_session_id", "write_json_atomic"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Text logs are rotated once past this size, keeping one old file: a hook writes ~150 bytes per
# session, so this is years of sessions, and the log never fills a disk.
LOG_ROTATE_BYTES = 4 << 20


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_json_atomic(path: Path, data: Mapping[str, Any], *, fsync: bool = True) -> None:
    """Write `data` as JSON through a temp file and a rename (0600).

    Beside durable.atomic_write because it can skip the fsyncs (`fsync=False`): the status
    line rewrites its state every few seconds, where an fsync costs milliseconds and a lost
    state only a rescan.
    """
    payload = (json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    try:
        try:
            os.write(fd, payload)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if fsync:
        fsync_dir(path.parent)


def append_log_line(path: Path, line: str, *, home: Path) -> None:
    """Append one line to a text log (0600), rotating it to `<name>.1` past LOG_ROTATE_BYTES.

    One `write` on an O_APPEND descriptor: lines from concurrent hooks never interleave. A
    link, FIFO or folder planted at `path` raises durable.UnsafeFileError, a link or another's
    folder on the way down from scrubber's folder `home` durable.UnsafeFolderError (both
    OSErrors, which the hooks already shrug off): nothing is written anywhere.
    """
    data = (line.rstrip("\n") + "\n").encode("utf-8", errors="replace")
    ensure_private_dir(path.parent, home)
    with contextlib.suppress(OSError):
        if os.lstat(path).st_size > LOG_ROTATE_BYTES:  # the file itself, not a link's target
            path.replace(path.with_name(path.name + ".1"))
    fd = open_own_file(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
