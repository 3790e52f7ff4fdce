"""Pins as the selector sees them, and the refusal of policies that make no sense."""

from __future__ import annotations

import pytest

from scrubber.errors import ConfigError, ExitCode
from scrubber.policy.model import Pins, RetentionPolicy
from scrubber.retention.rules import Subject, check_policy, pin_status, select_deletable


@pytest.mark.parametrize(
    ("subject", "pins", "expected"),
    [
        (Subject("s1"), Pins(sessions=("s1",)), True),
        (Subject("s1"), Pins(sessions=("s2",)), False),
        (Subject("s1", custom_title="release"), Pins(names=("release",)), True),
        (Subject("s1", custom_title="Release"), Pins(names=("release",)), False),
        (Subject("s1", tags=("a", "keep")), Pins(tags=("keep",)), True),
        (Subject("s1", project="-home-me-web"), Pins(projects=("-home-me-*",)), True),
        (Subject("s1", project="x", cwd="/home/me/web"), Pins(projects=("/home/me/*",)), True),
        (Subject("s1", project="x", cwd="/srv"), Pins(projects=("/home/me/*",)), False),
        # Unknown fields: an archive whose sidecar keeps title/tags/cwd encrypted.
        (Subject("s1", title_known=False), Pins(names=("release",)), None),
        (Subject("s1", title_known=False), Pins(tags=("keep",)), False),
        (Subject("s1", tags_known=False), Pins(tags=("keep",)), None),
        (Subject("s1", project="x", cwd_known=False), Pins(projects=("/home/*",)), None),
        (Subject("s1", project="-home-x", cwd_known=False), Pins(projects=("-home-*",)), True),
        # An id pin settles it even when other fields are unknown.
        (Subject("s1", title_known=False), Pins(sessions=("s1",), names=("r",)), True),
    ],
)
def test_pin_status(subject: Subject, pins: Pins, expected: bool | None) -> None:
    assert pin_status(subject, pins) is expected


def test_selector_keeps_pinned_and_unknown() -> None:
    items = [Subject("a"), Subject("b", tags=("keep",)), Subject("c", tags_known=False)]
    selection = select_deletable(items, Pins(tags=("keep",)), lambda s: s)
    assert [s.session_id for s in selection.deletable] == ["a"]
    assert [s.session_id for s in selection.kept] == ["b", "c"]
    assert [s.session_id for s in selection.unknown] == ["c"]


def test_nonsensical_policies_are_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        check_policy(RetentionPolicy(archive_days=10), days=30)
    assert caught.value.exit_code is ExitCode.USAGE
    assert "archive_days" in caught.value.message
    with pytest.raises(ConfigError, match="minimum is 1"):
        check_policy(RetentionPolicy(), days=0)
    check_policy(RetentionPolicy(archive_days=30), days=30)
    check_policy(RetentionPolicy(), days=1)
