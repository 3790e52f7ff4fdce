"""usecases/archive_shown.py: a session's title, tags, cwd and project folder as an archive shows
them in clear (a redacted archive's manifest, a sidecar): the detectors' finds and the values
known in the session, the folder name also in its folder form. Fake values are built at run
time."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.manifest import SessionFacts
from scrubber.demo import fake_aws_access_key, fake_github_token, fake_npm_token, fake_password
from scrubber.detection.known_values import KnownValues, ValueInfo
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.registry import build_scanner
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.redaction.project_name import folder_form
from scrubber.usecases.archive_shown import SessionShown

SESSION = "0a1b2c3d-1111-4aaa-8bbb-000000000001"


@pytest.fixture(scope="module")
def scanner(tmp_path_factory: pytest.TempPathFactory) -> SecretScanner:
    return build_scanner(Policy(), tmp_path_factory.mktemp("home"))


def _known(value: str) -> KnownValues:
    known = KnownValues()
    assert known.add(value, ValueInfo("dotenv-value", "detector", "ab" * 32), SESSION)
    return known


def test_texts_lose_what_the_detectors_find_and_the_known_values(scanner: SecretScanner) -> None:
    rng = random.Random(11)
    key, npm, password = fake_aws_access_key(rng), fake_npm_token(rng), fake_password(rng)
    facts = SessionFacts(
        session_id=SESSION,
        project="-home-u-work-api",
        cwd="/home/u/work/api",
        title=f"deploy {key} with {password}",
        tags=(f"tok-{npm}", "plain"),
        last_timestamp=datetime(2026, 12, 1, tzinfo=UTC),
    )
    shown = SessionShown(scanner, _known(password)).facts(facts)
    assert shown.title is not None
    assert key not in shown.title and password not in shown.title
    assert shown.title.startswith("deploy [REDACTED:aws-access-key:")
    assert "[REDACTED:dotenv-value:abababab]" in shown.title
    assert shown.tags[0].startswith("tok-[REDACTED:npm-token:") and npm not in shown.tags[0]
    assert shown.tags[1] == "plain"
    # Nothing else changes: a clean project and cwd stay as they are.
    assert (shown.project, shown.cwd) == (facts.project, facts.cwd)
    assert (shown.session_id, shown.last_timestamp) == (facts.session_id, facts.last_timestamp)


def test_a_cwd_and_its_folder_lose_a_token_and_a_known_value_in_folder_form(
    scanner: SecretScanner,
) -> None:
    rng = random.Random(12)
    token, password = fake_github_token(rng), fake_password(rng)
    cwd = f"/home/u/w-{token}/{password}"
    facts = SessionFacts(session_id=SESSION, project=folder_form(cwd), cwd=cwd)
    shown = SessionShown(scanner, _known(password)).facts(facts)
    assert shown.cwd is not None
    for secret in (token, password, folder_form(token), folder_form(password)):
        assert secret not in shown.cwd and secret not in shown.project
    assert shown.cwd.startswith("/home/u/") and shown.cwd.count("[REDACTED:") == 2
    assert shown.project.startswith("-home-u-") and shown.project.count("[REDACTED:") == 2
    assert "/" not in shown.project and PLACEHOLDER_RE.search(shown.project)


def test_no_known_values_means_the_detectors_alone(scanner: SecretScanner, tmp_path: Path) -> None:
    rng = random.Random(13)
    password = fake_password(rng)
    shown = SessionShown(scanner).text(f"pw {password}")
    # A password is found by value (beside `DB_PASSWORD=`), never on its own in a title.
    assert shown == f"pw {password}"
    assert repr(SessionShown(scanner, _known(password))) == "SessionShown(KnownValues(1 values))"
