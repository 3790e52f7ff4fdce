"""The SessionEnd hook in-process: validation, the job it writes, and that it never fails."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from scrubber.hooks import session_end
from scrubber.hooks.session_end import Rejected, check_transcript_path, parse_payload
from scrubber.hooks.spool import Spool

SID = "3f2c9a4e-1b7d-4c8e-9f00-6a5b4c3d2e1f"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    (config / "projects" / "p").mkdir(parents=True)
    return {
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "SCRUB_NO_WORKER": "1",
    }


def payload(config: str, **fields: object) -> bytes:
    data: dict[str, object] = {
        "session_id": SID,
        "transcript_path": f"{config}/projects/p/{SID}.jsonl",
        "cwd": "/work/p",
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    data.update(fields)
    return json.dumps({k: v for k, v in data.items() if v is not None}).encode()


def log_text(env: dict[str, str]) -> str:
    path = Path(env["SCRUB_HOME"]) / "log" / "hook.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "empty input"),
        (b"  \n", "empty input"),
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"hook_event_name": "Stop", "session_id": "a", "transcript_path": "/x"}', "SessionEnd"),
        (b'{"transcript_path": "/x.jsonl"}', "session_id"),
        (b'{"session_id": "../../etc", "transcript_path": "/x.jsonl"}', "session_id"),
        (b'{"session_id": "abc"}', "transcript_path"),
        (b'{"session_id": "abc", "transcript_path": 7}', "transcript_path"),
    ],
)
def test_bad_payloads_are_rejected_with_a_reason(data: bytes, why: str) -> None:
    with pytest.raises(Rejected, match=why):
        parse_payload(data)


def test_a_good_payload_is_read() -> None:
    read = parse_payload(payload("/c", reason="clear", extra={"x": 1}))
    assert (read.session_id, read.reason, read.cwd) == (SID, "clear", "/work/p")
    assert parse_payload(payload("/c", reason=None)).reason == "other"
    # A reason is logged and queued as it came: only a plain word is taken as one.
    for odd in ("x\n2026-01-01T00:00:00Z session-end: forged", "\x1b]0;title\x07", "", "é"):
        assert parse_payload(payload("/c", reason=odd)).reason == "other"


def test_transcript_must_be_a_jsonl_under_projects(tmp_path: Path) -> None:
    config = tmp_path / "c"
    (config / "projects" / "p").mkdir(parents=True)
    inside = config / "projects" / "p" / "s.jsonl"
    assert check_transcript_path(str(inside), config) == inside
    for bad, why in [
        ("relative/s.jsonl", "absolute"),
        (str(config / "projects" / "p" / "s.txt"), ".jsonl"),
        (str(tmp_path / "elsewhere.jsonl"), "outside"),
        (str(config / "projects" / ".." / "s.jsonl"), "outside"),
        (str(config / "history.jsonl"), "outside"),
    ]:
        with pytest.raises(Rejected, match=why):
            check_transcript_path(bad, config)
    # A symlinked project folder that leads out of the config dir is outside too.
    (config / "projects" / "link").symlink_to(tmp_path)
    with pytest.raises(Rejected, match="outside"):
        check_transcript_path(str(config / "projects" / "link" / "s.jsonl"), config)


def test_main_queues_the_job_logs_and_prints_nothing(
    world: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = Path(world["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / f"{SID}.jsonl"
    transcript.write_text('{"type":"user"}\n')
    data = payload(world["CLAUDE_CONFIG_DIR"])
    assert session_end.main([], stdin=io.BytesIO(data), env=world) == 0
    assert capsys.readouterr() == ("", "")
    [spooled] = Spool(Path(world["SCRUB_HOME"])).jobs()
    assert spooled.job.session_id == SID
    assert spooled.job.transcript_path == str(transcript)
    assert spooled.job.reason == "prompt_input_exit"
    assert spooled.job.transcript_size == transcript.stat().st_size
    assert f"session {SID} queued (reason prompt_input_exit, 16 bytes)" in log_text(world)
    assert stat.S_IMODE(Path(world["SCRUB_HOME"]).stat().st_mode) == 0o700


def test_a_second_hook_for_the_same_session_is_a_duplicate(world: dict[str, str]) -> None:
    transcript = Path(world["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / f"{SID}.jsonl"
    transcript.write_text("{}\n")
    for _ in range(2):
        session_end.main([], stdin=io.BytesIO(payload(world["CLAUDE_CONFIG_DIR"])), env=world)
    assert len(Spool(Path(world["SCRUB_HOME"])).jobs()) == 1
    assert f"session {SID} duplicate" in log_text(world)


def test_a_missing_transcript_is_queued_and_said(world: dict[str, str]) -> None:
    session_end.main([], stdin=io.BytesIO(payload(world["CLAUDE_CONFIG_DIR"])), env=world)
    [spooled] = Spool(Path(world["SCRUB_HOME"])).jobs()
    assert spooled.job.transcript_size is None
    assert "transcript not there (yet)" in log_text(world)


@pytest.mark.parametrize(
    "data",
    [b"", b"{oops", b'{"session_id": "x", "transcript_path": "/etc/passwd.jsonl"}'],
)
def test_bad_input_exits_0_with_a_log_line_and_no_job(world: dict[str, str], data: bytes) -> None:
    assert session_end.main([], stdin=io.BytesIO(data), env=world) == 0
    assert "ignored:" in log_text(world)
    assert Spool(Path(world["SCRUB_HOME"])).jobs() == []


def test_payload_content_never_reaches_the_log(world: dict[str, str]) -> None:
    token = "gh" + "p_" + os.urandom(18).hex()
    data = payload(world["CLAUDE_CONFIG_DIR"], cwd=f"/w/{token}", prompt=token)
    session_end.main([], stdin=io.BytesIO(data), env=world)
    session_end.main([], stdin=io.BytesIO(b'{"x": "' + token.encode() + b'"'), env=world)
    assert log_text(world)
    assert token not in log_text(world)


def test_an_internal_error_is_logged_by_type_and_still_exits_0(world: dict[str, str]) -> None:
    home = Path(world["SCRUB_HOME"])
    home.mkdir()
    (home / "spool").write_text("a file where the spool folder should be")
    assert (
        session_end.main([], stdin=io.BytesIO(payload(world["CLAUDE_CONFIG_DIR"])), env=world) == 0
    )
    assert "internal error" in log_text(world)
    assert "nothing queued" in log_text(world)


def test_worker_command_prefers_the_given_interpreter_then_the_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv, _ = session_end.worker_command({}, "/opt/py") or ([], {})
    assert argv == ["/opt/py", "-m", "scrubber.hooks.worker"]
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    found = session_end.worker_command({"SCRUB_VENV": str(venv)})
    assert found is not None and found[0][0] == str(python)
    home_venv = tmp_path / "home" / ".local" / "share" / "scrubber" / "venv" / "bin"
    home_venv.mkdir(parents=True)
    (home_venv / "python").symlink_to(python)
    found = session_end.worker_command({"HOME": str(tmp_path / "home")})
    assert found is not None and found[0][0] == str(home_venv / "python")
    xdg_venv = tmp_path / "xdg" / "scrubber" / "venv" / "bin"  # where install.sh puts it then
    xdg_venv.mkdir(parents=True)
    (xdg_venv / "python").symlink_to(python)
    found = session_end.worker_command({"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": "/none"})
    assert found is not None and found[0][0] == str(xdg_venv / "python")


def test_worker_command_uses_this_interpreter_only_when_it_has_the_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = session_end.worker_command({"HOME": "/nonexistent"})
    assert found is not None  # the test environment has them
    argv, env = found
    assert argv[1:] == ["-m", "scrubber.hooks.worker"]
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(Path(session_end.__file__).parents[2])
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert session_end.worker_command({"HOME": "/nonexistent"}) is None


def test_without_any_worker_the_job_stays_and_the_log_says_how_to_install(
    world: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_end, "worker_command", lambda env, python=None: None)
    env = {k: v for k, v in world.items() if k != "SCRUB_NO_WORKER"}
    session_end.main([], stdin=io.BytesIO(payload(world["CLAUDE_CONFIG_DIR"])), env=env)
    assert len(Spool(Path(world["SCRUB_HOME"])).jobs()) == 1
    assert "install.sh" in log_text(world)


def test_a_refused_home_is_said_on_stderr_and_by_doctor(
    world: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """$SCRUB_HOME writable by its group (a `mkdir` under umask 002): nothing may be queued or
    logged there (a planted job would be run), so the hook says so on stderr, still exit 0,
    and `scrub doctor` names the folder and the fix."""
    from scrubber.cli.doctor_launchers import check_home_folder
    from scrubber.cli.doctor_model import Level

    # The environment given is the one judged (it was the process's: another $SCRUB_HOME,
    # under which this one counted as a folder outside scrubber's and was just tightened).
    monkeypatch.delenv("SCRUB_HOME", raising=False)
    home = Path(world["SCRUB_HOME"])
    home.mkdir(mode=0o700)
    home.chmod(0o775)
    data = payload(world["CLAUDE_CONFIG_DIR"])
    assert session_end.main([], stdin=io.BytesIO(data), env=world) == 0
    said = capsys.readouterr().err
    assert "nothing queued" in said and f"{home} is writable by group" in said
    assert list(home.iterdir()) == []
    [check] = check_home_folder(home)
    assert check.level is Level.FAIL and "writable by group" in check.message
    assert check.fix is not None and f"chmod 700 {home}" in check.fix
    home.chmod(0o700)
    assert check_home_folder(home) == []
    assert session_end.main([], stdin=io.BytesIO(data), env=world) == 0
    assert "queued" in log_text(world) and capsys.readouterr().err == ""
    # Only its log/ folder open to the group: doctor names that one.
    (home / "log").chmod(0o770)
    [check] = check_home_folder(home)
    assert check.level is Level.FAIL and f"{home / 'log'} is writable by group" in check.message
