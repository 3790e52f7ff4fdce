"""The one way a command line says "since when" or "older than what" (issue 14, item 10).

`--since` (audit) and `--older-than` (archive) take the same text: a bare number of days
(what `--older-than 20` always meant), a number with a unit (`30m`, `12h`, `7d`, `2w`, or the
unit spelled out: `20 days`, `12 hours`, `1 week`, `30 min`), or an
ISO date or date-time (`2026-11-01`, `2026-11-01T08:00`, UTC unless it says otherwise). Every
form becomes a moment: `now` minus the duration, or the date itself.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from scrubber.errors import UsageError
from scrubber.policy.model import MAX_DAYS

# The units `--since` has accepted from the start, by their first letter, also spelled out as
# people write them ("20 days"); a bare number counts days. No months or years: their length
# varies, and a date says those better.
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DURATION = re.compile(r"(\d+)\s*(m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|)")

# Past MAX_DAYS, `now - duration` leaves the range of a datetime (an OverflowError), and no
# session is that old: the same bound as retention's counts of days.
_LIMIT = timedelta(days=MAX_DAYS)

DURATION_HELP = '7d, 12h, 30m, 2w (or "20 days"), a number of days (20), or a date (2026-11-01)'


def parse_moment(value: str, flag: str, now: datetime) -> datetime:
    """The moment `value` names, for the option `flag` (named in the error). A duration counts
    back from `now`; a date is taken as it is (a date without a zone is UTC)."""
    text = value.strip()
    match = _DURATION.fullmatch(text.lower())
    if match is not None:
        number, unit = match.groups()
        # The length check keeps int() off huge inputs (digits alone are never negative).
        duration = (
            timedelta(**{_UNITS[(unit or "d")[0]]: int(number)}) if len(number) < 10 else None
        )
        if duration is not None and duration <= _LIMIT:
            return now - duration
        if unit:
            raise _too_large(value, flag)
        # Eight digits are also an ISO date (20261101), which `--since` has always accepted.
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        if match is not None:
            raise _too_large(value, flag) from None
        raise UsageError(
            f"{flag} {value!r}: expected a duration like 7d / 12h, a number of days, or an "
            "ISO date like 2026-11-01",
            hint=f"{flag} takes {DURATION_HELP}",
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _too_large(value: str, flag: str) -> UsageError:
    return UsageError(
        f"{flag} {value[:24]!r}: too large (at most {MAX_DAYS} days)",
        hint="counts of days are at most 100000 (about 274 years)",
    )
