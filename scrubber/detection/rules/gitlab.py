"""GitLab tokens: every `gl…-` prefix GitLab issues, and legacy runner registration tokens.

GitLab documents the prefixes in "GitLab token overview" (Token prefixes): glpat- personal,
project and group access tokens; gloas- OAuth application secrets; gldt- deploy tokens; glrt-
runner authentication tokens; glrtr- runner registration; glcbt- CI/CD job tokens; glptt-
pipeline trigger tokens; glft- feed tokens; glimt- incoming mail; glagent- agent for
Kubernetes; glsoat- SCIM OAuth; glffct- feature flag clients; glwt- workspace tokens. Legacy
runner registration tokens start with GR1348941. Routable tokens (GitLab 17.x) append
`.<2 chars><7 chars>`.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

_PREFIXES = (
    "glpat", "gloas", "gldt", "glrt", "glrtr", "glcbt", "glptt", "glft", "glimt", "glagent",
    "glsoat", "glffct", "glwt", "gltst",
)  # fmt: skip

GITLAB_TOKEN = PatternRule(
    name="gitlab-token",
    kind="gitlab-token",
    pattern=WORD_START
    + r"(?:"
    + "|".join(sorted(_PREFIXES, key=len, reverse=True))
    + r")-[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{2}\.?[0-9a-z]{7})?"
    + WORD_END,
    anchors=tuple(p + "-" for p in _PREFIXES),
    public_prefix=r"glpat-",
    reference="docs.gitlab.com 'GitLab token overview' (token prefixes); gitleaks rules "
    "gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-authentication-token",
    reject=is_filler,
)

GITLAB_RUNNER_REGISTRATION_TOKEN = PatternRule(
    name="gitlab-runner-registration-token",
    kind="gitlab-token",
    pattern=WORD_START + r"GR1348941[A-Za-z0-9_-]{20,300}" + WORD_END,
    anchors=("gr1348941",),
    reference="docs.gitlab.com 'GitLab token overview' (runner registration token prefix "
    "GR1348941); gitleaks rule gitlab-rrt",
    reject=is_filler,
)

RULES = (GITLAB_TOKEN, GITLAB_RUNNER_REGISTRATION_TOKEN)
