"""One JSON document from a file that may be hostile: scrubber's state, caches, trash manifests,
archive sidecars, spool jobs and the settings files it reads.

Anything under `$SCRUB_HOME`, and a cloned repository's own `.claude/settings.json`, may have
been planted or damaged. A plain `json.loads(path.read_bytes())` then hangs on a FIFO (open()
waits for a writer), fills memory from a link to /dev/zero, and raises what no caller expects:
RecursionError on deeply nested arrays, ValueError from the interpreter's limit on the digits
of an integer. Here the file is opened without blocking (paths.open_regular), refused unless it
is a regular file, read up to a bound, and every way the content can be wrong is one
`DamagedDocument` (a ValueError, so callers that already treat ValueError as "damaged" keep
doing so), worded without quoting the content. Standard library only: the status line and the
hooks use it too.
"""

from __future__ import annotations

import json
from pathlib import Path

from scrubber import paths

TYPE_CHECKING = False  # the hooks import this module: no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# Per kind of file: every one of ours is far below its bound; the bound only caps memory.
MAX_STATE_BYTES = 16 << 20  # caches and records under state/ (the audit cache grows per session)
MAX_RECORD_BYTES = 1 << 20  # one spool job, one trash manifest, a sidecar, the allowlist
MAX_SETTINGS_BYTES = 4 << 20  # a Claude Code settings file (the user's or a project's)

# Deeper than any file we write or Claude Code's settings hold, and far enough below the
# interpreter's recursion limit that code walking the value (==, json.dumps) cannot hit it.
MAX_DEPTH = 100


class DamagedDocument(ValueError):
    """The file was read but holds no usable document; `problem` says why, in words that never
    quote the content (too large, not UTF-8, not valid JSON and where, nested too deeply)."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def read_bounded(path: Path, limit: int, *, follow: bool) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    Raises OSError when it cannot be opened (FileNotFoundError when it is missing,
    paths.NotRegularFileError for a FIFO, device, socket or folder, ELOOP for a link with
    `follow=False`, the setting for files of our own), DamagedDocument when it is larger.
    `follow=True` is for the user's own files, which a dotfile manager may link."""
    with paths.open_regular(path, follow=follow) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DamagedDocument(path, f"too large (over {limit} bytes)")
    return data


def parse_json(data: bytes, path: Path | str) -> Any:
    """The JSON value in `data` (UTF-8, a BOM allowed); DamagedDocument for anything else."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DamagedDocument(path, f"not UTF-8 text (bad byte at offset {error.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        # The decoder's message names a position and what it expected, never the content.
        where = f"at line {error.lineno} column {error.colno}"
        raise DamagedDocument(path, f"not valid JSON ({error.msg} {where})") from None
    except RecursionError:
        raise DamagedDocument(path, "not valid JSON (nested too deeply)") from None
    except ValueError:
        # The only other one: an integer of more digits than int() converts (4300 by default).
        raise DamagedDocument(path, "not valid JSON (a number with too many digits)") from None
    check_depth(value, path)
    return value


def check_depth(value: object, path: Path | str, limit: int = MAX_DEPTH) -> None:
    """Refuse a value nested deeper than `limit` (walked without recursion)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue  # a scalar at the top
        for child in children:
            if isinstance(child, dict | list):
                if depth >= limit:
                    raise DamagedDocument(path, f"nested more than {limit} levels deep")
                pending.append((child, depth + 1))


def load_json(path: Path, limit: int, *, follow: bool) -> Any:
    """read_bounded, then parse_json: OSError when the file cannot be read (or is missing, or
    not a regular file), DamagedDocument when what it holds is no JSON document."""
    return parse_json(read_bounded(path, limit, follow=follow), path)
