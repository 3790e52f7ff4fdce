"""The pin use cases: `scrub pin` (a session here, or one in the trash, where a pin stops it
from being purged), `scrub unpin` (only pins made with `scrub pin`: the policy's are edited in
the policy) and `scrub pins` (both kinds)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scrubber import paths
from scrubber.errors import UsageError
from scrubber.policy.load import load_policy
from scrubber.policy.model import Pins
from scrubber.retention import pins as pin_store
from scrubber.retention.trash import find_in_trash
from scrubber.transcript.sessions import discover, find_session
from scrubber.usecases.retention import Titles


@dataclass(frozen=True, slots=True)
class Pinned:
    added: bool  # False: it was pinned already
    shown: str  # project/id, and whether it is in the trash
    title: str | None
    titles: Titles


def pin_session(env: Mapping[str, str], query: str, reason: str | None) -> Pinned:
    config = paths.config_dir(env)
    home = paths.scrub_home(env)
    loaded = load_policy(None, env)
    discovery = discover(config) if config.is_dir() else None
    record: pin_store.PinRecord
    try:
        if discovery is None:
            raise UsageError("no Claude Code config directory")
        info = find_session(config, query, discovery=discovery)
        record = pin_store.PinRecord(info.id, info.project, info.custom_title, reason)
        shown = f"{info.project}/{info.id}"
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
        shown = f"{manifest.project}/{manifest.session_id} (in the trash)"
        title = manifest.custom_title
    added = pin_store.add_pin(home, record)
    return Pinned(added, shown, title, Titles(loaded.policy, home))


def unpin_session(env: Mapping[str, str], query: str) -> tuple[pin_store.PinRecord, ...]:
    """The pins removed."""
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
        policy_pins = loaded.policy.pins
        if query in policy_pins.sessions or query in policy_pins.names:
            raise UsageError(
                "that session is pinned by the policy, not by `scrub pin`",
                f"edit the pins section of {loaded.describe()}",
            )
        raise UsageError("no pin matches that name", "`scrub pins` lists the pins")
    ids = frozenset(r.session_id for r in matches)
    if len(ids) > 1:
        raise UsageError(
            f"{len(ids)} pins match", "name one by its full id: " + ", ".join(sorted(ids)[:5])
        )
    return pin_store.remove_pins(home, ids)


@dataclass(frozen=True, slots=True)
class PinListing:
    records: tuple[pin_store.PinRecord, ...]  # made with `scrub pin`
    pins_file: Path
    policy_pins: Pins
    policy_source: str
    titles: Titles


def list_pins(env: Mapping[str, str], policy_path: Path | None) -> PinListing:
    home = paths.scrub_home(env)
    loaded = load_policy(policy_path, env)
    titles = Titles(loaded.policy, home)
    records = pin_store.read_pins(home)
    return PinListing(
        records, pin_store.pins_file(home), loaded.policy.pins, loaded.describe(), titles
    )
