"""PyPI API tokens: `pypi-` + a base64url macaroon whose first bytes encode the issuing host,
so they start `pypi-AgEIcHlwaS5vcmc` (pypi.org) or `pypi-AgENdGVzdC5weXBpLm9yZw` (test.pypi.org)
(pypi.org/help/#apitoken; gitleaks rule pypi-upload-token; detect-secrets PypiTokenDetector).
"""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START, is_filler

PYPI_TOKEN = PatternRule(
    name="pypi-token",
    kind="pypi-token",
    pattern=WORD_START
    + r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,1000}(?![A-Za-z0-9_-])",
    anchors=("pypi-ageichlwas5vcmc", "pypi-agendgvzdc5wexbplm9yzw"),
    public_prefix=r"pypi-",
    reference="pypi.org/help/#apitoken; gitleaks rule pypi-upload-token",
    reject=is_filler,
)

RULES = (PYPI_TOKEN,)
