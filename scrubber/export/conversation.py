"""A session as a reader follows it: the records on its active path (what `claude --resume`
replays, across compactions), turned into entries: prompts, answers, thinking, tool calls with
their inputs and outputs, and the subagent conversations where the calls that started them are.

The tree comes from `transcript.chain` over small stand-ins for the records (ids only), so a
large transcript is not held whole: a second read keeps the records on the path. What the file
does not say cleanly (a fork, a broken chain, unreadable lines, an output cut for length) is
told in `notes` and in the entries, never guessed around.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.transcript.chain import ConversationTree, build_tree
from scrubber.transcript.jsonl import read_lines
from scrubber.transcript.records import Record

# Outputs and inputs longer than this are cut: the head and the tail are kept, with a note.
MAX_TEXT = 20_000
_TAIL = 2_000
_ENVELOPE = ("uuid", "parentUuid", "logicalParentUuid", "type", "subtype", "isSidechain")


class EntryKind(StrEnum):
    PROMPT = "prompt"
    ANSWER = "answer"
    THINKING = "thinking"
    TOOL = "tool"
    SUMMARY = "compaction summary"
    COMPACTED = "compacted"
    SUBAGENT = "subagent"


@dataclass(slots=True)
class Entry:
    kind: EntryKind
    text: str = ""  # a tool call's input, for TOOL
    timestamp: datetime | None = None
    tool: str = ""  # the tool call's label: `Bash(ls)`
    tool_id: str = ""
    output: str | None = None  # a tool call's output, once its result was read
    is_error: bool = False
    subagent: Conversation | None = None  # the conversation this call started

    @property
    def heading(self) -> str:
        if self.kind is EntryKind.TOOL:
            return f"tool call {self.tool}"
        return self.kind.value


@dataclass(slots=True)
class Conversation:
    name: str
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def texts(self) -> Iterator[tuple[str, str]]:
        """(where, text) of every text the rendering shows, subagents included."""
        for number, entry in enumerate(self.entries, 1):
            where = f"{self.name}, #{number} {entry.heading}"
            yield where, entry.tool
            yield where, entry.text
            if entry.output is not None:
                yield where + " (output)", entry.output
            if entry.subagent is not None:
                yield from entry.subagent.texts()
        for note in self.notes:
            yield f"{self.name}, notes", note


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, or its head and tail with a note of what was cut, never inside a placeholder."""
    if len(text) <= limit:
        return text
    head, tail = limit - _TAIL, len(text) - _TAIL
    for found in PLACEHOLDER_RE.finditer(text):
        start, end = found.span()
        if start < head < end:
            head = start
        if start < tail < end:
            tail = end
    dropped = tail - head
    return (
        text[:head]
        + f"\n\n[… {dropped:,} characters cut here; the whole text is in the transcript …]\n\n"
        + text[tail:]
    )


def _envelope(record: Record) -> Record:
    return Record({key: record.raw[key] for key in _ENVELOPE if key in record.raw}, record.line)


def _tree(path: Path) -> tuple[ConversationTree, int]:
    problems = 0
    stand_ins: list[Record] = []
    for line in read_lines(path):
        record = Record.from_line(line)
        if record is None:
            problems += line.problem is not None and line.problem.value != "blank"
            continue
        stand_ins.append(_envelope(record))
    return build_tree(stand_ins), problems


def _path_records(path: Path, wanted: Mapping[str, int]) -> list[Record]:
    found: dict[str, Record] = {}
    for line in read_lines(path):
        record = Record.from_line(line)
        uuid = record.uuid if record is not None else None
        if record is not None and uuid is not None and uuid in wanted and uuid not in found:
            found[uuid] = record
    return sorted(found.values(), key=lambda r: wanted[r.uuid or ""])


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") in ("image", "document"):
                    parts.append(f"[{block.get('type')} not shown]")
    return "\n".join(parts)


def _tool_label(name: str, tool_input: Any) -> str:
    if isinstance(tool_input, Mapping):
        for key in (
            "command",
            "file_path",
            "notebook_path",
            "path",
            "url",
            "pattern",
            "description",
        ):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                shown = " ".join(value.split())
                return f"{name}({shown[:77] + '…' if len(shown) > 80 else shown})"
    return name


def _input_text(tool_input: Any) -> str:
    if isinstance(tool_input, Mapping) and set(tool_input) <= {"command", "description"}:
        command = tool_input.get("command")
        if isinstance(command, str):
            return command
    return json.dumps(tool_input, indent=2, ensure_ascii=False)


@dataclass(slots=True)
class _Builder:
    conversation: Conversation
    subagents: Mapping[str, Path]
    thinking: bool
    depth: int
    calls: dict[str, Entry] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def add(self, record: Record) -> None:
        stamp = record.timestamp
        if record.is_compact_boundary:
            self.conversation.entries.append(Entry(EntryKind.COMPACTED, timestamp=stamp))
        elif record.type == "user" and not record.is_meta:
            self._user(record, stamp)
        elif record.type == "assistant":
            self._assistant(record, stamp)

    def _user(self, record: Record, stamp: datetime | None) -> None:
        message = record.message or {}
        content = message.get("content")
        kind = EntryKind.SUMMARY if record.is_compact_summary else EntryKind.PROMPT
        results = record.tool_results
        if not results:
            text = _text_of(content)
            if text:
                self.conversation.entries.append(Entry(kind, cut(text), stamp))
            return
        for result in results:
            call = self.calls.get(result.tool_use_id or "")
            output = cut(_text_of(result.content))
            if call is None:
                call = Entry(EntryKind.TOOL, "", stamp, tool="(a call not on this path)")
                self.conversation.entries.append(call)
            call.output, call.is_error = output, result.is_error
            agent = _agent_id(record.tool_use_result)
            if agent is not None and call.subagent is None:
                call.subagent = self._subagent(agent)

    def _assistant(self, record: Record, stamp: datetime | None) -> None:
        for block in record.content_blocks:
            if block.type == "text" and block.text:
                self.conversation.entries.append(Entry(EntryKind.ANSWER, cut(block.text), stamp))
            elif block.type == "thinking" and self.thinking and block.thinking:
                entry = Entry(EntryKind.THINKING, cut(block.thinking), stamp)
                self.conversation.entries.append(entry)
        for use in record.tool_uses:
            name = use.name or "tool"
            entry = Entry(
                EntryKind.TOOL,
                cut(_input_text(use.raw.get("input"))),
                stamp,
                tool=_tool_label(name, use.input),
                tool_id=use.id or "",
            )
            self.conversation.entries.append(entry)
            if use.id:
                self.calls[use.id] = entry

    def _subagent(self, agent: str) -> Conversation | None:
        path = self.subagents.get(agent)
        if path is None or self.depth > 2:
            return None
        self.used.add(agent)
        return read_conversation(
            path, f"subagent {agent}", thinking=self.thinking, depth=self.depth + 1
        )


def _agent_id(result: object) -> str | None:
    if isinstance(result, Mapping):
        agent = result.get("agentId")
        if isinstance(agent, str) and agent:
            return agent
    return None


def subagent_files(folder: Path) -> dict[str, Path]:
    """A session's subagent transcripts by agent id (`agent-<id>.jsonl`)."""
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return {}
    return {
        name[len("agent-") : -len(".jsonl")]: folder / name
        for name in names
        if name.startswith("agent-") and name.endswith(".jsonl")
    }


def _describe_tree(tree: ConversationTree, path_length: int, problems: int) -> list[str]:
    notes: list[str] = []
    if tree.forks:
        notes.append(
            f"The conversation forks {len(tree.forks)} time(s) (a rewind or an edited prompt): "
            "this is the branch `claude --resume` replays."
        )
    off = len(tree) - path_length
    if tree.dangling:
        notes.append(
            f"The chain is broken: {len(tree.dangling)} record(s) point at a parent that is not in "
            "the file; what came before a break is not shown."
        )
    if off > 0:
        notes.append(f"{off} record(s) are off this path (other branches, sidechains, progress).")
    if tree.cycles:
        notes.append(f"{len(tree.cycles)} record(s) form a parent cycle, cut where it repeats.")
    if problems:
        notes.append(f"{problems} line(s) could not be read (not JSON or not UTF-8): not shown.")
    return notes


def read_conversation(
    path: Path,
    name: str,
    *,
    thinking: bool = False,
    subagents: Mapping[str, Path] | None = None,
    depth: int = 0,
) -> Conversation:
    """The conversation on the active path of the (redacted) transcript at `path`."""
    tree, problems = _tree(path)
    nodes = tree.active_path(across_compaction=True)
    order = {node.uuid: i for i, node in enumerate(nodes)}
    conversation = Conversation(name)
    conversation.notes = _describe_tree(tree, len(nodes), problems)
    if not nodes:
        conversation.notes.append("No conversation records: nothing to show.")
    builder = _Builder(conversation, subagents or {}, thinking, depth)
    for record in _path_records(path, order):
        builder.add(record)
    unlinked = sorted(set(subagents or {}) - builder.used)
    for agent in unlinked if depth == 0 else ():
        sub = builder._subagent(agent)
        if sub is not None:
            sub.notes.insert(0, "Not linked to a tool call on the path above.")
            conversation.entries.append(Entry(EntryKind.SUBAGENT, subagent=sub))
    return conversation


@dataclass(frozen=True, slots=True)
class Redaction:
    """A placeholder the rendering shows: what kind of secret, where, its short fingerprint."""

    kind: str
    where: str
    fingerprint: str


def redactions(conversation: Conversation) -> list[Redaction]:
    """Every placeholder in the rendering, once per place, in the order shown."""
    seen: dict[tuple[str, str, str], Redaction] = {}
    for where, text in conversation.texts():
        for found in PLACEHOLDER_RE.finditer(text):
            item = Redaction(found["kind"], where, found["short"])
            seen.setdefault((item.kind, item.where, item.fingerprint), item)
    return list(seen.values())
