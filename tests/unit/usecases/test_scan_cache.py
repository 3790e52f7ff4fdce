"""The incremental audit (usecases/scan_cache.py, audit_resume.py): what the cache answers is
what a full scan finds, whatever happened to the files or to the cache in between.

Every test compares an audit made with the cache to one made without it (`full`), on the same
files: same findings in the same order, same titles, same problems. Fake secrets are built at
run time; assertion messages name kinds and places only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import string
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import scrubber
from scrubber.demo import build_demo_config, demo_manifest, fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.usecases.audit import audit
from scrubber.usecases.audit_pool import batches
from scrubber.usecases.audit_report import AuditReport
from scrubber.usecases.audit_resume import plan_scans
from scrubber.usecases.audit_targets import targets_in_config
from scrubber.usecases.scan_cache import CACHE_FOLDER, ScanCache, Verdict

POLICY = Policy.default()
SCANNER = SecretScanner(build_detectors(POLICY), Fingerprinter(b"scan-cache-test-key-32-bytes...."))
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"  # the demo's private-key session (seed 0)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_config(tmp_path_factory.mktemp("cache-demo") / ".claude")


@pytest.fixture
def config(demo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "claude"
    shutil.copytree(demo, copy, symlinks=True)
    return copy


def _cache(home: Path, scanner: SecretScanner = SCANNER) -> ScanCache:
    return ScanCache.of(home, scanner, POLICY)


def _targets(config: Path) -> list[Any]:
    return targets_in_config(config, titles=False)


def cached(config: Path, home: Path, scanner: SecretScanner = SCANNER) -> AuditReport:
    return audit(_targets(config), scanner, cache=_cache(home, scanner), complete=True)


def full(config: Path) -> AuditReport:
    return audit(targets_in_config(config), SCANNER)


def _shape(report: AuditReport) -> tuple[Any, ...]:
    return (
        [(f.target.path, f.title, f.problems, f.error) for f in report.files],
        list(report.findings),
    )


def _verdicts(config: Path, home: Path) -> dict[str, Verdict]:
    planned = plan_scans(_targets(config), _cache(home), SCANNER)
    return {p.target.path.relative_to(config).as_posix(): p.verdict for p in planned}


def _transcript(config: Path) -> Path:
    return next(config.glob(f"projects/*/{INFRA}.jsonl"))


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _call(tool_id: str, path: str) -> bytes:
    block = {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": path}}
    return _line({"type": "assistant", "sessionId": INFRA, "uuid": tool_id + "-a",
                  "message": {"role": "assistant", "content": [block]}})  # fmt: skip


def _result(tool_id: str, text: str) -> bytes:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    return _line({"type": "user", "sessionId": INFRA, "uuid": tool_id + "-u",
                  "message": {"role": "user", "content": [block]}})  # fmt: skip


def _context_only_value(seed: int) -> str:
    """A value only its context (the result of a Read of `.env`) makes a secret."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(18))


def test_unchanged_files_answer_from_the_cache(config: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = cached(config, home)
    assert first.has_findings
    assert set(_verdicts(config, home).values()) == {Verdict.FRESH}
    assert _shape(cached(config, home)) == _shape(first) == _shape(full(config))


def test_an_appended_transcript_is_scanned_from_its_settled_offset(
    config: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    transcript = _transcript(config)
    first, second = _context_only_value(11), _context_only_value(12)
    with transcript.open("ab") as out:
        out.write(_call("toolu_cache0", "/srv/app/.env"))
        out.write(_result("toolu_cache0", f"APP_SETTING={first}\nDEBUG=0"))
        # A call in the settled part whose result comes after: the cache must remember it.
        out.write(_call("toolu_cache1", "/srv/app/.env"))
    cached(config, home)
    settled = transcript.stat().st_size
    token = fake_github_token(random.Random(5))
    with transcript.open("ab") as out:
        out.write(_result("toolu_cache1", f"APP_SETTING={second}\nDEBUG=0"))
        out.write(_line({"type": "user", "sessionId": INFRA, "uuid": "u-new",
                         "message": {"role": "user", "content": f"try {token}"}}))  # fmt: skip
        # A copy of a value found in the settled part, bare on a new line: found by value.
        out.write(_line({"type": "system", "sessionId": INFRA, "content": f"err {first}"}))
    planned = {p.target.path: p for p in plan_scans(_targets(config), _cache(home), SCANNER)}
    item = planned[transcript]
    assert item.verdict is Verdict.APPENDED
    assert item.resume is not None and item.resume.offset == settled
    assert "toolu_cache1" in item.resume.calls
    warm = cached(config, home)
    assert _shape(warm) == _shape(full(config))
    new = [f for f in warm.findings if f.file == str(transcript) and f.line > item.resume.lines]
    assert "github-token" in {f.kind for f in new}, sorted(f.kind for f in new)
    assert any(f.source == "Read(/srv/app/.env)" for f in new)  # the call's context held
    assert [f.fingerprint for f in new if f.by_value] == [SCANNER.fingerprint(first)[:16]]


def test_replaced_or_truncated_or_rewritten_files_are_scanned_again(
    config: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    cached(config, home)
    transcript = _transcript(config)
    data = transcript.read_bytes()
    # Same size, new content, in place, with the mtime put back: the ctime tells.
    st = transcript.stat()
    token = fake_github_token(random.Random(9))
    changed = data.replace(b"deploy", b"DEPLOY", 1)
    assert changed != data and len(changed) == len(data)
    transcript.write_bytes(changed)
    os.utime(transcript, ns=(st.st_atime_ns, st.st_mtime_ns))
    relative = transcript.relative_to(config).as_posix()
    assert _verdicts(config, home)[relative] is Verdict.CHANGED
    assert _shape(cached(config, home)) == _shape(full(config))
    # Replaced by another file of the same size (a rename over it: a new inode).
    other = data[: len(data) - 60 - len(token)] + f'{{"x":"{token}"}}'.encode()
    other += b" " * (len(data) - len(other))
    replacement = transcript.with_name("new.tmp")
    replacement.write_bytes(other)
    replacement.replace(transcript)
    assert _verdicts(config, home)[relative] is Verdict.CHANGED
    assert _shape(cached(config, home)) == _shape(full(config))
    # Truncated.
    with transcript.open("r+b") as handle:
        handle.truncate(len(data) // 2)
    assert _verdicts(config, home)[relative] is Verdict.CHANGED
    assert _shape(cached(config, home)) == _shape(full(config))


def test_a_grown_transcript_whose_settled_part_changed_is_scanned_whole(
    config: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    cached(config, home)
    transcript = _transcript(config)
    data = transcript.read_bytes()
    transcript.write_bytes(data[:100] + b"X" + data[101:] + _line({"type": "system"}))
    assert _verdicts(config, home)[transcript.relative_to(config).as_posix()] is Verdict.CHANGED
    assert _shape(cached(config, home)) == _shape(full(config))


def _padded_transcript(config: Path) -> tuple[Path, bytes, bytes]:
    """The demo transcript with 300 filler prompts appended (so an edit can sit far from both
    ends of it), and one filler's text with a token of the same length."""
    transcript = _transcript(config)
    filler = "x" * 40
    with transcript.open("ab") as handle:
        for i in range(300):
            handle.write(_line({"type": "user", "sessionId": INFRA, "uuid": f"pad-{i}",
                                "message": {"role": "user", "content": f"note {i} {filler}"}}))  # fmt: skip
    token = fake_github_token(random.Random(41))
    assert len(token) == len(filler)
    return transcript, f"note 150 {filler}".encode(), f"note 150 {token}".encode()


@pytest.mark.parametrize("then_append", [False, True])
def test_an_edit_in_the_middle_is_seen_whatever_the_size_and_mtime_say(
    config: Path, tmp_path: Path, then_append: bool
) -> None:
    """Written in place at the same size with the mtime put back (vim's backupcopy=yes,
    rsync --inplace), far from the file's first bytes and from its end; then, or not, grown."""
    home = tmp_path / "home"
    transcript, before, after = _padded_transcript(config)
    cached(config, home)
    data = transcript.read_bytes()
    where = data.index(before)
    assert _DIGEST_MARGIN < where < len(data) - _DIGEST_MARGIN
    st = transcript.stat()
    with transcript.open("r+b") as handle:
        handle.seek(where)
        handle.write(after)
    os.utime(transcript, ns=(st.st_atime_ns, st.st_mtime_ns))
    if then_append:
        with transcript.open("ab") as handle:
            handle.write(_line({"type": "system", "sessionId": INFRA, "uuid": "late"}))
    assert _verdicts(config, home)[transcript.relative_to(config).as_posix()] is Verdict.CHANGED
    warm = cached(config, home)
    assert _shape(warm) == _shape(full(config))
    assert any(f.line == data[:where].count(b"\n") + 1 for f in warm.findings)


_DIGEST_MARGIN = 16_384  # well past the 4 KB the head digest covers


def test_a_cache_folder_that_is_not_ours_is_passed_by(config: Path, tmp_path: Path) -> None:
    """A symlinked state/scan-cache (or one open to others) is neither read nor written, and
    the audit goes on without it (with and without --no-cache)."""
    home = tmp_path / "home"
    expected = _shape(full(config))
    (home / "state").mkdir(parents=True, mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / "state" / CACHE_FOLDER).symlink_to(elsewhere)
    assert _shape(cached(config, home)) == expected
    cache = _cache(home)
    cache.forget()
    assert _shape(audit(_targets(config), SCANNER, cache=cache)) == expected
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    (home / "state" / CACHE_FOLDER).unlink()
    loose = home / "state" / CACHE_FOLDER
    loose.mkdir(mode=0o700)
    loose.chmod(0o777)
    assert _shape(cached(config, home)) == expected
    assert list(loose.iterdir()) == []


def _shards(home: Path) -> list[Path]:
    return sorted((home / "state" / CACHE_FOLDER).glob("*.json"))


def test_a_damaged_foreign_or_other_version_cache_is_ignored(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    expected = _shape(full(config))
    cached(config, home)
    shard = next(s for s in _shards(home) if INFRA.encode() in s.read_bytes())
    # Damaged: one byte of the body changed (a finding's line number, say).
    data = shard.read_bytes()
    shard.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    assert Verdict.CHANGED in _verdicts(config, home).values()
    assert _shape(cached(config, home)) == expected
    # Open to others: not ours to trust.
    shard.chmod(0o644)
    assert Verdict.CHANGED in _verdicts(config, home).values()
    assert _shape(cached(config, home)) == expected
    # Signed with another key (another installation's, or made up).
    other = SecretScanner(
        build_detectors(POLICY), Fingerprinter(b"another-key-of-32-bytes-.......")
    )
    assert {p.verdict for p in plan_scans(_targets(config), _cache(home, other), other)} == {
        Verdict.CHANGED
    }
    # Written by another version.
    monkeypatch.setattr(scrubber, "__version__", "0.0.0-other")
    assert set(_verdicts(config, home).values()) == {Verdict.CHANGED}
    assert _shape(cached(config, home)) == expected


def test_the_cache_holds_no_value_and_is_private(config: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    cached(config, home)
    shards = _shards(home)
    assert shards
    folder = home / "state" / CACHE_FOLDER
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    blob = b"".join(s.read_bytes() for s in shards)
    for shard in shards:
        assert stat.S_IMODE(shard.stat().st_mode) == 0o600
    for secret in demo_manifest().secrets:
        for needle in secret.needles():
            assert needle.encode() not in blob, secret.kind
            assert json.dumps(needle)[1:-1].encode() not in blob, secret.kind


def test_a_file_growing_while_it_is_scanned(config: Path, tmp_path: Path) -> None:
    """Claude Code appends as we read (a line at a time, sometimes caught half written): no
    crash, and the next audit, from the cache, is what a full scan of the grown file finds."""
    home = tmp_path / "home"
    transcript = _transcript(config)
    stop = threading.Event()

    def keep_appending() -> None:
        for i in range(400):
            if stop.is_set():
                return
            line = _line({"type": "user", "sessionId": INFRA, "uuid": f"u-late-{i}",
                          "message": {"role": "user", "content": f"use {_context_only_value(i)}"}})  # fmt: skip
            with transcript.open("ab") as out:
                out.write(line[:40])
                out.flush()
                out.write(line[40:])

    writer = threading.Thread(target=keep_appending)
    writer.start()
    try:
        during = audit(_targets(config), SCANNER, cache=_cache(home))
    finally:
        stop.set()
        writer.join()
    assert all(f.error is None for f in during.files)
    assert _shape(cached(config, home)) == _shape(full(config))


def test_parallel_audit_equals_serial(config: Path) -> None:
    targets = targets_in_config(config)
    serial = audit(targets, SCANNER, env={"SCRUB_JOBS": "1"})
    pooled = audit(targets, SCANNER, env={"SCRUB_JOBS": "2"}, pool_min_bytes=0)
    assert serial.has_findings
    assert _shape(pooled) == _shape(serial)


def test_history_lines_appended_for_an_unchanged_session(config: Path, tmp_path: Path) -> None:
    """history.jsonl holds lines of every session: a line appended there with a copy of a
    value an unchanged session's transcript holds is a finding by value, as in a full scan."""
    home = tmp_path / "home"
    transcript = _transcript(config)
    value = _context_only_value(31)
    with transcript.open("ab") as out:
        out.write(_call("toolu_hist0", "/srv/app/.env"))
        out.write(_result("toolu_hist0", f"APP_SETTING={value}\nDEBUG=0"))
    cached(config, home)
    history = config / "history.jsonl"
    with history.open("ab") as out:
        out.write(_line({"display": f"why does {value} fail", "pastedContents": {},
                         "timestamp": 1772442000000, "project": "/home/demo/work/infra",
                         "sessionId": INFRA}))  # fmt: skip
    verdicts = _verdicts(config, home)
    assert verdicts["history.jsonl"] is Verdict.APPENDED
    assert verdicts[transcript.relative_to(config).as_posix()] is Verdict.FRESH
    warm = cached(config, home)
    assert _shape(warm) == _shape(full(config))
    copies = [f for f in warm.findings if f.file == str(history) and f.by_value]
    assert SCANNER.fingerprint(value)[:16] in {f.fingerprint for f in copies}


@pytest.mark.slow
def test_twenty_thousand_tiny_sessions(tmp_path: Path) -> None:
    """A config dir of 20,000 one-line sessions: every finding, cold and warm."""
    config = tmp_path / "claude"
    folder = config / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    token = fake_github_token(random.Random(2))
    for i in range(20_000):
        sid = f"{i:08d}-0000-4000-8000-000000000000"
        content = f"use {token}" if i % 1000 == 0 else "run the tests please"
        message = {"role": "user", "content": content}
        record = {"type": "user", "sessionId": sid, "uuid": sid, "message": message}
        # os.open, not Path.write_bytes: 20,000 files, and the test is about reading them.
        fd = os.open(f"{folder}/{sid}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, _line(record))
        finally:
            os.close(fd)
    home = tmp_path / "home"
    cold = cached(config, home)
    assert len(cold.files) == 20_000
    assert len(list(cold.findings)) == 20
    assert _shape(cached(config, home)) == _shape(cold)


def test_the_pool_hands_out_files_in_tasks_of_bounded_bytes() -> None:
    sizes = [50 << 20, 3 << 20, *([300 << 10] * 10), *([100] * 500)]
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    tasks = batches(sizes, order)
    assert [i for task in tasks for i in task] == order  # every file once, largest first
    assert tasks[0] == [0] and tasks[1] == [1]  # big files alone
    assert all(sum(sizes[i] for i in task) < (2 << 20) or len(task) == 1 for task in tasks)
    assert max(len(task) for task in tasks) <= 64


def _cached_paths(home: Path) -> set[str]:
    found: set[str] = set()
    for shard in _shards(home):
        body = json.loads(shard.read_bytes().partition(b"\n")[2])
        for files in body["groups"].values():
            found.update(files)
    return found


def test_deleted_sessions_and_project_folders_leave_the_cache(config: Path, tmp_path: Path) -> None:
    from scrubber.usecases.audit import AuditRequest, run_audit

    home = tmp_path / "home"
    cached(config, home)
    gone = next(config.glob("projects/-home-demo-work-shop-api/896642b1-*.jsonl"))
    assert _cache(home).key(gone) in _cached_paths(home)
    gone.unlink()  # the project's other session is unchanged: no shard had to be written
    assert _shape(cached(config, home)) == _shape(full(config))
    assert _cache(home).key(gone) not in _cached_paths(home)
    infra = {
        _cache(home).key(p) for p in (config / "projects" / "-home-demo-work-infra").rglob("*")
    }
    assert infra & _cached_paths(home)
    # A whole project folder gone: after an audit of the whole config dir, so is its shard.
    before = len(_shards(home))
    shutil.rmtree(config / "projects" / "-home-demo-work-infra")
    request = AuditRequest(POLICY, home, config)
    run_audit(request, now=datetime.now(UTC))
    assert not infra & _cached_paths(home)
    assert len(_shards(home)) == before - 1
    # What is not a shard of ours is left alone.
    stranger = home / "state" / CACHE_FOLDER / "notes.json"
    stranger.write_text("{}")
    run_audit(request, now=datetime.now(UTC))
    assert stranger.exists()
