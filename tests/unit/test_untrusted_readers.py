"""Every reader of a JSON/YAML state or settings file, on a planted file: a FIFO, a link to
/dev/zero, a document nested 200,000 levels deep, an integer of 5000 digits.

No exception may escape, the reader's documented fallback must happen, and it must return at
once. Each reader's cases run in a child process (this file, run as a script) with a timeout and
a cap on its memory, so a regression (a blocking open, an unbounded read) fails the test instead of
hanging the suite or filling the machine's memory.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HAZARDS = ("fifo", "dev_zero", "deep", "bigint")
SID = "0b5e8a4c-1d2e-4f60-8a7b-9c0d1e2f3a4b"
TIMEOUT = 20.0  # seconds; a fixed reader takes well under one
MEMORY = 2 << 30  # bytes of address space: a read of /dev/zero runs into it at once


def _plant(path: Path, hazard: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if hazard == "fifo":
        os.mkfifo(path, 0o600)
    elif hazard == "dev_zero":
        path.symlink_to("/dev/zero")
    elif hazard == "deep":
        path.write_text("[" * 200_000 + "]" * 200_000)  # valid JSON, and valid YAML
    else:
        path.write_text('{"format": 1' + "0" * 5000 + ', "pins": []}')  # YAML too
    if not path.is_symlink():
        path.chmod(0o600)


def _home() -> Path:
    from scrubber import paths

    home = paths.scrub_home()
    for folder in (home, home / "state"):
        folder.mkdir(mode=0o700, exist_ok=True)
    return home


def _case_audit_cache(hazard: str) -> None:
    from scrubber.usecases.reported_projects import AUDIT_CACHE_NAME, read_audit_cache

    home = _home()
    _plant(home / "state" / AUDIT_CACHE_NAME, hazard)
    assert read_audit_cache(home) == {}  # a cache that cannot be read is no cache


def _case_audit_cache_update(hazard: str) -> None:
    from scrubber.usecases.audit import update_audit_cache
    from scrubber.usecases.audit_report import AuditReport
    from scrubber.usecases.reported_projects import AUDIT_CACHE_NAME

    home = _home()
    rebuilt = home / "state" / AUDIT_CACHE_NAME
    _plant(rebuilt, hazard)
    update_audit_cache(home, AuditReport([], []))
    assert not rebuilt.is_symlink() and rebuilt.is_file()
    assert json.loads(rebuilt.read_bytes()) == {"format": 1, "sessions": {}}


def _case_pins(hazard: str) -> None:
    from scrubber.errors import ConfigError
    from scrubber.retention.pins import pins_file, read_pins

    home = _home()
    _plant(pins_file(home), hazard)
    with pytest.raises(ConfigError):  # never "no pins": retention pauses
        read_pins(home)


def _case_spool_job(hazard: str) -> None:
    from scrubber import paths
    from scrubber.hooks.spool import Spool

    home = _home()
    job = paths.spool_dir(home) / f"{SID}.json"
    _plant(job, hazard)
    spool = Spool(home)
    assert spool.jobs() == []
    if hazard in ("deep", "bigint"):  # a regular file: moved aside, so the queue goes on
        assert (spool.failed_dir / f"unreadable-{SID}.json").is_file()
        assert not job.exists()


def _case_trash_manifest(hazard: str) -> None:
    from scrubber import paths
    from scrubber.retention.trash_crash import TRASH_MANIFEST
    from scrubber.retention.trash_manifest import TrashError, read_trash_manifest

    slot = paths.trash_dir(_home()) / SID
    _plant(slot / TRASH_MANIFEST, hazard)
    with pytest.raises(TrashError):  # reported as damaged; the listings skip it
        read_trash_manifest(slot)


def _case_sidecar(hazard: str) -> None:
    from scrubber import paths
    from scrubber.archive.errors import SidecarError
    from scrubber.archive.sidecar import read_sidecar

    folder = paths.archives_dir(_home()) / "-p" / SID
    _plant(folder / "2026-11-20T10-00-00.000Z.tar.gz.age.json", hazard)
    with pytest.raises(SidecarError):
        read_sidecar(folder / "2026-11-20T10-00-00.000Z.tar.gz.age.json")


def _case_policy(hazard: str) -> None:
    from scrubber import paths
    from scrubber.errors import ConfigError
    from scrubber.policy.load import load_policy

    home = _home()
    _plant(paths.policy_file(home), hazard)
    with pytest.raises(ConfigError):
        load_policy()


def _case_user_settings(hazard: str) -> None:
    from scrubber import paths
    from scrubber.errors import ConfigError
    from scrubber.retention.settings import read_cleanup_setting

    settings = paths.config_dir() / "settings.json"
    _plant(settings, hazard)
    with pytest.raises(ConfigError, match="retention paused"):
        read_cleanup_setting(settings)


def _case_project_settings(hazard: str) -> None:
    from scrubber import paths
    from scrubber.errors import ConfigError
    from scrubber.retention.settings import effective_cleanup_periods

    cwd = paths.config_dir().parent / "cloned-repo"
    _plant(cwd / ".claude" / "settings.json", hazard)
    with pytest.raises(ConfigError, match="retention paused"):
        effective_cleanup_periods(paths.config_dir(), [str(cwd)], managed=cwd / "none.json")


def _case_status_state(hazard: str) -> None:
    from scrubber import paths
    from scrubber.hooks import status_line
    from scrubber.hooks.status_scan import state_file

    project = paths.config_dir() / "projects" / "-p"
    project.mkdir(parents=True, exist_ok=True)
    transcript = project / f"{SID}.jsonl"
    token = "ghp_" + "k3Rz9QvX2mLw8TnB5yHc1JdF6sGa4PeU7oNi"
    record = {"type": "user", "sessionId": SID, "message": {"role": "user", "content": token}}
    transcript.write_text(json.dumps(record) + "\n")
    _plant(state_file(_home(), SID, transcript), hazard)
    payload = json.dumps({"session_id": SID, "transcript_path": str(transcript)}).encode()
    out = io.StringIO()
    argv = ["--inline", "--budget-ms", "5000"]
    assert status_line.main(argv, stdin=io.BytesIO(payload), stdout=out) == 0
    assert "secrets: 1" in out.getvalue()  # scanned again: the normal segment, not a blank


def _case_status_allowlist(hazard: str) -> None:
    from scrubber.hooks.status_line import allowlist_state_is_current, write_allowlist_state
    from scrubber.hooks.status_scan import allowlist_state_file
    from scrubber.policy.load import load_policy

    home = _home()
    _plant(allowlist_state_file(home), hazard)
    policy = load_policy().policy
    assert not allowlist_state_is_current(policy, home)
    written = write_allowlist_state(policy, home)
    assert not written.is_symlink() and written.is_file()
    assert allowlist_state_is_current(policy, home)


def _case_status_scan_state(hazard: str) -> None:
    """The detached scan's own reads: its state file and the allowlist the installer copied."""
    from scrubber.hooks.status_scan import _build_scanner, allowlist_state_file, load_state

    home = _home()
    where = home / "state" / "status" / f"{SID}.json"
    _plant(where, hazard)
    assert load_state(where) is None  # damaged is none: the scan starts again
    _plant(allowlist_state_file(home), hazard)
    assert _build_scanner(home, b"k" * 32).scan_text("nothing here at all") == ()


def _case_uninstall_backup(hazard: str) -> None:
    """The install record names the settings backup uninstall restores the original text
    from: a planted path there is no backup (the settings are rendered instead)."""
    from scrubber.install.run import _restored_text

    planted = _home() / "backups" / "settings.json.orig"
    _plant(planted, hazard)
    data = {"env": {"A": "1"}}
    assert json.loads(_restored_text(data, {"original_backup": str(planted)}) or "") == data


def _case_live_settings(hazard: str) -> None:
    """The live hooks' compiled settings (and the allowlist copy they fall back to): a planted
    file is the defaults, and tool output is still masked (the hook had raised RecursionError,
    exit 1, the output unmasked)."""
    from scrubber import paths
    from scrubber.hooks import post_tool_use
    from scrubber.hooks.live_common import live_settings_file
    from scrubber.hooks.status_state import ALLOWLIST_FILE

    home = _home()
    _plant(live_settings_file(home), hazard)
    _plant(paths.state_dir(home) / ALLOWLIST_FILE, hazard)
    token = "ghp_" + "k3Rz9QvX2mLw8TnB5yHc1JdF6sGa4PeU7oNi"
    payload = {"tool_name": "Bash", "tool_response": {"stdout": f"token={token}\n"}}
    out = io.StringIO()
    stdin = io.BytesIO(json.dumps(payload).encode())
    assert post_tool_use.main([], stdin=stdin, stdout=out, env=dict(os.environ)) == 0
    assert token not in out.getvalue() and "REDACTED" in out.getvalue()


def _case_install_record(hazard: str) -> None:
    from scrubber.install.record import read_record, record_file

    home = _home()
    _plant(record_file(home), hazard)
    assert read_record(home) == {}  # no record: install writes a new one


def _case_install_settings(hazard: str) -> None:
    from scrubber.errors import ConfigError
    from scrubber.install.settings_file import read_settings

    settings = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    _plant(settings, hazard)
    with pytest.raises(ConfigError):  # never rewritten: install refuses with a clear error
        read_settings(settings)


CASES: dict[str, Callable[[str], None]] = {
    name[len("_case_") :]: case for name, case in globals().items() if name.startswith("_case_")
}


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.parametrize("reader", sorted(CASES))
def test_a_planted_file_is_refused_at_once(sandbox, reader: str) -> None:
    # One child per reader, its hazards one after another in homes of their own: a child's
    # start-up (imports, a scanner) cost more than the cases themselves.
    command = [sys.executable, __file__, reader, *HAZARDS]
    try:
        done = subprocess.run(
            command,
            env=sandbox.environ(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT * len(HAZARDS),
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired as stuck:
        told = stuck.stderr or b""
        started = (told.decode(errors="replace") if isinstance(told, bytes) else told).splitlines()
        hazard = started[-1].removeprefix("case ") if started else HAZARDS[0]
        pytest.fail(f"{reader} on a planted {hazard}: still reading after {TIMEOUT} s or more")
    assert done.returncode == 0, f"{reader}:\n{done.stderr[-3000:]}"
    assert done.stderr.split() == [w for h in HAZARDS for w in ("case", h)], done.stderr


def _run_cases(reader: str, hazards: list[str]) -> None:
    """In the child: each hazard in a fresh config dir and scrubber home, told on stderr as it
    starts (a hang names its hazard)."""
    root = Path(os.environ["SCRUB_HOME"]).parent / "cases"
    for hazard in hazards:
        world = root / hazard
        os.environ["CLAUDE_CONFIG_DIR"] = str(world / "claude")
        os.environ["SCRUB_HOME"] = str(world / "scrub-home")
        (world / "claude").mkdir(parents=True, mode=0o700)
        print("case", hazard, file=sys.stderr, flush=True)
        CASES[reader](hazard)


def test_damaged_documents_are_worded_without_their_content(tmp_path: Path) -> None:
    from scrubber.untrusted import DamagedDocument, load_json

    cases = {
        "too large": b"[" + b"0," * 12_000 + b"0]",
        "nested too deeply": b"[" * 5000 + b"]" * 5000,
        "nested more than 100 levels": b"[" * 150 + b"]" * 150,
        "too many digits": b'{"n": 1' + b"0" * 5000 + b"}",
        "not UTF-8": b'{"secret-ish": "\xff"}',
        "line 1 column 18": b'{"secret-ish": 1,}',
    }
    for expected, body in cases.items():
        path = tmp_path / "doc.json"
        path.write_bytes(body)
        with pytest.raises(DamagedDocument) as raised:
            load_json(path, 20_000, follow=False)
        assert expected in raised.value.problem
        assert "secret-ish" not in str(raised.value)


if __name__ == "__main__":  # one reader's cases, in the child process the test starts
    _run_cases(sys.argv[1], sys.argv[2:])
