"""npm access tokens: `npm_` + 36 base62 characters (docs.npmjs.com 'About access tokens';
gitleaks rule npm-access-token). `.npmrc` `_authToken=` lines are in credential_files.py.
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

NPM_TOKEN = PatternRule(
    name="npm-token",
    kind="npm-token",
    pattern=WORD_START + r"npm_[A-Za-z0-9]{36}" + WORD_END,
    anchors=("npm_",),
    public_prefix=r"npm_",
    reference="docs.npmjs.com/about-access-tokens; gitleaks rule npm-access-token",
    reject=is_filler,
)

RULES = (NPM_TOKEN,)
