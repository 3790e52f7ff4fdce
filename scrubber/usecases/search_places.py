"""Which strings of a transcript record `scrub search` reads, and what each one is to a user: a
prompt, an answer, thinking, the input or the output of a tool call.

Copies are left out: `queue-operation` and `last-prompt` records repeat prompts, titles are
shown anyway, and `toolUseResult` repeats the `tool_result` block of its record (it is read
only where that block did not match, for the parts of an output only it holds). Identifiers
and enum-like fields (`transcript.records.UNSCANNED_KEYS`) are never searched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from scrubber.detection.context import describe_tool_use
from scrubber.transcript.records import UNSCANNED_KEYS, json_pointer


class SearchScope(StrEnum):
    PROMPTS = "prompts"
    ANSWERS = "answers"
    TOOLS = "tools"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Piece:
    """One searchable string: its JSON Pointer (as the scanner names leaves), its text, what it
    is (`where`, with a tool's label still unredacted: the caller redacts it), and `copy`: a
    repeat of the record's tool_result, read only when that did not match."""

    pointer: str
    text: str
    where: str
    copy: bool = False


# A tool call's (name, target) by its id, as the file's scan remembers it.
CallLookup = Callable[[str], tuple[str, str] | None]


def _strings(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield json_pointer(*path), value
    elif isinstance(value, Mapping):
        if value.get("type") in ("image", "document", "base64") or "media_type" in value:
            return
        for key, item in value.items():
            if key in UNSCANNED_KEYS and isinstance(item, str):
                continue
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*path, i))


def _label(name: str, target: str) -> str:
    return f"{name}({target})" if target else name


def _user_kind(record: Mapping[str, Any]) -> tuple[str, SearchScope]:
    if record.get("isCompactSummary") is True:
        return "compaction summary", SearchScope.ALL
    if record.get("isMeta") is True:
        return "meta message", SearchScope.ALL
    return "prompt", SearchScope.PROMPTS


def _wanted(scope: SearchScope, kind: SearchScope) -> bool:
    return scope is SearchScope.ALL or scope is kind


def _user_pieces(
    record: Mapping[str, Any], scope: SearchScope, calls: CallLookup
) -> Iterator[Piece]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    kind, kind_scope = _user_kind(record)
    if isinstance(content, str):
        if _wanted(scope, kind_scope):
            yield Piece("/message/content", content, kind)
        return
    if not isinstance(content, list):
        return
    answered: str | None = None
    for i, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        path: tuple[str | int, ...] = ("message", "content", i)
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if _wanted(scope, kind_scope):
                yield Piece(json_pointer(*path, "text"), block["text"], kind)
        elif block.get("type") == "tool_result" and _wanted(scope, SearchScope.TOOLS):
            call_id = block.get("tool_use_id")
            call = calls(call_id) if isinstance(call_id, str) else None
            answered = "output of " + (_label(*call) if call else "a tool call")
            for pointer, text in _strings(block.get("content"), (*path, "content")):
                yield Piece(pointer, text, answered)
    result = record.get("toolUseResult")
    if result is not None and _wanted(scope, SearchScope.TOOLS):
        where = answered or "output of a tool call"
        for pointer, text in _strings(result, ("toolUseResult",)):
            yield Piece(pointer, text, where, copy=True)


def _assistant_pieces(record: Mapping[str, Any], scope: SearchScope) -> Iterator[Piece]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        if _wanted(scope, SearchScope.ANSWERS):
            yield Piece("/message/content", content, "answer")
        return
    if not isinstance(content, list):
        return
    for i, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        path: tuple[str | int, ...] = ("message", "content", i)
        kind = block.get("type")
        if kind == "text" and _wanted(scope, SearchScope.ANSWERS):
            text = block.get("text")
            if isinstance(text, str):
                yield Piece(json_pointer(*path, "text"), text, "answer")
        elif kind == "thinking" and _wanted(scope, SearchScope.ANSWERS):
            text = block.get("thinking")
            if isinstance(text, str):
                yield Piece(json_pointer(*path, "thinking"), text, "thinking")
        elif kind == "tool_use" and _wanted(scope, SearchScope.TOOLS):
            name = block.get("name")
            call = describe_tool_use(name if isinstance(name, str) else "tool", block.get("input"))
            where = "input of " + _label(call.name, call.target)
            for pointer, text in _strings(block.get("input"), (*path, "input")):
                yield Piece(pointer, text, where)


def record_pieces(
    record: Mapping[str, Any], scope: SearchScope, calls: CallLookup
) -> Iterator[Piece]:
    """The searchable strings of one record, in document order."""
    kind = record.get("type")
    if kind == "user":
        yield from _user_pieces(record, scope, calls)
    elif kind == "assistant":
        yield from _assistant_pieces(record, scope)
    elif kind == "system" and scope is SearchScope.ALL:
        content = record.get("content")
        if isinstance(content, str):
            yield Piece("/content", content, "system message")
