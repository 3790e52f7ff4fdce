"""TEMPORARY: replaced by the placeholder module from the redaction work (moved here so that
detection, which must recognise placeholders, never imports redaction)."""

from __future__ import annotations

import re

PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9-]{1,64}:[0-9a-f]{8}\]")


def make_placeholder(kind: str, fingerprint: str) -> str:
    return f"[REDACTED:{kind}:{fingerprint[:8]}]"


def mask_placeholders(text: str) -> str:
    return PLACEHOLDER_RE.sub(lambda m: " " * len(m.group()), text)
