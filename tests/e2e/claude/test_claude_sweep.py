"""Claude Code's own cleanup sweep (`cleanupPeriodDays`), triggered for real (issue 6).

The sweep runs about 5.5 s after a session starts and only when `.last-cleanup` is missing or
older than 24 h, and it deletes by file mtime alone (reference note, "Cleanup sweep"). So each
test backdates transcripts, removes `.last-cleanup`, and runs a session the fake API keeps open
for longer than that. `$SCRUB_HOME` sits at its default, inside the config dir, where the sweep
must leave it alone.

Backdated sessions are copies of a transcript the real client wrote, under new session ids
(with their record timestamps moved back too where scrubber's retention, which goes by the
newest timestamp inside, should see them as old).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from .conftest import Box, Run
from .fake_api import text_turn

pytestmark = pytest.mark.claude

DAY = 86400.0
# The scripted answer waits until the sweep was seen to run (its marker rewritten), then
# SWEEP_GRACE more seconds, instead of a fixed 8.5 s that had to be longer than the ~5.5 s after
# start at which it runs: about 2.5 s less per session, and a slow start gets up to
# SWEEP_WAIT_MAX instead of failing. (With 2.1.332 the old transcripts were already gone when
# the marker appeared; the grace covers the sweep's other folders.)
SWEEP_GRACE = 0.5
SWEEP_WAIT_MAX = 30.0
FIRST_PROMPT = "Remember the word periwinkle."
_TIMESTAMP = re.compile(r'"timestamp":"([0-9T:.\-]+Z)"')


@pytest.fixture
def sweep_box(box_factory: Callable[..., Box]) -> Box:
    # Queue only: no detached worker outlives the test (the worker has its own tests).
    return box_factory(scrub_home_inside=True, extra_env={"SCRUB_NO_WORKER": "1"})


def first_session(box: Box) -> tuple[str, Path]:
    run = box.claude(FIRST_PROMPT, script=[text_turn("Noted.")])
    assert run.returncode == 0, run.stderr[-2000:]
    return run.session_id, box.transcript(run.session_id)


def clone(source: Path, source_id: str, *, mtime_days: float, record_days: float = 0.0) -> str:
    """A copy of a real transcript as another session in the same project, its mtime
    `mtime_days` ago and its record timestamps moved back by `record_days`."""
    new_id = str(uuid.uuid4())
    text = source.read_text().replace(source_id, new_id)
    if record_days:
        shift = timedelta(days=record_days)

        def moved(match: re.Match[str]) -> str:
            when = datetime.fromisoformat(match.group(1).replace("Z", "+00:00")) - shift
            return f'"timestamp":"{when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]}Z"'

        text, count = _TIMESTAMP.subn(moved, text)
        assert count > 0
    target = source.with_name(f"{new_id}.jsonl")
    target.write_text(text)
    target.chmod(0o600)
    backdate(target, mtime_days)
    return new_id


def backdate(path: Path, days: float) -> None:
    stamp = time.time() - days * DAY
    os.utime(path, (stamp, stamp))


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def session_ids(box: Box) -> set[str]:
    return {p.stem for p in box.transcripts()}


def sessions_report(box: Box) -> dict[str, dict[str, Any]]:
    done = box.scrub_ok("sessions", "--format", "json")
    return {s["session_id"]: s for s in json.loads(done.stdout)["sessions"]}


def predicted_by_sweep(report: dict[str, dict[str, Any]], by: datetime) -> set[str]:
    return {
        sid
        for sid, s in report.items()
        if s["claude_sweep_at"] is not None and datetime.fromisoformat(s["claude_sweep_at"]) <= by
    }


def long_session(box: Box) -> tuple[Run, float]:
    """A session that stays open past the sweep; returns it and its start time."""
    marker = box.config / ".last-cleanup"
    marker.unlink(missing_ok=True)
    started = time.time()
    swept_at: list[float] = []  # when the open session first saw the rewritten marker

    def swept_a_while_ago() -> bool:
        if not swept_at and marker.exists() and marker.stat().st_mtime >= started - 1:
            swept_at.append(time.monotonic())
        return bool(swept_at) and time.monotonic() - swept_at[0] >= SWEEP_GRACE

    turn = text_turn("Done slowly.", delay=SWEEP_WAIT_MAX, until=swept_a_while_ago)
    run = box.claude("Take your time.", script=[turn])
    assert run.returncode == 0, run.stderr[-2000:]
    # The sweep ran in this session, while it was open: it rewrote its marker.
    assert swept_at, "the sweep did not run while the session was open"
    assert marker.exists() and marker.stat().st_mtime >= started - 1, "the sweep did not run"
    return run, started


def resume_finds(box: Box, session: str) -> None:
    box.api.clear()
    run = box.claude("What was the word?", "--resume", session, script=[text_turn("Periwinkle.")])
    assert run.returncode == 0, (session, run.stderr[-2000:])
    [first, *_] = box.api.main_requests()
    assert FIRST_PROMPT in first.text(), "the resumed history was not sent"


def test_claude_sweep_deletes_what_scrub_sessions_predicted(sweep_box: Box) -> None:
    box = sweep_box
    recent, transcript = first_session(box)
    old60 = clone(transcript, recent, mtime_days=60)
    old31 = clone(transcript, recent, mtime_days=31)
    young5 = clone(transcript, recent, mtime_days=5)
    # Old by its records too: scrubber's retention moves it to its trash.
    trashed = clone(transcript, recent, mtime_days=90, record_days=90)

    key, recipient = box.keygen()
    box.scrub_ok("archive", old60, "--recipient", recipient)
    plan = box.scrub("retention", "--apply", "--days", "30", "--format", "json")
    assert plan.returncode == 0, plan.stdout[-3000:]
    removed = [
        s["session_id"] for s in json.loads(plan.stdout)["sessions"] if s["action"] != "keep"
    ]
    assert removed == [trashed], removed
    home = box.scrub_home
    assert list((home / "trash").rglob(f"{trashed}.jsonl"))
    [archive] = list((home / "archives").rglob("*.tar.gz.age"))
    # Our files are as old as the oldest transcript: only where they are protects them.
    for path in [*(home / "trash").rglob("*"), *(home / "archives").rglob("*")]:
        backdate(path, 90)
    before_home = tree_digest(home)

    report = sessions_report(box)
    assert set(report) == {recent, old60, old31, young5}
    predicted = predicted_by_sweep(report, datetime.now(UTC) + timedelta(minutes=5))
    assert predicted == {old60, old31}
    assert all(report[sid]["claude_first"] for sid in predicted)

    before = session_ids(box)
    run, _ = long_session(box)
    after = session_ids(box)
    assert before - after == predicted
    assert after == (before - predicted) | {run.session_id}
    # Scrubber's folder (policy, logs, trash, archives) survived, byte for byte.
    after_home = tree_digest(home)
    assert {k: v for k, v in after_home.items() if k in before_home} == before_home
    assert archive.exists()

    # What scrubber kept comes back, and Claude Code finds it again.
    box.scrub_ok("undelete", trashed)
    restored = box.transcript(trashed)
    assert time.time() - restored.stat().st_mtime < 120  # a full period to resume it
    resume_finds(box, trashed)
    box.scrub_ok("restore", old60, "-i", str(key))
    resume_finds(box, old60)


def test_after_take_over_cleanup_the_sweep_deletes_nothing(sweep_box: Box) -> None:
    box = sweep_box
    recent, transcript = first_session(box)
    old60 = clone(transcript, recent, mtime_days=60, record_days=60)
    old31 = clone(transcript, recent, mtime_days=31, record_days=31)
    clone(transcript, recent, mtime_days=5, record_days=5)

    install = box.scrub("install", "--take-over-cleanup")
    assert install.returncode == 0, (install.stdout[-2000:], install.stderr[-2000:])
    settings = json.loads((box.config / "settings.json").read_text())
    assert settings["cleanupPeriodDays"] >= 10000
    # Scrubber's policy took over Claude Code's period (the default 30 days).
    assert re.search(r"(?m)^\s+days:\s*30\b", (box.scrub_home / "policy.yaml").read_text())

    report = sessions_report(box)
    assert predicted_by_sweep(report, datetime.now(UTC) + timedelta(days=365)) == set()

    before = session_ids(box)
    run, _ = long_session(box)
    assert session_ids(box) == before | {run.session_id}
    assert "SessionEnd hook" not in run.stderr

    # Scrubber's retention is now the one clock: it removes exactly what it planned.
    dry = box.scrub("retention", "--format", "json")
    assert dry.returncode == 0, dry.stdout[-3000:]
    planned = {s["session_id"] for s in json.loads(dry.stdout)["sessions"] if s["action"] != "keep"}
    assert planned == {old60, old31}
    applied = box.scrub("retention", "--apply", "--format", "json")
    assert applied.returncode == 0, applied.stdout[-3000:]
    assert session_ids(box) == before - planned | {run.session_id}
    for sid in planned:
        assert list((box.scrub_home / "trash").rglob(f"{sid}.jsonl")), sid
