"""The one reorder `scrub redact --in-place` can make, resumed by the real Claude Code.

The window (usecases/redact_in_place.py, `_rewrite_locked`; README, "In place"): a line that reaches the old
file after the last look before the rename is copied to the new file by the watch that follows,
and lands after any line a later write already put into the new file. So two appended records
can end up swapped in the file: a child before its parent. Claude Code rebuilds a session from
`uuid` / `parentUuid`, not from line order; this test proves it with the real client: a session
whose last two conversation records are swapped in the file resumes, sends its history in the
conversation's order, and the new turn hangs off the true last record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Box
from .fake_api import text_turn, tool_turn

pytestmark = pytest.mark.claude


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def chain_pair(lines: list[bytes], child_kind: str) -> tuple[int, int]:
    """Line indexes (parent, child) of a record of the chain and its parent (every record with
    a uuid is in it: 2.1.332 chains attachment records too). `child_kind`: "last", the last
    record; "tool-result", the record holding the tool's result (its parent: the call)."""
    conversation = [
        (i, json.loads(line))
        for i, line in enumerate(lines)
        if line.strip() and json.loads(line).get("uuid")
    ]
    if child_kind == "last":
        child_index, child = conversation[-1]
    else:
        child_index, child = next(
            (i, r) for i, r in conversation if '"tool_result"' in json.dumps(r)
        )
    parents = [i for i, r in conversation if r.get("uuid") == child.get("parentUuid")]
    assert len(parents) == 1, "the last record's parent is not in the file"
    return parents[0], child_index


@pytest.mark.parametrize("child_kind", ["last", "tool-result"])
def test_a_session_with_two_records_swapped_resumes_in_chain_order(
    box: Box, child_kind: str
) -> None:
    first = box.claude(
        "Say hello with a command.",
        script=[tool_turn("Bash", command="echo hello-from-bash"), text_turn("Said hello.")],
    )
    assert first.returncode == 0, first.stderr[-2000:]
    session = first.session_id
    transcript = box.transcript(session)

    # What the window can make: the parent (copied late from the old inode) after its child
    # (written to the new file by a write that opened the path after the rename).
    lines = transcript.read_bytes().splitlines(keepends=True)
    parent_at, child_at = chain_pair(lines, child_kind)
    parent, child = json.loads(lines[parent_at]), json.loads(lines[child_at])
    leaf = [json.loads(line) for line in lines if json.loads(line).get("uuid")][-1]
    assert parent_at < child_at
    moved = lines[parent_at]
    reordered = lines[:parent_at] + lines[parent_at + 1 : child_at + 1] + [moved]
    reordered += lines[child_at + 1 :]
    transcript.write_bytes(b"".join(reordered))
    order = [r.get("uuid") for r in records(transcript)]
    assert order.index(child["uuid"]) < order.index(parent["uuid"])

    box.api.clear()
    again = box.claude(
        "And now?", "--resume", session, script=[text_turn("Resumed in order.")], cwd=box.project
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.result()["result"] == "Resumed in order."

    # The history went out in the conversation's order: prompt, tool call, its result, the
    # reply, then the new prompt.
    [request, *_] = box.api.main_requests()
    sent = [json.dumps(message) for message in request.body["messages"]]

    def first(text: str) -> int:
        return next(i for i, message in enumerate(sent) if text in message)

    places = [
        first(text)
        for text in ("Say hello with a command.", '"tool_use"', '"tool_result"', "Said hello.")
    ]
    assert places == sorted(places) and len(set(places)) == 4, places
    assert first("And now?") == len(sent) - 1

    # The new turn was appended to the same file and hangs off the true last record of the
    # conversation (for "last": the child, which is no longer last in the file).
    after = records(transcript)
    assert len(after) > len(reordered)
    new_prompt = next(
        r
        for r in after[len(reordered) :]
        if r.get("type") == "user" and "And now?" in json.dumps(r.get("message"))
    )
    assert new_prompt["parentUuid"] == leaf["uuid"]
    by_uuid = {r["uuid"]: r for r in after if r.get("uuid")}
    # The whole chain from the new reply back to the root is intact.
    reply = next(
        r
        for r in after[len(reordered) :]
        if r.get("type") == "assistant" and "Resumed in order." in json.dumps(r.get("message"))
    )
    walked, current = [], reply
    while current is not None:
        walked.append(current["uuid"])
        current = by_uuid.get(current.get("parentUuid") or "")
    assert child["uuid"] in walked and parent["uuid"] in walked
    assert walked.index(child["uuid"]) < walked.index(parent["uuid"])
    assert by_uuid[walked[-1]]["parentUuid"] is None  # reached the root
