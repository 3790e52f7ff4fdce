"""One session in Claude Code's real on-disk format (../shared/reference/claude-code.md, as
observed in 2.1.332): records with their envelope, one assistant line per content block sharing
`message.id`, one user line per tool result carrying both the `tool_result` block and the
tool-specific `toolUseResult`, and the side files the session leaves."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from scrubber.demo.fakes import (
    fake_message_id,
    fake_request_id,
    fake_signature,
    fake_tool_id,
    fake_uuid,
)

VERSION = "2.1.332"


MODEL = "claude-sonnet-4-5-20250929"
DEMO_HOME = "/home/demo"
DEFAULT_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def project_folder_name(cwd: str) -> str:
    """Claude Code's folder name for a working directory (the short-path rule: every
    non-alphanumeric character becomes `-`)."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def dump_line(value: Any) -> bytes:
    # JSON.stringify's shape: no spaces, non-ASCII kept as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def numbered_lines(text: str) -> str:
    """Read's tool_result text: `N\\t` before every line (2.1.332)."""
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(text.split("\n"), start=1))


class SessionWriter:
    """Appends records to one transcript the way Claude Code does."""

    def __init__(
        self,
        rng: random.Random,
        session_id: str,
        cwd: str,
        start: datetime,
        *,
        branch: str = "main",
        sidechain: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.rng = rng
        self.id = session_id
        self.cwd = cwd
        self.clock = start
        self.branch = branch
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.slug = "-".join(rng.sample(("sunny", "quiet", "brave", "lucky", "amber", "swift"), 2))
        self.lines: list[bytes] = []
        self.last: str | None = None  # the uuid new records chain to
        self.last_assistant: str | None = None
        self.tool_results: dict[str, str] = {}  # tool-results/<id>.txt files to write

    def tick(self, low: float = 0.4, high: float = 9.0) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return iso(self.clock)

    def emit(self, record: dict[str, Any]) -> None:
        self.lines.append(dump_line(record))

    def _envelope(self, parent: str | None) -> dict[str, Any]:
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": VERSION,
            "gitBranch": self.branch,
        }
        if self.agent_id is not None:
            record["agentId"] = self.agent_id
        record["slug"] = self.slug
        return record

    def user(
        self, content: str | list[dict[str, Any]], *, extra: dict[str, Any] | None = None
    ) -> str:
        record_uuid = fake_uuid(self.rng)
        record = self._envelope(self.last)
        record["type"] = "user"
        record["message"] = {"role": "user", "content": content}
        record["uuid"] = record_uuid
        record["timestamp"] = self.tick()
        if extra:
            # After the timestamp, as 2.1.332 writes them: `…"timestamp":"…Z","toolUseResult":`.
            record.update(extra)
        self.emit(record)
        self.last = record_uuid
        return record_uuid

    def prompt(self, text: str, *, queued: bool = False) -> str:
        """A prompt the user typed: the user record, plus where 2.1.332 also copies it."""
        if queued:
            stamp = self.tick(0.1, 0.5)
            self.emit(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": stamp,
                    "sessionId": self.id,
                    "content": text,
                }
            )
            self.emit(
                {
                    "type": "queue-operation",
                    "operation": "dequeue",
                    "timestamp": self.tick(0.1, 0.5),
                    "sessionId": self.id,
                }
            )
        record_uuid = self.user(text)
        self.emit({"type": "last-prompt", "lastPrompt": text, "sessionId": self.id})
        return record_uuid

    def assistant(self, blocks: list[dict[str, Any]], *, stop_reason: str = "end_turn") -> str:
        """One API response: one line per content block, all sharing `message.id`."""
        message_id = fake_message_id(self.rng)
        request_id = fake_request_id(self.rng)
        for block in blocks:
            record_uuid = fake_uuid(self.rng)
            record = self._envelope(self.last)
            record["message"] = {
                "model": MODEL,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop_reason if block is blocks[-1] else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 12),
                    "cache_creation_input_tokens": self.rng.randint(0, 4000),
                    "cache_read_input_tokens": self.rng.randint(10000, 60000),
                    "output_tokens": self.rng.randint(20, 900),
                    "service_tier": "standard",
                },
            }
            record["requestId"] = request_id
            record["type"] = "assistant"
            record["uuid"] = record_uuid
            record["timestamp"] = self.tick(0.5, 4.0)
            self.emit(record)
            self.last = record_uuid
            self.last_assistant = record_uuid
        return self.last or ""

    def say(self, text: str, *, thinking: str | None = None) -> str:
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": thinking, "signature": fake_signature(self.rng)}
            )
        blocks.append({"type": "text", "text": text})
        return self.assistant(blocks)

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        result_text: str,
        tool_use_result: Any,
        *,
        is_error: bool = False,
        thinking: str | None = None,
    ) -> str:
        """A tool call and its result; returns the tool_use id."""
        tool_id = fake_tool_id(self.rng)
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": thinking, "signature": fake_signature(self.rng)}
            )
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.assistant(blocks, stop_reason="tool_use")
        source = self.last
        self.user(
            [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": result_text,
                    "is_error": is_error,
                }
            ],
            extra={"toolUseResult": tool_use_result, "sourceToolAssistantUUID": source},
        )
        return tool_id

    def read(self, path: str, text: str, *, thinking: str | None = None) -> str:
        lines = text.split("\n")
        return self.tool(
            "Read",
            {"file_path": path},
            numbered_lines(text),
            {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": text,
                    "numLines": len(lines),
                    "startLine": 1,
                    "totalLines": len(lines),
                },
            },
            thinking=thinking,
        )

    def bash(self, command: str, stdout: str, *, description: str = "", stderr: str = "") -> str:
        shown = stdout + ("\n" + stderr if stderr else "")
        return self.tool(
            "Bash",
            {"command": command, "description": description or command.split(maxsplit=1)[0]},
            shown,
            {
                "stdout": stdout,
                "stderr": stderr,
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
        )

    def bash_fails(self, command: str, output: str, code: int = 1) -> str:
        # A failing Bash: is_error, and toolUseResult is a plain string (2.1.332).
        text = f"Error: Exit code {code}\n{output}"
        return self.tool(
            "Bash",
            {"command": command, "description": "Run " + command.split(maxsplit=1)[0]},
            text,
            text,
            is_error=True,
        )

    def bash_persisted(self, command: str, stdout: str, config_path: str) -> str:
        """Output over ~30 KB: a 2 KB preview in the tool_result, the whole output in
        tool-results/<id>.txt, toolUseResult.stdout cut at 30,000 characters."""
        tool_id = fake_tool_id(self.rng)
        saved = f"{config_path}/tool-results/{tool_id}.txt"
        preview = (
            "<persisted-output>\n"
            f"Output too large ({len(stdout) / 1024:.1f}KB). Full output saved to: {saved}\n\n"
            f"Preview (first 2KB):\n{stdout[:2000]}\n...\n</persisted-output>"
        )
        self.assistant(
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Bash",
                    "input": {"command": command, "description": "Show logs"},
                }
            ],
            stop_reason="tool_use",
        )
        source = self.last
        self.user(
            [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": preview,
                    "is_error": False,
                }
            ],
            extra={
                "toolUseResult": {
                    "stdout": stdout[:30000],
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                    "persistedOutputPath": saved,
                },
                "sourceToolAssistantUUID": source,
            },
        )
        self.tool_results[tool_id] = stdout
        return tool_id

    def write(self, path: str, content: str) -> str:
        return self.tool(
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            {
                "type": "create",
                "filePath": path,
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            },
        )

    def edit(self, path: str, original: str, old: str, new: str) -> str:
        before = original.split("\n")
        at = next((i for i, line in enumerate(before) if old.split("\n", maxsplit=1)[0] in line), 0)
        old_lines = old.split("\n")
        new_lines = new.split("\n")
        hunk = {
            "oldStart": at + 1,
            "oldLines": len(old_lines),
            "newStart": at + 1,
            "newLines": len(new_lines),
            "lines": [f"-{line}" for line in old_lines] + [f"+{line}" for line in new_lines],
        }
        updated = original.replace(old, new, 1)
        snippet = numbered_lines("\n".join(updated.split("\n")[max(0, at - 2) : at + 4]))
        return self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
            f"The file {path} has been updated. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{snippet}",
            {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [hunk],
                "userModified": False,
                "replaceAll": False,
            },
        )

    def system(self, subtype: str, **fields: Any) -> str:
        record_uuid = fake_uuid(self.rng)
        record = self._envelope(self.last)
        record["type"] = "system"
        record["subtype"] = subtype
        record.update(fields)
        record["isMeta"] = False
        record["timestamp"] = self.tick(0.1, 1.0)
        record["uuid"] = record_uuid
        record["level"] = "info"
        self.emit(record)
        self.last = record_uuid
        return record_uuid

    def compact(self, summary_text: str) -> str:
        """A compact boundary (a new root that remembers its logical parent) and the
        compaction summary that restates the conversation."""
        record_uuid = fake_uuid(self.rng)
        record = self._envelope(None)
        record["logicalParentUuid"] = self.last
        record["type"] = "system"
        record["subtype"] = "compact_boundary"
        record["content"] = "Conversation compacted"
        record["isMeta"] = False
        record["timestamp"] = self.tick()
        record["uuid"] = record_uuid
        record["level"] = "info"
        record["compactMetadata"] = {
            "trigger": "manual",
            "preTokens": self.rng.randint(40000, 90000),
        }
        self.emit(record)
        self.last = record_uuid
        return self.user(
            "This session is being continued from a previous conversation that ran out of "
            "context. The conversation is summarized below:\n" + summary_text,
            extra={"isVisibleInTranscriptOnly": True, "isCompactSummary": True},
        )

    def snapshot(self, message_id: str, backups: dict[str, Any]) -> None:
        self.emit(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": backups,
                    "timestamp": iso(self.clock),
                },
                "isSnapshotUpdate": bool(backups),
            }
        )

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)
