"""The policy's `live:` section: modes, detectors, on_error; unknown keys and names are errors;
the compiled JSON the live hooks read round-trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrubber.policy.build import build_policy
from scrubber.policy.model import (
    LiveMode,
    LiveOnError,
    LivePolicy,
    Policy,
    PolicyValueError,
    compile_live_json,
    live_from_json,
)


def build(live: object) -> Policy:
    return build_policy({"version": 1, "live": live}, base_dir=Path("/"), env={})


def test_defaults_mask_and_pass() -> None:
    assert build(None).live == LivePolicy(LiveMode.MASK, LiveMode.MASK, (), LiveOnError.PASS)


def test_every_key() -> None:
    live = build(
        {
            "post_tool_use": "warn",
            "user_prompt_submit": "off",
            "detectors": ["github-token", "aws-access-key-id"],
            "on_error": "block",
        }
    ).live
    assert live.post_tool_use is LiveMode.WARN and live.user_prompt_submit is LiveMode.OFF
    assert live.detectors == ("github-token", "aws-access-key-id")
    assert live.on_error is LiveOnError.BLOCK


@pytest.mark.parametrize(
    ("live", "key"),
    [
        ({"post_tool_uses": "mask"}, "live"),
        ({"post_tool_use": "redact"}, "live.post_tool_use"),
        ({"on_error": "ignore"}, "live.on_error"),
        ({"detectors": ["no-such-rule"]}, "live.detectors[0]"),
        ("mask", "live"),
    ],
)
def test_errors_name_the_key(live: object, key: str) -> None:
    with pytest.raises(PolicyValueError) as error:
        build(live)
    assert key in str(error.value)


def test_compiled_json_round_trips() -> None:
    policy = build({"post_tool_use": "warn", "detectors": ["github-token"], "on_error": "block"})
    assert live_from_json(compile_live_json(policy)) == policy.live
    with pytest.raises(PolicyValueError):
        live_from_json({"live_format": 99})
