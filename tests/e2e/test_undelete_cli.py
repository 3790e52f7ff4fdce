"""`scrub undelete TITLE` as a real process (issue 14): the trash keeps the title `scrub sessions`
shows, and undelete matches it as `scrub sessions` and `restore` do; an entry written before
it kept titles still comes back by id."""

from __future__ import annotations

import json

import pytest

from scrubber.transcript.sessions import discover
from tests.e2e.archive_kit import World, one_line_error, world

__all__ = ["world"]  # the fixture, used by name

pytestmark = pytest.mark.slow


def _trash_everything(world: World) -> dict[str, str]:
    """Every demo session to the trash (they ended in March 2026); their titles by id."""
    titles = {s.id: str(s.title) for s in discover(world.config).sessions}
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "policy.yaml").write_text(
        "version: 1\nretention:\n  keep_newest_per_project: 0\n"
    )
    done = world.run("retention", "--days", "30", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert discover(world.config).sessions == ()
    return titles


def test_undelete_finds_a_session_by_the_title_sessions_shows(world: World) -> None:
    titles = _trash_everything(world)
    # The demo's "Anthropic client 401" is Claude Code's own title (no custom title).
    (session_id,) = [i for i, t in titles.items() if t == "Anthropic client 401"]
    slot = json.loads((world.home / "trash" / session_id / "manifest.json").read_text())
    assert slot["title"] == "Anthropic client 401" and slot["custom_title"] is None

    # One after the other: each undelete holds the retention lock (a second one exits 4).
    by_title = world.run("undelete", "Anthropic client 401")
    by_folded_title = world.run("undelete", "rotate DEPLOY key")
    unknown = world.run("undelete", "no such title")

    assert by_title.returncode == 0, by_title.stderr
    assert by_folded_title.returncode == 0, by_folded_title.stderr
    back = {s.id: s.title for s in discover(world.config).sessions}
    assert sorted(back.values()) == ["Anthropic client 401", "Rotate deploy key"]
    one_line_error(unknown, 2, "no session in the trash matches")


def test_an_entry_without_a_title_still_undeletes_by_id(world: World) -> None:
    titles = _trash_everything(world)
    session_id = next(i for i, t in titles.items() if t == "Rotate deploy key")
    manifest = world.home / "trash" / session_id / "manifest.json"
    old = json.loads(manifest.read_text())
    del old["title"]  # as written before the trash kept titles
    manifest.write_text(json.dumps(old))

    by_title = world.run("undelete", "Rotate deploy key")
    one_line_error(by_title, 2, "no session in the trash matches")
    by_id = world.run("undelete", session_id[:8])
    assert by_id.returncode == 0, by_id.stderr
    assert [s.id for s in discover(world.config).sessions] == [session_id]
