"""Which trashed version of a session a user names, and `undelete` by name.

The trash may hold several versions of one session (`trash_names.py`): a second `restore
--force`, or retention trashing a session that was undeleted and grew again. A name (id, id
prefix, title) picks a session as it always did; of that session's versions the newest is
brought back unless the user gives `version` (the number `scrub retention` and the warning
after an undelete show; version 1 is the folder named after the id alone). The others stay in
the trash, each with its own grace period, and the result lists them so the user is told.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from scrubber.errors import UsageError
from scrubber.retention.trash import UndeleteResult, list_trash, undelete_slot
from scrubber.retention.trash_manifest import TrashManifest
from scrubber.retention.trash_names import version_of

__all__ = ["describe_versions", "find_in_trash", "find_versions", "undelete"]

_MIN_PREFIX = 4

Slot = tuple[Path, TrashManifest]


def _version(item: Slot) -> int:
    slot, manifest = item
    return version_of(slot.name, manifest.session_id) or 1


def find_versions(home: Path, query: str) -> tuple[list[Slot], list[Slot]]:
    """The trash entries of the one session a user named, by id, id prefix (4+ characters) or
    title, in the order `find_session` tries them for `archive`, `pin` and `audit --session`:
    the custom title, then the title, exactly, then both ignoring case. Returns the versions
    the name matched and all the session's versions, each newest (highest version) first."""
    listing = list_trash(home)
    slots = [*listing.complete, *listing.incomplete]
    query = query.strip()
    if not query:
        raise UsageError("empty session name", "give a session id, id prefix or title")
    tests: list[Callable[[TrashManifest], bool]] = [lambda m: m.session_id == query]
    if len(query) >= _MIN_PREFIX:
        tests.append(lambda m: m.session_id.startswith(query))
    folded = query.casefold()
    for fold in (False, True):
        for custom in (True, False):
            tests.append(
                partial(_titled, query=folded if fold else query, fold=fold, custom=custom)
            )
    for test in tests:
        found = [(s, m) for s, m in slots if test(m)]
        ids = sorted({m.session_id for _, m in found})
        if len(ids) == 1:
            every = [(s, m) for s, m in slots if m.session_id == ids[0]]
            return _newest_first(found), _newest_first(every)
        if len(ids) > 1:
            shown = ", ".join(ids[:5])
            raise UsageError(f"{len(ids)} sessions in the trash match", f"name one by id: {shown}")
    raise UsageError(
        "no session in the trash matches that name",
        "`scrub retention` lists what is in the trash; expired entries may have been purged",
    )


def _newest_first(slots: Sequence[Slot]) -> list[Slot]:
    # A higher version was always trashed later (trash_names.claim_slot).
    return sorted(slots, key=_version, reverse=True)


def _titled(manifest: TrashManifest, *, query: str, fold: bool, custom: bool) -> bool:
    title = manifest.custom_title if custom else manifest.title
    if title is None:
        return False
    return (title.casefold() if fold else title) == query


def find_in_trash(home: Path, query: str, version: int | None = None) -> Slot:
    """The trash entry a user named: the newest version of the session the name picks, or
    the one `version` says."""
    return _pick(home, query, version)[0]


def _pick(home: Path, query: str, version: int | None) -> tuple[Slot, list[Slot]]:
    matched, every = find_versions(home, query)
    if version is None:
        # The newest whole version: a half-moved one (a killed run) is put back by the next
        # retention run, or named with --version; it never stands in for a whole one.
        complete = [item for item in matched if item[1].complete]
        chosen = (complete or matched)[0]
    else:
        numbered = [item for item in every if _version(item) == version]
        if not numbered:
            session_id = every[0][1].session_id
            raise UsageError(
                f"session {session_id} has no version {version} in the trash",
                f"its versions there: {describe_versions(_listed(every))}",
            )
        chosen = numbered[0]
    return chosen, [item for item in every if item[0] != chosen[0]]


def _listed(slots: Sequence[Slot]) -> tuple[tuple[int, datetime | None], ...]:
    return tuple((_version(item), item[1].trashed_at) for item in slots)


def describe_versions(versions: Sequence[tuple[int, datetime | None]]) -> str:
    """`2 (trashed 2025-05-01 12:00 UTC), 1 (…)`: versions as a message names them."""
    return ", ".join(
        f"{number} ("
        + (
            "still being moved"
            if at is None
            else f"trashed {at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        )
        + ")"
        for number, at in versions
    )


def undelete(
    home: Path,
    config_dir: Path,
    query: str,
    *,
    now: datetime,
    keep_mtime: bool = False,
    version: int | None = None,
) -> UndeleteResult:
    """Put a trashed session back where Claude Code finds it: the newest version of the one
    `query` names, or `version`. The result's `remaining` lists the versions left in the trash.
    The caller holds the retention lock."""
    chosen, others = _pick(home, query, version)
    slot, manifest = chosen
    result = undelete_slot(home, config_dir, slot, manifest, now=now, keep_mtime=keep_mtime)
    return replace(result, version=_version(chosen), remaining=_listed(others))
