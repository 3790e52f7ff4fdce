"""GitHub tokens: classic `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` and fine-grained `github_pat_`.

GitHub documents the prefixes in "About authentication to GitHub" (GitHub's token formats) and
the 2021 engineering post "Behind GitHub's new authentication token formats": a prefix, then 36
base62 characters (the last 6 a checksum). Fine-grained tokens are `github_pat_` + 82 characters
of base62 and underscores. We allow longer bodies because installation tokens have grown.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

GITHUB_TOKEN = PatternRule(
    name="github-token",
    kind="github-token",
    pattern=WORD_START + r"gh[pousr]_[A-Za-z0-9]{36,251}" + WORD_END,
    public_prefix=r"gh[pousr]_",
    anchors=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    reference="docs.github.com 'About authentication to GitHub' (token prefixes); "
    "gitleaks rules github-pat, github-oauth, github-app-token, github-refresh-token",
    reject=is_filler,
)

GITHUB_FINE_GRAINED_PAT = PatternRule(
    name="github-fine-grained-pat",
    kind="github-token",
    pattern=WORD_START + r"github_pat_[A-Za-z0-9_]{22,255}" + WORD_END,
    public_prefix=r"github_pat_",
    anchors=("github_pat_",),
    reference="docs.github.com 'Managing your personal access tokens' (fine-grained); "
    "gitleaks rule github-fine-grained-pat",
    reject=is_filler,
)

RULES = (GITHUB_TOKEN, GITHUB_FINE_GRAINED_PAT)
