"""`scrub sessions`, `scrub retention --format json`, `scrub pins` and `scrub unpin` saying what
is true (issue 14, items 13, 14 and 18), as real processes on a temp config dir; the set-up is
test_retention_cli.py's."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity
from scrubber.transcript.sessions import discover
from tests.e2e.test_retention_cli import Env, ago, two_old_sessions
from tests.unit.retention.sessions_writer import write_session


@pytest.fixture
def env(tmp_path: Path) -> Env:
    config = tmp_path / "claude"
    home = config / "scrubber"
    home.mkdir(parents=True)
    return Env(tmp_path, config, home, generate_identity().recipient().encode())


def test_retention_says_which_archives_it_did_not_check(env: Env) -> None:
    """Issue 14, item 13: retention verifies archives only where they decide a session's fate;
    the others are "not checked", never "none" (which says: checked, there is no archive)."""
    old, other = two_old_sessions(env)
    young = next(
        s for s in discover(env.config).sessions if s.id not in {old.session_id, other.session_id}
    )
    env.policy("  days: 30\n  require_archive: true")
    env.run("archive", young.id)
    listed = {r["session_id"]: r["archived"] for r in env.json("sessions")["sessions"]}  # type: ignore[index, union-attr]
    assert listed[young.id] == "verified"
    planned = {s["session_id"]: s for s in env.json("retention")["sessions"]}  # type: ignore[index, union-attr]
    # Too young to go: its archive decides nothing, so it was not looked at.
    assert planned[young.id]["reason"] == "too-young"
    assert planned[young.id]["archive"] == "not checked"
    # Due, and the policy requires an archive: checked, and there is none.
    assert planned[old.session_id]["archive"] == "none"
    # The only session of its project: kept whatever its archives say.
    assert planned[other.session_id]["reason"] == "newest-in-project"
    assert planned[other.session_id]["archive"] == "not checked"
    # Without require_archive no archive decides anything: none is checked.
    env.policy("  days: 30")
    planned = {s["session_id"]: s for s in env.json("retention")["sessions"]}  # type: ignore[index, union-attr]
    assert {s["archive"] for s in planned.values()} == {"not checked"}


def test_sessions_after_taking_over_claude_codes_cleanup(env: Env) -> None:
    """Issue 14, item 14: once `scrub install --take-over-cleanup` has raised Claude Code's
    period, `scrub sessions` no longer warns that its sweep comes first, nor recommends the flag
    that was just used; it says the sweep is off, except where a project's own settings win."""
    old, other = two_old_sessions(env)
    env.run("pin", other.session_id)  # retention keeps it forever: only the sweep could delete it
    before = env.run("sessions").stdout
    assert "would be deleted by Claude Code's own sweep first" in before
    assert "--take-over-cleanup" in before

    installed = env.run("install", "--take-over-cleanup")
    assert "99999" in installed.stdout + installed.stderr
    assert json.loads((env.config / "settings.json").read_text())["cleanupPeriodDays"] == 99999
    assert "\n  days: 30\n" in (env.home / "policy.yaml").read_text()

    text = env.run("sessions").stdout
    assert "sweep first" not in text and "--take-over-cleanup" not in text
    assert "Claude Code's own sweep is taken over" in text
    rows = [
        line for line in text.splitlines() if old.session_id in line or other.session_id in line
    ]
    assert len(rows) == 2 and all(row.startswith("off (taken over)") for row in rows)
    listing = env.json("sessions")
    assert listing["claude_sweep_taken_over"] is True
    for row in listing["sessions"]:  # type: ignore[union-attr]
        assert row["claude_sweep_off"] is True and row["claude_first"] is False  # type: ignore[index]

    # A project's own settings outrank the user's: its sessions are still the sweep's.
    project = env.root / "strict-project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"cleanupPeriodDays": 10}')
    local = write_session(env.config, cwd=str(project), last=ago(20), seed=44)
    env.run("pin", local.session_id)
    text = env.run("sessions").stdout
    assert "1 session would still be deleted by Claude Code's own sweep first" in text
    assert "project's own .claude/settings" in text
    (row,) = [line for line in text.splitlines() if local.session_id in line]
    assert row.startswith("next Claude start")
    by_id = {r["session_id"]: r for r in env.json("sessions")["sessions"]}  # type: ignore[index, union-attr]
    assert by_id[local.session_id]["claude_sweep_off"] is False
    assert by_id[local.session_id]["claude_first"] is True
    assert by_id[other.session_id]["claude_first"] is False


def test_pins_say_when_their_session_is_gone(env: Env) -> None:
    """Issue 14, item 18: `scrub pins` marks a pin whose session no longer exists (or waits in
    the trash), in text and in JSON."""
    old, other = two_old_sessions(env)
    young = write_session(env.config, cwd="/w/z", last=ago(1), seed=45)
    never = "0badc0de-0000-4000-8000-000000000000"
    env.policy("  days: 30", pins=f"pins:\n  sessions: [{never}]\n")
    env.run("pin", other.session_id)
    env.run("pin", young.session_id)
    env.run("retention", "--apply")  # trashes `old`, the one unpinned session past 30 days
    assert (env.home / "trash" / old.session_id).is_dir()
    env.run("pin", old.session_id)  # found in the trash, pinned there
    other.transcript.unlink()  # gone, as Claude Code's own sweep would leave it

    text = env.run("pins").stdout
    lines = {
        name: next(line for line in text.splitlines() if s.session_id in line)
        for name, s in (("old", old), ("other", other), ("young", young))
    }
    assert "(session gone)" in lines["other"]
    assert "(in the trash)" in lines["old"]
    assert "(session gone)" not in lines["young"] and "(in the trash)" not in lines["young"]
    assert f"session: {never} (session gone)" in text
    assert "2 pin(s) name a session that is gone" in text
    listing = env.json("pins")
    states = {p["session_id"]: p["session_state"] for p in listing["cli"]}  # type: ignore[index, union-attr]
    assert states == {
        other.session_id: "gone",
        young.session_id: "present",
        old.session_id: "in-trash",
    }
    assert listing["policy"]["session_states"] == {never: "gone"}  # type: ignore[index]
    # A pin of a gone session can still be removed by its id.
    assert other.session_id in env.run("unpin", other.session_id).stdout


def test_unpin_says_why_nothing_was_unpinned(env: Env) -> None:
    """Issue 14, item 18: `scrub unpin` of a session that is not pinned says so (or that the
    policy pins it, or that no session goes by that name), not "no pin matches that name"."""
    pinned = write_session(env.config, cwd="/w/z", last=ago(1), seed=45)
    spare = write_session(env.config, cwd="/w/z", last=ago(3), seed=46)
    legal = write_session(env.config, cwd="/w/z", last=ago(4), seed=47, tags=("legal",))
    env.policy("  days: 30", pins="pins:\n  tags: [legal]\n")
    env.run("pin", pinned.session_id)
    refused = env.run("unpin", spare.session_id, code=2).stderr
    assert f"session {spare.project}/{spare.session_id} is not pinned" in refused
    assert "no pin matches" not in refused
    by_policy = env.run("unpin", legal.session_id[:8], code=2).stderr
    assert "pinned by the policy" in by_policy and "policy.yaml" in by_policy
    nothing = env.run("unpin", "no-such-session", code=2).stderr
    assert "no session matches that name, and no pin does" in nothing
    assert "scrub sessions" in nothing
    assert pinned.session_id in env.run("unpin", pinned.session_id).stdout


def test_a_current_redacted_archive_is_shown_as_redacted_not_older(env: Env) -> None:
    """A `--redact` archive holds the session without its secrets: its content differs from the
    bundle by design. While the session has not changed since, `scrub sessions` says
    "redacted" (it said "older", as if the session had moved on); retention still never deletes
    a session on its account (its status stays stale)."""
    _old, other = two_old_sessions(env)
    first = json.loads(other.transcript.read_text().splitlines()[0])
    token = "ghp_" + "".join(chr(65 + (i * 7) % 26) for i in range(36))  # fake, built here
    said = {**first, "message": {"role": "user", "content": f"use token {token}"}}
    with other.transcript.open("a") as out:  # the same moment: the last timestamp stays
        out.write(json.dumps(said) + "\n")
    env.policy("  days: 30", recipients=False)
    env.run("archive", other.session_id, "--redact")

    def listed() -> dict[str, object]:
        rows = env.json("sessions")["sessions"]
        return next(r for r in rows if r["session_id"] == other.session_id)  # type: ignore[union-attr, index]

    row = listed()
    assert row["archived"] == "stale" and row["archive_redacted"] is True
    line = next(s for s in env.run("sessions").stdout.splitlines() if other.session_id in s)
    assert " redacted " in line and " older " not in line
    # A side file written to since (the transcript's last timestamp is the same): older.
    side = next(p for p in other.paths if p != other.transcript and p.is_file())
    later = time.time() + 2
    os.utime(side, (later, later))
    assert listed()["archive_redacted"] is False
    # Archived again, nothing had changed but the mtime: "unchanged", and current again.
    time.sleep(max(0.0, later - time.time()) + 0.05)
    again = env.run("archive", other.session_id, "--redact")
    assert "unchanged" in again.stdout
    assert listed()["archive_redacted"] is True
    # The session moves on (a later record): the redacted archive is of an older version now.
    write_session(env.config, cwd=other.cwd, last=ago(0), session_id=other.session_id, seed=43)
    row = listed()
    assert row["archived"] == "stale" and row["archive_redacted"] is False
    line = next(s for s in env.run("sessions").stdout.splitlines() if other.session_id in s)
    assert " older " in line
