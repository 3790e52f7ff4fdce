"""A transcript scanned in parts, by several processes, gives exactly what one process gives.

Parts are made small here (the real threshold is 16 MB a part) so that every test file is cut
several times, including between a tool call and its result.
"""

from __future__ import annotations

import json
import random
import stat
import string
from pathlib import Path

import pytest

from scrubber.demo import build_demo_config, write_large_transcript
from scrubber.detection.finding import Finding
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.errors import UsageError
from scrubber.policy.model import Policy
from scrubber.redaction.lines import FileRedaction
from scrubber.usecases import parts
from scrubber.usecases.audit import audit_file
from scrubber.usecases.audit_report import ScanTarget
from scrubber.usecases.parts import scan_jobs
from scrubber.usecases.redact import redact_copy

SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(b"k" * 32))


def _audit(path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Finding], list]:
    monkeypatch.setenv("SCRUB_JOBS", str(jobs))
    monkeypatch.setattr(parts, "BYTES_PER_JOB", 16 * 1024)
    result = audit_file(ScanTarget(path, is_transcript=True, session_id=path.stem), SCANNER)
    assert result.error is None
    return list(result.findings), list(result.problems)


def test_parts_find_what_one_process_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.jsonl"
    write_large_transcript(big, 1_500_000, seed=7)
    config = build_demo_config(tmp_path / "demo")
    demo_files = sorted(config.glob("projects/*/*.jsonl"), key=lambda p: p.stat().st_size)
    for path in [big, *demo_files[-2:]]:
        one = _audit(path, 1, monkeypatch)
        assert one[0], path  # something to compare
        for jobs in (2, 3, 4):
            assert _audit(path, jobs, monkeypatch) == one, (path.name, jobs)


def _line(record: dict[str, object]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def test_a_result_just_after_a_cut_is_read_with_its_calls_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One part a process, so that the cut computed below is the one the scan makes.
    monkeypatch.setattr(parts, "PARTS_PER_JOB", 1)
    # A value only the context (a Read of `.env`) makes a secret, built at run time.
    rng = random.Random(3)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(16))
    call = _line(
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Read",
                        "input": {"file_path": "/app/.env"},
                    }
                ],
            },
        }
    )
    result = _line(
        {
            "type": "user",
            "uuid": "u1",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": f"APP_SETTING={value}",
                    }
                ],
            },
        }
    )
    filler = _line({"type": "system", "uuid": "s", "content": "ordinary " * 40})
    before = filler * 30 + call
    after = result + filler * 28
    # Pad the second half to the length of the first, so that the cut falls right between
    # the call and its result.
    empty = _line({"type": "system", "uuid": "p", "content": ""})
    pad = len(before) - len(after) - len(empty)
    assert pad >= 0
    after += _line({"type": "system", "uuid": "p", "content": "x" * pad})
    path = tmp_path / "cut.jsonl"
    path.write_bytes(before + after)
    bounds = parts.part_bounds(path, path.stat().st_size, 2)
    assert bounds[1][0] == len(before)
    one = _audit(path, 1, monkeypatch)
    two = _audit(path, 2, monkeypatch)
    assert [f.kind for f in one[0]] and two == one
    assert all(f.source == "Read(/app/.env)" for f in two[0])
    copies = [_copy(path, tmp_path / f"copy{jobs}.jsonl", jobs, monkeypatch) for jobs in (1, 2)]
    assert copies[0].replaced == copies[1].replaced == 1
    assert (tmp_path / "copy1.jsonl").read_bytes() == (tmp_path / "copy2.jsonl").read_bytes()
    assert value.encode() not in (tmp_path / "copy2.jsonl").read_bytes()


def test_jobs_follow_size_cores_and_the_environment() -> None:
    assert scan_jobs(1 << 20, {"SCRUB_JOBS": "4"}) == 1  # too small to split
    assert scan_jobs(64 << 20, {"SCRUB_JOBS": "1"}) == 1
    assert scan_jobs(64 << 20, {"SCRUB_JOBS": "3"}) == 3
    assert scan_jobs(40 << 20, {"SCRUB_JOBS": "8"}) == 2  # one part per 16 MB at most
    with pytest.raises(UsageError, match="SCRUB_JOBS"):
        scan_jobs(64 << 20, {"SCRUB_JOBS": "many"})


def _copy(source: Path, dest: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> FileRedaction:
    monkeypatch.setenv("SCRUB_JOBS", str(jobs))
    monkeypatch.setattr(parts, "BYTES_PER_JOB", 16 * 1024)
    return redact_copy(source, dest, SCANNER)


def test_a_copy_redacted_in_parts_is_the_copy_one_process_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "big.jsonl"
    write_large_transcript(source, 1_500_000, seed=11)
    one = _copy(source, tmp_path / "one" / "out.jsonl", 1, monkeypatch)
    assert one.replaced > 0
    for jobs in (2, 4):
        out = tmp_path / f"jobs{jobs}" / "out.jsonl"
        several = _copy(source, out, jobs, monkeypatch)
        assert out.read_bytes() == (tmp_path / "one" / "out.jsonl").read_bytes()
        assert (several.lines, several.lines_changed, several.replaced, several.by_kind) == (
            one.lines,
            one.lines_changed,
            one.replaced,
            one.by_kind,
        )
        assert [p.name for p in out.parent.iterdir()] == ["out.jsonl"]  # no part file left
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
