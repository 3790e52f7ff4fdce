"""Walking one transcript record: which of its strings to scan, and what each one is.

A record's strings are scanned with what the record tells about them: the JSON key each sits
under, the tool call a result or an input belongs to (a Read of `.env` makes every value in its
output a suspect), whether it is thinking text. Identifiers, chain fields and enum-like tags
(`transcript.records.UNSCANNED_KEYS`) and opaque payloads (images, documents, redacted
thinking) are never read. The tool calls a file has made so far are remembered here
(`CallMemory`), because a result names its call only by id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from scrubber.detection.context import ClassifiedCall, describe_tool_use
from scrubber.detection.detector import PLAIN, ReadsFiles, ScanContext, SourceKind
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.transcript.records import UNSCANNED_KEYS, json_pointer

# Tool calls remembered per file (see CallMemory.register).
MAX_CALLS_REMEMBERED = 8192
_SOURCE_LABEL_MAX = 120
# Tool input fields whose text is what the call writes to its file (a Write of `.env`).
_WRITTEN_FIELDS = ("content", "new_string", "new_source", "edits")


@dataclass(frozen=True, slots=True)
class StringLeaf:
    """One string of a record, with what the record says of it."""

    path: tuple[str | int, ...]
    text: str
    context: ScanContext
    source: str | None  # the tool call's label, already redacted
    in_thinking: bool

    @property
    def pointer(self) -> str:
        """Where it is, as an RFC 6901 JSON Pointer."""
        return json_pointer(*self.path)


class CallMemory:
    """The tool calls a file has made so far (the most recent `MAX_CALLS_REMEMBERED`), which of them
    touched a credential source, and which each file-scoped detector reads (`ReadsFiles`).
    `redact` makes a call's target fit to show in a label."""

    def __init__(self, scoped: Mapping[int, ReadsFiles], redact: Callable[[str], str]) -> None:
        self.calls: dict[str, ClassifiedCall] = {}
        self.sensitive: set[str] = set()
        # For each scoped detector: the calls whose file it reads.
        self.scoped_calls: dict[int, set[str]] = {i: set() for i in scoped}
        self._scoped = scoped
        self._labels: dict[str, str] = {}
        self._redact = redact

    def register(self, record: Mapping[str, Any]) -> bool:
        """Note the record's tool calls; True when one of them touches a credential source.
        Only the most recent are kept: a result follows its call closely, and memory must not
        grow with the file."""
        sensitive = False
        for block in content_blocks(record):
            if block.get("type") != "tool_use":
                continue
            call_id = block.get("id")
            name = block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                continue
            call = describe_tool_use(name, block.get("input"))
            self.note(call_id, call)
            sensitive = sensitive or call.source is not SourceKind.UNKNOWN
        return sensitive

    def note(self, call_id: str, call: ClassifiedCall) -> None:
        calls = self.calls
        calls.pop(call_id, None)
        calls[call_id] = call
        if call.source is not SourceKind.UNKNOWN:
            self.sensitive.add(call_id)
        for i, scoped in self.scoped_calls.items():
            if self._scoped[i].reads_file(call.target or None):
                scoped.add(call_id)
        while len(calls) > MAX_CALLS_REMEMBERED:
            oldest = next(iter(calls))
            del calls[oldest]
            self.sensitive.discard(oldest)
            self._labels.pop(oldest, None)
            for scoped in self.scoped_calls.values():
                scoped.discard(oldest)

    def label(self, call_id: str) -> str | None:
        label = self._labels.get(call_id)
        if label is None:
            call = self.calls.get(call_id)
            if call is None:
                return None
            target = self._redact(call.target) if call.target else ""
            label = _shorten(call.label(target, self._redact(call.name)))
            self._labels[call_id] = label
        return label


def record_strings(record: Mapping[str, Any], memory: CallMemory) -> Iterator[StringLeaf]:
    """Every string of a record worth scanning, in document order."""
    result_context, result_source = _result_of(record, memory)
    for key, value in record.items():
        if key == "toolUseResult" or (key == "data" and record.get("type") == "progress"):
            yield from _strings(value, (key,), result_context, result_source, False)
        elif key == "message" and isinstance(value, dict):
            yield from _message_strings(value, memory)
        elif key not in UNSCANNED_KEYS:
            yield from _strings(value, (key,), ScanContext(key), None, False)


def _result_of(record: Mapping[str, Any], memory: CallMemory) -> tuple[ScanContext, str | None]:
    """The context and label of the tool call a record answers, when it answers a known one."""
    result_id = next(
        (
            b.get("tool_use_id")
            for b in content_blocks(record)
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
        ),
        None,
    )
    if result_id is None and record.get("type") == "progress":
        # A running command's streamed output belongs to the call that started it.
        result_id = record.get("parentToolUseID")
    if not isinstance(result_id, str):
        return PLAIN, None
    call = memory.calls.get(result_id)
    context = ScanContext(None, call.source, call.target or None) if call is not None else PLAIN
    return context, memory.label(result_id)


def _message_strings(message: Mapping[str, Any], memory: CallMemory) -> Iterator[StringLeaf]:
    for key, value in message.items():
        if key == "content" and isinstance(value, list):
            for i, block in enumerate(value):
                path: tuple[str | int, ...] = ("message", "content", i)
                if isinstance(block, dict):
                    yield from _block_strings(block, path, memory)
                else:
                    yield from _strings(block, path, PLAIN, None, False)
        elif key not in UNSCANNED_KEYS:
            yield from _strings(value, ("message", key), ScanContext(key), None, False)


def _block_strings(
    block: Mapping[str, Any], path: tuple[str | int, ...], memory: CallMemory
) -> Iterator[StringLeaf]:
    kind = block.get("type")
    if kind in ("redacted_thinking", "image"):
        return  # opaque data and base64 payloads: not text
    if kind == "tool_use":
        yield from _tool_input_strings(block, path, memory)
        return
    if kind == "tool_result":
        call_id = block.get("tool_use_id")
        call = memory.calls.get(call_id) if isinstance(call_id, str) else None
        ctx = ScanContext(None, call.source, call.target or None) if call else PLAIN
        label = memory.label(call_id) if isinstance(call_id, str) else None
        yield from _strings(block.get("content"), (*path, "content"), ctx, label, False)
        return
    for key, value in block.items():
        if key in UNSCANNED_KEYS:
            continue
        yield from _strings(value, (*path, key), ScanContext(key), None, kind == "thinking")


def _tool_input_strings(
    block: Mapping[str, Any], path: tuple[str | int, ...], memory: CallMemory
) -> Iterator[StringLeaf]:
    call_id = block.get("id")
    call = memory.calls.get(call_id) if isinstance(call_id, str) else None
    label = memory.label(call_id) if isinstance(call_id, str) else None
    tool_input = block.get("input")
    if not isinstance(tool_input, dict):
        return
    for key, value in tool_input.items():
        source = SourceKind.UNKNOWN
        if call is not None and key in _WRITTEN_FIELDS:
            source = call.source
        ctx = ScanContext(key, source, call.target if call else None)
        yield from _strings(value, (*path, "input", key), ctx, label, False)


def _strings(
    value: Any,
    path: tuple[str | int, ...],
    ctx: ScanContext,
    source: str | None,
    thinking: bool,
) -> Iterator[StringLeaf]:
    # Parsed JSON holds its objects as dicts: `isinstance(…, dict)`, not the `Mapping` ABC,
    # whose check costs ten times as much on every node walked.
    if isinstance(value, str):
        yield StringLeaf(path, value, ctx, source, thinking)
    elif isinstance(value, dict):
        if value.get("type") in ("image", "base64") and "data" in value:
            return
        if value.get("type") == "image" or "media_type" in value:
            return
        for key, item in value.items():
            if key in UNSCANNED_KEYS and isinstance(item, str):
                continue
            sub = ScanContext(key, ctx.source, ctx.file_name) if isinstance(key, str) else ctx
            yield from _strings(item, (*path, key), sub, source, thinking)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict) and item.get("type") in ("image", "document"):
                continue
            yield from _strings(item, (*path, i), ctx, source, thinking)


def content_blocks(record: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The blocks of a record's `message.content`, when it is a list."""
    message = record.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block


def _shorten(label: str) -> str:
    """Cut a long label without cutting a placeholder in half."""
    if len(label) <= _SOURCE_LABEL_MAX:
        return label
    cut = _SOURCE_LABEL_MAX - 1
    for match in PLACEHOLDER_RE.finditer(label):
        if match.start() < cut < match.end():
            cut = match.start()
            break
    return label[:cut] + "…"
