"""The forecast: when retention and Claude Code's sweep would remove each session (the
scenarios and entries are the plan's, from test_retention_plan.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given, settings

from scrubber.policy.model import Pins
from scrubber.retention.forecast import forecast
from scrubber.retention.plan import Periods, RetentionRules, SessionKey
from scrubber.retention.rules import ArchiveStatus, Reason
from scrubber.retention.settings import TAKE_OVER_DAYS
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


def test_once_the_sweep_is_taken_over_claude_code_comes_first_for_none() -> None:
    # Issue 14, item 14: with cleanupPeriodDays at what --take-over-cleanup sets, a pinned
    # session (which retention keeps forever) was still reported as the sweep's, 274 years out.
    items = [
        entry("pinned", days=40, mtime_days=40),
        entry("newest", project="solo", days=50),
        replace(entry("strict", days=40, mtime_days=40), cwd="/srv/strict"),
    ]
    chosen = rules(pins=Pins(sessions=("pinned", "strict")), keep_newest_per_project=1)
    periods = Periods(TAKE_OVER_DAYS, {"/srv/strict": 10})  # a project's own settings win
    result = {f.key.session_id: f for f in forecast(items, chosen, NOW, periods)}
    for name in ("pinned", "newest"):
        assert result[name].claude_sweep_off and not result[name].claude_first
        assert result[name].claude_sweep_at is not None  # still the true date
    assert not result["strict"].claude_sweep_off and result["strict"].claude_first
    just_below = forecast(items, chosen, NOW, Periods(TAKE_OVER_DAYS - 1))
    assert all(not f.claude_sweep_off for f in just_below)
