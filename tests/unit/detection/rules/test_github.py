"""GitHub classic (`ghp_` and friends) and fine-grained (`github_pat_`) tokens."""

from __future__ import annotations

import pytest
from rule_cases import B62, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import github

CLASSIC = {p: join("gh", p, "_", fake(B62, 36, p)) for p in "pousr"}
FINE = join("github", "_pat_", "11", fake(B62.upper(), 20, "fg"), "_", fake(B62, 59, "fg2"))

CASES: list[Case] = [
    *[pos(github.GITHUB_TOKEN, f"GITHUB_TOKEN={tok}", tok, note=f"gh{p}_") for p, tok in CLASSIC.items()],
    pos(github.GITHUB_TOKEN, f"https://x-access-token:{CLASSIC['s']}@github.com/o/r.git", CLASSIC["s"]),
    pos(github.GITHUB_TOKEN, f"oauth_token: {CLASSIC['o']}\n    git_protocol: https", CLASSIC["o"]),
    neg(github.GITHUB_TOKEN, CLASSIC["p"][:-1], note="35 chars"),
    neg(github.GITHUB_TOKEN, "ghp_" + "x" * 36, note="documentation filler"),
    neg(github.GITHUB_TOKEN, f"sghp_{CLASSIC['p'][4:]}", note="glued to a word"),
    pos(github.GITHUB_FINE_GRAINED_PAT, f"export GH_TOKEN='{FINE}'", FINE),
    neg(github.GITHUB_FINE_GRAINED_PAT, "github_pat_ is the prefix of fine-grained tokens"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_github(case: Case) -> None:
    check(case)
