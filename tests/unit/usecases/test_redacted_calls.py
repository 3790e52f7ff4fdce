"""The tool calls the scan cache keeps lose the known values of their own session only (a
command may hold a value a detector found elsewhere in the session); a session none of whose
values is known keeps its calls as they are, without a search."""

from __future__ import annotations

import random
import string

from scrubber.detection.known_values import KnownValues, ValueInfo
from scrubber.detection.placeholder import PLACEHOLDER_PREFIX
from scrubber.usecases.audit_copies import redacted_calls

INFO = ValueInfo("dotenv-value", "sensitive-assignment", "f" * 64)


def _token(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))


def test_calls_lose_their_own_sessions_values_only() -> None:
    rng = random.Random(3)
    value, other = _token(rng), _token(rng)
    known = KnownValues()
    assert known.add(value, INFO, "one")
    assert known.add(other, INFO, "two")
    index = known.index("python")
    calls = [
        ("toolu_1", "Bash", f"psql postgres://app:{value}@db/app", "bash"),
        ("toolu_2", "Read", "/srv/app/.env", "read"),
        ("toolu_3", "Bash", f"echo {other}", "bash"),
    ]
    kept = redacted_calls(calls, index, "one")
    assert value not in kept[0][2] and PLACEHOLDER_PREFIX in kept[0][2]
    assert kept[1] == calls[1]
    assert kept[2] == calls[2]  # another session's value: not this session's secret
    # A session with no known value, and no calls at all: what was given.
    assert redacted_calls(calls, index, "three") == calls
    assert redacted_calls([], index, "one") == []
