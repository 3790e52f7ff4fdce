"""`scrub install` into a temp config dir, then a real `claude -p` session: Claude Code fires our
SessionEnd hook with its real payload, the detached worker archives and redacts the session
(side files included), and both the redacted copy and a restored archive load in
`claude -p --resume` and send placeholders, not secrets, to the (fake) API.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import tarfile
from pathlib import Path

import pyrage
import pytest

from scrubber.hooks.worker import lock_file

from .conftest import Box, Run
from .fake_api import FakeApi, text_turn
from .planted import Planted, Scenario, plant

pytestmark = pytest.mark.claude

ACTIONS = "archive,redact-copy"
# What Claude Code prints when a SessionEnd hook exits non-zero (reference note, "Hooks").
HOOK_FAILED = re.compile(r"SessionEnd hook .*failed", re.IGNORECASE)


def worker_idle(box: Box) -> bool:
    """No worker holds the lock (it exits when the queue is empty)."""
    path = lock_file(box.scrub_home)
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # also drops our lock, if we took it
    return True


def session_done(box: Box, session: str) -> bool:
    return any(r.get("event") == "done" and r.get("session_id") == session for r in box.activity())


def tar_members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
        assert names[0] == "manifest.json", names[:3]
        out = {}
        for member in tar.getmembers():
            if member.isfile():
                extracted = tar.extractfile(member)
                assert extracted is not None
                out[member.name] = extracted.read()
        return out


def assert_resume_sends_placeholders(box: Box, session: str, config: Path, planted: Planted) -> Run:
    """`claude -p --resume SESSION` in `config`: it loads the session and sends its history,
    with placeholders where the secrets were, and no secret, in every request."""
    box.api.clear()
    run = box.claude(
        "Carry on.", "--resume", session, config=config, script=[text_turn("Resumed.")]
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result()["result"] == "Resumed."
    [first, *_] = box.api.main_requests()
    body = first.text()
    # The history was loaded: the scripted tool calls of the first run are in it.
    assert "toolu_fake" in body and "Carry on." in body
    assert len(first.body["messages"]) > 4
    assert "[REDACTED:" in body
    leaked = [(r.path, planted.labels_in(r.text())) for r in box.api.requests]
    assert all(not labels for _, labels in leaked), leaked
    assert planted.labels_in(run.stdout + run.stderr) == []
    return run


def run_session(box: Box, scenario: Scenario) -> Run:
    run = box.claude(
        "Set up the deploy config.",
        script=scenario.script(big_output=True),
        env=dict(scenario.env),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert box.api.remaining == 0
    return run


def test_session_end_hook_archives_and_redacts_a_real_session(
    box: Box, fake_api: FakeApi, tmp_path: Path
) -> None:
    key, recipient = box.keygen()

    # --dry-run shows the change and makes none.
    settings = box.config / "settings.json"
    dry = box.scrub_ok(
        "install", "--dry-run", "--recipient", recipient, "--on-session-end", ACTIONS
    )
    assert "SessionEnd" in dry.stdout and "scrubber-session-end" in dry.stdout
    assert not settings.exists()
    assert not (box.scrub_home / "policy.yaml").exists()

    box.scrub_ok("install", "--recipient", recipient, "--on-session-end", ACTIONS)
    [group] = json.loads(settings.read_text())["hooks"]["SessionEnd"]
    assert "scrubber-session-end" in group["hooks"][0]["command"]

    scenario = plant(box.project)
    run = run_session(box, scenario)
    session = run.session_id
    # Claude Code reports a failing SessionEnd hook on its stderr (exit code stays 0).
    assert not HOOK_FAILED.search(run.stderr), run.stderr[-2000:]
    transcript = box.transcript(session)
    slug = transcript.parent.name
    side = sorted((transcript.parent / session / "tool-results").glob("*.txt"))
    assert len(side) == 1, "Claude Code did not persist the large output to a side file"
    assert scenario.planted.values["printenv-github-token"] in side[0].read_text()

    # The hook ran with the real payload: a log line and a job for this session, in the
    # SCRUB_HOME that reached it through Claude Code's environment (not the config dir).
    hook_log = box.scrub_home / "log" / "hook.log"
    box.wait_for(hook_log.exists, timeout=10, what="the hook's log")
    assert f"session {session} queued (reason other" in hook_log.read_text()
    assert not (box.config / "scrubber").exists()

    waited = box.wait_for(lambda: session_done(box, session), timeout=90, what="the worker")
    box.wait_for(lambda: worker_idle(box), timeout=30, what="the worker to exit")
    print(f"worker finished {waited:.1f} s after claude exited")
    events = [r["event"] for r in box.activity() if r.get("session_id") == session]
    assert events == ["archive", "redact-copy", "done"], events
    assert sorted((box.scrub_home / "spool").glob("*.json")) == []

    # The archive decrypts (scrub decrypt and pyrage agree) and holds the session bundle.
    [archive] = sorted((box.scrub_home / "archives").rglob("*.tar.gz.age"))
    assert archive.parent.name == session and archive.parent.parent.name == slug
    plain = tmp_path / "archive.tar.gz"
    box.scrub_ok("decrypt", str(archive), "-i", str(key), "-o", str(plain))
    identity = pyrage.x25519.Identity.from_str(
        next(line for line in key.read_text().splitlines() if line.startswith("AGE-SECRET-KEY-"))
    )
    assert pyrage.decrypt(archive.read_bytes(), [identity]) == plain.read_bytes()
    members = tar_members(plain.read_bytes())
    assert members[f"projects/{slug}/{session}.jsonl"] == transcript.read_bytes()
    side_name = f"projects/{slug}/{session}/tool-results/{side[0].name}"
    assert members[side_name] == side[0].read_bytes()

    # The redacted copy (and its side file) holds no planted secret; no log holds one either.
    redacted = box.scrub_home / "redacted"
    copy = redacted / "projects" / slug / f"{session}.jsonl"
    assert "[REDACTED:" in copy.read_text()
    assert (redacted / side_name).is_file(), "the redacted copy lacks the tool-results side file"
    for path in [*redacted.rglob("*"), *(box.scrub_home / "log").glob("*")]:
        if path.is_file():
            found = scenario.planted.labels_in(path.read_text(errors="replace"))
            assert found == [], (path.relative_to(box.scrub_home), found)
    verify = box.scrub("verify", str(copy), "--original", str(transcript))
    assert verify.returncode == 0, verify.stdout[-2000:]

    # `scrub doctor` sees the installation working: hook registered, queue drained.
    doctor = box.scrub("doctor", "--format", "json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    for name in ("SessionEnd hook", "recipients", "spool", "worker"):
        assert checks[name]["level"] == "ok", checks[name]
    assert [c for c in checks.values() if c["level"] == "fail"] == []

    # The redacted copy, put back into a fresh config dir, resumes with placeholders.
    fresh = tmp_path / "fresh-config"
    (fresh / "projects" / slug).mkdir(parents=True)
    shutil.copy2(copy, fresh / "projects" / slug / copy.name)
    shutil.copytree(redacted / "projects" / slug / session, fresh / "projects" / slug / session)
    assert_resume_sends_placeholders(box, session, fresh, scenario.planted)

    # A redacted archive, restored with `scrub restore` into another fresh config dir, too.
    redacted_archives = tmp_path / "redacted-archives"
    box.scrub_ok("archive", session, "--redact", "--output", str(redacted_archives))
    [sealed] = sorted(redacted_archives.rglob("*.tar.gz.age"))
    restored = tmp_path / "restored-config"
    box.scrub_ok("restore", str(sealed), "-i", str(key), "--to", str(restored), "--create")
    restored_transcript = box.transcript(session, restored)
    assert scenario.planted.labels_in(restored_transcript.read_text()) == []
    assert_resume_sends_placeholders(box, session, restored, scenario.planted)

    # The worker's full archive restores byte for byte, and Claude Code resumes it.
    full = tmp_path / "full-config"
    box.scrub_ok("restore", str(archive), "-i", str(key), "--to", str(full), "--create")
    assert box.transcript(session, full).read_bytes() == transcript.read_bytes()
    box.api.clear()
    again = box.claude("Carry on.", "--resume", session, config=full, script=[text_turn("Ok.")])
    assert again.returncode == 0, again.stderr[-2000:]
    sent = box.api.main_requests()[0].text()
    assert "toolu_fake" in sent
    # The control for the placeholder checks above: a full restore sends the real history, so
    # a secret left in a redacted copy would have been seen in the requests.
    assert scenario.planted.labels_in(sent) != []
