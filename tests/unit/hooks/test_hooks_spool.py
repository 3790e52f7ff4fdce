"""The spool: one durable job per session, claimed by rename, never lost."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from scrubber.hooks.files import LOG_ROTATE_BYTES, append_log_line, valid_session_id
from scrubber.hooks.spool import EnqueueResult, Job, Spool, SpoolState, read_job

SID = "3f2c9a4e-1b7d-4c8e-9f00-6a5b4c3d2e1f"


def job(session: str = SID, size: int | None = 10, **fields: object) -> Job:
    return Job(
        session_id=session,
        transcript_path=f"/c/projects/p/{session}.jsonl",
        ended_at=100.0,
        transcript_size=size,
        transcript_mtime_ns=5,
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (SID, True),
        ("agent-1", True),
        ("../etc", False),
        ("a/b", False),
        (".hidden", False),
        ("", False),
        ("x" * 129, False),
        (7, False),
        ("a..b", False),
    ],
)
def test_session_ids_that_can_become_file_names(value: object, ok: bool) -> None:
    assert valid_session_id(value) is ok


def test_job_round_trips_through_json() -> None:
    original = job(done=("archive",), attempts=2, not_before=3.5, last_error="busy")
    assert Job.from_json(json.loads(json.dumps(original.to_json()))) == original


@pytest.mark.parametrize(
    "data",
    [
        {"format": 2, "session_id": SID, "transcript_path": "/x.jsonl"},
        {"format": 1, "session_id": "../x", "transcript_path": "/x.jsonl"},
        {"format": 1, "session_id": SID, "transcript_path": ""},
        {"format": 1, "session_id": SID},
    ],
)
def test_malformed_jobs_are_refused(data: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"job|format"):
        Job.from_json(data)


def test_enqueue_writes_one_private_file_per_session(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    assert spool.enqueue(job()) is EnqueueResult.QUEUED
    path = spool.pending_path(SID)
    assert path.is_file()
    assert path.stat().st_mode & 0o777 == 0o600
    assert spool.root.stat().st_mode & 0o777 == 0o700
    assert read_job(path) == job()
    assert [p.name for p in spool.root.iterdir() if p.is_file()] == [path.name]  # no temp left


def test_the_same_session_and_transcript_is_one_job(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    assert spool.enqueue(job()) is EnqueueResult.DUPLICATE
    assert spool.enqueue(job(size=20)) is EnqueueResult.REPLACED
    [only] = spool.jobs()
    assert only.job.transcript_size == 20


def test_a_job_in_work_is_not_queued_twice_but_a_newer_transcript_is(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    assert spool.claim(SID) == job()
    assert spool.enqueue(job()) is EnqueueResult.DUPLICATE  # the plugin's and our hook
    assert spool.jobs() == []
    assert spool.enqueue(job(size=30)) is EnqueueResult.QUEUED  # resumed and ended again
    assert [s.job.transcript_size for s in spool.jobs()] == [30]


def test_claim_complete_and_a_second_claim(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    claimed = spool.claim(SID)
    assert claimed is not None
    assert spool.claim(SID) is None
    assert [s.job for s in spool.jobs(SpoolState.ACTIVE)] == [claimed]
    spool.complete(claimed)
    assert spool.jobs(SpoolState.ACTIVE) == []
    assert spool.jobs() == []


def test_progress_survives_a_crash_and_recover_requeues(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    claimed = spool.claim(SID)
    assert claimed is not None
    spool.save_progress(Job.from_json({**claimed.to_json(), "done": ["archive"]}))
    # The worker dies here; the next one starts with recover().
    [recovered] = Spool(tmp_path).recover()
    assert recovered.done == ("archive",)
    assert [s.job.done for s in spool.jobs()] == [("archive",)]
    assert spool.jobs(SpoolState.ACTIVE) == []


def test_release_keeps_a_newer_pending_job(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    claimed = spool.claim(SID)
    assert claimed is not None
    spool.enqueue(job(size=99))  # the session was resumed and ended again meanwhile
    spool.release(Job.from_json({**claimed.to_json(), "attempts": 1}))
    [pending] = spool.jobs()
    assert pending.job.transcript_size == 99
    assert pending.job.attempts == 0
    assert spool.jobs(SpoolState.ACTIVE) == []


def test_fail_parks_with_the_reason_and_retry_requeues(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    claimed = spool.claim(SID)
    assert claimed is not None
    spool.fail(claimed, "no recipients")
    [failed] = spool.jobs(SpoolState.FAILED)
    assert failed.job.last_error == "no recipients"
    assert spool.jobs() == [] and spool.jobs(SpoolState.ACTIVE) == []
    [again] = spool.retry_failed()
    assert again.last_error is None and again.attempts == 0
    assert [s.job.session_id for s in spool.jobs()] == [SID]
    assert spool.jobs(SpoolState.FAILED) == []


def test_an_unreadable_job_file_is_moved_aside(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(job())
    spool.ensure()
    (spool.root / "broken.json").write_text("{not json")
    assert [s.job.session_id for s in spool.jobs()] == [SID]
    assert (spool.failed_dir / "unreadable-broken.json").exists()
    assert not (spool.root / "broken.json").exists()


def test_jobs_are_listed_oldest_first(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.enqueue(Job("b-session", "/c/projects/p/b.jsonl", ended_at=2.0))
    spool.enqueue(Job("a-session", "/c/projects/p/a.jsonl", ended_at=3.0))
    spool.enqueue(Job("c-session", "/c/projects/p/c.jsonl", ended_at=1.0))
    assert [s.job.session_id for s in spool.jobs()] == ["c-session", "b-session", "a-session"]


def test_log_lines_are_appended_and_rotated(tmp_path: Path) -> None:
    log = tmp_path / "log" / "hook.log"
    append_log_line(log, "one", home=tmp_path)
    append_log_line(log, "two\n", home=tmp_path)
    assert log.read_text() == "one\ntwo\n"
    assert log.stat().st_mode & 0o777 == 0o600
    with log.open("ab") as handle:
        handle.truncate(LOG_ROTATE_BYTES + 1)
    append_log_line(log, "three", home=tmp_path)
    assert log.with_name("hook.log.1").stat().st_size == LOG_ROTATE_BYTES + 1
    assert log.read_text() == "three\n"


def test_spool_paths_refuse_a_bad_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="session id"):
        Spool(tmp_path).pending_path("../../x")
    assert not (tmp_path / "spool").exists()


def test_a_fifo_at_a_job_name_is_refused_at_once(tmp_path: Path) -> None:
    # A FIFO planted where a job file goes made read_job wait forever for a writer: the
    # SessionEnd hook hung (Claude Code gives it 1.5 s). Now it is no job, and the hook goes on.
    spool = Spool(tmp_path)
    spool.ensure()
    os.mkfifo(spool.pending_path(SID))
    done: list[EnqueueResult] = []
    thread = threading.Thread(target=lambda: done.append(spool.enqueue(job(), fsync=False)))
    thread.start()
    thread.join(timeout=5)
    if thread.is_alive():  # unblock the reader so the test run can end, then fail
        with open(spool.pending_path(SID), "wb"):  # noqa: PTH123
            pass
        thread.join(timeout=5)
        pytest.fail("enqueue blocked on a FIFO")
    assert read_job(spool.pending_path(SID)) == job()  # the FIFO was replaced by the job
    assert done == [EnqueueResult.REPLACED]
