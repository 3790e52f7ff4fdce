"""Folders listed once for many questions about what they hold.

A command that lists the bundles of many sessions at one moment (an audit of a whole config
dir) asked for five paths of each and read the todos and tasks folders' states per session: for
20,000 sessions, 140,000 system calls, most of a warm audit. It lists each folder once instead.
"""

from __future__ import annotations

import bisect
import os


class FolderListing:
    """The entry names of folders, each listed when first asked about. What it says is what
    `os.path.lexists` said when the folder was listed; a folder that cannot be both read and
    entered is asked path by path (and holds nothing that starts with a name)."""

    def __init__(self) -> None:
        # By folder: its names as a set and sorted; None when it could not be listed.
        self._listed: dict[str, tuple[frozenset[str], list[str]] | None] = {}

    def _names(self, folder: str) -> tuple[frozenset[str], list[str]] | None:
        if folder not in self._listed:
            try:
                with os.scandir(folder) as entries:
                    names = sorted(entry.name for entry in entries)
                self._listed[folder] = (
                    (frozenset(names), names) if _entered(folder, names) else None
                )
            except (FileNotFoundError, NotADirectoryError):
                self._listed[folder] = (frozenset(), [])
            except OSError:
                self._listed[folder] = None
        return self._listed[folder]

    def holds(self, folder: str, name: str) -> bool:
        """Whether `folder/name` exists (as a link, if it is one)."""
        listed = self._names(folder)
        return os.path.lexists(f"{folder}/{name}") if listed is None else name in listed[0]

    def starting_with(self, folder: str, prefix: str) -> list[str] | None:
        """The names in `folder` that start with `prefix`, in name order (None when the folder
        cannot be listed and entered: ask it yourself)."""
        listed = self._names(folder)
        if listed is None:
            return None
        names = listed[1]
        found = []
        for name in names[bisect.bisect_left(names, prefix) :]:
            if not name.startswith(prefix):
                break
            found.append(name)
        return found


def _entered(folder: str, names: list[str]) -> bool:
    """Whether the paths of a listed folder's entries can be looked at: a folder that may be
    read but not searched (0644) lists names whose paths `lexists` calls absent. One entry
    tells (one gone since the listing says nothing against it)."""
    if not names:
        return True
    try:
        os.lstat(f"{folder}/{names[0]}")
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
