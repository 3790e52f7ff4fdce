"""Copies of found values across the parts of a parallel scan (issue 12): a value found in the
last part reaches its copy in the first, in audit and in redaction, as with one process."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scrubber.demo import fake_aws_secret_key
from scrubber.detection.registry import build_scanner
from scrubber.policy.model import Policy
from scrubber.usecases import parts
from scrubber.usecases.audit import audit
from scrubber.usecases.audit_report import ScanTarget
from scrubber.usecases.redact import redact_copy
from tests.conftest import Sandbox


def _world(path: Path, secret: str) -> None:
    lines = [{"type": "user", "message": {"role": "user", "content": f"err {secret}"}}]
    lines += [
        {"type": "user", "message": {"role": "user", "content": f"line {i} " + "x" * 200}}
        for i in range(400)
    ]
    lines.append(
        {"type": "user", "message": {"role": "user", "content": f"AWS_SECRET_ACCESS_KEY={secret}"}}
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_value_found_in_the_last_part_reaches_the_first(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    secret = fake_aws_secret_key(random.Random(99))
    source = tmp_path / "s.jsonl"
    _world(source, secret)
    monkeypatch.setenv("SCRUB_JOBS", str(jobs))
    monkeypatch.setattr(parts, "BYTES_PER_JOB", 16 * 1024)
    assert parts.scan_jobs(source.stat().st_size) == jobs
    scanner = build_scanner(Policy(), sandbox.scrub_home)
    target = ScanTarget(source, True, "s", None, None)
    report = audit([target], scanner)
    found = sorted((f.line, f.by_value) for f in report.findings)
    assert found == [(1, True), (402, False)]
    out = tmp_path / "out.jsonl"
    result = redact_copy(source, out, scanner)
    assert result.replaced == 2 and secret not in out.read_text()
    assert len(out.read_text().splitlines()) == 402


def test_copies_searched_in_parts_are_those_of_one_search(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The by-value pass over a large transcript runs in parts too: the same findings, with
    the same line numbers and in the same order, as one process finds."""
    secret = fake_aws_secret_key(random.Random(98))
    source = tmp_path / "s.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": f"line {i} " + "y" * 150
                                     + (f" copy {secret} end" if i % 37 == 5 else "")}}
        for i in range(600)
    ]  # fmt: skip
    lines.append(
        {"type": "user", "message": {"role": "user", "content": f"AWS_SECRET_ACCESS_KEY={secret}"}}
    )
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setattr(parts, "BYTES_PER_JOB", 16 * 1024)
    target = ScanTarget(source, True, "s", None, None)
    reports = []
    for jobs in (1, 2):
        monkeypatch.setenv("SCRUB_JOBS", str(jobs))
        scanner = build_scanner(Policy(), sandbox.scrub_home)
        reports.append(
            [
                (f.line, f.span, f.by_value)
                for f in audit([target], scanner, pool_min_bytes=0).findings
            ]
        )
    one, in_parts = reports
    assert in_parts == one
    assert len(one) == 1 + sum(1 for i in range(600) if i % 37 == 5)
    assert [line for line, _, by_value in one if by_value] == [
        i + 1 for i in range(600) if i % 37 == 5
    ]
