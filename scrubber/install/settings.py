"""Pure merges of Claude Code's settings: a dict in, a new dict out, never a key lost.

Claude Code's user `settings.json` holds much more than hooks. Ours are recognised by the
launcher names in their commands, so installing twice registers once, and uninstalling removes
exactly our entries, keeping whatever the user added since. The status line is a single value
per settings file (reference note, "Status line"): an existing one is wrapped (our command runs
it with the same stdin and prints its output first) and restored on uninstall.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from scrubber.errors import ConfigError
from scrubber.install.launchers import is_ours, wrapped_command
from scrubber.retention import settings as claude_settings

Settings = dict[str, Any]


# Claude Code caps a hook's timeout at 60 s (reference note, "Hooks").
MAX_SESSION_END_TIMEOUT = 60


# Seconds between the status line's runs while Claude Code is idle. Without it Claude Code runs
# the command only on events, so a secret read just before an answer showed only at the next
# event (issue 14, item 5); a call with nothing new costs a few milliseconds.
STATUS_LINE_REFRESH_SECONDS = 5


# What --take-over-cleanup writes; defined beside the reader of cleanupPeriodDays, whose
# forecast (`scrub sessions`) must know a sweep that is taken over.
TAKE_OVER_DAYS = claude_settings.TAKE_OVER_DAYS


def _object(data: Settings, key: str, where: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: `{key}` is not a JSON object; scrubber does not change it",
            "fix the settings file (Claude Code's settings reference shows its shape)",
        )
    return value


def _list(data: dict[str, Any], key: str, where: str) -> list[Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise ConfigError(
            f"{where}: `hooks.{key}` is not a list; scrubber does not change it",
            "fix the settings file (Claude Code's settings reference shows its shape)",
        )
    return value


def _our_handler(command: str, timeout: int | None) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    return handler


def add_session_end_hook(
    settings: Settings, command: str, timeout: int | None = None, *, where: str = "settings"
) -> Settings:
    """`settings` with our SessionEnd handler registered once (updated in place if present)."""
    result = copy.deepcopy(settings)
    hooks = _object(result, "hooks", where)
    if hooks is None:
        hooks = result["hooks"] = {}
    groups = _list(hooks, "SessionEnd", where)
    if groups is None:
        groups = hooks["SessionEnd"] = []
    wanted = _our_handler(command, timeout)
    found = False
    emptied = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        before = len(handlers)
        for index, handler in enumerate(handlers):
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                if found:
                    handlers[index] = None  # a second handler of ours: dropped below
                else:
                    handlers[index] = {**handler, **wanted}
                    if timeout is None:
                        handlers[index].pop("timeout", None)
                    found = True
        handlers[:] = [h for h in handlers if h is not None]
        if before and not handlers:
            emptied.append(group)
    groups[:] = [g for g in groups if not any(g is e for e in emptied)]
    if not found:
        groups.append({"hooks": [wanted]})
    return result


def remove_session_end_hook(
    settings: Settings,
    *,
    drop_empty_event: bool = True,
    drop_empty_hooks: bool = True,
    where: str = "settings",
) -> Settings:
    """`settings` without our SessionEnd handlers; groups we emptied go too. An event list or
    `hooks` object left empty is removed when the flags say we created it."""
    result = copy.deepcopy(settings)
    hooks = _object(result, "hooks", where)
    if hooks is None:
        return result
    groups = _list(hooks, "SessionEnd", where)
    if groups is None:
        return result
    kept_groups = _without_our_handlers(groups)
    hooks["SessionEnd"] = kept_groups
    if not kept_groups and drop_empty_event:
        del hooks["SessionEnd"]
    if not hooks and drop_empty_hooks:
        del result["hooks"]
    return result


def has_session_end_hook(settings: Mapping[str, Any]) -> list[str]:
    """The commands of our SessionEnd handlers in `settings`."""
    found = []
    hooks = settings.get("hooks")
    groups = hooks.get("SessionEnd") if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                found.append(str(handler["command"]))
    return found


def install_status_line(
    settings: Settings, make_command: Callable[[str | None], str]
) -> tuple[Settings, dict[str, Any] | None]:
    """`settings` with our status line, wrapping the user's; returns the previous value (None
    when there was none, or when ours was already there)."""
    result = copy.deepcopy(settings)
    current = result.get("statusLine")
    if isinstance(current, dict) and is_ours(current.get("command")):
        previous_command = wrapped_command(str(current["command"]))
        updated = {**current, "command": make_command(previous_command)}
        updated.setdefault("refreshInterval", STATUS_LINE_REFRESH_SECONDS)  # an older install's
        result["statusLine"] = updated
        return result, None
    previous_command = None
    if isinstance(current, dict) and current.get("type", "command") == "command":
        command = current.get("command")
        previous_command = command if isinstance(command, str) and command.strip() else None
    elif current is not None:
        raise ConfigError(
            "settings: `statusLine` has a shape scrubber does not know; it is left alone",
            'remove it or make it {"type": "command", "command": …}, then run again',
        )
    ours: dict[str, Any] = {"type": "command", "command": make_command(previous_command)}
    if isinstance(current, dict):
        # Keep the user's padding, refreshInterval and whatever else the object holds.
        ours = {**current, **ours}
    else:
        ours["padding"] = 0
    ours.setdefault("refreshInterval", STATUS_LINE_REFRESH_SECONDS)
    result["statusLine"] = ours
    return result, copy.deepcopy(current) if isinstance(current, dict) else None


def remove_status_line(
    settings: Settings, previous: Mapping[str, Any] | None, *, known: bool = True
) -> Settings:
    """`settings` with our status line replaced by what it wrapped, or removed.

    `previous` is the value the install record kept (None: there was none); with `known`
    False (no record) the wrapped command is read back from ours.
    """
    result = copy.deepcopy(settings)
    current = result.get("statusLine")
    if not (isinstance(current, dict) and is_ours(current.get("command"))):
        return result  # the user replaced it since: theirs stays
    if known:
        if previous is None:
            del result["statusLine"]
        else:
            result["statusLine"] = copy.deepcopy(dict(previous))
        return result
    wrapped = wrapped_command(str(current["command"]))
    if wrapped:
        restored = {k: v for k, v in current.items() if k != "command"}
        result["statusLine"] = {**restored, "command": wrapped}
    else:
        del result["statusLine"]
    return result


def set_cleanup_days(settings: Settings, days: int) -> Settings:
    result = copy.deepcopy(settings)
    result["cleanupPeriodDays"] = days
    return result


def restore_cleanup_days(settings: Settings, record: Mapping[str, Any]) -> Settings:
    """Undo `set_cleanup_days` when the value is still the one we wrote."""
    result = copy.deepcopy(settings)
    if result.get("cleanupPeriodDays") != record.get("set"):
        return result
    if record.get("had_key"):
        result["cleanupPeriodDays"] = record.get("previous")
    else:
        result.pop("cleanupPeriodDays", None)
    return result


def add_event_hook(
    settings: Settings,
    event: str,
    command: str,
    *,
    matcher: str | None = None,
    timeout: int | None = None,
    where: str = "settings",
) -> Settings:
    """`settings` with our handler for `event` registered once, in a group of its own (with
    `matcher`); handlers of ours already there are replaced. Idempotent."""
    result = remove_event_hook(settings, event, where=where)
    hooks = _object(result, "hooks", where)
    if hooks is None:
        hooks = result["hooks"] = {}
    groups = _list(hooks, event, where)
    if groups is None:
        groups = hooks[event] = []
    group: dict[str, Any] = {"hooks": [_our_handler(command, timeout)]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    groups.append(group)
    return result


def _without_our_handlers(groups: list[Any]) -> list[Any]:
    """An event's hook groups without our handlers: a group we emptied goes, one that holds
    something else keeps it, anything not shaped like a group is kept as it is."""
    kept = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        remaining = [h for h in handlers if not (isinstance(h, dict) and is_ours(h.get("command")))]
        if len(remaining) == len(handlers):
            kept.append(group)
        elif remaining:
            kept.append({**group, "hooks": remaining})
    return kept


def remove_event_hook(settings: Settings, event: str, *, where: str = "settings") -> Settings:
    """`settings` without our handlers for `event`; a group, event list or `hooks` object we
    emptied goes too (one the user left empty stays)."""
    result = copy.deepcopy(settings)
    hooks = _object(result, "hooks", where)
    groups = _list(hooks, event, where) if hooks is not None else None
    if hooks is None or groups is None:
        return result
    kept = _without_our_handlers(groups)
    if kept or not groups:
        hooks[event] = kept
    else:
        del hooks[event]
        if not hooks:
            del result["hooks"]
    return result


def event_hook_commands(settings: Mapping[str, Any], event: str) -> list[str]:
    """The commands of our handlers for `event` in `settings`."""
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    found = []
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                found.append(str(handler["command"]))
    return found
