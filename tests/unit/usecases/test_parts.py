"""The service for one transcript in parts: a per-line function's results, in file order, the
same from one process and from several (parts made small so that a file is cut many times)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import light_detectors
from scrubber.detection.scan import FileScan, SecretScanner
from scrubber.transcript.jsonl import RawLine
from scrubber.usecases import parts
from scrubber.usecases.parts import LineResult, TranscriptLines

SCANNER = SecretScanner(light_detectors(), Fingerprinter(b"p" * 32), engine="python")


def _transcript(path: Path, lines: int) -> bytes:
    records = [
        {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"line {i} " * 30}}
        for i in range(lines)
    ]
    data = "".join(json.dumps(record) + "\n" for record in records).encode()
    path.write_bytes(data + b'{"type": "user"')  # and a last line without its newline
    return path.read_bytes()


def _every_seventh(raw: RawLine, file_scan: FileScan) -> str | None:
    """The uuid of every seventh record (from the line itself: a part knows only its own line
    numbers)."""
    if not raw.terminated:
        return None
    uuid = json.loads(raw.data)["uuid"]
    return uuid if int(uuid[1:]) % 7 == 6 else None


def _run(path: Path, jobs: int) -> tuple[list[LineResult[str]], int, int, dict[int, int]]:
    with path.open("rb") as stream:
        lines = TranscriptLines(
            stream, path, path.stat().st_size, SCANNER, _every_seventh, jobs=jobs
        )
        results = list(lines)
    return results, lines.lines, lines.end, lines.part_starts


@pytest.mark.parametrize("jobs", [2, 3])
def test_parts_yield_what_one_process_yields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    path = tmp_path / "t.jsonl"
    data = _transcript(path, 400)
    monkeypatch.setattr(parts, "PARTS_PER_JOB", 3)
    one, count, end, starts = _run(path, 1)
    assert count == 401 and end == len(data) and starts == {}
    assert [r.number for r in one] == list(range(7, 402, 7))
    for result in one:
        line = data[result.offset : result.end]
        assert f'"uuid": "{result.result}"'.encode() in line
        assert line.endswith(b"\n") == result.terminated
    several, count_several, end_several, starts_several = _run(path, jobs)
    assert (several, count_several, end_several) == (one, count, end)
    assert len(starts_several) == jobs * 3 and starts_several[0] == 1
    for offset, number in starts_several.items():
        assert data[:offset].count(b"\n") + 1 == number


def test_progress_counts_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    data = _transcript(path, 50)
    for jobs in (1, 2):
        done: list[int] = []
        with path.open("rb") as stream:
            lines = TranscriptLines(
                stream, path, len(data), SCANNER, _every_seventh, jobs=jobs, progress=done.append
            )
            list(lines)
        # One process counts a newline for the last line too, as the audit always did.
        assert sum(done) == len(data) + (1 if jobs == 1 else 0)
