"""Record views: every field reachable, nothing copied or changed, unknown things kept, no
repr that shows content; the tool_use <-> tool_result link by id."""

from __future__ import annotations

import copy
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from scrubber.demo import build_demo_config, demo_manifest
from scrubber.transcript.records import (
    Record,
    ToolIndex,
    json_pointer,
    parse_timestamp,
    read_records,
)
from tests.strategies import record_dicts


def fake_token() -> str:
    return "gh" + "p_" + secrets.token_hex(18)


def envelope(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w/app",
        "sessionId": "s-1",
        "version": "2.1.332",
        "gitBranch": "main",
        "uuid": "u-1",
        "timestamp": "2026-03-02T09:00:01.500Z",
    }
    base.update(fields)
    return base


def test_envelope_fields() -> None:
    raw = envelope(
        type="system",
        subtype="compact_boundary",
        parentUuid=None,
        logicalParentUuid="u-0",
        isCompactSummary=True,
        isMeta=True,
        isSidechain=True,
        agentId="a1",
        requestId="req_1",
    )
    record = Record(raw, line=7)
    assert record.type == "system"
    assert record.subtype == "compact_boundary"
    assert record.uuid == "u-1"
    assert record.parent_uuid is None
    assert record.logical_parent_uuid == "u-0"
    assert record.session_id == "s-1"
    assert record.cwd == "/w/app"
    assert record.is_sidechain and record.is_compact_summary and record.is_meta
    assert record.is_compact_boundary
    assert record.agent_id == "a1"
    assert record.request_id == "req_1"
    assert record.timestamp == datetime(2026, 3, 2, 9, 0, 1, 500000, tzinfo=UTC)
    assert record.timestamp_text == "2026-03-02T09:00:01.500Z"
    assert record.line == 7


def test_wrong_types_read_as_absent() -> None:
    record = Record({"type": 3, "uuid": ["x"], "isSidechain": "yes", "message": "hi", "cwd": 1})
    assert record.type is None
    assert record.uuid is None
    assert not record.is_sidechain
    assert record.message is None
    assert record.cwd is None
    assert record.content_blocks == ()
    assert record.timestamp is None


def test_timestamps() -> None:
    assert parse_timestamp("2026-03-02T09:00:00Z") == datetime(2026, 3, 2, 9, tzinfo=UTC)
    assert parse_timestamp("2026-03-02T09:00:00") == datetime(2026, 3, 2, 9, tzinfo=UTC)
    offset = parse_timestamp("2026-03-02T10:00:00+01:00")
    assert offset is not None
    assert offset.astimezone(UTC) == datetime(2026, 3, 2, 9, tzinfo=UTC)
    # history.jsonl carries epoch milliseconds
    assert parse_timestamp(1772442000000) == datetime(2026, 3, 2, 9, tzinfo=UTC)
    assert parse_timestamp(1772442000) == datetime(2026, 3, 2, 9, tzinfo=UTC)
    for bad in (None, "", "yesterday", True, [], 10**30, "2026-13-45T00:00:00Z"):
        assert parse_timestamp(bad) is None


def test_string_content_is_one_synthetic_block_and_the_dict_is_unchanged() -> None:
    raw = envelope(type="user", message={"role": "user", "content": "hello there"})
    before = copy.deepcopy(raw)
    record = Record(raw)
    (block,) = record.content_blocks
    assert block.type == "text"
    assert block.text == "hello there"
    assert block.synthetic
    assert block.path == "/message/content"
    assert block.text_path == "/message/content"
    assert raw == before
    assert record.raw is raw  # a view, not a copy
    assert record.role == "user"


def test_block_lists_tool_uses_and_results() -> None:
    raw = envelope(
        type="assistant",
        message={
            "id": "msg_1",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
                "not a block",
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": "not a dict"},
            ],
        },
    )
    record = Record(raw)
    assert record.message_id == "msg_1"
    blocks = record.content_blocks
    assert [b.type for b in blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert [b.path for b in blocks] == [
        "/message/content/0",
        "/message/content/2",
        "/message/content/3",
        "/message/content/4",
    ]
    assert blocks[0].thinking == "hmm" and blocks[0].signature == "c2ln"
    assert blocks[0].text is None
    assert blocks[1].text == "ok" and blocks[1].text_path == "/message/content/2/text"
    uses = record.tool_uses
    assert [(u.id, u.name) for u in uses] == [("toolu_1", "Read"), ("toolu_2", "Bash")]
    assert uses[0].input == {"file_path": "/a"}
    assert uses[1].input == {}
    assert uses[0].record_uuid == "u-1"


def test_tool_results_string_and_blocks() -> None:
    raw = envelope(
        type="user",
        message={
            "role": "user",
            "content": [
                {"tool_use_id": "toolu_1", "type": "tool_result", "content": "1\tA=b"},
                {
                    "tool_use_id": "toolu_2",
                    "type": "tool_result",
                    "is_error": True,
                    "content": [
                        {"type": "text", "text": "first"},
                        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                        {"type": "text", "text": "second"},
                    ],
                },
            ],
        },
        toolUseResult="Error: Exit code 1",
    )
    record = Record(raw)
    first, second = record.tool_results
    assert first.tool_use_id == "toolu_1"
    assert first.content == "1\tA=b"
    assert not first.is_error
    assert list(first.texts()) == [("/message/content/0/content", "1\tA=b")]
    assert second.is_error
    assert list(second.texts()) == [
        ("/message/content/1/content/0/text", "first"),
        ("/message/content/1/content/2/text", "second"),
    ]
    assert second.text() == "first\nsecond"
    assert record.tool_use_result == "Error: Exit code 1"


def test_kind_specific_accessors() -> None:
    assert Record({"type": "custom-title", "customTitle": "x"}).custom_title == "x"
    assert Record({"type": "user", "customTitle": "x"}).custom_title is None
    summary = Record({"type": "summary", "summary": "s", "leafUuid": "l"})
    assert (summary.summary, summary.leaf_uuid) == ("s", "l")
    assert Record({"type": "tag", "tag": "ops"}).tags == ("ops",)
    assert Record({"type": "tag", "tag": ""}).tags == ()
    assert Record({"type": "tag", "tags": ["a", 1, "b"]}).tags == ("a", "b")
    assert Record({"type": "tag", "tag": "ops"}).tag == "ops"
    assert Record({"type": "ai-title", "aiTitle": "t"}).ai_title == "t"
    assert Record({"type": "ai-title", "title": "t2"}).ai_title == "t2"
    assert Record({"type": "last-prompt", "lastPrompt": "p"}).last_prompt == "p"


def test_json_pointer_escapes() -> None:
    assert json_pointer("a/b", "m~n", 0) == "/a~1b/m~0n/0"
    assert json_pointer() == ""


def test_reprs_never_show_content() -> None:
    token = fake_token()
    raw = envelope(
        type="user",
        message={
            "role": "user",
            "content": [
                {"tool_use_id": "toolu_9", "type": "tool_result", "content": token},
                {"type": "text", "text": token},
                {"type": "tool_use", "id": "toolu_8", "name": "Bash", "input": {"command": token}},
            ],
        },
        toolUseResult={"stdout": token},
    )
    record = Record(raw)
    shown = [
        repr(record),
        *map(repr, record.content_blocks),
        *map(repr, record.tool_uses),
        *map(repr, record.tool_results),
        *(repr(u.call()) for u in record.tool_uses),
    ]
    assert not any(token in text for text in shown)


def test_tool_index_links_results_to_calls() -> None:
    index = ToolIndex()
    big = "x" * 100_000
    call = Record(
        envelope(
            type="assistant",
            uuid="a-1",
            message={
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_r",
                        "name": "Read",
                        "input": {"file_path": "/w/app/.env"},
                    }
                ],
            },
        )
    )
    write = Record(
        envelope(
            type="assistant",
            uuid="a-2",
            message={
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_w",
                        "name": "Write",
                        "input": {"file_path": "/w/big.txt", "content": big},
                    },
                    {"type": "tool_use", "name": "NoId", "input": {}},
                ],
            },
        )
    )
    result = Record(
        envelope(
            type="user",
            message={
                "role": "user",
                "content": [{"tool_use_id": "toolu_r", "type": "tool_result", "content": "1\tA=b"}],
            },
        )
    )
    orphan = Record(
        envelope(
            type="user",
            message={
                "role": "user",
                "content": [{"tool_use_id": "toolu_zz", "type": "tool_result", "content": ""}],
            },
        )
    )
    for record in (call, write, result, orphan):
        index.add(record)
    assert len(index) == 2
    linked = index.source_of(result)
    assert linked is not None
    assert (linked.id, linked.name, linked.file_path, linked.record_uuid) == (
        "toolu_r",
        "Read",
        "/w/app/.env",
        "a-1",
    )
    assert index.call_for(result.tool_results[0]) is linked
    assert index.source_of(orphan) is None
    assert index.get(None) is None
    written = index.get("toolu_w")
    assert written is not None
    # Big inputs (a Write's content) are not kept: the index stays small on huge files.
    assert "content" not in written.targets
    assert written.file_path == "/w/big.txt"


def test_tool_index_keeps_commands_bounded() -> None:
    index = ToolIndex()
    command = "echo " + "y" * 20_000
    index.add(
        Record(
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t",
                            "name": "Bash",
                            "input": {"command": command},
                        }
                    ]
                },
            }
        )
    )
    call = index.get("t")
    assert call is not None
    assert call.command is not None
    assert command.startswith(call.command)
    assert len(call.command) == 8192


def test_demo_transcripts_link_every_result_to_its_call(tmp_path: Path) -> None:
    config = build_demo_config(tmp_path, seed=3)
    manifest = demo_manifest(seed=3)
    transcripts = [config / f for f in manifest.files if f.endswith(".jsonl") and "/" in f]
    results = 0
    env_outputs = 0
    for path in transcripts:
        index = ToolIndex()
        for record in read_records(path):
            index.add(record)
            for result in record.tool_results:
                call = index.call_for(result)
                assert call is not None, (path.name, record.line)
                results += 1
                if call.name == "Read" and (call.file_path or "").endswith("/.env"):
                    env_outputs += 1
                    file = record.tool_use_result
                    assert isinstance(file, dict)
                    # tool_result text carries N\t prefixes, toolUseResult the raw file
                    shapes = (
                        result.text().startswith("1\t"),
                        file["file"]["content"].startswith("1\t"),
                    )
                    assert shapes == (True, False)  # never show the text: it holds secrets
    assert results > 10
    assert env_outputs == 1


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(record_dicts())
def test_views_never_raise_and_never_change_the_record(raw: dict[str, Any]) -> None:
    before = json.dumps(raw, sort_keys=True)
    record = Record(raw)
    for name in (
        "type", "subtype", "uuid", "parent_uuid", "logical_parent_uuid", "session_id",
        "timestamp", "timestamp_text", "cwd", "is_sidechain", "is_compact_summary", "is_meta",
        "agent_id", "request_id", "source_tool_assistant_uuid", "is_conversation",
        "is_compact_boundary", "message", "message_id", "role", "tool_use_result",
        "custom_title", "summary", "leaf_uuid", "tags", "tag", "ai_title", "last_prompt",
    ):  # fmt: skip
        getattr(record, name)
    for block in record.content_blocks:
        _ = (block.type, block.text, block.thinking, block.signature, block.is_image)
        _ = block.text_path
    for use in record.tool_uses:
        _ = (use.id, use.name, dict(use.input), use.call())
    for result in record.tool_results:
        _ = (result.tool_use_id, result.content, result.is_error, result.text())
    index = ToolIndex()
    index.add(record)
    index.source_of(record)
    repr(record)
    assert json.dumps(raw, sort_keys=True) == before
