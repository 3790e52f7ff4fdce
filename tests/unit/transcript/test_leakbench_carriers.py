"""The transcript model on the leakbench carriers (../shared/leakbench/carriers: real-format
transcripts made independently of scrubber.demo). Skipped when ../shared is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrubber.transcript.chain import build_tree
from scrubber.transcript.jsonl import read_lines
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.records import Record, ToolIndex, iter_records
from tests.skips import needs_shared

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
CARRIERS = sorted(
    path
    for path in (SHARED / "leakbench" / "carriers").glob("*.jsonl")
    if path.name != "truth.jsonl"  # the answer key, not a transcript
)

pytestmark = pytest.mark.skipif(not CARRIERS, reason=needs_shared("leakbench"))


@pytest.mark.parametrize("path", CARRIERS, ids=lambda p: p.name)
def test_carrier_round_trips_and_reads(path: Path) -> None:
    data = path.read_bytes()
    lines = list(read_lines(path))
    assert b"".join(line.raw.to_bytes() for line in lines) == data

    index = ToolIndex()
    linked = unlinked = 0
    records: list[Record] = []
    for record in iter_records(lines):
        records.append(record)
        index.add(record)
        for result in record.tool_results:
            if index.call_for(result) is None:
                unlinked += 1
            else:
                linked += 1
    assert linked > 0
    assert unlinked <= linked // 10  # results whose call sits before a compaction, if any

    tree = build_tree(records)
    assert tree.newest_leaf is not None
    path_nodes = tree.active_path()
    assert path_nodes and path_nodes[-1] == tree.newest_leaf
    assert path_nodes[0].parent_uuid is None or path_nodes[0].uuid in tree.dangling

    meta = read_metadata(path)
    stamps = [r.timestamp for r in records if r.timestamp is not None]
    assert meta.first_timestamp == stamps[0]
    assert meta.last_timestamp == stamps[-1]
    assert meta.cwd == next(r.cwd for r in records if r.cwd)
    titles = [r.custom_title for r in records if r.custom_title]
    summaries = [r.summary for r in records if r.summary]
    assert meta.title == (titles[-1] if titles else summaries[-1] if summaries else None)
