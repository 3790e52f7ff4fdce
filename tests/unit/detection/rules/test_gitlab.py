"""GitLab `gl…-` tokens and legacy runner registration tokens."""

from __future__ import annotations

import pytest
from rule_cases import B62, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import gitlab

PAT = join("gl", "pat-", fake(B62 + "_-", 20, "pat"))
ROUTABLE = join("gl", "pat-", fake(B62, 27, "r"), ".01.", fake("abcdefghij0123456789", 7, "r2"))
DEPLOY = join("gl", "dt-", fake(B62, 20, "dt"))
RUNNER = join("GR", "1348941", fake(B62, 20, "rr"))

CASES: list[Case] = [
    pos(gitlab.GITLAB_TOKEN, f'CI_JOB_TOKEN="{PAT}"', PAT),
    pos(gitlab.GITLAB_TOKEN, f"PRIVATE-TOKEN: {ROUTABLE}\n", ROUTABLE, note="routable"),
    pos(gitlab.GITLAB_TOKEN, f"deploy token {DEPLOY}.", DEPLOY),
    neg(gitlab.GITLAB_TOKEN, "glpat-short"),
    neg(gitlab.GITLAB_TOKEN, "glpat-" + "X" * 20, note="filler"),
    pos(gitlab.GITLAB_RUNNER_REGISTRATION_TOKEN, f"--registration-token {RUNNER}", RUNNER),
    neg(gitlab.GITLAB_RUNNER_REGISTRATION_TOKEN, "GR1348941"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_gitlab(case: Case) -> None:
    check(case)
