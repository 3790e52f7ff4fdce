"""Does a redacted record have the original's structure? (What `scrub redact --check` proves.)

Same types everywhere, same keys in the same order, same numbers, booleans and nulls, same list
lengths; string values may differ, except identifiers, chain fields and signatures, which must be
byte-identical.
"""

from __future__ import annotations

from typing import Any

from scrubber.transcript.records import PROTECTED_KEYS


def same_structure(original: Any, redacted: Any, key: str | None = None) -> bool:
    if isinstance(original, dict):
        if not isinstance(redacted, dict) or list(original) != list(redacted):
            return False
        if original.get("type") == "redacted_thinking" and original != redacted:
            return False
        return all(same_structure(original[k], redacted[k], k) for k in original)
    if isinstance(original, list):
        return (
            isinstance(redacted, list)
            and len(original) == len(redacted)
            and all(same_structure(a, b, None) for a, b in zip(original, redacted, strict=True))
        )
    if isinstance(original, str):
        if not isinstance(redacted, str):
            return False
        return key not in PROTECTED_KEYS or original == redacted
    # Numbers, booleans, null: equal and of the same type (1 and True are not the same here).
    return type(original) is type(redacted) and original == redacted
