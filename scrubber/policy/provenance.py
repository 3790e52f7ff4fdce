"""Where each value of the policy in force came from: a default, a line of the policy file, a
pin made with `scrub pin` (state/pins.json), or Claude Code's settings (retention days).

Pure: the caller passes the policy, the lines its file's keys are written on (load.key_lines),
the command line's pins and Claude Code's period. The result is what `scrub policy show`
prints. Values that may hold a secret are never shown whole: a field the model keeps out of
reprs (the healthcheck URL, often its own credential) says only that it is set, a URL shows
its scheme and host, and an allowlist pattern (which may be a literal value) its length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from scrubber.policy.model import POLICY_VERSION, Policy

JSONValue = str | int | bool | None | list[Any]


class OriginKind(StrEnum):
    DEFAULT = "default"
    POLICY_FILE = "policy file"
    CLI_PIN = "scrub pin"
    CLAUDE_SETTINGS = "Claude Code settings"


@dataclass(frozen=True, slots=True)
class Origin:
    kind: OriginKind
    path: str | None = None
    line: int | None = None
    note: str | None = None  # what "default" or "Claude Code" means for this key

    def describe(self) -> str:
        if self.kind is OriginKind.POLICY_FILE:
            where = f"{self.path}:{self.line}" if self.line else str(self.path)
        elif self.kind is OriginKind.CLI_PIN:
            where = f"scrub pin ({self.path})"
        elif self.kind is OriginKind.CLAUDE_SETTINGS:
            where = (
                f"cleanupPeriodDays in {self.path}"
                if self.path
                else "Claude Code's default (no cleanupPeriodDays in its settings)"
            )
        else:
            where = "default"
        return f"{where}; {self.note}" if self.note else where

    def to_json(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "path": self.path, "line": self.line, "note": self.note}


@dataclass(frozen=True, slots=True)
class Setting:
    key: str  # dotted, as in the policy file: retention.days
    value: JSONValue
    origin: Origin
    # For a list whose items came from different places (pins.sessions): each item's origin.
    items: tuple[tuple[JSONValue, Origin], ...] = ()


@dataclass(frozen=True, slots=True)
class ClaudePeriod:
    """Claude Code's effective cleanupPeriodDays for sessions without project settings."""

    days: int | None  # None: its settings could not be read (retention pauses)
    source: Path | None  # the settings file that sets it; None: Claude Code's default
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class TraceInputs:
    """Everything besides the policy that says where a value came from."""

    file: Path | None  # the policy file in force; None: the built-in defaults
    lines: Mapping[str, int]  # dotted key -> line in that file
    cli_pins: Sequence[str]  # session ids pinned with `scrub pin`
    pins_file: Path
    claude: ClaudePeriod
    archives_default: Path  # $SCRUB_HOME/archives


def _shown(key: str, value: object, field: dataclasses.Field[Any]) -> JSONValue:
    if value is None:
        return None
    if not field.repr:
        return "(set; not shown: it may be a credential)"
    if isinstance(value, tuple | list):
        if key == "detection.allowlist.patterns":
            return [f"(a pattern of {len(str(p))} characters; see the policy file)" for p in value]
        return [_scalar(item) for item in value]
    return _scalar(value)


def _scalar(value: object) -> JSONValue:
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool | int):
        return value
    text = str(value)
    scheme, sep, rest = text.partition("://")
    if sep:  # a URL: its path, query or user part may carry a token
        host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
        return f"{scheme}://{host}/…" if rest != host else f"{scheme}://{host}"
    return text


def _leaves(value: object, prefix: str) -> list[tuple[str, object, dataclasses.Field[Any]]]:
    found: list[tuple[str, object, dataclasses.Field[Any]]] = []
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        if not field.init:
            continue  # derived (compiled patterns), not a key
        item = getattr(value, field.name)
        key = f"{prefix}{field.name}"
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            found.extend(_leaves(item, f"{key}."))
        else:
            found.append((key, item, field))
    return found


def trace_policy(policy: Policy, inputs: TraceInputs) -> tuple[Setting, ...]:
    """Every key of the policy in force (in the order of policies/default.yaml), with its origin."""

    def origin(key: str, note: str | None = None) -> Origin:
        line = inputs.lines.get(key)
        if line is not None and inputs.file is not None:
            return Origin(OriginKind.POLICY_FILE, str(inputs.file), line, note)
        return Origin(OriginKind.DEFAULT, note=note)

    settings = [Setting("version", POLICY_VERSION, origin("version"))]
    for key, value, field in _leaves(policy, ""):
        special = _effective(key, value, policy, inputs, origin)
        settings.append(special or Setting(key, _shown(key, value, field), origin(key)))
    return tuple(settings)


def _effective(
    key: str, value: object, policy: Policy, inputs: TraceInputs, origin: Any
) -> Setting | None:
    """A key whose value in force is decided elsewhere when the policy leaves it unset."""
    if key == "on_session_end" and value is None:
        actions: JSONValue = [str(a.value) for a in policy.session_end_actions]
        note = "not set: [archive] with recipients, else []"
        return Setting(key, actions, origin(key, note))
    if key == "archive.destination" and value is None:
        return Setting(
            key, str(inputs.archives_default), origin(key, "not set: $SCRUB_HOME/archives")
        )
    if key == "retention.days" and value is None:
        claude = inputs.claude
        note = "not in the policy; a project's .claude/settings may set less"
        if claude.days is None:
            note = f"not in the policy, and Claude Code's settings cannot be read: {claude.problem}"
        where = None if claude.source is None else str(claude.source)
        return Setting(key, claude.days, Origin(OriginKind.CLAUDE_SETTINGS, where, None, note))
    if key == "pins.sessions" and isinstance(value, tuple):
        own = origin(key)
        items: list[tuple[JSONValue, Origin]] = [(str(v), own) for v in value]
        pin = Origin(OriginKind.CLI_PIN, str(inputs.pins_file))
        items += [(sid, pin) for sid in inputs.cli_pins if sid not in value]
        if len(items) == len(value):
            return None
        return Setting(key, [item for item, _ in items], own, tuple(items))
    return None
