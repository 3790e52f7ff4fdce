"""The forecast: when retention and Claude Code's sweep would remove each session (the
scenarios and entries are the plan's, from test_retention_plan.py)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings

from scrubber.policy.model import Pins
from scrubber.retention.forecast import forecast
from scrubber.retention.plan import Periods, RetentionRules, SessionKey
from scrubber.retention.rules import ArchiveStatus, Reason
from tests.unit.retention.test_retention_plan import NOW, Entry, entry, rules, scenarios


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_forecast_never_schedules_a_pinned_session(
    scenario: tuple[list[Entry], RetentionRules, dict[SessionKey, ArchiveStatus]],
) -> None:
    items, chosen, _ = scenario
    for item in forecast(items, chosen, NOW, Periods(30)):
        if item.pinned:
            assert item.retention_at is None and item.retention_note is Reason.PINNED
        assert item.claude_sweep_at is not None  # Claude Code's sweep ignores pins


def test_forecast_times() -> None:
    items = [
        entry("old", days=40, mtime_days=40),
        entry("young", days=10, mtime_days=25),
        entry("pinned", days=40),
        entry("newest", project="solo", days=50),
        entry("newer", days=1),
    ]
    chosen = rules(pins=Pins(sessions=("pinned",)), keep_newest_per_project=1)
    result = {f.key.session_id: f for f in forecast(items, chosen, NOW, Periods(30))}
    assert result["young"].retention_at == NOW + timedelta(days=20)
    assert result["young"].claude_sweep_at == NOW + timedelta(days=5)
    assert result["young"].claude_first
    assert result["pinned"].retention_at is None and result["pinned"].claude_first
    assert result["newest"].retention_note is Reason.NEWEST_IN_PROJECT
    assert result["old"].retention_at == NOW - timedelta(days=10)
    paused = forecast(items, chosen, NOW, None)
    assert all(f.claude_sweep_at is None and not f.claude_first for f in paused)
