"""SonarQube/SonarCloud tokens: `squ_` user, `sqp_` project, `sqa_` global analysis + 40
characters (docs.sonarsource.com "Managing your tokens"; gitleaks rule sonar-api-token)."""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

SONAR_TOKEN = PatternRule(
    name="sonar-token",
    kind="sonar-token",
    pattern=WORD_START + r"sq[upa]_[A-Za-z0-9]{40}" + WORD_END,
    anchors=("squ_", "sqp_", "sqa_"),
    reference="docs.sonarsource.com/sonarqube/latest/user-guide/managing-tokens; gitleaks rule "
    "sonar-api-token",
    reject=is_filler,
)

# Older tokens have no prefix: 40 characters assigned to a Sonar login/token setting
# (`SONAR_LOGIN`, `sonar.login`, `SONAR_TOKEN`).
SONAR_LABELED_TOKEN = PatternRule(
    name="sonar-labeled-token",
    kind="sonar-token",
    pattern=r"sonar[\w.-]{0,20}?(?:login|token)\\?[\"']?\s{0,4}(?:=|:=|::=|:::=|\?=|:)\s{0,16}"
    r"\\?[\"']?(?P<secret>[A-Za-z0-9]{40})" + WORD_END,
    flags=re.IGNORECASE,
    anchors=("sonar",),
    reference="docs.sonarsource.com (sonar.login / SONAR_TOKEN analysis parameters); gitleaks "
    "rule sonar-api-token",
    reject=is_filler,
)

RULES = (SONAR_TOKEN, SONAR_LABELED_TOKEN)
