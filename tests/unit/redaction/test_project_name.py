"""redaction/project_name.py: a project folder's name with the secrets of its cwd replaced, in
the folder form Claude Code writes them (every character but ASCII letters and digits `-`).
Fake values are built at run time."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scrubber.demo import fake_aws_secret_key, fake_github_token
from scrubber.detection.known_values import KnownValues, ValueInfo
from scrubber.detection.registry import build_scanner
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.redaction.project_name import ProjectNames, folder_form, path_shown

SESSION = "0a1b2c3d-1111-4aaa-8bbb-000000000001"


@pytest.fixture(scope="module")
def scanner(tmp_path_factory: pytest.TempPathFactory) -> SecretScanner:
    return build_scanner(Policy(), tmp_path_factory.mktemp("home"))


def _aws_like(rng: random.Random) -> str:
    value = fake_aws_secret_key(rng)
    return value[:9] + "/" + value[10:24] + "+" + value[25:]


def _known(value: str, scope: str = SESSION) -> KnownValues:
    known = KnownValues()
    assert known.add(value, ValueInfo("aws-secret-access-key", "detector", "ab" * 32), scope)
    return known


def _pieces(text: str, secret: str, size: int = 12) -> list[int]:
    return [i for i in range(len(secret) - size + 1) if secret[i : i + size] in text]


def test_folder_form_is_claude_codes_rule_one_character_for_one() -> None:
    assert folder_form("/home/u/my_app.v2+x") == "-home-u-my-app-v2-x"
    assert folder_form("/tmp/café") == "-tmp-caf-"  # ASCII letters only
    assert len(folder_form("/a/ü/b")) == len("/a/ü/b")


def test_a_token_the_detectors_find_in_the_cwd_goes_from_the_folder_form(
    scanner: SecretScanner,
) -> None:
    token = fake_github_token(random.Random(7))
    cwd = f"/home/u/w-{token}"
    name = folder_form(cwd)
    assert not _pieces(ProjectNames(scanner).shown(name, SESSION, [cwd]), token)
    # Without the cwd nothing could tell: the folder form is no token's shape.
    assert _pieces(ProjectNames(scanner).shown(name, SESSION), token)


def test_a_known_value_is_matched_in_its_folder_form(scanner: SecretScanner) -> None:
    secret = _aws_like(random.Random(8))
    name = folder_form(f"/home/u/w/{secret}")
    shown = ProjectNames(scanner, _known(secret)).shown(name, SESSION)
    assert shown.startswith("-home-u-w-[REDACTED:aws-secret-access-key:")
    assert not _pieces(shown, secret) and not _pieces(shown, folder_form(secret))


def test_known_values_of_another_session_stay_out_unless_no_session_is_named(
    scanner: SecretScanner,
) -> None:
    secret = _aws_like(random.Random(9))
    name = folder_form(f"/srv/{secret}")
    names = ProjectNames(scanner, _known(secret, scope="another-session"))
    assert names.shown(name, SESSION) == name
    assert not _pieces(names.shown(name), folder_form(secret))


def test_a_name_cut_by_claude_code_loses_the_part_of_the_token_it_kept(
    scanner: SecretScanner,
) -> None:
    token = fake_github_token(random.Random(10))
    cwd = "/home/u/" + "d" * 180 + "/" + token
    name = folder_form(cwd)[:200] + "-1a2b3c"  # over 200 characters: cut, a hash added
    shown = ProjectNames(scanner).shown(name, SESSION, [cwd])
    assert not _pieces(shown, token, size=8)
    assert shown.endswith("-1a2b3c")  # the hash says nothing of the token


def test_a_name_shown_once_is_unchanged_when_shown_again(scanner: SecretScanner) -> None:
    secret = _aws_like(random.Random(11))
    names = ProjectNames(scanner, _known(secret))
    once = names.shown(folder_form(f"/home/u/w/{secret}"), SESSION)
    assert ProjectNames(scanner).shown(once, SESSION) == once


def test_a_name_without_secrets_is_kept_and_paths_show_the_folder_as_shown(
    scanner: SecretScanner,
) -> None:
    assert ProjectNames(scanner).shown("-home-u-work-app", SESSION, ["/home/u/work/app"]) == (
        "-home-u-work-app"
    )
    path = Path("/c/projects/-home-u-x/abc.jsonl")
    assert path_shown(path, {"-home-u-x": "-home-u-[R]"}) == "/c/projects/-home-u-[R]/abc.jsonl"


def test_values_known_after_a_name_was_shown_count_when_it_is_shown_again(
    scanner: SecretScanner,
) -> None:
    """The names already shown and the index of value forms are rebuilt when `known` grows:
    a name worked out before a value was known must not stay as it was shown then."""
    secret = _aws_like(random.Random(21))
    name = folder_form(f"/home/u/w-{secret}")
    known = KnownValues()
    names = ProjectNames(scanner, known)
    assert _pieces(names.shown(name, SESSION), folder_form(secret))
    assert known.add(secret, ValueInfo("aws-secret-access-key", "detector", "cd" * 32), SESSION)
    assert not _pieces(names.shown(name, SESSION), folder_form(secret))
    # Another session's values never clean this one's name; None means every session's.
    other = folder_form(f"/srv/x-{secret}")
    assert _pieces(names.shown(other, "another-session"), folder_form(secret))
    assert not _pieces(names.shown(other, None), folder_form(secret))


def test_many_known_values_each_found_in_its_own_form(scanner: SecretScanner) -> None:
    rng = random.Random(22)
    known = KnownValues()
    secrets = [_aws_like(rng) for _ in range(300)]
    for n, secret in enumerate(secrets):
        assert known.add(secret, ValueInfo("aws-secret-access-key", "d", f"{n:064x}"), SESSION)
    names = ProjectNames(scanner, known)
    for secret in secrets[::37]:
        name = folder_form(f"/home/u/a-{secret}-b")
        shown = names.shown(name, SESSION)
        assert not _pieces(shown, folder_form(secret)), shown
        assert shown.startswith("-home-u-a-") and shown.endswith("-b")
