"""A project folder's name as reports show it (audit_report.project_name_shown): the token
goes, the readable folders around it stay, a token with dashes goes too."""

from __future__ import annotations

import random
from pathlib import Path

from scrubber.demo import fake_anthropic_key, fake_github_token
from scrubber.detection.registry import build_scanner
from scrubber.policy.model import Policy
from scrubber.usecases.audit_report import project_name_shown


def _pieces(text: str, secret: str) -> list[int]:
    return [i for i in range(len(secret) - 11) if secret[i : i + 12] in text]


def test_a_token_goes_and_the_folders_around_it_stay(tmp_path: Path) -> None:
    redact = build_scanner(Policy.default(), tmp_path).redact_text
    rng = random.Random(1606)
    token = fake_github_token(rng)
    shown = project_name_shown(f"-home-u-{token}-src", redact)
    assert shown.startswith("-home-u-[REDACTED:github-token:") and shown.endswith("]-src")
    assert not _pieces(shown, token)
    dashed = fake_anthropic_key(rng)
    assert "-" in dashed
    shown = project_name_shown(f"-home-u-{dashed}", redact)
    assert shown.startswith("-home-u-") and "[REDACTED:" in shown
    assert not _pieces(shown, dashed)
    assert project_name_shown("-home-u-work-app", redact) == "-home-u-work-app"
