"""The placeholder format, as the redaction layer sees it.

The format itself lives in `scrubber.detection.placeholder`: detection must recognise
placeholders (they are masked before any detector runs, which makes redaction idempotent) and may
not import redaction, so the one module that owns the format sits there. This module re-exports it
under the name the architecture note gives it.
"""

from scrubber.detection.placeholder import (
    PLACEHOLDER_PREFIX,
    PLACEHOLDER_RE,
    SHORT_FINGERPRINT_LENGTH,
    PlaceholderError,
    is_valid_kind,
    make_placeholder,
    mask_placeholders,
    parse_placeholder,
    placeholder_spans,
)

__all__ = [
    "PLACEHOLDER_PREFIX",
    "PLACEHOLDER_RE",
    "SHORT_FINGERPRINT_LENGTH",
    "PlaceholderError",
    "is_valid_kind",
    "make_placeholder",
    "mask_placeholders",
    "parse_placeholder",
    "placeholder_spans",
]
