"""The title an audit shows for a transcript it scans whole is taken from the lines on the way
(no pass of its own over the file): it must be the title `read_title` reads, whatever the order
of the titling records, in one process or in parallel parts, and a resumed scan still reads
the whole file's."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.demo import fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import PLACEHOLDER_PREFIX
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.transcript.metadata import read_title
from scrubber.usecases.audit_report import ScanTarget
from scrubber.usecases.audit_scan import Resume, scan_file

SCANNER = SecretScanner(
    build_detectors(Policy()), Fingerprinter(b"audit-titles-test-key-32-bytes..")
)
SESSION = "11111111-2222-4333-8444-555555555555"


def _titling(kind: str, text: str) -> dict[str, Any]:
    field = {"custom-title": "customTitle", "summary": "summary", "ai-title": "aiTitle"}[kind]
    return {"type": kind, field: text, "sessionId": SESSION}


def _ordinary(n: int) -> dict[str, Any]:
    message = {"role": "user", "content": f"please run step {n} of the build " + "x" * 200}
    return {"type": "user", "sessionId": SESSION, "uuid": f"u-{n}", "message": message}


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    return path


def _scanned_title(path: Path, jobs: int = 1, resume: Resume | None = None) -> str | None:
    target = ScanTarget(path, True, SESSION, title_pending=True)
    scanned = scan_file(target, SCANNER, jobs=jobs, resume=resume)
    assert not scanned.audit.target.title_pending
    return scanned.audit.target.title


def _mixed(kinds_and_texts: list[tuple[str, str]], every: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for n, (kind, text) in enumerate(kinds_and_texts):
        records.extend(_ordinary(n * every + k) for k in range(every))
        records.append(_titling(kind, text))
    records.extend(_ordinary(10_000 + k) for k in range(every))
    return records


def test_the_title_is_the_one_read_title_reads_in_one_process_and_in_parts(
    tmp_path: Path,
) -> None:
    titles = [
        ("ai-title", "first guess"),
        ("summary", "Fixed the build"),
        ("custom-title", ""),  # empty: the one before stands
        ("custom-title", "my release work"),
        ("ai-title", "second guess"),
        ("summary", "Shipped it"),
    ]
    path = _write(tmp_path / "s.jsonl", _mixed(titles, every=400))
    assert read_title(path) == "my release work"
    for jobs in (1, 2):
        assert _scanned_title(path, jobs) == "my release work"
    # Without a custom title the last summary wins, then the last ai-title.
    no_custom = [t for t in titles if t[0] != "custom-title"]
    path = _write(tmp_path / "t.jsonl", _mixed(no_custom, every=400))
    for jobs in (1, 2):
        assert _scanned_title(path, jobs) == read_title(path) == "Shipped it"
    only_ai = [t for t in titles if t[0] == "ai-title"]
    path = _write(tmp_path / "u.jsonl", _mixed(only_ai, every=400))
    for jobs in (1, 2):
        assert _scanned_title(path, jobs) == read_title(path) == "second guess"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["custom-title", "summary", "ai-title", "tag"]),
            st.sampled_from(["", "alpha", "beta", "gamma release"]),
        ),
        max_size=6,
    ),
    st.sampled_from([1, 2]),
)
def test_any_order_of_titling_records_gives_read_titles_title(
    tmp_path_factory: Any, records: list[tuple[str, str]], jobs: int
) -> None:
    path = tmp_path_factory.mktemp("titles") / "s.jsonl"
    lines = []
    for n, (kind, text) in enumerate(records):
        lines.append(_ordinary(n))
        lines.append({"type": "tag", "tag": text} if kind == "tag" else _titling(kind, text))
    _write(path, lines)
    assert _scanned_title(path, jobs) == read_title(path)


def test_odd_titling_lines_neither_break_the_scan_nor_change_what_it_reports(
    tmp_path: Path,
) -> None:
    """Lines that hold a title marker but are no titling record the way `read_metadata` reads
    them: a type that is a list or an object, a type spelled with an escape, a line that only
    looks like an object. Each is what it was before the marks: no title, no problem."""
    odd = [
        b'{"type":["summary"],"summary":"from a list"}',
        b'{"type":{"a":1},"note":"x-title\\"","sessionId":"s"}',
        b'{"type":"custom\\u002dtitle","customTitle":"escaped","cwd":"/w","sessionId":"s",'
        b'"timestamp":"2026-12-01T00:00:00Z"}',
        b'{"type":"summary","summary":"nice", oops}',
    ]
    for i, line in enumerate(odd):
        path = tmp_path / f"odd{i}.jsonl"
        path.write_bytes(line + b"\n" + json.dumps(_titling("ai-title", "fine")).encode() + b"\n")
        scanned = scan_file(ScanTarget(path, True, SESSION, title_pending=True), SCANNER)
        assert scanned.audit.error is None and scanned.audit.problems == [], line
        assert scanned.audit.target.title == read_title(path) == "fine", line


def test_a_title_holding_a_secret_is_shown_redacted(tmp_path: Path) -> None:
    token = fake_github_token(random.Random(5))
    path = _write(tmp_path / "s.jsonl", _mixed([("custom-title", f"deploy with {token}")], 50))
    scanned = scan_file(ScanTarget(path, True, SESSION, title_pending=True), SCANNER)
    assert scanned.audit.target.title == f"deploy with {token}"  # raw, for the scan cache
    shown = scanned.audit.title
    assert shown is not None and token not in shown and PLACEHOLDER_PREFIX in shown


def test_a_resumed_scan_reads_the_title_of_the_whole_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _mixed([("custom-title", "before the offset")], 50))
    settled = path.stat().st_size
    lines = path.read_bytes().count(b"\n")
    with path.open("ab") as stream:
        stream.write(json.dumps(_ordinary(99_999)).encode() + b"\n")
    resume = Resume(settled, lines, {})
    assert _scanned_title(path, resume=resume) == "before the offset"


def test_an_unreadable_transcript_has_no_title_and_is_not_pending(tmp_path: Path) -> None:
    target = ScanTarget(tmp_path / "gone.jsonl", True, SESSION, title_pending=True)
    scanned = scan_file(target, SCANNER)
    assert scanned.audit.error is not None
    assert scanned.audit.target.title is None and not scanned.audit.target.title_pending
