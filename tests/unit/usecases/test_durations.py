"""One duration syntax for `--since` (audit) and `--older-than` (archive)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scrubber.errors import UsageError
from scrubber.usecases.durations import parse_moment

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", NOW - timedelta(days=7)),
        ("12h", NOW - timedelta(hours=12)),
        ("30m", NOW - timedelta(minutes=30)),
        ("2w", NOW - timedelta(weeks=2)),
        (" 7D ", NOW - timedelta(days=7)),
        ("20 days", NOW - timedelta(days=20)),  # the README's own example
        ("1 day", NOW - timedelta(days=1)),
        ("12 hours", NOW - timedelta(hours=12)),
        ("3hrs", NOW - timedelta(hours=3)),
        ("1 Week", NOW - timedelta(weeks=1)),
        ("30 min", NOW - timedelta(minutes=30)),
        ("45 minutes", NOW - timedelta(minutes=45)),
        ("20", NOW - timedelta(days=20)),  # what `--older-than 20` always meant
        ("0", NOW),
        ("100000", NOW - timedelta(days=100_000)),
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
        ("20261101", datetime(2026, 11, 1, tzinfo=UTC)),  # accepted by --since before
        ("2026-11-01T08:30+02:00", datetime(2026, 11, 1, 6, 30, tzinfo=UTC)),
    ],
)
def test_every_form_names_a_moment(text: str, expected: datetime) -> None:
    assert parse_moment(text, "--older-than", NOW) == expected
    assert parse_moment(text, "--since", NOW) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("800000", "too large"),
        ("100001d", "too large"),
        ("99999999999999999999w", "too large"),
        ("-1", "expected a duration"),
        ("7 months", "expected a duration"),  # a month's length varies: a date says it
        ("7 dayz", "expected a duration"),
        ("7 d ays", "expected a duration"),
        ("yesterday", "expected a duration"),
        ("", "expected a duration"),
    ],
)
def test_anything_else_is_a_usage_error_naming_the_flag(text: str, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_moment(text, "--older-than", NOW)
    assert caught.value.message.startswith("--older-than") and words in caught.value.message
    assert caught.value.hint
