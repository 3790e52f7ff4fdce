"""Titles and paths that commands scanning nothing show: a password found in a session's
`.env` and typed again as its title, which no detector sees in the title alone, is gone from
`scrub sessions`, `scrub pins` and `scrub retention` once an audit has seen the session; a
project folder named after a cwd that holds a token is shown cleaned in `scrub doctor`'s
permission warnings. Real processes; values built at run time."""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from typing import Any

import pytest

from scrubber.demo import fake_github_token

pytestmark = pytest.mark.slow  # a handful of real processes


def _password(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))


def test_titles_and_folders_lose_what_the_audit_found(
    sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]
) -> None:
    world = sandbox_factory("shown-titles")
    rng = random.Random(5)
    password, token = _password(rng), fake_github_token(rng)
    titled = transcript_builder(cwd="/home/u/work/shop")
    titled.prompt("check the config")
    titled.read("/home/u/work/shop/.env", f"DB_PASSWORD={password}\n")
    titled.add(
        {
            "type": "custom-title",
            "customTitle": f"deploy {password}",
            "sessionId": titled.session_id,
        }
    )
    titled.write(world.config / "projects" / "-home-u-work-shop" / f"{titled.session_id}.jsonl")
    cwd = f"/home/u/{token}/app"
    in_folder = transcript_builder(cwd=cwd)
    in_folder.prompt("hello")
    folder = world.config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
    transcript = in_folder.write(folder / f"{in_folder.session_id}.jsonl")
    transcript.chmod(0o644)  # as Claude Code leaves them: the doctor warns
    folder.chmod(0o755)
    pieces = {
        "password": password,
        "token": token[4:20],
        "token in folder form": re.sub(r"[^A-Za-z0-9]", "-", token)[4:20],
    }

    audit = world.scrub("audit", "--format", "json")
    assert audit.returncode == 1, audit.stderr  # findings
    kinds = {f["kind"] for f in json.loads(audit.stdout)["findings"]}
    assert kinds, audit.stdout
    assert world.scrub("pin", titled.session_id).returncode == 0
    runs = {
        "sessions": world.scrub("sessions", "--format", "json"),
        "sessions text": world.scrub("sessions"),
        "pins": world.scrub("pins", "--format", "json"),
        "retention": world.scrub("retention", "--format", "json"),
        "doctor": world.scrub("doctor", "--format", "json"),
    }
    for name, done in runs.items():
        assert "Traceback" not in done.stderr, name
        shown = done.stdout + done.stderr
        assert [what for what, p in pieces.items() if p in shown] == [], name
    pins_file = (world.scrub_home / "state" / "pins.json").read_text()
    assert titled.session_id in pins_file
    assert password not in pins_file  # kept as the listings show it
    sessions = json.loads(runs["sessions"].stdout)
    titles = [row.get("title") for row in sessions["sessions"]]
    assert any(t and t.startswith("deploy [REDACTED:") for t in titles), titles
    assert "readable by" in runs["doctor"].stdout or "open to group" in runs["doctor"].stdout
    # The pin is still found by the session's title as typed.
    unpinned = world.scrub("unpin", f"deploy {password}")
    assert unpinned.returncode == 0, unpinned.stderr
    assert password not in unpinned.output


def test_a_pin_is_kept_when_the_scanner_cannot_be_built(
    sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]
) -> None:
    """Pinning keeps a session from being deleted: it never waits on the scanner that shows
    its title. With the fingerprint key unreadable, the pin is written without the title."""
    world = sandbox_factory("pin-without-scanner")
    t = transcript_builder(cwd="/home/u/work/shop")
    t.prompt("hello")
    t.add({"type": "custom-title", "customTitle": "keep this one", "sessionId": t.session_id})
    t.write(world.config / "projects" / "-home-u-work-shop" / f"{t.session_id}.jsonl")
    world.scrub_home.mkdir(mode=0o700)
    (world.scrub_home / "fingerprint.key").mkdir()  # not a key file: cannot be read
    done = world.scrub("pin", t.session_id)
    pins = json.loads((world.scrub_home / "state" / "pins.json").read_text())
    assert [p["session_id"] for p in pins["pins"]] == [t.session_id], done.output
    assert pins["pins"][0]["name"] is None
