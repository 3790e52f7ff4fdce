"""Titles as the last audit showed them (usecases/reported_projects.py): read back by the
keyed fingerprint of the title as it is, and only when the cached form hides parts of that
very title (a planted cache may hide, never add). Values built at run time."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from scrubber.detection.placeholder import hides_only, make_placeholder
from scrubber.detection.registry import build_scanner
from scrubber.policy.model import Policy
from scrubber.usecases.reported_projects import AUDIT_CACHE_NAME, audited_titles
from scrubber.usecases.shown_names import Titles

P = make_placeholder("dotenv-value", "ab" * 32)


@pytest.mark.parametrize(
    ("shown", "raw", "hides"),
    [
        (f"deploy {P} now", "deploy hunter2hunter2 now", True),
        (f"deploy {P} now", "deploy  now", False),  # a placeholder hides at least a character
        (f"{P}", "x", True),
        (f"{P}", "", False),
        (f"x{P}{P}y", "xABy", True),
        (f"x{P}{P}y", "xAy", False),
        (f"a {P} c", "a X b", False),  # the text after it changed
        (f"{P} added", "secret", False),  # text the title never held
        ("no placeholder", "no placeholder", True),
        ("no placeholder", "something else", False),
        (f"{P} and {P}", "one and two and three", True),
    ],
)
def test_hides_only(shown: str, raw: str, hides: bool) -> None:
    assert hides_only(shown, raw) is hides


def test_hides_only_is_linear_on_many_placeholders() -> None:
    shown = "a".join([P] * 2000) + "b"
    assert hides_only(shown, "xa" * 1999 + "x" + "c") is False


def _cache(home: Path, sessions: dict[str, object]) -> None:
    state = home / "state"
    state.mkdir(parents=True, mode=0o700, exist_ok=True)
    (state / AUDIT_CACHE_NAME).write_text(json.dumps({"format": 1, "sessions": sessions}))


def test_titles_start_from_the_audited_form_of_that_very_title(tmp_path: Path) -> None:
    rng = random.Random(3)
    password = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))
    title, other = f"deploy {password}", f"deploy {password} again"
    titles = Titles(Policy(), tmp_path)
    assert titles.show(title, None) == title  # no detector sees it alone
    fingerprint = build_scanner(Policy(), tmp_path).fingerprint(title)
    _cache(
        tmp_path,
        {
            "s1": {"title_fingerprint": fingerprint, "title_shown": f"deploy {P}"},
            # Planted: a form that adds text, and one that is not printable.
            "s2": {"title_fingerprint": "0" * 64, "title_shown": f"{P}\x1b[2J"},
        },
    )
    titles = Titles(Policy(), tmp_path)
    assert titles.show(title, None) == f"deploy {P}"
    assert titles.show(other, None) == other  # another title: not known
    assert audited_titles({"s2": {"title_fingerprint": "0" * 64, "title_shown": f"{P}\x1b"}}) == {}


def test_a_cached_form_that_adds_text_is_not_shown(tmp_path: Path) -> None:
    title = "deploy the thing"
    fingerprint = build_scanner(Policy(), tmp_path).fingerprint(title)
    _cache(tmp_path, {"s1": {"title_fingerprint": fingerprint, "title_shown": f"rm -rf {P}"}})
    assert Titles(Policy(), tmp_path).show(title, None) == title


def test_a_cached_folder_name_is_taken_only_when_it_hides_parts_of_the_folder(
    tmp_path: Path,
) -> None:
    """The audit cache's `project_shown` names the folders of redacted copies too: a planted
    name that is another folder is ignored; one that hides part of the real name is taken."""
    from scrubber.usecases.reported_projects import ReportedNames

    scanner = build_scanner(Policy(), tmp_path)
    real = "-home-u-work-shop"
    names = ReportedNames(scanner, {"s1": "-some-other-project", "s2": f"-home-u-{P}-shop"})
    assert names.audited_name(real, ["s1"]) == real
    assert names.audited_name(real, ["s2"]) == f"-home-u-{P}-shop"
