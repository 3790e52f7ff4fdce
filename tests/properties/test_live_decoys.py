"""The live detector set never masks a leakbench decoy (../shared/leakbench/data/decoys.jsonl:
git SHAs, UUIDs, checksums, image data, signatures, public keys, …), alone or embedded in the
tool outputs the hook sees. Skipped when ../shared is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.registry import build_live_scanner, live_detectors
from scrubber.policy.model import Allowlist
from scrubber.usecases.live import mask_tool_output
from tests.skips import needs_shared

DECOYS = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "leakbench" / "data" / "decoys.jsonl"
)
ITEMS = (
    [json.loads(line) for line in DECOYS.read_text().splitlines() if line.strip()]
    if DECOYS.is_file()
    else []
)

pytestmark = pytest.mark.skipif(not ITEMS, reason=needs_shared("leakbench"))


@pytest.fixture(scope="module")
def scanner(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("home")
    return build_live_scanner(home, b"k" * 32, Allowlist(), live_detectors())


def test_no_decoy_text_is_masked(scanner) -> None:  # type: ignore[no-untyped-def]
    masked = [(item["id"], item["category"]) for item in ITEMS if scanner.scan_text(item["text"])]
    assert masked == []


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(
        st.integers(min_value=0, max_value=max(len(ITEMS) - 1, 0)), min_size=1, max_size=6
    ),
    tool=st.sampled_from(["Bash", "Read", "Grep"]),
    sep=st.sampled_from(["\n", " ", "\t", "\n\n", " = "]),
)
def test_decoys_in_tool_outputs_survive(scanner, picks: list[int], tool: str, sep: str) -> None:  # type: ignore[no-untyped-def]
    text = sep.join(ITEMS[i]["text"] for i in picks)
    shapes = {
        "Bash": {"stdout": text, "stderr": "", "interrupted": False},
        "Read": {"type": "text", "file": {"filePath": "/a/b", "content": text}},
        "Grep": {"mode": "content", "content": text, "filenames": []},
    }
    result = mask_tool_output(shapes[tool], scanner)
    assert not result.changed
    for i in picks:
        for decoy in ITEMS[i]["decoys"]:
            assert decoy in json.dumps(result.value, ensure_ascii=False) or decoy in text
