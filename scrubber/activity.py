"""The activity log and the healthcheck ping: what a run tells the world it did.

The log (`$SCRUB_HOME/log/activity.jsonl`, 0600) has one JSON line per action, shared by
retention and the SessionEnd worker: ids, paths, counts and kinds, never a value. The ping tells
a monitoring service (healthchecks.io and the like) that a retention run finished. Standard
library only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from scrubber import __version__, durable, paths

HEALTHCHECK_TIMEOUT = 10.0


def append_activity(home: Path, record: Mapping[str, object]) -> None:
    """One JSON line in `$SCRUB_HOME/log/activity.jsonl` (0600), appended in one write."""
    log = paths.activity_log(home)
    paths.ensure_private_dir(log.parent)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
    # Never through a planted link or into a FIFO: UnsafeFileError, an OSError like "disk full".
    fd = durable.open_own_file(log, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def ping_healthcheck(url: str, *, timeout: float = HEALTHCHECK_TIMEOUT) -> str | None:
    """GET the healthcheck URL; None on success, else a short reason. Never raises, and never
    puts the URL in its answer: such URLs carry their own token."""
    # Imported here: urllib.request (http.client, ssl, email) costs ~40 ms, which every live
    # hook call that logs a masking would pay for a ping it never makes.
    import urllib.error
    import urllib.request

    if not url.lower().startswith(("http://", "https://")):
        return "not an http(s) URL"
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked just above
        url, headers={"User-Agent": f"scrubber/{__version__}"}
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            response.read(4096)
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except urllib.error.URLError as error:
        # The reason's type only (timeout, gaierror, ConnectionRefusedError): its text may
        # quote the host or the URL.
        return f"unreachable ({type(error.reason).__name__})"
    except Exception as error:  # a healthcheck must never fail the run
        return type(error).__name__
    if time.monotonic() - started > timeout:
        return "timed out"
    return None
