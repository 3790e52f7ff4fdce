"""Typed views over Claude Code transcript records.

A `Record` wraps the dict the reader parsed from one line; it never copies or rewrites it, so
every field we do not know about (and every record type a future release adds) stays exactly
where it was, and a writer that serialises `record.raw` loses nothing. Accessors return None (or
an empty tuple) when a field is absent or has an unexpected type: the format is internal to
Claude Code and changes between releases, so a view must never raise on what it reads.

The views keep no secret out of reach, but they never show one either: their reprs name the
record type, ids and JSON pointers only (a record's text is exactly what a repr must not print).

Field names follow ../shared/reference/claude-code.md (observed in Claude Code 2.1.x). Two are
our best reading of records we have not seen in the wild: `ai-title` (`aiTitle`, else `title`)
and `tag` (`tag`, or a `tags` list).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrubber.transcript.jsonl import JsonLoads, Line, read_lines

JsonObject = dict[str, Any]

# Tool input fields worth keeping in the ToolIndex: they say what a tool touched or ran. Other
# fields (a Write's `content`, an Edit's `new_string`) can be megabytes, are scanned where they
# lie, and would make the index grow with the file.
_TOOL_TARGET_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "command",
    "url",
    "pattern",
    "glob",
    "query",
    "description",
    "subagent_type",
)
_MAX_TARGET_CHARS = 8192


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


# String values redaction must never change (Claude Code's reference, "What must never
# change"): identifiers, chain fields, signatures and the type tags readers dispatch on.
PROTECTED_KEYS = frozenset(
    {
        "uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId", "requestId",
        "timestamp", "messageId", "sourceToolAssistantUUID", "toolUseID", "parentToolUseID",
        "agentId", "tool_use_id", "signature", "type", "subtype", "role", "id",
    }
)  # fmt: skip
# Keys whose string values the scanner never reads: the protected ones, and other identifiers
# and enum-like tags that are never secrets (so redaction leaves them byte-identical too);
# not `gitBranch`: whoever made a branch named it, and a token in it is on every line.
UNSCANNED_KEYS = PROTECTED_KEYS | frozenset(
    {
        "sourceToolUseID", "promptId", "hash", "media_type", "stop_reason", "model", "version",
        "userType", "permissionMode", "slug", "level", "operation", "name",
    }
)  # fmt: skip


def _pointer_token(key: str | int) -> str:
    """One RFC 6901 reference token."""
    return str(key).replace("~", "~0").replace("/", "~1")


def json_pointer(*keys: str | int) -> str:
    """An RFC 6901 JSON Pointer from its reference tokens (`json_pointer("a", 0)` is `/a/0`)."""
    return "".join("/" + _pointer_token(k) for k in keys)


def string_at(record: Mapping[str, Any], pointer: str) -> str | None:
    """The string a JSON Pointer names in a parsed record (None if it names no string)."""
    node: Any = record
    for key in (t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]):
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, str) else None


def parse_timestamp(value: object) -> datetime | None:
    """An aware datetime from a record's `timestamp`, or None when absent or unreadable.

    Transcripts carry ISO-8601 text with a `Z` suffix; `history.jsonl` carries epoch
    milliseconds. A naive time is taken as UTC (Claude Code writes UTC).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True, eq=False)
class Block:
    """One content block of a message: text, thinking, image, document, or a type to come.

    `path` is the block's JSON Pointer inside the record. A message whose `content` is a plain
    string is shown as one synthetic text block whose `path` is the string itself
    (`/message/content`); `synthetic` tells the two apart, and `text_path` always points at the
    string holding the text.
    """

    raw: Mapping[str, Any] = field(repr=False)
    path: str
    synthetic: bool = False

    def __repr__(self) -> str:
        return f"Block(type={self.type!r}, path={self.path!r})"

    @property
    def type(self) -> str | None:
        return _str(self.raw.get("type"))

    @property
    def text(self) -> str | None:
        """The text of a `text` block (None for other kinds)."""
        return _str(self.raw.get("text")) if self.type == "text" else None

    @property
    def text_path(self) -> str:
        return self.path if self.synthetic else self.path + "/text"

    @property
    def thinking(self) -> str | None:
        return _str(self.raw.get("thinking")) if self.type == "thinking" else None

    @property
    def signature(self) -> str | None:
        return _str(self.raw.get("signature"))

    @property
    def is_image(self) -> bool:
        return self.type == "image"


@dataclass(frozen=True, slots=True, eq=False)
class ToolUse:
    """A `tool_use` block of an assistant record: the call (`Read`, `Bash`, …) and its input."""

    raw: Mapping[str, Any] = field(repr=False)
    path: str
    record_uuid: str | None = None

    def __repr__(self) -> str:
        return f"ToolUse(id={self.id!r}, name={self.name!r}, path={self.path!r})"

    @property
    def id(self) -> str | None:
        return _str(self.raw.get("id"))

    @property
    def name(self) -> str | None:
        return _str(self.raw.get("name"))

    @property
    def input(self) -> Mapping[str, Any]:
        value = self.raw.get("input")
        return value if isinstance(value, dict) else {}

    def call(self) -> ToolCall | None:
        """The small, index-friendly summary of this call; None without an id."""
        tool_id = self.id
        if tool_id is None:
            return None
        targets: dict[str, str] = {}
        given = self.input
        for key in _TOOL_TARGET_KEYS:
            value = given.get(key)
            if isinstance(value, str):
                targets[key] = value[:_MAX_TARGET_CHARS]
        return ToolCall(tool_id, self.name or "", targets, self.record_uuid)


@dataclass(frozen=True, slots=True, eq=False)
class ToolResult:
    """A `tool_result` block of a user record: the output of the call `tool_use_id` names."""

    raw: Mapping[str, Any] = field(repr=False)
    path: str

    def __repr__(self) -> str:
        return f"ToolResult(tool_use_id={self.tool_use_id!r}, path={self.path!r})"

    @property
    def tool_use_id(self) -> str | None:
        return _str(self.raw.get("tool_use_id"))

    @property
    def content(self) -> str | list[Any] | None:
        """A string, or a list of `text` / `image` blocks, exactly as stored."""
        value = self.raw.get("content")
        return value if isinstance(value, str | list) else None

    @property
    def is_error(self) -> bool:
        return self.raw.get("is_error") is True

    def texts(self) -> Iterator[tuple[str, str]]:
        """(JSON Pointer, text) for every text the output holds; images are not text."""
        content = self.content
        if isinstance(content, str):
            yield self.path + "/content", content
        elif isinstance(content, list):
            for i, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "text":
                    text = block.get("text")
                    if isinstance(text, str):
                        yield self.path + json_pointer("content", i, "text"), text

    def text(self) -> str:
        """All the output's text, joined by newlines."""
        return "\n".join(text for _, text in self.texts())


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What the ToolIndex keeps of a tool call: its id, tool name and the short input fields
    that say what it touched (`file_path`, `command`, `url`, `pattern`, …; each cut at 8 KB)."""

    id: str
    name: str
    targets: Mapping[str, str] = field(repr=False)
    record_uuid: str | None = None

    @property
    def file_path(self) -> str | None:
        return (
            self.targets.get("file_path")
            or self.targets.get("notebook_path")
            or self.targets.get("path")
        )

    @property
    def command(self) -> str | None:
        return self.targets.get("command")


@dataclass(frozen=True, slots=True, eq=False)
class Record:
    """A view over one transcript record (one parsed JSONL line). `line` is 1-based, 0 when
    the record did not come from a file."""

    raw: JsonObject = field(repr=False)
    line: int = 0

    def __repr__(self) -> str:
        return f"Record(line={self.line}, type={self.type!r}, uuid={self.uuid!r})"

    @classmethod
    def from_line(cls, line: Line) -> Record | None:
        """The record of a parsed line, or None when the line is not a JSON object."""
        value = line.record
        return None if value is None else cls(value, line.number)

    def get(self, key: str) -> Any:
        """Any top-level field, known or not."""
        return self.raw.get(key)

    # --- envelope -------------------------------------------------------------------------

    @property
    def type(self) -> str | None:
        return _str(self.raw.get("type"))

    @property
    def subtype(self) -> str | None:
        return _str(self.raw.get("subtype"))

    @property
    def uuid(self) -> str | None:
        return _str(self.raw.get("uuid"))

    @property
    def parent_uuid(self) -> str | None:
        return _str(self.raw.get("parentUuid"))

    @property
    def logical_parent_uuid(self) -> str | None:
        return _str(self.raw.get("logicalParentUuid"))

    @property
    def session_id(self) -> str | None:
        return _str(self.raw.get("sessionId"))

    @property
    def timestamp_text(self) -> str | None:
        return _str(self.raw.get("timestamp"))

    @property
    def timestamp(self) -> datetime | None:
        return parse_timestamp(self.raw.get("timestamp"))

    @property
    def cwd(self) -> str | None:
        return _str(self.raw.get("cwd"))

    @property
    def is_sidechain(self) -> bool:
        return self.raw.get("isSidechain") is True

    @property
    def is_compact_summary(self) -> bool:
        return self.raw.get("isCompactSummary") is True

    @property
    def is_meta(self) -> bool:
        return self.raw.get("isMeta") is True

    @property
    def agent_id(self) -> str | None:
        return _str(self.raw.get("agentId"))

    @property
    def request_id(self) -> str | None:
        return _str(self.raw.get("requestId"))

    @property
    def source_tool_assistant_uuid(self) -> str | None:
        return _str(self.raw.get("sourceToolAssistantUUID"))

    @property
    def is_conversation(self) -> bool:
        return self.type in ("user", "assistant")

    @property
    def is_compact_boundary(self) -> bool:
        return self.type == "system" and self.subtype == "compact_boundary"

    # --- message --------------------------------------------------------------------------

    @property
    def message(self) -> Mapping[str, Any] | None:
        value = self.raw.get("message")
        return value if isinstance(value, dict) else None

    @property
    def message_id(self) -> str | None:
        message = self.message
        return None if message is None else _str(message.get("id"))

    @property
    def role(self) -> str | None:
        message = self.message
        return None if message is None else _str(message.get("role"))

    @property
    def content_blocks(self) -> tuple[Block, ...]:
        """The message's content as blocks; string content is one synthetic text block."""
        message = self.message
        if message is None:
            return ()
        content = message.get("content")
        if isinstance(content, str):
            return (Block({"type": "text", "text": content}, "/message/content", synthetic=True),)
        if not isinstance(content, list):
            return ()
        return tuple(
            Block(block, json_pointer("message", "content", i))
            for i, block in enumerate(content)
            if isinstance(block, dict)
        )

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        return tuple(
            ToolUse(block.raw, block.path, self.uuid)
            for block in self.content_blocks
            if block.type == "tool_use"
        )

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        return tuple(
            ToolResult(block.raw, block.path)
            for block in self.content_blocks
            if block.type == "tool_result"
        )

    @property
    def tool_use_result(self) -> str | Mapping[str, Any] | list[Any] | None:
        """The top-level `toolUseResult`: a string (errors) or a tool-specific object."""
        value = self.raw.get("toolUseResult")
        return value if isinstance(value, str | dict | list) else None

    # --- kind-specific --------------------------------------------------------------------

    @property
    def custom_title(self) -> str | None:
        return _str(self.raw.get("customTitle")) if self.type == "custom-title" else None

    @property
    def summary(self) -> str | None:
        return _str(self.raw.get("summary")) if self.type == "summary" else None

    @property
    def leaf_uuid(self) -> str | None:
        return _str(self.raw.get("leafUuid"))

    @property
    def tags(self) -> tuple[str, ...]:
        if self.type != "tag":
            return ()
        single = _str(self.raw.get("tag"))
        if single is not None:
            return (single,) if single else ()
        many = self.raw.get("tags")
        if isinstance(many, list):
            return tuple(t for t in many if isinstance(t, str) and t)
        return ()

    @property
    def tag(self) -> str | None:
        tags = self.tags
        return tags[0] if tags else None

    @property
    def ai_title(self) -> str | None:
        if self.type != "ai-title":
            return None
        return _str(self.raw.get("aiTitle")) or _str(self.raw.get("title"))

    @property
    def last_prompt(self) -> str | None:
        return _str(self.raw.get("lastPrompt")) if self.type == "last-prompt" else None


def iter_records(lines: Iterable[Line]) -> Iterator[Record]:
    """The records of parsed lines, in order; lines that are not JSON objects are skipped
    (callers that must account for them read the `Line`s themselves)."""
    for line in lines:
        value = line.record
        if value is not None:
            yield Record(value, line.number)


def read_records(path: Path, *, loads: JsonLoads | None = None) -> Iterator[Record]:
    """Stream the records of a transcript file."""
    return iter_records(read_lines(path, loads=loads))


class ToolIndex:
    """Links each `tool_result` to the `tool_use` that produced it, by id, across a file.

    Feed it records in file order (`add`); a tool result comes after its call, so by the time a
    scanner reaches a result the call is known. Only a small `ToolCall` is kept per call, so the
    index stays small on a 1 GB transcript.
    """

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, record: Record) -> None:
        if record.type != "assistant":
            return
        for use in record.tool_uses:
            call = use.call()
            if call is not None:
                self._calls[call.id] = call

    def get(self, tool_use_id: str | None) -> ToolCall | None:
        return None if tool_use_id is None else self._calls.get(tool_use_id)

    def call_for(self, result: ToolResult) -> ToolCall | None:
        return self.get(result.tool_use_id)

    def source_of(self, record: Record) -> ToolCall | None:
        """The call whose output a user record carries (its first `tool_result`); this is
        also the call behind the record's top-level `toolUseResult`."""
        for result in record.tool_results:
            call = self.call_for(result)
            if call is not None:
                return call
        return None
