"""age identities: `AGE-SECRET-KEY-1` + 58 Bech32 characters, and plugin identities
`AGE-PLUGIN-<NAME>-1…` (C2SP age specification, "X25519 recipient type"; age-plugin docs)."""

from __future__ import annotations

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

_BECH32 = "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]"

AGE_SECRET_KEY = PatternRule(
    name="age-secret-key",
    kind="age-secret-key",
    pattern=WORD_START
    + r"(?:AGE-SECRET-KEY-1"
    + _BECH32
    + r"{58}|AGE-PLUGIN-[A-Z0-9]{1,40}-1"
    + _BECH32
    + r"{20,2000})"
    + WORD_END,
    anchors=("age-secret-key-1", "age-plugin-"),
    public_prefix=r"AGE-SECRET-KEY-1",
    reference="github.com/C2SP/C2SP age.md (X25519 identity encoding); gitleaks rule "
    "age-secret-key",
    reject=is_filler,
)

RULES = (AGE_SECRET_KEY,)
