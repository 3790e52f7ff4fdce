"""The names of trash folders: one folder per trashed version of a session.

A session trashed once lies in `trash/<session-id>/` (version 1, the name every earlier
scrubber used); each later version of the same session, trashed while an earlier one is still
there (a second `restore --force`, retention trashing a session that was undeleted and grew
again), gets `trash/<session-id>.<n>/`, n = 2, 3, …: one more than the highest number on disk,
so a higher number is always a newer version. A folder's name is checked against the session
id its manifest holds (`version_of`): a folder named otherwise is not one we wrote.

Stdlib only and free of the trash module, so the plan, the trash and its readers share it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["MAX_VERSIONS", "VERSION_SEPARATOR", "claim_slot", "slot_name", "version_of"]

VERSION_SEPARATOR = "."
MAX_VERSIONS = 10_000  # folders one session may ever take; beyond that the trash is not ours


def slot_name(session_id: str, version: int) -> str:
    """The trash folder of `version` (1-based) of a session."""
    if version < 1:
        raise ValueError(f"trash version {version}: versions start at 1")
    return session_id if version == 1 else f"{session_id}{VERSION_SEPARATOR}{version}"


def version_of(name: str, session_id: str) -> int | None:
    """The version a trash folder called `name` holds of `session_id`, or None when that name
    is not one `slot_name` gives for it (`<id>.1`, `<id>.02`, `<id>.x` are not)."""
    if name == session_id:
        return 1
    prefix = f"{session_id}{VERSION_SEPARATOR}"
    if not name.startswith(prefix):
        return None
    digits = name[len(prefix) :]
    if not digits.isascii() or not digits.isdigit() or digits.startswith("0"):
        return None
    version = int(digits)
    return version if 2 <= version <= MAX_VERSIONS else None


def claim_slot(
    root: Path, session_id: str, ours: Callable[[Path], bool] = lambda _slot: True
) -> tuple[Path, int]:
    """Create the folder for a new version of `session_id` in `root` (the trash) and return it
    with its version. Whatever already lies at a name of this session (our own slots, a folder
    or link someone planted) is left alone and not reused: the new folder is made by an
    exclusive mkdir at a name nothing holds, one number above the highest of the slots that
    are `ours` (a folder planted at `<id>.10000` must not use up the numbers)."""
    try:
        with os.scandir(root) as listing:
            names = [entry.name for entry in listing]
    except FileNotFoundError:
        names = []
    taken = [v for n in names if (v := version_of(n, session_id)) is not None and ours(root / n)]
    version = max(taken, default=0) + 1
    while version <= MAX_VERSIONS:
        slot = root / slot_name(session_id, version)
        try:
            slot.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile (or a dangling link): the next one
            version += 1
            continue
        return slot, version
    raise FileExistsError(f"{root}: no free trash folder for session {session_id}")
