"""The pin use cases: `scrub pin` (a session here, or one in the trash, where a pin stops it
from being purged), `scrub unpin` (only pins made with `scrub pin`: the policy's are edited in
the policy) and `scrub pins` (both kinds)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from scrubber import paths
from scrubber.errors import ScrubberError, UsageError
from scrubber.policy.load import LoadedPolicy, load_policy
from scrubber.policy.model import Pins
from scrubber.retention import pins as pin_store
from scrubber.retention.trash import list_trash
from scrubber.retention.trash_versions import find_in_trash
from scrubber.transcript.sessions import SessionInfo, discover, find_session
from scrubber.usecases.shown_names import FolderNames, Titles, folder_names, live_cwds


@dataclass(frozen=True, slots=True)
class Pinned:
    added: bool  # False: it was pinned already
    shown: str  # project/id (the folder as every report shows it), and whether it is in the trash
    title: str | None
    titles: Titles


def pin_session(env: Mapping[str, str], query: str, reason: str | None) -> Pinned:
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    loaded = load_policy(None, env)
    discovery = discover(config) if paths.is_config_dir(config) else None
    record: pin_store.PinRecord
    info: SessionInfo | None = None
    try:
        if discovery is None:
            raise UsageError("no Claude Code config directory")
        info = find_session(config, query, discovery=discovery)
        record = pin_store.PinRecord(info.id, info.project, info.custom_title, reason)
        title = info.title
    except UsageError as error:
        if discovery is not None and not error.message.startswith("no session matches"):
            raise  # ambiguous: the user must say which
        # Not here: perhaps in the trash, where a pin stops it from being purged.
        try:
            _slot, manifest = find_in_trash(home, query)
        except UsageError:
            raise error from None
        record = pin_store.PinRecord(
            manifest.session_id, manifest.project, manifest.custom_title, reason
        )
        title = manifest.custom_title
    titles = Titles(loaded.policy, home)
    added = pin_store.add_pin(home, _kept_as_shown(record, titles))
    # The folder is shown only once the pin is written: showing it builds the scanner (its key
    # and compiled gates), and a failure there must not be mistaken for the pin's own.
    if info is not None:
        shown = f"{_folders(loaded, home, env, info).project(info.project)}/{info.id}"
    else:
        folder = folder_names(loaded.policy, home, env).project(record.project)
        shown = f"{folder}/{record.session_id} (in the trash)"
    return Pinned(added, shown, title, titles)


def _kept_as_shown(record: pin_store.PinRecord, titles: Titles) -> pin_store.PinRecord:
    """The pin as `state/pins.json` keeps it: the title and reason as every listing shows
    them (a title can hold a secret, found in it or elsewhere in the session: the file must
    not keep it after the transcript is redacted). The pin itself never waits on that: when
    the scanner cannot be built, they are not kept at all (`unpin` finds a pin by its id, or
    by the session's title while the session is there)."""
    try:
        name = titles.show(record.name, None) or None
        reason = titles.show(record.reason, None) or None
    except (ScrubberError, OSError):
        name = reason = None
    return dataclasses.replace(record, name=name, reason=reason)


def _folders(
    loaded: LoadedPolicy, home: Path, env: Mapping[str, str], *infos: SessionInfo
) -> FolderNames:
    return folder_names(loaded.policy, home, env, infos)


def unpin_session(env: Mapping[str, str], query: str) -> tuple[pin_store.PinRecord, ...]:
    """The pins removed, each with its project folder as every report shows it."""
    home = paths.scrub_home(env)
    config = paths.config_dir(env)
    loaded = load_policy(None, env)
    records = pin_store.read_pins(home)
    matches = pin_store.match_pins(records, query)
    if not matches and config.is_dir():
        with contextlib.suppress(UsageError):
            info = find_session(config, query)
            matches = tuple(r for r in records if r.session_id == info.id)
    if not matches:
        raise _not_pinned(query, config, home, loaded, env)
    ids = frozenset(r.session_id for r in matches)
    if len(ids) > 1:
        raise UsageError(
            f"{len(ids)} pins match", "name one by its full id: " + ", ".join(sorted(ids)[:5])
        )
    removed = pin_store.remove_pins(home, ids)
    folders = _record_folders(folder_names(loaded.policy, home, env), config, removed)
    return tuple(
        dataclasses.replace(r, project=folders.project(r.project, r.session_id)) for r in removed
    )


def _not_pinned(
    query: str, config: Path, home: Path, loaded: LoadedPolicy, env: Mapping[str, str]
) -> UsageError:
    """Why nothing was unpinned: the session named is not pinned (or only by the policy), or
    no session goes by that name at all. Never a title in the message: it may hold a secret."""
    policy_pins = loaded.policy.pins
    by_policy = UsageError(
        "that session is pinned by the policy, not by `scrub pin`",
        f"edit the pins section of {loaded.describe()}",
    )
    hint = "`scrub pins` lists the pins"
    try:
        # With metadata: the policy pins by title, tag and working directory too.
        info = find_session(config, query, discovery=discover(config)) if config.is_dir() else None
    except UsageError as error:
        if not error.message.startswith("no session matches"):
            return error  # several sessions go by that name: the user must say which
        info = None
    if info is not None:
        if policy_pins.covers(
            session_id=info.id,
            title=info.custom_title,
            tags=info.tags,
            project=info.project,
            cwd=info.cwd,
        ):
            return by_policy
        folder = _folders(loaded, home, env, info).project(info.project)
        return UsageError(
            f"session {folder}/{info.id} is not pinned", f"{hint}; `scrub pin` pins one"
        )
    if query in policy_pins.sessions or query in policy_pins.names:
        return by_policy
    with contextlib.suppress(UsageError):
        _slot, manifest = find_in_trash(home, query)
        folder = folder_names(loaded.policy, home, env).project(manifest.project)
        return UsageError(
            f"session {folder}/{manifest.session_id} is in the trash and not pinned",
            f"{hint}; `scrub undelete` brings it back",
        )
    return UsageError(
        "no session matches that name, and no pin does",
        f"{hint}, `scrub sessions` the sessions (by id, id prefix or title)",
    )


class SessionState(StrEnum):
    """Where the session a pin names is now."""

    PRESENT = "present"  # under the config dir
    IN_TRASH = "in-trash"  # in scrubber's trash, where the pin stops it from being purged
    GONE = "gone"  # neither: deleted (by Claude Code's sweep, by hand), or purged


@dataclass(frozen=True, slots=True)
class PinListing:
    records: tuple[pin_store.PinRecord, ...]  # made with `scrub pin`
    pins_file: Path
    policy_pins: Pins
    policy_source: str
    titles: Titles
    folders: FolderNames  # shows each record's project folder as every report does
    # Per session id, of the pins above and the policy's pins by id. A pin of a gone session
    # still keeps that session's archives from being purged.
    states: Mapping[str, SessionState] = field(default_factory=dict)

    def state(self, session_id: str) -> SessionState | None:
        return self.states.get(session_id)


def list_pins(env: Mapping[str, str], policy_path: Path | None) -> PinListing:
    home = paths.scrub_home(env)
    config = paths.config_dir(env)
    loaded = load_policy(policy_path, env)
    titles = Titles(loaded.policy, home)
    records = pin_store.read_pins(home)
    here = {s.id for s in discover(config, metadata=False).sessions} if config.is_dir() else set()
    trash = list_trash(home)
    trashed = {m.session_id for _, m in (*trash.complete, *trash.incomplete)}
    states = {
        session_id: SessionState.PRESENT
        if session_id in here
        else SessionState.IN_TRASH
        if session_id in trashed
        else SessionState.GONE
        for session_id in (*(r.session_id for r in records), *loaded.policy.pins.sessions)
    }
    folders = _record_folders(folder_names(loaded.policy, home, env), config, records)
    return PinListing(
        records,
        pin_store.pins_file(home),
        loaded.policy.pins,
        loaded.describe(),
        titles,
        folders,
        states,
    )


def _record_folders(
    folders: FolderNames, config: Path, records: tuple[pin_store.PinRecord, ...]
) -> FolderNames:
    """`folders` told the cwds of the sessions in the pins' project folders, read only for
    those folders (a full metadata discovery is slow on 20,000 sessions)."""
    cwds = live_cwds(config, {r.project for r in records if r.project})
    for record in records:
        for cwd in cwds.get(record.project or "", ()):
            folders.add(record.project, record.session_id, cwd)
    return folders
