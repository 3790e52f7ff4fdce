"""What a retention run killed while it wrote a trash entry leaves behind, found and removed.

`trash_session` creates `trash/<session-id>/` (or `<session-id>.<n>/` for a later version) and
writes its manifest (through a temp file renamed into place) before anything moves. A run
killed in between leaves a slot holding nothing, or only the manifest's temp file `.manifest.json.<random>.tmp`: every later run then
failed on it (exit 3: a slot in the way, with no manifest to complete it from), `undelete`
could not see it and `doctor` said nothing (issue 11). Such a slot holds no session file, so
removing it loses nothing; the next run (under the retention lock) does, and `doctor` reports
it. A temp file beside a manifest (a kill while the manifest was rewritten) goes too. A slot
with anything else in it is left for a human: it is not one a crash of ours can leave.
"""

from __future__ import annotations

import contextlib
import shutil
import stat
from pathlib import Path

from scrubber import paths

__all__ = ["TRASH_MANIFEST", "find_crashed_trash", "remove_crashed_trash"]

TRASH_MANIFEST = "manifest.json"


def _is_manifest_temp(path: Path) -> bool:
    # durable.atomic_write's temp name: `.<name>.<random>.tmp` in the same folder.
    name = path.name
    return name.startswith(f".{TRASH_MANIFEST}.") and name.endswith(".tmp")


def _lstat_mode(path: Path) -> int | None:
    try:
        return path.lstat().st_mode
    except OSError:
        return None


def find_crashed_trash(home: Path) -> list[Path]:
    """Slots a killed run left without a manifest and holding nothing but its temp file, and
    stray manifest temp files beside a manifest. Nothing is removed."""
    root = paths.trash_dir(home)
    try:
        slots = sorted(root.iterdir())
    except OSError:
        return []
    found: list[Path] = []
    for slot in slots:
        mode = _lstat_mode(slot)
        if mode is None or not stat.S_ISDIR(mode):
            continue
        try:
            inside = sorted(slot.iterdir())
        except OSError:
            continue
        temps = [p for p in inside if _is_manifest_temp(p) and _is_file(p)]
        if (slot / TRASH_MANIFEST).exists():
            found.extend(temps)
        elif len(temps) == len(inside):
            found.append(slot)
    return found


def _is_file(path: Path) -> bool:
    mode = _lstat_mode(path)
    return mode is not None and stat.S_ISREG(mode)


def remove_crashed_trash(home: Path) -> list[Path]:
    """Remove what `find_crashed_trash` finds (the caller holds the retention lock); returns
    what went. An entry that cannot be removed is left for `doctor` to report."""
    removed = []
    for path in find_crashed_trash(home):
        with contextlib.suppress(OSError):
            if _is_file(path):
                path.unlink()
            else:
                shutil.rmtree(path)
            removed.append(path)
    return removed
