"""Pins made on the command line: `$SCRUB_HOME/state/pins.json`, merged with the policy's pins.

`scrub pin SESSION|NAME` resolves what the user named to one session and records its id (and,
for display, its project and custom title); the policy's pins by name, tag and project glob stay
rules in the policy. The file is rewritten atomically under a small lock, so two `scrub pin`
runs never lose each other's pin. A pins file that exists but cannot be read is an error, never
"no pins": forgetting a pin is how a session gets deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from scrubber import paths
from scrubber.durable import write_json_state
from scrubber.errors import ConfigError
from scrubber.policy.model import Pins
from scrubber.untrusted import DamagedDocument, load_json

PINS_FORMAT = 1
_MAX_PINS_BYTES = 16 << 20


def pins_file(home: Path) -> Path:
    return paths.state_dir(home) / "pins.json"


@dataclass(frozen=True, slots=True)
class PinRecord:
    session_id: str
    project: str | None = None
    name: str | None = field(default=None, repr=False)  # the custom title when pinned
    reason: str | None = field(default=None, repr=False)
    pinned_at: datetime | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "project": self.project,
            "name": self.name,
            "reason": self.reason,
            "pinned_at": None if self.pinned_at is None else self.pinned_at.isoformat(),
        }


def _bad(path: Path, problem: str) -> ConfigError:
    return ConfigError(
        f"{path}: {problem}; retention paused so that no pinned session is deleted",
        "restore the file from a backup, or fix it by hand (scrub pins shows what it holds)",
    )


def _optional_text(item: dict[str, object], key: str, path: Path, index: int) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(path, f"pins[{index}].{key} is not text")
    return value


def read_pins(home: Path) -> tuple[PinRecord, ...]:
    """The pins recorded by `scrub pin`. Raises ConfigError when the file is unreadable."""
    path = pins_file(home)
    try:
        if not paths.check_private_dir(path.parent, home):
            return ()
        # Our own file: never a link, never a FIFO (which would block every command).
        value = load_json(path, _MAX_PINS_BYTES, follow=False)
    except FileNotFoundError:
        return ()
    except OSError as error:
        raise _bad(path, f"cannot read ({error.strerror})") from None
    except DamagedDocument as damaged:
        raise _bad(path, damaged.problem) from None
    if not isinstance(value, dict) or not isinstance(value.get("pins"), list):
        raise _bad(path, "expected an object with a 'pins' list")
    if value.get("format") != PINS_FORMAT:
        raise _bad(path, f"unknown format {value.get('format')!r} (this scrubber reads 1)")
    records = []
    for index, item in enumerate(value["pins"]):
        if not isinstance(item, dict):
            raise _bad(path, f"pins[{index}] is not an object")
        session_id = item.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            raise _bad(path, f"pins[{index}].session_id is missing")
        stamp = _optional_text(item, "pinned_at", path, index)
        try:
            pinned_at = datetime.fromisoformat(stamp) if stamp else None
        except ValueError:
            raise _bad(path, f"pins[{index}].pinned_at is not a date") from None
        records.append(
            PinRecord(
                session_id=session_id,
                project=_optional_text(item, "project", path, index),
                name=_optional_text(item, "name", path, index),
                reason=_optional_text(item, "reason", path, index),
                pinned_at=pinned_at,
            )
        )
    return tuple(records)


def cli_pins(home: Path) -> Pins:
    return Pins(sessions=tuple(dict.fromkeys(r.session_id for r in read_pins(home))))


def effective_pins(policy_pins: Pins, home: Path) -> Pins:
    """The policy's pins and the command line's, as every destructive path must see them."""
    return policy_pins.merged(cli_pins(home))


def _bad_lock(lock: Path, problem: str) -> ConfigError:
    return ConfigError(
        f"{lock}: {problem}; pins not changed", f"remove {lock} (scrub makes it again)"
    )


@contextlib.contextmanager
def _pins_lock(home: Path) -> Iterator[None]:
    folder = paths.ensure_private_dir(paths.state_dir(home))
    lock = folder / "pins.lock"
    # Never through a planted link (O_CREAT would make its target), never blocking on a FIFO.
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as error:
        raise _bad_lock(lock, f"cannot open it ({error.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _bad_lock(lock, f"is {paths.file_type_name(mode)}, not a lock file")
        # Blocking: pin commands are quick, and a pin must not be refused for being busy.
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(home: Path, records: tuple[PinRecord, ...]) -> None:
    body = {"format": PINS_FORMAT, "pins": [r.to_json() for r in records]}
    write_json_state(pins_file(home), body)


def add_pin(home: Path, record: PinRecord) -> bool:
    """Record a pin. False when the session was already pinned (its reason is updated when a
    new one is given)."""
    with _pins_lock(home):
        records = list(read_pins(home))
        for index, existing in enumerate(records):
            if existing.session_id == record.session_id:
                if record.reason and record.reason != existing.reason:
                    records[index] = PinRecord(
                        existing.session_id,
                        existing.project or record.project,
                        existing.name or record.name,
                        record.reason,
                        existing.pinned_at,
                    )
                    _write(home, tuple(records))
                return False
        stamped = record
        if record.pinned_at is None:
            stamped = PinRecord(
                record.session_id, record.project, record.name, record.reason, datetime.now(UTC)
            )
        _write(home, (*records, stamped))
        return True


def remove_pins(home: Path, session_ids: frozenset[str]) -> tuple[PinRecord, ...]:
    """Drop the pins of these sessions; returns what was removed."""
    with _pins_lock(home):
        records = read_pins(home)
        removed = tuple(r for r in records if r.session_id in session_ids)
        if removed:
            _write(home, tuple(r for r in records if r.session_id not in session_ids))
        return removed


def match_pins(records: tuple[PinRecord, ...], query: str) -> tuple[PinRecord, ...]:
    """Pins a user named: by full id, by an id prefix of 4+ characters, or by recorded name."""
    query = query.strip()
    exact = tuple(r for r in records if r.session_id == query)
    if exact:
        return exact
    if len(query) >= 4:
        prefixed = tuple(r for r in records if r.session_id.startswith(query))
        if prefixed:
            return prefixed
    named = tuple(r for r in records if r.name is not None and r.name == query)
    if named:
        return named
    folded = query.casefold()
    return tuple(r for r in records if r.name is not None and r.name.casefold() == folded)
